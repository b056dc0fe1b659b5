"""The ``versioning`` section of goldset.yaml. Kept apart from the DVC code so reading it never imports dvc."""

from __future__ import annotations

import re
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

#: Characters git refuses in a tag name, or that would make a version name hard to type on a command line.
_BAD_REF = re.compile(r"[\s~^:?*\[\\]|\.\.|@\{|//|^[./-]|[./]$|\.lock$")


class VersioningSettings(BaseModel):
    """How releases are named, stored and refreshed."""

    section: ClassVar[str] = "versioning"

    model_config = ConfigDict(extra="forbid")

    remote: str = Field(
        ".dvc-remote",
        description="Default DVC remote set by `goldset init`: a folder (relative to the workspace) or a URL.",
    )
    tag_pattern: str = Field(
        "v{version}",
        description="Git tag of a release; {version} is the version number (e.g. 1.2.0 → tag v1.2.0). The tag is "
        "also the release's name in `goldset versions`, `goldset.load(...)` and `goldset eval --dataset`.",
    )
    golden: Literal["accepted", "accepted+passed"] = Field(
        "accepted+passed",
        description="Which pairs form a release's golden set: only pairs accepted in review, or also pairs that "
        "passed the filters without an individual review (listed as unreviewed in the manifest).",
    )
    stale_pairs: Literal["regenerate", "review"] = Field(
        "regenerate",
        description="`goldset refresh`: a pair whose evidence changed and no longer holds (quote gone, or the judge "
        "finds the answer unsupported) is retired and new pairs are generated from the new text (regenerate), or "
        "it is kept as stale for a reviewer to fix (review). Pairs that still hold always stay.",
    )
    recheck_groundedness: bool = Field(
        True,
        description="`goldset refresh`: re-check the answers of pairs whose evidence changed with the LLM judge "
        "(the quotes are always re-checked).",
    )

    @field_validator("tag_pattern")
    @classmethod
    def _one_version_field(cls, v: str) -> str:
        if v.count("{version}") != 1 or re.sub(r"\{version\}", "", v).count("{"):
            raise ValueError("must contain {version} exactly once and no other {…} field, e.g. 'v{version}'")
        if _BAD_REF.search(v.replace("{version}", "1.0.0")):
            raise ValueError(f"{v!r} does not make a valid git tag name (no spaces, ~ ^ : ? * [ \\ or '..')")
        return v

"""Settings as a whole: one model for all of goldset.yaml, composed at the top from the sections' own models.

Each package owns the model of its section (``goldset/<package>/settings.py``); this module only puts them together,
so nothing below the command line imports it: the parts read their section from the entry point's
:class:`~goldset.context.Context` (``ctx.section(FilterSettings)``), which reads goldset.yaml, ``.env`` and the
environment once. :func:`load_settings` is for callers that want every section at once (``goldset status``, the
configuration reference, scripts); the precedence and the errors are the context's (:mod:`goldset.context`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from pydantic import BaseModel, ConfigDict, Field

from goldset.context import SECTIONS, Context, merge_layers, read_config_file, read_env_file
from goldset.evaluation.settings import EvalSettings
from goldset.filters.settings import FilterSettings
from goldset.generation.settings import GenerateSettings
from goldset.kb.settings import KBSettings
from goldset.llm.settings import LLMSettings
from goldset.queries.settings import QueriesSettings
from goldset.review.settings import ReviewSettings
from goldset.versioning.settings import VersioningSettings
from goldset.workspace import Workspace

__all__ = [
    "SECTIONS",
    "Settings",
    "get_env",
    "load_settings",
    "merge_layers",
    "read_config_file",
    "read_env_file",
    "settings_of",
]


class Settings(BaseModel):
    """goldset.yaml as a whole: one model per section. Build it with :func:`load_settings`."""

    model_config = ConfigDict(extra="forbid")

    kb: KBSettings = Field(default_factory=KBSettings, description="Reading documents and cutting them into chunks.")
    llm: LLMSettings = Field(default_factory=LLMSettings, description="LLM endpoints and prices.")
    generate: GenerateSettings = Field(default_factory=GenerateSettings, description="QA generation.")
    filter: FilterSettings = Field(default_factory=FilterSettings, description="Checks and their thresholds.")
    review: ReviewSettings = Field(default_factory=ReviewSettings, description="The expert-review sample.")
    versioning: VersioningSettings = Field(default_factory=VersioningSettings, description="Releases with DVC.")
    eval: EvalSettings = Field(default_factory=EvalSettings, description="Running and scoring evaluations.")
    queries: QueriesSettings = Field(
        default_factory=QueriesSettings, description="Real user questions: merging, drafting answers, coverage."
    )


def settings_of(ctx: Context) -> Settings:
    """Every section of ``ctx``, validated (the first bad value is a ConfigError naming its origin)."""
    sections: dict[str, Any] = {}
    for name, info in Settings.model_fields.items():
        sections[name] = ctx.section(cast(type[BaseModel], info.annotation))
    return Settings(**sections)


def load_settings(ws: Workspace | None = None, **options: Mapping[str, Any] | None) -> Settings:
    """All settings of ``ws`` (None: defaults and the environment only), with the usual precedence.

    ``options`` are per-section mappings of values the caller was given, e.g. ``generate={"concurrency": 4}``;
    ``None`` values mean "not given" and are skipped. Any error names its origin and is a ConfigError.
    """
    return settings_of(Context.open(ws, **options))


def get_env(name: str, ws: Workspace | None = None) -> str | None:
    """A variable from the environment, else from the workspace's git-ignored ``.env``; never from goldset.yaml."""
    return Context.open(ws).getenv(name)

"""Settings of the ``kb`` section of goldset.yaml (ingestion and chunking)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from goldset.context import settings_conflict

#: Bumped whenever the chunker's output for the same input and settings changes; stored in the snapshot so
#: a changed chunker is visible as a changed ``chunking`` setting, not as mysterious content changes.
#: 2: a chunk's language is told from its prose, code left out (ids, text and hashes as in 1).
CHUNKER_VERSION = 2


class KBSettings(BaseModel):
    """How documents are read and cut into chunks. Token counts follow :func:`goldset.text.count_tokens`."""

    section: ClassVar[str] = "kb"

    model_config = ConfigDict(extra="forbid")

    path: str = Field("docs", description="Documents folder `goldset ingest` reads when none is given.")
    target_tokens: int = Field(350, gt=0, description="Aim for chunks of about this size.")
    max_tokens: int = Field(700, gt=0, description="Never exceed, except one code block/table larger than it.")
    min_tokens: int = Field(60, ge=0, description="A trailing section smaller than this joins its neighbour.")
    max_file_bytes: int = Field(5_000_000, gt=0, description="Larger files are skipped with a message.")
    include: list[str] = Field(
        default_factory=list, description="Glob patterns on the path relative to DOCS_DIR; empty = every file."
    )
    exclude: list[str] = Field(default_factory=list, description="Glob patterns of files to leave out.")

    @model_validator(mode="after")
    def _sizes_fit(self) -> KBSettings:
        """The chunk sizes against each other (each is checked on its own by its field): the one check of them,
        for goldset.yaml, the environment, the CLI's options and ``KBSettings(...)`` alike."""
        target, maximum, minimum = self.target_tokens, self.max_tokens, self.min_tokens
        if maximum < target:
            raise settings_conflict(
                f"max_tokens ({maximum}) is below target_tokens ({target}); chunks aim at target_tokens and never "
                "exceed max_tokens: raise max_tokens or lower target_tokens",
                "max_tokens", "target_tokens",
            )  # fmt: skip
        if minimum > target:
            raise settings_conflict(
                f"min_tokens ({minimum}) is above target_tokens ({target}); smaller trailing sections join their "
                "neighbour, so min_tokens must not exceed target_tokens: lower min_tokens or raise target_tokens",
                "min_tokens", "target_tokens",
            )  # fmt: skip
        return self

    def chunking(self) -> dict[str, int | float | str | bool]:
        """The settings that decide chunk boundaries, as stored in the snapshot."""
        return {
            "chunker_version": CHUNKER_VERSION,
            "target_tokens": self.target_tokens,
            "max_tokens": self.max_tokens,
            "min_tokens": self.min_tokens,
        }

"""The ``versioning`` section of goldset.yaml. Kept apart from the DVC code so reading it never imports dvc."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class VersioningSettings(BaseModel):
    """How releases are stored: the default DVC remote `goldset init` configures."""

    model_config = ConfigDict(extra="forbid")

    remote: str = Field(
        ".dvc-remote",
        description="Default DVC remote set by `goldset init`: a folder (relative to the workspace) or a URL.",
    )

"""Settings of the ``versioning`` section (DVC remote, tag format). Kept apart from the DVC code so reading
them never imports dvc."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class VersioningSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    remote: str = ".dvc-remote"

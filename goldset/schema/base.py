"""The base of every stored record."""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict

SCHEMA_VERSION = 1


def utcnow() -> datetime:
    """Timestamps are timezone-aware UTC, to the second, so files diff cleanly."""
    return datetime.now(UTC).replace(microsecond=0)


class Record(BaseModel):
    """Strict about unknown fields (a typo in a hand-edited file is an error, not silently lost data)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    schema_version: int = SCHEMA_VERSION

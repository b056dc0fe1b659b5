"""The base of every stored record."""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = 1


def utcnow() -> datetime:
    """Timestamps are timezone-aware UTC, to the second, so files diff cleanly."""
    return datetime.now(UTC).replace(microsecond=0)


class Record(BaseModel):
    """The base of every record goldset stores. Strict about unknown fields (a typo in a hand-edited file is an
    error, not silently lost data), and versioned so a later goldset can migrate or refuse an older file knowingly."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    schema_version: int = Field(SCHEMA_VERSION, description="Version of the record's format.")

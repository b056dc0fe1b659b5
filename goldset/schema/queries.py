"""Real user questions (`goldset import --format queries`): one record per distinct question, its personal data
already redacted, with how often it was asked and where each copy came from. One line of
``.goldset/queries.jsonl``."""

from __future__ import annotations

from pydantic import Field

from goldset.schema.base import Record


class RealQuestion(Record):
    """A real user's question after redaction, normalisation and merging of its exact and near duplicates."""

    id: str = Field(description="Stable id: a hash of the normalised (redacted) question.")
    question: str = Field(description="The question as the first user wrote it, personal data redacted.")
    count: int = Field(1, ge=1, description="How often it was asked: the counts of every merged copy, summed.")
    language: str = Field("en", description="Its language (en, zh, ja, ko…).")
    origins: list[str] = Field(default_factory=list, description="Where each merged copy came from (file:line).")
    variants: list[str] = Field(
        default_factory=list, description="Other wordings merged into it as near duplicates (redacted)."
    )
    redacted: dict[str, int] = Field(
        default_factory=dict, description="Personal data removed from it and its copies: kind → count."
    )
    first_seen: str | None = Field(None, description="Earliest timestamp of its copies, when the log gave one.")
    last_seen: str | None = Field(None, description="Latest timestamp of its copies, when the log gave one.")
    answer: str | None = Field(None, description="The production system's answer, when the log had one (redacted).")
    contexts: list[str] = Field(
        default_factory=list, description="The contexts the production system retrieved, when the log had them."
    )

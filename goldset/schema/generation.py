"""Records of the generation stage that are not pairs."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from goldset.schema.base import Record, utcnow


class GenerationFailure(Record):
    """An item or a call that produced no pair, with the reason (``.goldset/generation_failures.jsonl``)."""

    id: str = Field(description="Hash of the call key (and the item's index for an item).")
    kind: Literal["call", "item"] = Field(description="A whole call that failed, or one unusable item of a reply.")
    chunk_ids: list[str] = Field(description="The chunks shown in the call, the primary chunk first.")
    reason: str = Field(description="Why no pair came of it, in one line.")
    call_key: str | None = Field(None, description="The call's key in the call journal.")
    question: str | None = Field(None, description="The item's question, when it had one.")
    question_type: str | None = Field(None, description="The item's question type as the model gave it.")
    at: datetime = Field(default_factory=utcnow, description="When the failure was recorded (UTC).")

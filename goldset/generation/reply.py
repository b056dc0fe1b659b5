"""What the model is asked to return: the structured-output schema of one generation call (lenient on purpose:
items are checked one by one in :mod:`goldset.generation.validation`)."""

from __future__ import annotations

import copy
from typing import Any

from pydantic import BaseModel, Field

from goldset.schema import (
    QuestionType,
)

SCHEMA_NAME = "qa_pairs"

# ------------------------------------------------------------------------------------------- structured output


class GeneratedEvidence(BaseModel):
    chunk_id: str = ""
    quote: str = ""


class GeneratedPair(BaseModel):
    """One item of the model's reply. Lenient on purpose: one bad item must not fail the whole reply, so
    types and blanks are checked item by item afterwards (:func:`validate_reply`)."""

    question: str = ""
    answer: str = ""
    question_type: str = Field("", json_schema_extra={"enum": [t.value for t in QuestionType]})
    evidence: list[GeneratedEvidence] = Field(default_factory=list)


class GeneratedPairs(BaseModel):
    """The whole reply of one generation call. At least one pair (``minItems: 1`` in the schema sent): an empty
    list is not an answer, so it gets the repair attempt and then fails the call instead of being kept (and
    journaled) as a success. A reply with fewer pairs than asked is kept: the model may find less to ask about a
    short chunk, and the report counts the shortfall (``GenerationReport.pairs_missing``)."""

    pairs: list[GeneratedPair] = Field(min_length=1, description="The question-answer pairs, at least one.")

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """Cached: the LLM client asks for the schema on every call (cache key and response format), and
        pydantic rebuilds it each time (~2 ms of event-loop time per call, a fifth of the throughput at 80
        calls/s). A deep copy is returned so no caller can alter the cached one."""
        key = (args, tuple(sorted(kwargs.items())))
        cached = _SCHEMA_CACHE.get(key)
        if cached is None:
            cached = _SCHEMA_CACHE[key] = super().model_json_schema(*args, **kwargs)
        return copy.deepcopy(cached)


_SCHEMA_CACHE: dict[Any, dict[str, Any]] = {}

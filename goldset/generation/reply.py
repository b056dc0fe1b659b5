"""What the model is asked to return: the structured-output schema of one generation call (lenient on purpose:
items are checked one by one in :mod:`goldset.generation.validation`)."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from goldset.generation.settings import TYPE_GENERATIONS
from goldset.schema import (
    QuestionType,
)

SCHEMA_NAME = "qa_pairs"
#: The types every call's schema lists (the ones goldset started with). A later type is listed only in the
#: schema of a call that asks for it (:func:`reply_model`), so adding one leaves every other call's request, and
#: so its journal key, as it was. (Every call's schema also says how many pairs it asks for, ``maxItems``; its
#: addition changed every generation call's key once: see CHANGELOG.md.)
BASE_TYPES = tuple(t.value for t in TYPE_GENERATIONS[0])
#: The evidence description of a call that asks for a later type.
LATER_EVIDENCE = (
    "One to three quotes supporting the answer (ambiguous: at least one per reading; open_ended: one per key "
    "point, up to five); none for unanswerable."
)


def _without_class_docstring(schema: dict[str, Any]) -> None:
    """The class docstrings below are for developers; pydantic would send them to the model as the objects'
    descriptions. The fields' descriptions are for the model and stay."""
    schema.pop("description", None)


#: The reply models' config: the schema sent holds the field descriptions only.
REPLY_MODEL_CONFIG = ConfigDict(json_schema_extra=_without_class_docstring)


class GeneratedEvidence(BaseModel):
    """One evidence quote of a generated pair."""

    model_config = REPLY_MODEL_CONFIG

    chunk_id: str = Field("", description="The id of the chunk the quote is copied from, exactly as given.")
    quote: str = Field("", description="Text copied character for character from that chunk.")


class GeneratedPair(BaseModel):
    """One item of the model's reply. Lenient on purpose: one bad item must not fail the whole reply, so
    types and blanks are checked item by item afterwards (:func:`validate_reply`)."""

    model_config = REPLY_MODEL_CONFIG

    question: str = Field("", description="The question, self-contained, in the language asked for.")
    answer: str = Field("", description="The answer, resting only on the chunk(s), in the language asked for.")
    question_type: str = Field(
        "", description="One of the question types asked for.", json_schema_extra={"enum": list(BASE_TYPES)}
    )  # fmt: skip
    evidence: list[GeneratedEvidence] = Field(
        default_factory=list, description="One to three quotes supporting the answer; none for unanswerable."
    )


class GeneratedPairs(BaseModel):
    """The whole reply of one generation call. At least one pair (``minItems: 1`` in the schema sent): an empty
    list is not an answer, so it gets the repair attempt and then fails the call instead of being kept (and
    journaled) as a success. A reply with fewer pairs than asked is kept: the model may find less to ask about a
    short chunk, and the report counts the shortfall (``GenerationReport.pairs_missing``)."""

    model_config = REPLY_MODEL_CONFIG

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


def reply_model(types: Sequence[QuestionType | str]) -> type[GeneratedPairs]:
    """The reply model of a call asking for ``types`` (one entry per pair asked): a :class:`GeneratedPairs`
    subclass whose schema gives the pair list ``maxItems`` = ``len(types)`` (a grammar-bound server such as
    llama.cpp's then stops after the pairs asked instead of looping to max_tokens) and whose type enum lists
    :data:`BASE_TYPES` plus the later types asked for, so adding a type leaves the other calls' schemas, and
    journal keys, as they were. One class per (count, later types), so the client's schema cache holds."""
    later = tuple(sorted({str(t) for t in types} - set(BASE_TYPES), key=[t.value for t in QuestionType].index))
    return _reply_class(max(1, len(types)), later)


@cache
def _reply_class(count: int, later: tuple[str, ...]) -> type[GeneratedPairs]:
    enum = [*BASE_TYPES, *later]

    class GeneratedPairsAsked(GeneratedPairs):
        """:class:`GeneratedPairs` whose schema says how many pairs were asked (``maxItems``) and lists the
        ``later`` types asked for (validation is the same: a longer list is kept, the type is checked item by
        item)."""

        @classmethod
        def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
            schema = GeneratedPairs.model_json_schema(*args, **kwargs)
            schema["properties"]["pairs"]["maxItems"] = count
            if later:
                pair = schema["$defs"]["GeneratedPair"]["properties"]
                pair["question_type"]["enum"] = list(enum)
                pair["evidence"]["description"] = LATER_EVIDENCE
            return schema

    return GeneratedPairsAsked

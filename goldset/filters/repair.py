"""Paraphrase repair (``--repair``): a pair failing *only* the verbatim check gets its answer rewritten.

The LLM rewrites the answer in different words (``prompts/repair_paraphrase.md``); the pipeline then re-checks
the rewritten pair and keeps the rewrite only when it no longer copies its source. The original text is kept
in ``provenance.revisions`` (reason ``paraphrase-repair``); the pair id does not change.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, field_validator

from goldset.filters.base import ChunkMap, evidence_texts
from goldset.schema import QAPair, Revision

if TYPE_CHECKING:
    from goldset.llm import LLMClient
    from goldset.prompts import Prompt

PROMPT_ID = "repair_paraphrase"
SCHEMA_NAME = "paraphrase_repair"
REASON = "paraphrase-repair"


class RepairReply(BaseModel):
    """The repair model's structured reply."""

    model_config = ConfigDict(extra="ignore")

    answer: str = Field(description="The rewritten answer.")

    @field_validator("answer")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("must not be empty")
        return v.strip()


def rewritten(pair: QAPair, answer: str, model: str) -> QAPair:
    """A copy of ``pair`` with the new answer and the old text kept as a revision."""
    old = Revision(question=pair.question, answer=pair.answer, reason=REASON, by=model)
    provenance = pair.provenance.model_copy(update={"revisions": [*pair.provenance.revisions, old]})
    return pair.model_copy(update={"answer": answer, "provenance": provenance})


async def rewrite_many(
    pairs: Sequence[QAPair], chunks: ChunkMap, client: LLMClient, prompt: Prompt
) -> dict[str, str | Exception]:
    """New answer text per pair id, or the (redacted) error of a failed call."""
    from goldset.llm.fanout import fan_out, fan_out_limit

    async def one(pair: QAPair) -> tuple[str, str | Exception]:
        messages = prompt.render(
            question=pair.question,
            answer=pair.answer,
            language=pair.language,
            sources="\n\n".join(evidence_texts(pair, chunks)),
        )
        res = await client.complete_json(messages, RepairReply, schema_name=SCHEMA_NAME)
        if res.value is None:
            return pair.id, RuntimeError(res.error or "repair call failed")
        return pair.id, res.value.answer

    return dict(await fan_out(pairs, one, limit=fan_out_limit(client.endpoint)))

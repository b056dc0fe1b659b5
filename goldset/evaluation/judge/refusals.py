"""Refusals as the judge sees them: did the answer decline, answer, or hedge? Part of the ``judge_relevance`` call.

Unanswerable pairs are judged on whether the system declined rather than invented (``correct_refusal_judged``);
answerable ones on false refusals (``false_refusal_judged``). ``hedged``, saying the sources do not cover the
question and then guessing anyway, is not a refusal: on an unanswerable pair it is an invention. The lexical
detector (``correct_refusal`` / ``false_refusal``, :mod:`goldset.evaluation.metrics.refusal`) stays beside these as
the no-LLM measure, so a run shows both and a reader sees where the patterns miss.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from goldset.schema.runs import Stance


class StanceVerdict(BaseModel):
    """Whether the answer answers the question or declines to."""

    model_config = ConfigDict(extra="ignore")

    stance: Stance = Field(
        description="answered: gives an answer; declined: says it cannot answer (the sources do not say) and gives "
        "none; hedged: says the sources do not cover it, then answers anyway."
    )
    reason: str = Field("", description="One sentence: why.")

    @field_validator("stance", mode="before")
    @classmethod
    def _lower(cls, v: object) -> object:
        return v.strip().lower() if isinstance(v, str) else v

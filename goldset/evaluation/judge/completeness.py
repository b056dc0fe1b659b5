"""Completeness: which claims of the reference answer the system's answer covers (one call, ``judge_coverage``).

The judge splits the reference into atomic claims, or, for ``open_ended`` pairs, into the key points the
reference lists, and says for each whether the answer covers it (in any words or language). For ``ambiguous``
pairs the same call says whether the answer acknowledged the question's readings (named them, or asked which one
is meant). The prompt holds no retrieved context: completeness compares the answer with the reference only, so
this is the cheapest of the three calls.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from goldset.evaluation.metrics.judge import CoverageTally
from goldset.schema.runs import JudgedPoint

PROMPT_ID = "judge_coverage"
SCHEMA_NAME = "judge_coverage"


class PointVerdict(BaseModel):
    """One claim (key point) of the reference and whether the answer covers it."""

    model_config = ConfigDict(extra="ignore")

    point: str = Field(description="One atomic claim of the reference answer (a key point for open_ended questions).")
    covered: bool = Field(description="The answer states it or something equivalent, in any words or language.")


class CoverageReply(BaseModel):
    """The judge's reply to ``judge_coverage``."""

    model_config = ConfigDict(extra="ignore")

    points: list[PointVerdict] = Field(description="Every claim (key point) of the reference, in order.")
    readings_acknowledged: bool | None = Field(
        None,
        description="Ambiguous questions only: the answer names the question's readings or asks which one is "
        "meant; null for other question types.",
    )


def tally(reply: CoverageReply, question_type: str) -> tuple[CoverageTally, list[JudgedPoint]]:
    """The counts completeness and readings_acknowledged read, and the points as stored with the sample."""
    points = [p for p in reply.points if p.point.strip()]
    readings = reply.readings_acknowledged if question_type == "ambiguous" else None
    stored = [JudgedPoint(point=p.point, covered=p.covered) for p in points]
    counts = CoverageTally(covered=sum(p.covered for p in points), total=len(points), readings_acknowledged=readings)
    return counts, stored

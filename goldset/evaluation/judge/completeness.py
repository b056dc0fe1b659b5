"""Completeness: which claims of the reference answer the system's answer covers (one call, ``judge_coverage``).

The judge splits the reference into atomic claims, or, for ``open_ended`` pairs, into the key points the
reference lists, and says for each whether the answer covers it (in any words or language). For ``ambiguous``
pairs the same call says whether the answer acknowledged the question's readings (named them, or asked which one
is meant). The prompt holds no retrieved context: completeness compares the answer with the reference only, so
this is the cheapest of the three calls.

A point counts only when it is found in the reference (:func:`goldset.evaluation.judge.consistency.point_in_reference`):
a judge that lists the system answer's own claims as the reference's, and marks them covered, does not make a
non-answer complete. A reply left with no point of the reference fails completeness for that sample (the runner).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from goldset.evaluation.judge.consistency import point_in_reference
from goldset.evaluation.metrics.judged import CoverageTally
from goldset.filters.textsim import content_units
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


def tally(reply: CoverageReply, question_type: str, reference: str) -> tuple[CoverageTally, list[JudgedPoint]]:
    """The counts completeness and readings_acknowledged read (points found in ``reference`` only), and the points
    as stored with the sample."""
    points = [p for p in reply.points if p.point.strip()]
    readings = reply.readings_acknowledged if question_type == "ambiguous" else None
    units = content_units(reference)
    found = [point_in_reference(p.point, units) for p in points]
    stored = [JudgedPoint(point=p.point, covered=p.covered, in_reference=f) for p, f in zip(points, found, strict=True)]
    counted = [p for p, f in zip(points, found, strict=True) if f]
    counts = CoverageTally(
        covered=sum(p.covered for p in counted),
        total=len(counted),
        readings_acknowledged=readings,
        listed=len(points),
    )
    return counts, stored

"""Context relevance: is each retrieved context relevant to the question? Part of the ``judge_relevance`` call.

Reference-free: the judge reads the question and the contexts only (not the golden answer), so the metric also
serves monitoring of questions that have no golden answer. One verdict per context the judge read; the metric is
the share judged relevant. A verdict for a context number the judge was not shown is dropped, and a context the
judge gave no verdict for is not counted (the per-sample details show which were judged).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from goldset.evaluation.metrics.judged import ContextTally
from goldset.schema.runs import JudgedContext


class ContextVerdict(BaseModel):
    """One retrieved context and whether it helps answer the question."""

    model_config = ConfigDict(extra="ignore")

    index: int = Field(description="The context's number, as shown.")
    relevant: bool = Field(description="It holds information that helps answer the question.")


def tally(verdicts: list[ContextVerdict], n_contexts: int) -> tuple[ContextTally, list[JudgedContext]]:
    """The counts context_relevance reads (first verdict per context number), and the verdicts as stored."""
    seen: dict[int, bool] = {}
    for v in verdicts:
        if 1 <= v.index <= n_contexts and v.index not in seen:
            seen[v.index] = v.relevant
    stored = [JudgedContext(index=i, relevant=seen[i]) for i in sorted(seen)]
    return ContextTally(relevant=sum(seen.values()), judged=len(seen)), stored

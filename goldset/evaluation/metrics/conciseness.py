"""Conciseness: is the answer no longer than it needs to be? Length-based, so it is free and reproducible.

The budget is ``max_ratio`` × the reference answer's tokens + ``slack_tokens`` (``eval.conciseness``; defaults
2.0 and 10). An answer within the budget scores 1; a longer one scores budget / length (twice the budget: 0.5).
An empty answer scores 0: saying nothing is not concise, it is missing. Being too *short* is not penalised here;
that is what completeness (judge) and the lexical metrics measure. Tokens as in :func:`goldset.text.tokenize`.
"""

from __future__ import annotations

from goldset.evaluation.metrics.lexical import AnswerInput
from goldset.evaluation.metrics.registry import metric


@metric(
    name="conciseness",
    family="conciseness",
    description="1 if answer tokens <= max_ratio x reference tokens + slack_tokens, else budget / answer tokens.",
    citation="goldset's own definition: a length budget relative to the reference answer (no standard metric)",
    params={
        "max_ratio": "allowed length relative to the reference (eval.conciseness.max_ratio)",
        "slack_tokens": "tokens allowed on top, so very short references do not punish (eval.conciseness)",
    },
)
def conciseness(a: AnswerInput, max_ratio: float = 2.0, slack_tokens: int = 10) -> float:
    n = len(a.answer_tokens)
    if n == 0:
        return 0.0
    budget = max_ratio * len(a.reference_tokens) + slack_tokens
    return min(1.0, budget / n)

"""Refusals: did the system decline to answer? Right for ``unanswerable`` pairs, wrong for the others.

Detection is by configurable regular expressions (``eval.refusal_patterns``, English and Chinese defaults in
:mod:`goldset.evaluation.settings`), searched in the normalised answer. Patterns, not a model, so the numbers are
reproducible and cheap; the LLM judge adds its own verdicts beside these (``correct_refusal_judged``,
``false_refusal_judged`` in :mod:`.judge`), and these stay the no-LLM measure. An answer that declines
part of the question ("the documents do not say X, but ...") matches too: it is counted as a refusal.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from goldset.evaluation.metrics.lexical import AnswerInput
from goldset.evaluation.metrics.registry import metric
from goldset.text import normalize


def compile_patterns(patterns: Sequence[str]) -> re.Pattern[str] | None:
    """One alternation of all patterns (one regex scan per answer instead of one per pattern)."""
    if not patterns:
        return None
    return re.compile("|".join(f"(?:{p})" for p in patterns))


def is_refusal(answer: str, pattern: re.Pattern[str] | None) -> bool:
    """True when the normalised answer matches a refusal pattern."""
    if pattern is None or not answer:
        return False
    return pattern.search(normalize(answer)) is not None


@metric(
    name="correct_refusal",
    family="refusal",
    description="Unanswerable pairs only: 1 if the system refused (refusal patterns), else 0 (a failure too: it "
    "did not refuse). Mean = rate.",
    citation="Rajpurkar et al., Know What You Don't Know: Unanswerable Questions for SQuAD, ACL 2018",
)
def correct_refusal(a: AnswerInput) -> float | None:
    if a.answerable:
        return None
    return 1.0 if a.refused else 0.0


@metric(
    name="false_refusal",
    family="refusal",
    description="Answerable pairs the system answered: 1 if it refused although the KB answers. Mean = rate "
    "(lower wins); failed samples are failures (error_rate), not refusals, and are left out.",
    citation="Rajpurkar et al., Know What You Don't Know: Unanswerable Questions for SQuAD, ACL 2018",
    higher_is_better=False,
    on_failure="skip",
)
def false_refusal(a: AnswerInput) -> float | None:
    if not a.answerable:
        return None
    return 1.0 if a.refused else 0.0

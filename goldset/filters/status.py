"""A pair's status from its verdicts: which verdicts count, what a flag does, and which earlier verdicts stand.

* A verdict that fails with severity ``reject`` rejects the pair; one that fails with severity ``flag`` does not
  (the pair passes, and :attr:`goldset.schema.QAPair.flags` lists it for review).
* Generation's own verdict (``checks["generation"]``: quote not found in its chunk, wrong language …) stays in
  force as long as the pair's text is the text generation judged. No later stage clears it; a repair or an
  expert edit that changes the text does (generation's findings were about the old text).
* A pair passes only when every counted check has a verdict on it; otherwise it stays a candidate.
* The filters own the status of candidate, passed and rejected pairs that no expert has decided
  (:func:`owned_by_filters`); an expert's decision (``review.outcome``) and the statuses review and refresh set
  (accepted, stale, retired) are never changed here, though the checks are still recorded on those pairs.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from goldset.filters.base import Severity
from goldset.hashing import hash_obj
from goldset.schema import PairStatus, QAPair

#: The name of generation's own verdict (``goldset.generation.validation.CHECK_NAME``; the tests hold them equal).
GENERATION = "generation"

#: The statuses the filters decide (see :func:`owned_by_filters`).
JUDGED = frozenset({PairStatus.candidate, PairStatus.passed, PairStatus.rejected})

__all__ = [
    "GENERATION",
    "JUDGED",
    "generation_input_hash",
    "generation_rejects",
    "owned_by_filters",
    "pair_status",
    "rejected_before_judges",
    "restamp_severity",
]


def owned_by_filters(pair: QAPair) -> bool:
    """The filters decide this pair's status: it is a candidate, passed or rejected, and no expert decided it (an
    expert's rejection must not become "passed" because the checks pass, nor an acceptance be undone)."""
    return pair.status in JUDGED and pair.review.outcome is None


def generation_input_hash(pair: QAPair) -> str:
    """The ``input_hash`` generation gives its verdict (question, answer, type and evidence, as generated): equal
    as long as none of them changed since (tested against :func:`goldset.generation.validation.validate_reply`)."""
    return hash_obj([pair.question, pair.answer, pair.question_type.value, [e.model_dump() for e in pair.evidence]])


def generation_rejects(pair: QAPair) -> bool:
    """Generation rejected this very text (its verdict failed and the pair has not changed since)."""
    gen = pair.checks.get(GENERATION)
    return gen is not None and not gen.passed and gen.input_hash == generation_input_hash(pair)


def rejected_before_judges(pair: QAPair, names: Collection[str]) -> bool:
    """A cheaper verdict already rejects this pair, so no LLM judge is asked about it: generation's (on this very
    text), an expert's, or one of the checks ``names`` (failed with severity ``reject``)."""
    return pair.review.outcome == "rejected" or generation_rejects(pair) or bool(rejecting(pair, names))


def rejecting(pair: QAPair, names: Collection[str]) -> list[str]:
    """The checks among ``names`` whose verdict rejects the pair (failed with severity ``reject``), in order."""
    return [n for n in names if n in pair.checks and pair.checks[n].rejects]


def pair_status(pair: QAPair, names: Collection[str]) -> PairStatus:
    """rejected / passed / candidate from the verdicts of ``names`` and generation's verdict (module docstring)."""
    if generation_rejects(pair):
        return PairStatus.rejected
    checks, missing = pair.checks, False
    for name in names:  # one look at each verdict (50,000 pairs: half a million)
        res = checks.get(name)
        if res is None:
            missing = True
        elif res.rejects:
            return PairStatus.rejected
    return PairStatus.candidate if missing else PairStatus.passed


def restamp_severity(pair: QAPair, severities: Mapping[str, Severity]) -> QAPair:
    """``pair`` with each verdict of a check in ``severities`` carrying that check's configured severity (changing
    a severity in goldset.yaml re-labels the verdicts; it does not recompute them)."""
    stale = {n: r for n, r in pair.checks.items() if n in severities and r.severity != severities[n]}
    if not stale:
        return pair
    fixed = {n: r.model_copy(update={"severity": severities[n]}) for n, r in stale.items()}
    return pair.model_copy(update={"checks": {**pair.checks, **fixed}})

"""What ``run_filters`` returns: :class:`FilterReport`, the counts and examples the CLI prints."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from goldset.schema import PairStatus, QAPair


@dataclass
class CheckCounts:
    """One check's verdicts over the live pairs after the run. ``severity``: what its failures do (``reject``:
    the pair is rejected; ``flag``: it may still pass, marked for review)."""

    passed: int = 0
    failed: int = 0
    reused: int = 0  # verdicts kept from an earlier run (unchanged input and settings)
    severity: str = "reject"


@dataclass
class FailureExample:
    """A pair that failed a check, to show what the failure looks like."""

    pair_id: str
    question: str
    reason: str


@dataclass
class FilterReport:
    """What one run did and found.

    ``n_pairs``: pairs in the candidates file; ``n_judged``: those whose status the filters decide (candidate,
    passed, rejected). ``checks``: the checks this run ran, in order; ``per_check``: their verdict counts over the
    live (non-retired) pairs, and ``failures_by_type`` the failures per question type; ``status_counts`` /
    ``status_by_type``: pair statuses after the run. ``examples``: up to ``filter.examples`` failures per check.
    ``computed`` / ``reused``: verdicts made this run / kept from an earlier one. ``skipped_checks``: check name ->
    why it did not run (``--no-llm``, no endpoint). ``duplicate_groups``: pairs kept with near-duplicates of
    theirs rejected. ``judge_errors``: failed judge or embedding calls (those pairs stay unjudged: re-run).
    ``repaired`` / ``repair_failed``: pair ids whose answer was rewritten / why a rewrite was not kept.
    ``not_judged``: LLM check name -> pairs it was not asked about because a cheaper verdict already rejects them
    (``filter.judge_rejected`` off).
    ``flagged``: check name -> live pairs this run's check flagged (failed with severity ``flag``: such a pair can
    still pass).
    ``written``: whether the candidates file changed. ``llm`` / ``embedding``: call statistics of every chat call
    (groundedness judge, repair, duplicate judge) and of the embeddings (calls, cache hits, tokens, cost), None when
    unused; ``duplicate_judge``: the duplicate judge's share of ``llm``, with ``candidates`` (pairs asked about) and
    ``batches`` (calls, sent or from the journal). ``judge_consistency``: judge (``groundedness``, ``duplicate``)
    -> (verdicts it returned this run, those that contradicted themselves: supported with unsupported claims
    listed, "same" with no reason; such a verdict is a failed judgement, listed in ``judge_errors``).
    ``copy_judge``: what the copy judge did (:class:`goldset.filters.copy_judge.CopyJudgeCounts`: band pairs asked,
    from the journal, copies, paraphrases, failed, reverted to lexical), None when it did not run.
    ``warnings``: what a reader must know about the judges (one of them is the model that wrote the pairs).
    """

    n_pairs: int = 0
    n_judged: int = 0
    checks: list[str] = field(default_factory=list)
    per_check: dict[str, CheckCounts] = field(default_factory=dict)
    failures_by_type: dict[str, dict[str, int]] = field(default_factory=dict)
    status_by_type: dict[str, dict[str, int]] = field(default_factory=dict)
    status_counts: dict[str, int] = field(default_factory=dict)
    examples: dict[str, list[FailureExample]] = field(default_factory=dict)
    computed: int = 0
    reused: int = 0
    skipped_checks: dict[str, str] = field(default_factory=dict)
    duplicate_groups: int = 0
    judge_errors: list[str] = field(default_factory=list)
    repaired: list[str] = field(default_factory=list)
    repair_failed: dict[str, str] = field(default_factory=dict)
    flagged: dict[str, int] = field(default_factory=dict)
    not_judged: dict[str, int] = field(default_factory=dict)
    written: bool = False
    llm: dict[str, Any] | None = None
    embedding: dict[str, Any] | None = None
    duplicate_judge: dict[str, Any] | None = None
    copy_judge: dict[str, int] | None = None
    judge_consistency: dict[str, tuple[int, int]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def reuse(self, name: str) -> None:
        """Count one verdict of ``name`` kept from an earlier run."""
        self.reused += 1
        self.per_check[name].reused += 1

    def count_consistency(self, judge: str, verdicts: int, inconsistent: int) -> None:
        """Add ``verdicts`` of ``judge`` returned this run, ``inconsistent`` of them contradicting themselves."""
        if not verdicts:
            return
        a, b = self.judge_consistency.get(judge, (0, 0))
        self.judge_consistency[judge] = (a + verdicts, b + inconsistent)

    def consistency_lines(self) -> list[str]:
        """One line per judge whose verdicts were checked this run: how many contradicted themselves (the rate)."""
        return [
            f"judge self-consistency: {judge}: {bad} of {n} verdict(s) contradicted themselves ({bad / n:.0%}); "
            "failed judgements, those pairs are left unjudged"
            if bad
            else f"judge self-consistency: {judge}: 0 of {n} verdict(s) contradicted themselves"
            for judge, (n, bad) in sorted(self.judge_consistency.items())
        ]


def count_verdicts(
    report: FilterReport, pairs: list[QAPair], names: list[str], examples: int, severities: Mapping[str, str]
) -> None:
    """Fill the report's status counts, per-check counts (with each check's severity), failures per type, flags
    and examples from the final pairs."""
    live = [p for p in pairs if p.status != PairStatus.retired]
    report.status_counts = dict(sorted(Counter(p.status.value for p in pairs).items()))
    by_type: dict[str, Counter[str]] = {}
    for p in live:
        by_type.setdefault(p.question_type.value, Counter())[p.status.value] += 1
    report.status_by_type = {t: dict(sorted(c.items())) for t, c in sorted(by_type.items())}
    per_check = {name: report.per_check.setdefault(name, CheckCounts()) for name in names}
    for name, check_counts in per_check.items():
        check_counts.severity = severities.get(name, "reject")
    flagged: dict[str, int] = {}
    failures: dict[str, dict[str, int]] = {}
    shown: dict[str, list[FailureExample]] = {}
    for p in live:  # one pass over the pairs' verdicts (50,000 pairs: half a million)
        for name, res in p.checks.items():
            counts = per_check.get(name)
            if counts is None:
                continue
            if res.passed:
                counts.passed += 1
                continue
            counts.failed += 1
            if res.flagged:
                flagged[name] = flagged.get(name, 0) + 1
            t = failures.setdefault(name, {})
            t[p.question_type.value] = t.get(p.question_type.value, 0) + 1
            some = shown.setdefault(name, [])
            if len(some) < examples:
                some.append(FailureExample(p.id, p.question, res.reason))
    for name in names:  # in the order of the checks, as they are listed
        if name in flagged:
            report.flagged[name] = report.flagged.get(name, 0) + flagged[name]
        if name in failures:
            t = report.failures_by_type.setdefault(name, {})
            for qtype, n in failures[name].items():
                t[qtype] = t.get(qtype, 0) + n
        if shown.get(name):
            report.examples[name] = shown[name]

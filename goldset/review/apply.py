"""Decisions applied to pairs: statuses, edits with their revisions, re-checks, and no older decision winning.

For each pair with new decisions (a decision is identified by its source, one annotation, and its time, so
pulling or importing twice adds nothing):

- every Label Studio decision the pair has is resolved into one (``review/decisions.py``: several annotators);
- when the pair holds a decision from elsewhere that is *later* than every vote of that resolution, the later
  one stands: the new decisions are kept in the pair's history, its status and text do not change;
- ``accept`` -> status ``accepted``; ``reject`` -> ``rejected`` (the decision keeps the reason);
  ``edit`` -> the new text replaces the old, which is kept in ``provenance.revisions`` (reason ``review-edit``,
  by the reviewer), then the pair-level checks run on the new text: ``accepted`` when none fails, ``rejected``
  when one does (a check whose settings have ``severity: flag`` only flags); the outcome stays ``edited``.
  The LLM judge is not re-run here: ``goldset filter`` does that.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from goldset.errors import InputError
from goldset.review.decisions import SOURCE_PREFIX, Agreement, Parsed, Problem, Vote, agreement, resolve
from goldset.schema import PairStatus, QAPair, Revision

if TYPE_CHECKING:
    from goldset.context import Context
    from goldset.filters.settings import FilterSettings
    from goldset.review.store import Workbench
    from goldset.workspace import Workspace

EDIT_REASON = "review-edit"


@dataclass
class Disagreement:
    pair_id: str
    votes: list[str]
    resolved: str


@dataclass
class ApplyReport:
    """What a pull or an import did."""

    source: str = ""
    project: int | None = None
    tasks: int = 0
    annotations: int = 0
    cancelled: int = 0
    decisions_new: int = 0
    already_applied: int = 0
    changed: dict[str, int] = field(default_factory=dict)  # outcome -> pairs whose state changed to it
    per_reviewer: dict[str, int] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)  # annotations not applied, each with its pair and why
    notes: list[str] = field(default_factory=list)
    disagreements: list[Disagreement] = field(default_factory=list)
    rule: str = ""
    agreement: Agreement | None = None
    later_stands: list[str] = field(default_factory=list)
    edits_failing: dict[str, str] = field(default_factory=dict)  # pair id -> failed checks
    written: bool = False

    def check(self) -> None:
        """Raise :class:`InputError` (exit 2) when an annotation could not be applied: :attr:`problems` lists each
        one by pair with the reason. Everything else was applied (and written) already."""
        if self.problems:
            pairs = len({p.pair_id or p.where for p in self.problems})
            raise InputError(
                f"{len(self.problems)} annotation(s) of {pairs} pair(s) could not be applied (the others were), "
                f"e.g. {self.problems[0]}; fix them in Label Studio (or the labeling config) and run it again"
            )


def pre_review_text(pair: QAPair) -> tuple[str, str]:
    """The text a reviewer was shown: before the first review edit, if there was one."""
    for rev in pair.provenance.revisions:
        if rev.reason == EDIT_REASON:
            return rev.question, rev.answer
    return pair.question, pair.answer


def _problem(v: Vote, reason: str) -> Problem:
    annotation = v.decision.source.rsplit(" ", 1)[-1]
    where = f"task {v.task_id}, annotation {annotation} by {v.decision.reviewer}"
    return Problem(v.pair_id, where, reason, v.task_id, v.decision.reviewer, v.precise_at)


def _is_ls(source: str) -> bool:
    return source.startswith(SOURCE_PREFIX)


def apply_parsed(
    ws: Workspace, bench: Workbench, parsed: Parsed, filters: FilterSettings | None, report: ApplyReport
) -> None:
    """Apply every vote of ``parsed`` to ``bench.pairs`` (in memory); fills ``report``."""
    from goldset.review.decisions import RULE

    report.tasks, report.annotations, report.cancelled = parsed.tasks, parsed.annotations, parsed.cancelled
    report.problems.extend(parsed.problems)
    report.notes.extend(parsed.notes)
    report.rule = RULE
    index = {p.id: i for i, p in enumerate(bench.pairs)}
    votes: dict[str, list[Vote]] = defaultdict(list)
    for v in parsed.votes:
        pair = bench.pairs[index[v.pair_id]] if v.pair_id in index else None
        if pair is None:
            why = "the pair is not in the set (removed since?); delete its task in Label Studio"
            report.problems.append(_problem(v, why))
            continue
        if (v.shown_question.strip(), v.shown_answer.strip()) != tuple(t.strip() for t in pre_review_text(pair)):
            why = "the pair's text changed since it was pushed; run `goldset review push` to update the task"
            report.problems.append(_problem(v, why))
            continue
        votes[v.pair_id].append(v)
        report.per_reviewer[v.decision.reviewer] = report.per_reviewer.get(v.decision.reviewer, 0) + 1

    verdicts: dict[str, dict[str, str]] = {}
    edited: list[int] = []
    for pid, vs in sorted(votes.items()):
        i = index[pid]
        pair = bench.pairs[i]
        known = {(d.source, d.at) for d in pair.review.decisions}
        new = [v.decision for v in vs if (v.decision.source, v.decision.at) not in known]
        report.already_applied += len(vs) - len(new)
        history = pair.review.decisions + sorted(new, key=lambda d: (d.at, d.source))
        ls_decisions = [d for d in history if _is_ls(d.source)]
        res = resolve(ls_decisions)
        # The decision applied carries the votes it resolved (several annotators); the others carry none.
        key = (res.decision.source, res.decision.at)
        history = [d.model_copy(update={"resolved_from": res.decision.resolved_from if (d.source, d.at) == key
                                        and _is_ls(d.source) else []}) if _is_ls(d.source) else d
                   for d in history]  # fmt: skip
        verdicts[pid] = {v.split(":", 1)[0]: v.rsplit(":", 1)[1] for v in res.votes}
        if res.disagreement:
            report.disagreements.append(Disagreement(pid, res.votes, res.decision.verdict))
        if not new:
            continue
        report.decisions_new += len(new)
        newest_vote = max(d.at for d in ls_decisions)
        later = [d for d in history if not _is_ls(d.source) and d.at > newest_vote]
        if later:
            report.later_stands.append(f"{pid}: {later[-1].verdict} by {later[-1].reviewer} at {later[-1].at} stands")
            bench.pairs[i] = pair.model_copy(update={"review": pair.review.model_copy(update={"decisions": history})})
            continue
        pair, changed = _apply(pair, res.decision, history)
        bench.pairs[i] = pair
        if res.decision.verdict == "edit" and changed:
            edited.append(i)
        if changed:
            outcome = pair.review.outcome or ""
            report.changed[outcome] = report.changed.get(outcome, 0) + 1
    report.agreement = agreement(verdicts)
    report.problems.sort(key=lambda p: (p.pair_id or "", p.task_id or 0, p.where))
    if edited:
        failures = recheck(ws, bench, edited, filters)
        report.edits_failing.update(failures)


def apply_and_save(ctx: Context, bench: Workbench, parsed: Parsed, report: ApplyReport) -> ApplyReport:
    """Apply, then write the pairs and the manifest once, only when a pair changed."""
    from goldset.filters.settings import FilterSettings
    from goldset.review import store
    from goldset.review.settings import ReviewSettings

    before = {p.id: p.model_dump_json() for p in bench.pairs}
    apply_parsed(ctx.workspace, bench, parsed, ctx.section(FilterSettings), report)
    if any(before[p.id] != p.model_dump_json() for p in bench.pairs):
        store.save(ctx.data, bench, ctx.section(ReviewSettings))
        report.written = True
    return report


def _apply(pair: QAPair, decision: Any, history: list[Any]) -> tuple[QAPair, bool]:
    """The pair after ``decision``; whether its status, outcome or text changed."""
    outcome = {"accept": "accepted", "reject": "rejected", "edit": "edited"}[decision.verdict]
    update: dict[str, Any] = {}
    if decision.verdict == "edit":
        q = decision.question or pair.question
        a = decision.answer or pair.answer
        if (q, a) != (pair.question, pair.answer):
            rev = Revision(question=pair.question, answer=pair.answer, at=decision.at, reason=EDIT_REASON,
                           by=decision.reviewer)  # fmt: skip
            update["question"], update["answer"] = q, a
            update["provenance"] = pair.provenance.model_copy(
                update={"revisions": [*pair.provenance.revisions, rev]}
            )
        status = PairStatus.accepted  # until the re-check says otherwise
    else:
        status = PairStatus.accepted if decision.verdict == "accept" else PairStatus.rejected
    changed = bool(update) or pair.review.outcome != outcome or pair.status != status
    review = pair.review.model_copy(update={"decisions": history, "outcome": outcome})
    return pair.model_copy(update={**update, "review": review, "status": status}), changed


def recheck(
    ws: Workspace, bench: Workbench, positions: Sequence[int], filters: FilterSettings | None
) -> dict[str, str]:
    """Run the enabled pair-level checks on the edited pairs at ``positions`` with the filters' own stage (the same
    verdicts, hashes and KB-wide lookups as ``goldset filter``); a pair a check rejects becomes ``rejected``, a
    flag only flags. Returns pair id -> what rejected it."""
    from goldset.filters.registry import CHECKS
    from goldset.filters.report import CheckCounts, FilterReport
    from goldset.filters.run_state import FilterRun
    from goldset.filters.settings import FilterSettings
    from goldset.filters.stage_pair_checks import run_pair_checks
    from goldset.filters.status import rejecting

    filters = filters or FilterSettings()
    names = [n for n, spec in CHECKS.items() if spec.kind == "pair" and filters.for_check(n).enabled is not False]
    # per_check has every name: a verdict the edit leaves valid (e.g. evidence, when only the answer changed) is
    # reused and counted there
    report = FilterReport(per_check={n: CheckCounts() for n in names})
    run = FilterRun(ws=ws, settings=filters, names=names, chunks=dict(bench.chunks), report=report)
    pairs = [bench.pairs[i] for i in positions]
    run_pair_checks(run, pairs)
    failing: dict[str, str] = {}
    for i, pair in zip(positions, pairs, strict=True):
        failed = rejecting(pair, names)
        bench.pairs[i] = pair.model_copy(update={"status": PairStatus.rejected if failed else PairStatus.accepted})
        if failed:
            failing[pair.id] = "; ".join(f"{n}: {pair.checks[n].reason}" for n in failed)
    return failing


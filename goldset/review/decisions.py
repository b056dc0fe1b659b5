"""Label Studio annotations as review decisions: reading, checking, resolving several annotators, agreement.

**Reading one annotation.** A skipped (cancelled) annotation is no decision. Every result item must fit the
labeling config (``review/config.py``), else the whole annotation is reported (by pair) and skipped; a choice is
read by its alias (what Label Studio's UI stores) or its displayed text, also in another case. The ``verdict`` is
the decision; ``edited_question`` / ``edited_answer`` are compared with the text the task showed: a verdict
``accept`` whose text was changed counts as ``edit`` (the reviewer corrected it in place), an ``edit`` that
changed nothing counts as ``accept``. A rejection's ``reason`` is the criteria left unticked, then the comment.

**Several annotators per task** (:data:`RULE`). Each annotator's latest annotation of the task counts once. The
verdict most annotators gave wins; a tie goes to the more cautious verdict, reject before edit before accept
(a golden set would rather lose a pair than keep a wrong one). The decision applied is the latest one with the
winning verdict (its edited text, its reason). Any split is reported as a disagreement with every vote.

**Agreement.** Cohen's kappa for each pair of annotators over the tasks both annotated, Fleiss' kappa over the
tasks with the most common number of annotators (2 or more); both over the three verdicts. Small pure functions.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from goldset.review.config import COMMENT, CRITERIA, EDITED_ANSWER, EDITED_QUESTION, VERDICT, LabelConfig
from goldset.review.labelstudio import TEXT_AT
from goldset.schema import ReviewDecision

#: Tie-break order of the resolution: the more cautious verdict first.
CAUTION = {"reject": 0, "edit": 1, "accept": 2}
RULE = (
    "each annotator's latest annotation counts once; the verdict most annotators gave wins; a tie goes to the "
    "more cautious verdict (reject, then edit, then accept); the latest annotation with that verdict is applied"
)
SOURCE_PREFIX = "label-studio:"


@dataclass
class Vote:
    """One annotator's decision on one task, and the text that task showed them."""

    pair_id: str
    task_id: int
    decision: ReviewDecision
    shown_question: str
    shown_answer: str
    precise_at: datetime  # with microseconds, for comparing with server times
    note: str = ""  # e.g. "accept with changed text: counted as edit"


@dataclass
class Problem:
    """An annotation (or a task) that cannot be applied, and why; reported by pair, never guessed at."""

    pair_id: str | None
    where: str  # "task 7, annotation 11 by ann@example.com"
    reason: str
    task_id: int | None = None
    reviewer: str | None = None
    at: datetime | None = None

    def __str__(self) -> str:
        if self.pair_id:
            return f"{self.pair_id}: {self.reason} ({self.where})"
        return f"{self.where}: {self.reason}"


@dataclass
class Parsed:
    tasks: int = 0
    annotations: int = 0
    cancelled: int = 0
    votes: list[Vote] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def reviewer_of(annotation: Mapping[str, Any], users: Mapping[int, str]) -> str:
    who = annotation.get("completed_by")
    if isinstance(who, dict):
        return str(who.get("email") or who.get("username") or f"user {who.get('id')}")
    if isinstance(who, int):
        return users.get(who, f"user {who}")
    return "unknown"


def _text(value: Any) -> str:
    text = value.get("text") if isinstance(value, dict) else None
    if isinstance(text, list):
        return "\n".join(t for t in text if isinstance(t, str)).strip()
    return text.strip() if isinstance(text, str) else ""


def _chosen(config: LabelConfig, item: Mapping[str, Any] | None) -> list[str]:
    """The stored values of a (checked) Choices result: the alias or displayed text a result gives, as the
    config's stored value (``review/config.py``)."""
    if item is None:
        return []
    control = config.controls[item["from_name"]]
    return [control.stored(v) or v for v in item["value"].get("choices") or []]


def read_annotation(
    task: Mapping[str, Any], annotation: Mapping[str, Any], config: LabelConfig, users: Mapping[int, str]
) -> Vote | Problem | None:
    """One annotation of an exported task: a vote, a problem (reported and skipped) or None (skipped)."""
    data = task.get("data") or {}
    tid = task.get("id")
    who = reviewer_of(annotation, users)
    precise = parse_time(annotation.get("updated_at")) or parse_time(annotation.get("created_at"))
    pair_id = data.get("pair_id") if isinstance(data.get("pair_id"), str) and data.get("pair_id") else None
    where = f"task {tid}, annotation {annotation.get('id')} by {who}"

    def problem(reason: str) -> Problem:
        return Problem(pair_id, where, reason, int(tid) if isinstance(tid, int) else None, who, precise)

    if annotation.get("was_cancelled"):
        return None
    if pair_id is None:
        return problem("the task has no pair_id in its data; it was not made by goldset")
    results = annotation.get("result") or []
    if not isinstance(results, list):
        return problem("result is not a list")
    by_name: dict[str, dict[str, Any]] = {}
    for item in results:
        bad = config.problem(item)
        if bad is not None:
            return problem(f"does not match the labeling config ({config.source}): {bad}")
        by_name.setdefault(item["from_name"], item)
    chosen = _chosen(config, by_name.get(VERDICT))
    if not chosen:
        return problem("no verdict chosen")
    control = config.controls[VERDICT]
    verdict: Literal["accept", "reject", "edit"]
    if chosen[0] == control.stored("accept"):
        verdict = "accept"
    elif chosen[0] == control.stored("reject"):
        verdict = "reject"
    elif chosen[0] == control.stored("edit"):
        verdict = "edit"
    else:  # a choice the config has beyond the three
        return problem(f"verdict {chosen[0]!r} is not accept, reject or edit")
    shown_q, shown_a = str(data.get("question", "")), str(data.get("answer", ""))
    # An emptied box is "not given", not an empty text (a pair's question and answer are never empty).
    new_q = _text(by_name.get(EDITED_QUESTION, {}).get("value")) or shown_q.strip()
    new_a = _text(by_name.get(EDITED_ANSWER, {}).get("value")) or shown_a.strip()
    q_changed, a_changed = new_q != shown_q.strip(), new_a != shown_a.strip()
    changed = q_changed or a_changed
    note = ""
    if verdict == "accept" and changed:
        verdict, note = "edit", "accepted with corrected text: counted as edit"
    elif verdict == "edit" and not changed:
        verdict, note = "accept", "edit without any change: counted as accept"
    criteria = _chosen(config, by_name.get(CRITERIA))
    comment = _text(by_name.get(COMMENT, {}).get("value"))
    reason = ""
    if verdict == "reject":
        criteria_control = config.controls.get(CRITERIA)
        unmet = [c for c in (criteria_control.values if criteria_control else ()) if c not in criteria]
        parts = ([f"criteria not met: {', '.join(unmet)}"] if unmet else []) + ([comment] if comment else [])
        reason = "; ".join(parts) or "no reason given"
    if precise is None:
        return problem("has no created_at/updated_at time")
    project = task.get("project") or annotation.get("project")
    decision = ReviewDecision(
        reviewer=who,
        at=precise.replace(microsecond=0),
        verdict=verdict,
        question=new_q if verdict == "edit" and q_changed else None,
        answer=new_a if verdict == "edit" and a_changed else None,
        criteria=criteria,
        comment=comment,
        reason=reason,
        source=f"{SOURCE_PREFIX}project {project} task {tid} annotation {annotation.get('id')}",
    )
    text_at = parse_time((task.get("meta") or {}).get(TEXT_AT))
    if text_at is not None and precise < text_at:
        return problem("made on an earlier text of the pair (the task was updated since); annotate it again")
    return Vote(pair_id, int(tid or 0), decision, shown_q, shown_a, precise, note)


def parse_export(tasks: Sequence[Any], config: LabelConfig, users: Mapping[int, str]) -> Parsed:
    """Every annotation of a full JSON export (or of the task list with annotations). An annotation that cannot
    be read but that its reviewer replaced by a later, readable one of the same task is superseded: a note, not a
    problem (each reviewer's latest annotation is the one that counts)."""
    out = Parsed()
    problems: list[Problem] = []
    for task in tasks:
        if not isinstance(task, dict):
            problems.append(Problem(None, "export", "an item is not a task object"))
            continue
        out.tasks += 1
        for ann in task.get("annotations") or []:
            out.annotations += 1
            got = read_annotation(task, ann, config, users)
            if got is None:
                out.cancelled += 1
            elif isinstance(got, Problem):
                problems.append(got)
            else:
                out.votes.append(got)
                if got.note:
                    out.notes.append(f"task {got.task_id} ({got.pair_id}), {got.decision.reviewer}: {got.note}")
    # Each reviewer's latest annotation of a task is the one that counts: a problem their later vote replaced is
    # only a note, a vote their later unreadable annotation replaced is not applied (the problem says why).
    def key(task_id: int | None, reviewer: str | None) -> tuple[int, str]:
        return task_id or 0, reviewer or ""

    last_vote: dict[tuple[int, str], datetime] = {}
    for v in out.votes:
        k = key(v.task_id, v.decision.reviewer)
        last_vote[k] = max(last_vote.get(k, v.precise_at), v.precise_at)
    last_problem: dict[tuple[int, str], datetime] = {}
    for p in problems:
        later = last_vote.get(key(p.task_id, p.reviewer))
        if p.at is not None and later is not None and p.at < later:
            out.notes.append(f"{p}: superseded by the same reviewer's later annotation")
            continue
        out.problems.append(p)
        if p.at is not None and p.task_id is not None:
            k = key(p.task_id, p.reviewer)
            last_problem[k] = max(last_problem.get(k, p.at), p.at)
    kept = []
    for v in out.votes:
        after = last_problem.get(key(v.task_id, v.decision.reviewer))
        if after is not None and v.precise_at < after:
            out.notes.append(f"task {v.task_id} ({v.pair_id}), {v.decision.reviewer}: {v.decision.verdict} not "
                             "applied, their later annotation of the task replaced it")  # fmt: skip
        else:
            kept.append(v)
    out.votes = kept
    return out


@dataclass
class Resolution:
    decision: ReviewDecision
    votes: list[str]  # "reviewer:verdict", sorted
    disagreement: bool


def latest_per_reviewer(decisions: Sequence[ReviewDecision]) -> list[ReviewDecision]:
    latest: dict[str, ReviewDecision] = {}
    for d in sorted(decisions, key=lambda d: (d.at, d.source)):
        latest[d.reviewer] = d
    return sorted(latest.values(), key=lambda d: (d.at, d.source))


def resolve(decisions: Sequence[ReviewDecision]) -> Resolution:
    """One decision from several annotators' (see :data:`RULE`). ``decisions`` must not be empty."""
    current = latest_per_reviewer(decisions)
    counts = Counter(d.verdict for d in current)
    winner = min(counts, key=lambda v: (-counts[v], CAUTION[v]))
    chosen = [d for d in current if d.verdict == winner][-1]
    votes = sorted(f"{d.reviewer}:{d.verdict}" for d in current)
    if len(current) > 1:
        chosen = chosen.model_copy(update={"resolved_from": votes})
    return Resolution(decision=chosen, votes=votes, disagreement=len(counts) > 1)


def cohen_kappa(a: Sequence[str], b: Sequence[str]) -> float | None:
    """Cohen's kappa of two raters' labels of the same items; None when undefined (no items, or chance
    agreement is 1 because both always gave one and the same label)."""
    if len(a) != len(b):
        raise ValueError("cohen_kappa: both raters must label the same items")
    n = len(a)
    if n == 0:
        return None
    observed = sum(1 for x, y in zip(a, b, strict=True) if x == y) / n
    ca, cb = Counter(a), Counter(b)
    expected = sum(ca[k] * cb[k] for k in ca) / (n * n)
    if expected >= 1:
        return None
    return (observed - expected) / (1 - expected)


def fleiss_kappa(table: Sequence[Mapping[str, int]]) -> float | None:
    """Fleiss' kappa of a table: one row per item, category -> number of raters who chose it; every row must
    have the same number of raters (2 or more). None when undefined."""
    if not table:
        return None
    n = sum(table[0].values())
    if n < 2 or any(sum(row.values()) != n for row in table):
        raise ValueError("fleiss_kappa: every item needs the same number of raters, at least 2")
    items = len(table)
    totals: Counter[str] = Counter()
    for row in table:
        totals.update(row)
    p_j = {k: v / (items * n) for k, v in totals.items()}
    p_i = [(sum(c * c for c in row.values()) - n) / (n * (n - 1)) for row in table]
    p_bar = sum(p_i) / items
    p_e = sum(p * p for p in p_j.values())
    if p_e >= 1:
        return None
    return (p_bar - p_e) / (1 - p_e)


@dataclass
class Agreement:
    fleiss: float | None = None
    fleiss_items: int = 0
    raters_per_item: int = 0
    cohen: dict[tuple[str, str], tuple[float | None, int]] = field(default_factory=dict)  # (a, b) -> (kappa, items)


def agreement(verdicts: Mapping[str, Mapping[str, str]]) -> Agreement | None:
    """Agreement over items annotated by 2+ reviewers; ``verdicts``: item -> reviewer -> verdict."""
    multi = {item: v for item, v in verdicts.items() if len(v) >= 2}
    if not multi:
        return None
    out = Agreement()
    sizes = Counter(len(v) for v in multi.values())
    k = max(sizes, key=lambda s: (sizes[s], s))
    rows = [Counter(v.values()) for v in multi.values() if len(v) == k]
    out.fleiss, out.fleiss_items, out.raters_per_item = fleiss_kappa(rows), len(rows), k
    pairs: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for v in multi.values():
        names = sorted(v)
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                pairs[(a, b)].append((v[a], v[b]))
    for key, labels in sorted(pairs.items()):
        out.cohen[key] = (cohen_kappa([x for x, _ in labels], [y for _, y in labels]), len(labels))
    return out

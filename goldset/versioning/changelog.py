"""What changed between two versions of a golden set, as data (:class:`VersionDiff`) and as Markdown.

The comparison is about the *golden set* of each side (``manifest.golden_ids``; for a dataset folder without a
release manifest: its accepted and passed pairs): pairs added to it, pairs that left it (with the reason: retired
after a document change, rejected, stale, removed), golden pairs whose question, answer or evidence text differs
from the old side's record of them (a word diff; whatever made the change: an expert's edit, refresh, a hand edit
of ``pairs.jsonl``) or whose type changed; beside them the figures of each side (counts, review sample and quality
estimate, KB snapshot), what the new side's estimate speaks for (:func:`estimate_line`: the share of its golden
pairs, the new and edited pairs it is older than) and the documents of the corpus that were added, removed or
changed.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from goldset.corpus import doc_id_of, is_shard
from goldset.dataset import Dataset
from goldset.schema import Evidence, Manifest, PairStatus, QAPair, ReviewSampleStats

_TOKEN = re.compile(r"[A-Za-z0-9_]+|\s+|.", re.DOTALL)


@dataclass
class Side:
    """The figures of one version."""

    name: str
    created_at: datetime | None = None
    message: str = ""
    n_pairs: int = 0
    n_golden: int = 0
    n_unreviewed: int = 0
    golden_by_type: dict[str, int] = field(default_factory=dict)
    golden_by_language: dict[str, int] = field(default_factory=dict)
    counts_by_status: dict[str, int] = field(default_factory=dict)
    review: ReviewSampleStats | None = None
    kb_snapshot_id: str | None = None
    n_documents: int = 0
    n_chunks: int = 0


@dataclass
class LeftPair:
    """A pair that left the golden set, and why."""

    id: str
    question: str
    question_type: str
    reason: str


@dataclass
class EditedPair:
    """A golden pair whose text differs from the old side's record of it (question, answer or evidence)."""

    id: str
    question_type: str
    old_question: str
    new_question: str
    old_answer: str
    new_answer: str
    old_evidence: str = ""
    new_evidence: str = ""

    @property
    def question_diff(self) -> str | None:
        return word_diff(self.old_question, self.new_question) if self.old_question != self.new_question else None

    @property
    def answer_diff(self) -> str | None:
        return word_diff(self.old_answer, self.new_answer) if self.old_answer != self.new_answer else None

    @property
    def evidence_diff(self) -> str | None:
        return word_diff(self.old_evidence, self.new_evidence) if self.old_evidence != self.new_evidence else None


def evidence_text(evidence: list[Evidence]) -> str:
    """A pair's evidence as one comparable line: each quote with its chunk, in order."""
    return " | ".join(f"{e.quote} [{e.chunk_id}]" for e in evidence)


@dataclass
class TypeChange:
    id: str
    question: str
    old_type: str
    new_type: str


@dataclass
class VersionDiff:
    old: Side | None
    new: Side
    added: list[QAPair] = field(default_factory=list)
    retired: list[LeftPair] = field(default_factory=list)
    edited: list[EditedPair] = field(default_factory=list)
    type_changes: list[TypeChange] = field(default_factory=list)
    documents_added: list[str] = field(default_factory=list)
    documents_removed: list[str] = field(default_factory=list)
    documents_changed: list[str] = field(default_factory=list)
    #: what the new side's estimate speaks for: its golden pairs, those it covers, and (ids) the golden pairs added
    #: since the old side that it does not cover, and the edited ones with no review decision since the old side
    n_golden: int = 0
    n_covered: int = 0
    outside_added: list[str] = field(default_factory=list)
    edited_unreviewed: list[str] = field(default_factory=list)

    @property
    def has_changes(self) -> bool:
        return bool(
            self.added or self.retired or self.edited or self.type_changes or self.documents_added
            or self.documents_removed or self.documents_changed
        )  # fmt: skip


def side_of(name: str, dataset: Dataset) -> Side:
    manifest: Manifest | None = dataset.manifest
    ids = dataset.golden_ids()
    golden = [p for p in dataset.pairs if p.id in ids]
    shards = [n for n in (manifest.files if manifest else {}) if is_shard(n)]
    return Side(
        name=name,
        created_at=manifest.created_at if manifest else None,
        message=manifest.message if manifest else "",
        n_pairs=len(dataset.pairs),
        n_golden=len(golden),
        n_unreviewed=len(manifest.unreviewed_ids) if manifest else 0,
        golden_by_type=dict(sorted(Counter(p.question_type.value for p in golden).items())),
        golden_by_language=dict(sorted(Counter(p.language for p in golden).items())),
        counts_by_status=dict(sorted(Counter(p.status.value for p in dataset.pairs).items())),
        review=manifest.review if manifest else None,
        kb_snapshot_id=manifest.kb_snapshot_id if manifest else None,
        n_documents=manifest.n_documents or len(shards) if manifest else 0,
        n_chunks=manifest.n_chunks if manifest else len(dataset.chunks),
    )


def _left_reason(old: QAPair, new: QAPair | None, golden_rule: str | None) -> str:
    if new is None:
        return "removed from pairs.jsonl"
    refresh = new.checks.get("refresh")
    if new.status is PairStatus.retired:
        return refresh.reason if refresh and refresh.reason else "retired"
    if new.status is PairStatus.stale:
        why = refresh.reason if refresh and refresh.reason else "its evidence changed"
        return f"stale, waiting for review: {why}"
    if new.status is PairStatus.rejected:
        failed = [f"{name}: {c.reason}" for name, c in sorted(new.checks.items()) if not c.passed]
        return "rejected" + (f" ({failed[0]})" if failed else "")
    if new.status is PairStatus.passed and golden_rule == "accepted":
        return "not accepted in review (this release takes accepted pairs only)"
    return new.status.value


def diff_datasets(old: Dataset | None, new: Dataset, old_name: str | None, new_name: str) -> VersionDiff:
    """The changes from ``old`` (None: nothing before, every golden pair is added) to ``new``."""
    from goldset.review.estimate import coverage

    new_ids = sorted(new.golden_ids())
    new_by_id = {p.id: p for p in new.pairs}
    diff = VersionDiff(old=side_of(old_name or "", old) if old is not None else None, new=side_of(new_name, new))
    cover = coverage(new.pairs, new_ids)
    diff.n_golden, diff.n_covered = len(cover.golden), len(cover.covered)
    if old is None:
        diff.added = [new_by_id[i] for i in new_ids]
        diff.outside_added = sorted(cover.outside)
        diff.documents_added = sorted(doc_id_of(n) for n in (new.manifest.files if new.manifest else {}) if is_shard(n))
        return diff
    old_ids = old.golden_ids()
    old_by_id = {p.id: p for p in old.pairs}
    rule = new.manifest.golden_rule if new.manifest else None
    new_set = set(new_ids)
    diff.added = [new_by_id[i] for i in new_ids if i not in old_ids]
    diff.outside_added = [p.id for p in diff.added if p.id in cover.outside]
    diff.retired = [
        LeftPair(i, old_by_id[i].question, old_by_id[i].question_type.value,
                 _left_reason(old_by_id[i], new_by_id.get(i), rule))
        for i in sorted(old_ids - new_set)
    ]  # fmt: skip
    since = old.manifest.created_at if old.manifest else None
    for i in new_ids:
        a, b = old_by_id.get(i), new_by_id[i]
        if a is None:
            continue  # new to pairs.jsonl: added, nothing to compare with
        ev_a, ev_b = evidence_text(a.evidence), evidence_text(b.evidence)
        if a.question != b.question or a.answer != b.answer or ev_a != ev_b:
            diff.edited.append(
                EditedPair(i, b.question_type.value, a.question, b.question, a.answer, b.answer, ev_a, ev_b)
            )
            decided = max((d.at for d in b.review.decisions), default=None)
            if decided is None or (since is not None and decided < since):
                diff.edited_unreviewed.append(i)
        if a.question_type != b.question_type:
            diff.type_changes.append(TypeChange(i, b.question, a.question_type.value, b.question_type.value))
    old_files = {doc_id_of(n): h for n, h in (old.manifest.files if old.manifest else {}).items() if is_shard(n)}
    new_files = {doc_id_of(n): h for n, h in (new.manifest.files if new.manifest else {}).items() if is_shard(n)}
    diff.documents_added = sorted(set(new_files) - set(old_files))
    diff.documents_removed = sorted(set(old_files) - set(new_files))
    diff.documents_changed = sorted(d for d in set(old_files) & set(new_files) if old_files[d] != new_files[d])
    return diff


def word_diff(old: str, new: str) -> str:
    """Inline Markdown: removed words ~~struck~~, added words **bold**; Chinese compared character by character."""
    a, b = _TOKEN.findall(old), _TOKEN.findall(new)
    out: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            out.append("".join(a[i1:i2]))
            continue
        removed, added = "".join(a[i1:i2]), "".join(b[j1:j2])
        both = removed + added
        if both[:1].isspace():
            out.append(" ")  # the change starts a word: keep it apart from the text before
        if removed.strip():
            out.append(f"~~{removed.strip()}~~" + (" " if added.strip() else ""))
        if added.strip():
            out.append(f"**{added.strip()}**")
        if both[-1:].isspace():
            out.append(" ")
    return _one_line("".join(out))


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{x:.0%}"


def review_line(review: ReviewSampleStats | None) -> str:
    if review is None or not review.sampled:
        return "no review sample"
    line = f"{review.reviewed}/{review.sampled} sampled pairs reviewed, {review.accepted} accepted"
    if review.edited:
        line += f", {review.edited} edited"
    if review.rejected:
        line += f", {review.rejected} rejected"
    if review.acceptance_rate is not None:
        line += f"; quality {_pct(review.acceptance_rate)}"
        if review.ci_low is not None and review.ci_high is not None:
            line += f" (95% CI {_pct(review.ci_low)}–{_pct(review.ci_high)})"
        if review.golden:
            line += f", speaks for {review.covered}/{review.golden} golden"
    return line


#: Below this share of the golden pairs, the estimate is called older than the pairs even with nothing new.
MIN_COVERAGE = 0.9


def estimate_line(diff: VersionDiff) -> str | None:
    """What the new side's quality estimate speaks for, in one line: the share of its golden pairs, the golden
    pairs added since the old side that nobody reviewed (in no review round), the edited pairs with no review
    decision since, the sample pairs gone since they were drawn; None when the new side has no review sample."""
    review = diff.new.review
    if review is None or not (review.sampled or review.rounds):
        return None
    golden, covered = diff.n_golden, diff.n_covered
    share = f" ({_pct(covered / golden)})" if golden else ""
    if review.acceptance_rate is None:
        line = f"Quality estimate: none yet (no decided random pair); {covered} of {golden} golden pairs reviewed"
    else:
        rate = _pct(review.acceptance_rate)
        if review.ci_low is not None and review.ci_high is not None:
            rate += f" [{_pct(review.ci_low)}–{_pct(review.ci_high)}]"
        what = f"all {golden} golden pairs" if covered == golden else f"{covered} of {golden} golden pairs{share}"
        line = f"Quality estimate: {rate} speaks for {what}"
    old = diff.old
    new_ones = len(diff.outside_added) if old is not None else 0
    rest = golden - covered - new_ones
    if old is not None and new_ones:
        line += f"; {_n(new_ones, 'new pair')} unreviewed since {old.name}"
    if rest > 0:
        line += f"; {rest} {'more ' if new_ones else ''}outside it (in no review round, or not decided yet)"
    if old is not None and diff.edited_unreviewed:
        line += f"; {len(diff.edited_unreviewed)} edited since {old.name} with no review decision since"
    if review.retired_since:
        line += (f"; {_n(review.retired_since, 'pair')} of the sample rounds left the set since they were drawn "
                 f"({review.random_retired} of the random part), no longer counted")  # fmt: skip
    older = diff.outside_added or diff.edited_unreviewed or (golden and covered / golden < MIN_COVERAGE)
    if older:
        line += ". The estimate is older than these pairs: review them (`goldset review sample`, push, pull)"
    return line + "."


def _n(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items()) or "–"


def to_markdown(diff: VersionDiff, *, level: int = 2, limit: int | None = None) -> str:
    """The changelog section of ``diff.new`` (``level``: heading level; ``limit``: items shown per list)."""
    h = "#" * level
    new, old = diff.new, diff.old
    title = f"{h} {new.name}"
    if new.created_at is not None:
        title += f" ({new.created_at.date().isoformat()})"
    lines = [title, ""]
    if new.message:
        lines += [new.message.strip(), ""]
    lines.append(f"Compared with {old.name}." if old is not None else "First release.")
    lines.append("")
    lines += ["| | " + (f"{old.name} | " if old else "") + f"{new.name} |", "|---|" + ("---|" if old else "") + "---|"]

    def row(label: str, get: object) -> None:
        values = [get(s) for s in ((old, new) if old else (new,))]  # type: ignore[operator]
        lines.append(f"| {label} | " + " | ".join(str(v) for v in values) + " |")

    row("golden pairs", lambda s: s.n_golden)
    row("of which unreviewed", lambda s: s.n_unreviewed)
    row("by type", lambda s: _counts(s.golden_by_type))
    row("by language", lambda s: _counts(s.golden_by_language))
    row("all pairs by status", lambda s: _counts(s.counts_by_status))
    row("review sample", lambda s: review_line(s.review))
    row("KB snapshot", lambda s: f"`{s.kb_snapshot_id}`" if s.kb_snapshot_id else "–")
    row("corpus", lambda s: f"{s.n_documents} documents, {s.n_chunks} chunks")
    lines.append("")
    estimate = estimate_line(diff)
    if estimate is not None:
        lines += [estimate, ""]

    def items(title: str, entries: list[str]) -> None:
        lines.append(f"{h}# {title} ({len(entries)})")
        lines.append("")
        shown = entries if limit is None else entries[:limit]
        lines.extend(shown or ["none"])
        if limit is not None and len(entries) > limit:
            lines.append(f"- … and {len(entries) - limit} more")
        lines.append("")

    items("Added", [f"- `{p.id}` ({p.question_type.value}, {p.language}) {_one_line(p.question)}" for p in diff.added])
    items("Retired", [f"- `{p.id}` ({p.question_type}) {_one_line(p.question)} — {p.reason}" for p in diff.retired])
    edited: list[str] = []
    for e in diff.edited:
        edited.append(f"- `{e.id}` ({e.question_type})")
        if e.question_diff is not None:
            edited.append(f"  - question: {e.question_diff}")
        if e.answer_diff is not None:
            edited.append(f"  - answer: {e.answer_diff}")
        if e.evidence_diff is not None:
            edited.append(f"  - evidence: {e.evidence_diff}")
    lines.append(f"{h}# Edited ({len(diff.edited)})")
    lines.append("")
    lines.extend(edited or ["none"])
    lines.append("")
    items(
        "Type changes", [f"- `{t.id}` {t.old_type} → {t.new_type}: {_one_line(t.question)}" for t in diff.type_changes]
    )
    docs = (
        [f"- added `{d}`" for d in diff.documents_added]
        + [f"- removed `{d}`" for d in diff.documents_removed]
        + [f"- changed `{d}`" for d in diff.documents_changed]
    )
    items("Corpus documents", docs)
    return "\n".join(lines).rstrip() + "\n"

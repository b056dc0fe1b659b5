"""What changed between two versions of a golden set, as data (:class:`VersionDiff`) and as Markdown.

The comparison is about the *golden set* of each side (``manifest.golden_ids``; for a dataset folder without a
release manifest: its accepted and passed pairs): pairs added to it, pairs that left it (with the reason: retired
after a document change, rejected, stale, removed), pairs in both whose question or answer changed (a word diff)
or whose type changed; beside them the figures of each side (counts, review sample and quality estimate, KB
snapshot) and the documents of the corpus that were added, removed or changed.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from goldset.corpus import doc_id_of, is_shard
from goldset.dataset import Dataset
from goldset.schema import Manifest, PairStatus, QAPair, ReviewSampleStats

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
    id: str
    question_type: str
    old_question: str
    new_question: str
    old_answer: str
    new_answer: str

    @property
    def question_diff(self) -> str | None:
        return word_diff(self.old_question, self.new_question) if self.old_question != self.new_question else None

    @property
    def answer_diff(self) -> str | None:
        return word_diff(self.old_answer, self.new_answer) if self.old_answer != self.new_answer else None


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
    new_ids = sorted(new.golden_ids())
    new_by_id = {p.id: p for p in new.pairs}
    diff = VersionDiff(old=side_of(old_name or "", old) if old is not None else None, new=side_of(new_name, new))
    if old is None:
        diff.added = [new_by_id[i] for i in new_ids]
        diff.documents_added = sorted(doc_id_of(n) for n in (new.manifest.files if new.manifest else {}) if is_shard(n))
        return diff
    old_ids = old.golden_ids()
    old_by_id = {p.id: p for p in old.pairs}
    rule = new.manifest.golden_rule if new.manifest else None
    new_set = set(new_ids)
    diff.added = [new_by_id[i] for i in new_ids if i not in old_ids]
    diff.retired = [
        LeftPair(i, old_by_id[i].question, old_by_id[i].question_type.value,
                 _left_reason(old_by_id[i], new_by_id.get(i), rule))
        for i in sorted(old_ids - new_set)
    ]  # fmt: skip
    for i in new_ids:
        if i not in old_ids:
            continue
        a, b = old_by_id[i], new_by_id[i]
        if a.question != b.question or a.answer != b.answer:
            diff.edited.append(EditedPair(i, b.question_type.value, a.question, b.question, a.answer, b.answer))
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
        if removed.strip():
            out.append(f"~~{removed.strip()}~~" + (" " if added.strip() else ""))
        if added.strip():
            out.append(f"**{added.strip()}**")
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
    return line


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

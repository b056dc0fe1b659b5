"""`goldset refresh DOCS_DIR`: bring the pairs up to date after the documents changed.

The documents are ingested into a temporary folder and compared with the workspace's KB snapshot; each pair,
whatever its status (retired ones are done), is then judged by its evidence, chunk by chunk, against the text it
was written from (``provenance.chunk_hashes``):

- an evidence chunk is gone → the pair is **retired** (status ``retired``, the reason in ``checks["refresh"]``);
- an evidence chunk's text changed → the pair is re-checked against the new text: every evidence quote must still
  be in its chunk and, for reviewed pairs (``accepted``, ``stale``), the LLM judge must still find the answer
  supported (candidate, passed and rejected pairs are judged by the filters, which see that their evidence
  changed). A pair that holds stays as it was, its chunk hashes moved to the new text (so the filters re-check it
  and a release finds its evidence current); one that does not is retired and replaced by pairs generated from
  the new text (``versioning.stale_pairs: regenerate``) or kept as ``stale`` for a reviewer (``review``); a
  rejected pair that does not hold is retired either way (nobody reviews a rejected pair);
- new and changed chunks get new pairs through the generation engine; unchanged chunks cost no call;
- every other pair is left alone.

Then the filters run over the whole set (so a new pair that repeats an existing question is a duplicate); they
judge only what changed: verdicts are keyed on what each check read, no judge is asked about a pair a cheaper
check rejected, and the duplicate judge only about candidate pairs it never judged. Every pair refresh touched
carries a tag (``refresh:new``, ``refresh:rechecked``, ``refresh:review``, ``refresh:retired``) so the review
sample can start with what changed. ``dry_run`` ingests and plans only: it prints what would happen and the
calls of every kind it would take (generation exactly, the judges as an upper bound), calls nothing and writes
nothing.

Order of work: everything is read and planned, then every LLM call is made (generation with ``write=False``, the
judge), and only then are files written: the pairs first, then the KB snapshot. An interrupted refresh can be run
again: calls come back from the call journal, pairs already updated are recognised by their chunk hashes.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goldset.context import Context
from goldset.errors import InputError
from goldset.filters.settings import FilterSettings
from goldset.progress import ProgressCallback
from goldset.schema import CheckResult, Chunk, KBSnapshot, PairStatus, QAPair
from goldset.versioning.settings import VersioningSettings

if TYPE_CHECKING:
    from goldset.filters import FilterReport
    from goldset.generation.estimate import Estimate
    from goldset.generation.runner import GenerationReport
    from goldset.kb.snapshot import KBDiff
    from goldset.workspace import Workspace, WorkspaceLike

CHECK = "refresh"
TAG_NEW = "refresh:new"
TAG_RECHECKED = "refresh:rechecked"
TAG_REVIEW = "refresh:review"
TAG_RETIRED = "refresh:retired"
#: statuses review owns: refresh asks the judge itself for these (the filters do not judge them)
REVIEWED = frozenset({PairStatus.accepted, PairStatus.stale})


@dataclass
class RefreshPlan:
    """What a refresh will do, decided before any call."""

    docs_dir: Path
    old_snapshot_id: str | None
    new_snapshot_id: str
    diff: KBDiff
    #: pair id → why it is retired (an evidence chunk is gone)
    retire: dict[str, str] = field(default_factory=dict)
    #: pair id → the evidence chunks whose text changed
    recheck: dict[str, list[str]] = field(default_factory=dict)
    #: pair id → why its evidence no longer holds: a quote gone from its changed chunk
    quote_failures: dict[str, str] = field(default_factory=dict)
    #: chunks asked for new pairs: added and changed ones
    generate_chunk_ids: list[str] = field(default_factory=list)
    estimate: Estimate | None = None
    #: judge calls refresh itself makes at most (reviewed pairs whose evidence changed and whose quotes hold)
    judge_calls: int = 0
    #: the filters' judges afterwards, at most: groundedness (new pairs and re-checked unreviewed ones) and the
    #: duplicate judge (batches of the candidate pairs those pairs can add)
    filter_judge_calls: int = 0
    duplicate_judge_calls: int = 0
    #: and, at most, closed_book's two calls (the bare answer, the agreement) and the copy judge's one per such pair
    closed_book_calls: int = 0
    copy_judge_calls: int = 0
    #: the share of the set's unreviewed pairs that reach the judges (the rest a cheap check rejects): what of the
    #: bounds above to expect
    judge_share: float = 1.0
    n_pairs: int = 0

    @property
    def has_changes(self) -> bool:
        return self.diff.has_changes or bool(self.retire or self.recheck)


@dataclass
class RefreshReport:
    plan: RefreshPlan
    dry_run: bool = False
    retired: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    to_review: list[str] = field(default_factory=list)
    new_pairs: list[str] = field(default_factory=list)
    generation: GenerationReport | None = None
    filters: FilterReport | None = None
    judge_calls: int = 0
    judge_errors: list[str] = field(default_factory=list)

    @property
    def generation_calls(self) -> int:
        return self.generation.llm.calls if self.generation is not None else 0

    @property
    def filter_calls(self) -> int:
        """Calls the filters sent, every judge's (by kind in :attr:`calls_by_kind`)."""
        llm = self.filters.llm if self.filters is not None else None
        return int(llm.get("calls", 0)) if llm else 0

    @property
    def calls_by_kind(self) -> dict[str, int]:
        """The calls of :attr:`calls` by what they asked (the reply schema's name: ``qa_pairs``,
        ``groundedness``, ``duplicate_judge``, ``closed_book_answer``…), most first; sums to :attr:`calls`."""
        from collections import Counter

        from goldset.filters import groundedness

        kinds: Counter[str] = Counter()
        if self.generation is not None:
            kinds.update(self.generation.llm.by_kind)
        kinds[groundedness.SCHEMA_NAME] += self.judge_calls
        if self.filters is not None and self.filters.llm:
            kinds.update(self.filters.llm.get("by_kind", {}))
        return {k: n for k, n in kinds.most_common() if n}

    @property
    def groundedness_calls(self) -> int:
        """Calls of the groundedness judge: refresh's own re-checks and the filters' judge."""
        from goldset.filters import groundedness

        return self.calls_by_kind.get(groundedness.SCHEMA_NAME, 0)

    @property
    def calls(self) -> int:
        """LLM calls this refresh made (cache hits not counted): generation, its own judge calls and the filters'."""
        return self.generation_calls + self.judge_calls + self.filter_calls


# ------------------------------------------------------------------------------------------------ planning


def _evidence_state(pair: QAPair, new: dict[str, Chunk], old: dict[str, Chunk]) -> tuple[list[str], list[str]]:
    """(removed chunk ids, changed chunk ids) of the pair's evidence, against the text it was written from."""
    removed: list[str] = []
    changed: list[str] = []
    for cid in pair.chunk_ids:
        chunk = new.get(cid)
        if chunk is None:
            removed.append(cid)
            continue
        before = pair.provenance.chunk_hashes.get(cid) or (old[cid].content_hash if cid in old else None)
        if before is not None and before != chunk.content_hash:
            changed.append(cid)
    return removed, changed


def _doc_of(pair: QAPair, cid: str) -> str:
    return next((e.doc_id for e in pair.evidence if e.chunk_id == cid), "?")


def plan_refresh(
    ws: Workspace,
    pairs: list[QAPair],
    old_chunks: list[Chunk],
    new_chunks: list[Chunk],
    *,
    docs_dir: Path,
    old_snapshot_id: str | None,
    new_snapshot_id: str,
    recheck_groundedness: bool = True,
) -> RefreshPlan:
    """What to do with each pair (the module docstring), decided from the two snapshots alone."""
    from goldset.kb import diff_snapshots

    diff = diff_snapshots(old_chunks, new_chunks)
    new = {c.id: c for c in new_chunks}
    old = {c.id: c for c in old_chunks}
    plan = RefreshPlan(docs_dir, old_snapshot_id, new_snapshot_id, diff, n_pairs=len(pairs))
    for pair in pairs:
        if pair.status is PairStatus.retired or not pair.evidence:
            continue
        removed, changed = _evidence_state(pair, new, old)
        if removed:
            where = ", ".join(f"{cid} of {_doc_of(pair, cid)}" for cid in removed)
            plan.retire[pair.id] = (
                f"retired by refresh: evidence chunk {where} is no longer in the documents "
                f"(KB {old_snapshot_id} → {new_snapshot_id})"
            )
        elif changed:
            plan.recheck[pair.id] = changed
            why = _quotes_hold(pair, new)
            if why is not None:
                plan.quote_failures[pair.id] = why
    plan.generate_chunk_ids = sorted(set(diff.chunks_added) | set(diff.chunks_changed))
    by_id = {p.id: p for p in pairs}
    holding = [by_id[pid] for pid in plan.recheck if pid not in plan.quote_failures]
    if recheck_groundedness:
        plan.judge_calls = sum(1 for p in holding if p.status in REVIEWED)
    return plan


def _judge_bounds(ctx: Context, plan: RefreshPlan, pairs: Sequence[QAPair]) -> None:
    """The filters' judge calls after the refresh: at most one groundedness call per new pair and per re-checked
    unreviewed pair, and the duplicate-judge batches of the candidate pairs they can bring (each one's nearest
    questions); ``judge_share`` is the share of this set's unreviewed pairs the cheap checks let through to the
    judges, so ``share × bound`` is what to expect. 0 when the judges are off."""
    from goldset.filters import closed_book, copy_judge, duplicates, groundedness, verbatim
    from goldset.filters.registry import CHECKS
    from goldset.filters.status import owned_by_filters, rejected_before_judges
    from goldset.llm import endpoint_configured, resolve_endpoint

    settings = ctx.section(FilterSettings)
    if not endpoint_configured(ctx, "judge"):
        return
    by_id = {p.id: p for p in pairs}
    new_pairs = plan.estimate.pairs_requested if plan.estimate is not None else 0
    unreviewed = sum(1 for pid in plan.recheck if pid not in plan.quote_failures and by_id[pid].status not in REVIEWED)
    cheap = [n for n, spec in CHECKS.items() if spec.kind == "pair"]
    owned = [p for p in pairs if owned_by_filters(p) and p.checks]
    if owned and not settings.judge_rejected:
        plan.judge_share = sum(1 for p in owned if not rejected_before_judges(p, cheap)) / len(owned)
    if settings.for_check(groundedness.NAME).enabled is not False:
        plan.filter_judge_calls = new_pairs + unreviewed
    dup = settings.for_check(duplicates.SPEC)
    if dup.enabled is not False and dup.judge.enabled is not False:
        embeds = dup.judge.embeddings and bool(resolve_endpoint(ctx, "judge").embedding_model)
        per_pair = dup.judge.top_k + (dup.judge.embedding_top_k if embeds else 0)
        plan.duplicate_judge_calls = -(-(new_pairs + unreviewed) * per_pair // dup.judge.batch)
    cb = settings.for_check(closed_book.SPEC).enabled
    if cb is True or (cb is None and endpoint_configured(ctx, "generate")):
        plan.closed_book_calls = 2 * (new_pairs + unreviewed)
    copy_names = [verbatim.NAME] if settings.for_check(verbatim.SPEC).enabled is not False else []
    if copy_judge.plan_for(ctx, settings, copy_names, use_llm=True)[0] is not None:
        plan.copy_judge_calls = new_pairs + unreviewed


def _estimate(ctx: Context, new_chunks: list[Chunk], chunk_ids: list[str]) -> Estimate | None:
    if not chunk_ids:
        return None
    from goldset.generation.estimate import estimate

    return estimate(ctx, chunks=new_chunks, chunk_ids=chunk_ids)


# ------------------------------------------------------------------------------------------------ checking


def _quotes_hold(pair: QAPair, chunks: dict[str, Chunk]) -> str | None:
    """None when every evidence quote is in its (new) chunk, else the reason."""
    from goldset.generation.validation import quote_in_text

    for ev in pair.evidence:
        chunk = chunks.get(ev.chunk_id)
        if chunk is None or not quote_in_text(ev.quote, chunk.text):
            short = ev.quote if len(ev.quote) <= 60 else ev.quote[:57] + "…"
            return f"quote {short!r} is no longer in {ev.chunk_id} of {ev.doc_id}"
    return None


def _judge(
    ctx: Context, pairs: list[QAPair], chunks: dict[str, Chunk]
) -> tuple[dict[str, CheckResult], list[str], int]:
    """The groundedness judge on ``pairs`` against the new chunks: (verdicts, errors, requests sent)."""
    import asyncio

    from goldset.filters import groundedness
    from goldset.llm import resolve_endpoint, session
    from goldset.prompts import load_prompt

    if not pairs:
        return {}, [], 0
    ws = ctx.workspace
    settings = ctx.section(FilterSettings)
    g_settings = settings.for_check(groundedness.SPEC)
    endpoint = resolve_endpoint(ctx, "judge")
    prompt = load_prompt(groundedness.PROMPT_ID, ws.prompts_dir)
    kb = sorted(chunks.values(), key=lambda c: c.id)

    async def run() -> tuple[list[Any], int]:
        async with session(ws, endpoint) as client:
            outcomes = await groundedness.judge_many(
                pairs, chunks, g_settings, client, prompt, kb_chunks=kb,
                kb_context_chunks=settings.kb_context_chunks,
            )  # fmt: skip
            return outcomes, client.stats.calls

    outcomes, calls = asyncio.run(run())
    verdicts = {o.pair_id: o.check for o in outcomes if o.check is not None}
    errors = [f"{o.pair_id}: {o.error}" for o in outcomes if o.check is None]
    return verdicts, errors, calls


def _left_in_a_round(pair: QAPair) -> bool:
    """An unreviewed pair an earlier review round held without sampling it: the round's estimate speaks for its
    old text, not for the new one."""
    r = pair.review
    return pair.status is not PairStatus.rejected and r.round is not None and not r.sampled and not r.decisions


def _tagged(pair: QAPair, tag: str) -> list[str]:
    return pair.tags if tag in pair.tags else [*pair.tags, tag]


def _mark(pair: QAPair, *, passed: bool, reason: str, tag: str, **update: Any) -> QAPair:
    from goldset.filters.base import result

    checks = {**pair.checks, CHECK: result(passed, None, reason)}
    return pair.model_copy(update={"checks": checks, "tags": _tagged(pair, tag), **update})


# ------------------------------------------------------------------------------------------------ refresh


def _ingest_new(docs_dir: Path, ctx: Context, tmp: Path) -> tuple[KBSnapshot, list[Chunk]]:
    from goldset.kb import ingest

    result = ingest(docs_dir, ctx, out_dir=tmp)
    return result.snapshot, result.chunks


def refresh(
    docs_dir: Path,
    ws: WorkspaceLike | Context = None,
    *,
    dry_run: bool = False,
    progress: ProgressCallback | None = None,
) -> RefreshReport:
    """Refresh the workspace's pairs after the documents in ``docs_dir`` changed (see the module docstring)."""
    ctx = Context.of(ws)
    workspace = ctx.workspace
    settings = ctx.section(VersioningSettings)
    old_snapshot = ctx.data.kb_snapshot()
    old_chunks = ctx.data.kb_chunks()
    if old_snapshot is None or not old_chunks:
        raise InputError(
            f"{workspace.kb_dir}: no KB snapshot to compare the documents with; run `goldset ingest DOCS_DIR` first"
        )
    pairs = ctx.data.pairs()
    with tempfile.TemporaryDirectory(prefix="goldset-refresh-") as tmp_name:
        tmp = Path(tmp_name)
        new_snapshot, new_chunks = _ingest_new(Path(docs_dir), ctx, tmp)
        plan = plan_refresh(
            workspace, pairs, old_chunks, new_chunks, docs_dir=Path(docs_dir),
            old_snapshot_id=old_snapshot.id, new_snapshot_id=new_snapshot.id,
            recheck_groundedness=settings.recheck_groundedness,
        )  # fmt: skip
        plan.estimate = _estimate(ctx, new_chunks, plan.generate_chunk_ids)
        if dry_run and plan.has_changes:
            _judge_bounds(ctx, plan, pairs)
        report = RefreshReport(plan=plan, dry_run=dry_run)
        if dry_run or not plan.has_changes:
            return report
        _apply(ctx, settings, plan, report, pairs, new_chunks, tmp, progress)
    return report


def _apply(
    ctx: Context,
    settings: VersioningSettings,
    plan: RefreshPlan,
    report: RefreshReport,
    pairs: list[QAPair],
    new_chunks: list[Chunk],
    tmp: Path,
    progress: ProgressCallback | None,
) -> None:
    from goldset.filters import run_filters
    from goldset.generation.runner import generate

    chunks = {c.id: c for c in new_chunks}
    by_id = {p.id: p for p in pairs}

    # 1. Every call first: new pairs for new and changed chunks, the judge for reviewed pairs whose evidence changed.
    if plan.generate_chunk_ids:
        report.generation = generate(ctx, chunks=new_chunks, chunk_ids=plan.generate_chunk_ids, write=False,
                                     progress=progress)  # fmt: skip
    quote_failures = plan.quote_failures
    to_judge = [
        by_id[pid] for pid in plan.recheck
        if pid not in quote_failures and by_id[pid].status in REVIEWED and settings.recheck_groundedness
    ]  # fmt: skip
    verdicts, report.judge_errors, report.judge_calls = _judge(ctx, to_judge, chunks)

    # 2. The pairs, updated in memory.
    out: dict[str, QAPair] = dict(by_id)
    for pid, reason in plan.retire.items():
        out[pid] = _mark(by_id[pid], passed=False, reason=reason, tag=TAG_RETIRED, status=PairStatus.retired)
        report.retired.append(pid)
    for pid, changed in plan.recheck.items():
        pair = by_id[pid]
        docs = ", ".join(sorted({_doc_of(pair, cid) for cid in changed}))
        verdict = verdicts.get(pid)
        why = quote_failures.get(pid)
        if why is None and verdict is not None and not verdict.passed:
            why = f"the judge finds the answer unsupported by the new text ({verdict.reason})"
        if why is None:
            hashes = {**pair.provenance.chunk_hashes, **{cid: chunks[cid].content_hash for cid in changed}}
            judged = "quotes and answer" if verdict is not None else "quotes"
            checks_note = f"evidence changed in {docs}; {judged} re-checked against the new text and still hold"
            update: dict[str, Any] = {"provenance": pair.provenance.model_copy(update={"chunk_hashes": hashes})}
            if _left_in_a_round(pair):
                update["review"] = type(pair.review)()  # new text: the next round draws it, the old one lets it go
            out[pid] = _mark(pair, passed=True, reason=checks_note, tag=TAG_RECHECKED, **update)
            report.kept.append(pid)
        elif pair.status is PairStatus.rejected:
            reason = f"retired by refresh: evidence changed in {docs} and {why}; the pair was rejected already"
            out[pid] = _mark(pair, passed=False, reason=reason, tag=TAG_RETIRED, status=PairStatus.retired)
            report.retired.append(pid)
        elif settings.stale_pairs == "regenerate":
            reason = (
                f"retired by refresh: evidence changed in {docs} and {why}; new pairs were generated from the new text"
            )
            out[pid] = _mark(pair, passed=False, reason=reason, tag=TAG_RETIRED, status=PairStatus.retired)
            report.replaced.append(pid)
        else:
            reason = f"stale: evidence changed in {docs} and {why}; fix or reject it in review"
            out[pid] = _mark(pair, passed=False, reason=reason, tag=TAG_REVIEW, status=PairStatus.stale)
            report.to_review.append(pid)
    if report.generation is not None:
        for pair in report.generation.new_pairs:
            if pair.id in out:
                continue  # the same question on the same chunk: the existing pair (and its review) stays
            prov = pair.provenance.model_copy(update={"kb_snapshot_id": plan.new_snapshot_id})
            out[pair.id] = pair.model_copy(update={"provenance": prov, "tags": _tagged(pair, TAG_NEW)})
            report.new_pairs.append(pair.id)

    # 3. Files: the pairs, then the KB snapshot (an interrupted refresh re-run finds the pairs already updated).
    ctx.data.write(out.values(), new_chunks, kb_snapshot_id=plan.new_snapshot_id)
    ctx.data.replace_kb(tmp)

    # 4. The filters over the whole set: new pairs are checked (duplicates against every existing pair too).
    if report.new_pairs or any(by_id[pid].status not in REVIEWED for pid in report.kept):
        report.filters = run_filters(ctx, progress=progress)


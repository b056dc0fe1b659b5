"""The six stages of ``goldset build``, one function each: it calls the stage's own library entry point and fills
in the stage's record (status, a one-line summary, counts, where the outputs went) and the build's report."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from goldset.errors import RunFailed, UsageError
from goldset.progress import ProgressCallback
from goldset.schema import PairStatus
from goldset.schema.build import BuildState, StageName, StageRecord
from goldset.schema.generation import GenerationFailure

if TYPE_CHECKING:
    from goldset.context import Context
    from goldset.data import WorkspaceData
    from goldset.kb import KBDiff
    from goldset.loop.runner import BuildReport
    from goldset.schema import KBSnapshot

ReviewTarget = Literal["auto", "label-studio", "export", "none"]
#: the stages in the order they run
STAGES: tuple[StageName, ...] = ("ingest", "generate", "filter", "sample", "review", "release")
#: where the review tasks go when there is no Label Studio server (relative to the workspace)
DEFAULT_EXPORT = Path("review") / "tasks.json"


def endpoint_ready(ctx: Context) -> bool:
    """Whether a generation endpoint is configured (a configuration error still raises)."""
    from goldset.llm import endpoint_configured

    return endpoint_configured(ctx, "generate")


def run_ingest(ctx: Context, docs_dir: Path, report: BuildReport, rec: StageRecord, *, use_llm: bool,
               progress: ProgressCallback | None) -> None:  # fmt: skip
    """Ingest the documents; once pairs exist, through ``goldset refresh`` (which ingests too, and retires or
    re-checks the pairs whose evidence changed): a plain ingest would replace the snapshot refresh compares with."""
    from goldset.kb import ingest

    ws = ctx.workspace
    data = ctx.data
    if data.has_pairs() and data.kb_snapshot() is not None:
        from goldset.versioning.refresh import refresh

        plan = refresh(docs_dir, ctx, dry_run=True).plan  # a throwaway ingest and a plan: no call, no write
        if not plan.has_changes:
            _ingest_summary(rec, data.kb_snapshot(), plan.diff, changed=False, previous=plan.old_snapshot_id)
            rec.outputs = {"KB snapshot": str(ws.kb_dir)}
            return
        if plan.retire or plan.recheck:
            if not use_llm:
                raise UsageError(
                    f"{docs_dir}: the documents changed under {len(plan.retire) + len(plan.recheck)} existing "
                    "pair(s); refreshing them needs the LLM: run the build without --no-llm (or goldset refresh)"
                )
            r = refresh(docs_dir, ctx, progress=progress)
            report.refresh = r
            _ingest_summary(rec, data.kb_snapshot(), plan.diff, changed=True, previous=plan.old_snapshot_id)
            rec.counts.update({"retired": len(r.retired), "rechecked": len(r.kept), "replaced": len(r.replaced),
                               "to_review": len(r.to_review), "new_pairs": len(r.new_pairs),
                               "calls": r.calls})  # fmt: skip
            rec.summary += (
                f"; refreshed the pairs: {len(r.retired)} retired (evidence gone), {len(r.kept)} re-checked and "
                f"kept, {len(r.replaced)} replaced, {len(r.to_review)} stale for review, {len(r.new_pairs)} new "
                f"({r.calls} LLM calls)"
            )
            rec.outputs = {"KB snapshot": str(ws.kb_dir)}
            return
    r_ingest = ingest(docs_dir, ctx)
    report.ingest = r_ingest
    _ingest_summary(rec, r_ingest.snapshot, r_ingest.diff, changed=r_ingest.changed,
                    previous=r_ingest.previous_snapshot_id)  # fmt: skip
    if r_ingest.warnings:
        rec.summary += f"; {len(r_ingest.warnings)} warning(s), e.g. {r_ingest.warnings[0]}"
    rec.outputs = {"KB snapshot": str(r_ingest.out_dir)}


def _ingest_summary(rec: StageRecord, snap: KBSnapshot | None, diff: KBDiff, *, changed: bool,
                    previous: str | None) -> None:  # fmt: skip
    chunks = diff.counts()["chunks"]
    n_docs, n_chunks, snap_id = (len(snap.documents), snap.n_chunks, snap.id) if snap is not None else (0, 0, "?")
    rec.status = "done" if changed else "unchanged"
    state = "unchanged" if not changed else ("new" if previous is None else "updated")
    rec.counts = {"documents": n_docs, "chunks": n_chunks, "added": chunks["added"], "changed": chunks["changed"],
                  "removed": chunks["removed"]}  # fmt: skip
    changes = f" (+{chunks['added']} ~{chunks['changed']} -{chunks['removed']} chunks)" if changed else ""
    rec.summary = f"snapshot {snap_id} {state}: {n_docs} documents, {n_chunks} chunks{changes}"


def run_generate(
    ctx: Context,
    report: BuildReport,
    rec: StageRecord,
    previous: BuildState | None,
    *,
    limit: int | None,
    concurrency: int | None,
    use_llm: bool,
    keep_going: bool,
    progress: ProgressCallback | None,
) -> None:
    from goldset.generation.estimate import estimate
    from goldset.generation.runner import GenerationReport, generate

    if not use_llm or not endpoint_ready(ctx):
        est = estimate(ctx, limit=limit)  # calls nothing: what generation would have to do
        if not use_llm:
            rec.status = "skipped"
            rec.counts = {"chunks_waiting": est.chunks}
            rec.summary = f"skipped (no LLM): {est.chunks} chunk(s) without pairs wait for a build with the LLM"
            return
        if est.chunks == 0:
            rec.status = "unchanged"
            rec.counts = {"chunks": 0, "already_done": est.already_done}
            rec.summary = f"nothing to ask: the {est.already_done} chunk(s) already have pairs (no LLM needed)"
            return
        # work to do and no endpoint: generate raises resolve_endpoint's one line saying how to configure one
    try:
        r = generate(ctx, limit=limit, concurrency=concurrency, progress=progress)
    except RunFailed as exc:
        # Every call failed (a rebuild re-asks only the chunks that failed before, and they may fail again). With
        # --keep-going the stage ends with the pairs the workspace has, saying which chunks failed; without
        # pairs to go on with, or without --keep-going, the build stops here.
        if isinstance(exc.report, GenerationReport):
            report.generation = exc.report  # the failed calls' figures, whether the build goes on or stops
        usable = _usable_pairs(ctx.data)
        if not keep_going or not usable:
            raise
        path, failures = _recorded_failures(ctx)
        failed = _failed_chunks(failures)
        rec.status = "incomplete"
        rec.counts = {"chunks_failed": len(failed), "pairs": usable}
        rec.outputs["generation failures"] = str(path)
        rec.summary = (
            f"{exc}; carried on with the {usable} pair(s) the workspace has (--keep-going); "
            f"{_chunk_list(failed)}"
        )
        return
    report.generation = r
    llm = r.llm
    total = r.already_done + r.chunks
    rec.counts = {"chunks": r.chunks, "already_done": r.already_done, "chunks_failed": r.chunks_failed,
                  "pairs_kept": r.pairs_kept, "pairs_rejected": r.pairs_rejected, "calls": llm.calls,
                  "cache_hits": llm.cache_hits, "failed_calls": llm.failures}  # fmt: skip
    cost = "" if llm.cost is None else f", ${llm.cost:.4f}"
    if r.chunks == 0:
        rec.status = "unchanged"
        rec.summary = f"nothing to ask: the {r.already_done} chunk(s) already have pairs"
    else:
        before = previous.stage("generate") if previous is not None else None
        resumed = before is not None and before.status in ("failed", "incomplete", "interrupted") and r.already_done
        start = f"resumed at chunk {r.already_done + 1} of {total}: " if resumed else ""
        rec.status = "resumed" if resumed else "done"
        rec.summary = (
            f"{start}{r.chunks} chunk(s) asked ({r.already_done} had pairs): {r.pairs_kept} pairs kept, "
            f"{r.pairs_rejected} rejected; {llm.calls} calls ({llm.cache_hits} from the journal){cost}"
        )
    if r.chunks_failed:
        reasons = ", ".join(f"{k} ×{v}" for k, v in list(r.failure_reasons.items())[:3])
        rec.outputs["generation failures"] = str(r.failures_path)
        rec.summary += f"; {r.chunks_failed} chunk(s) failed ({reasons}); {_chunk_list(_failed_chunks(r.failures))}"
        if not keep_going:
            rec.status = "incomplete"
            rec.error = (
                f"{r.chunks_failed} of {r.chunks} chunk(s) failed ({reasons}; details in "
                f"{r.failures_path}); the pairs received are kept: run the build again to ask about those chunks, "
                "or pass --keep-going to carry on without them"
            )
            return
    if r.chunks and not (r.pairs_kept or r.pairs_existing) and not (keep_going and _usable_pairs(ctx.data)):
        # Nothing to filter, sample or review: a build that "succeeds" here would hand on an empty set.
        raise RunFailed(
            f"generation kept 0 pairs of the {r.chunks} chunk(s) asked ({r.pairs_rejected} rejected, "
            f"{r.chunks_failed} chunk(s) failed; see {ctx.data.pairs_path} and {r.failures_path}): check the model "
            "and the generation prompt, then run the build again"
        )


def _usable_pairs(data: WorkspaceData) -> int:
    """Pairs of the candidates file the later stages can work on (neither rejected nor retired)."""
    if not data.has_pairs():
        return 0
    return sum(1 for p in data.pairs() if p.status not in (PairStatus.rejected, PairStatus.retired))


def _recorded_failures(ctx: Context) -> tuple[Path, list[GenerationFailure]]:
    """Where the workspace records its generation failures, and those it records."""
    from goldset.generation.sink import FAILURES_FILE
    from goldset.io import iter_jsonl

    path = ctx.workspace.state_dir / FAILURES_FILE
    return path, (list(iter_jsonl(path, GenerationFailure)) if path.exists() else [])


def _failed_chunks(failures: Sequence[GenerationFailure]) -> list[str]:
    """The chunks whose generation call failed (each call's primary chunk), sorted."""
    return sorted({f.chunk_ids[0] for f in failures if f.kind == "call" and f.chunk_ids})


def _chunk_list(chunks: Sequence[str], shown: int = 5) -> str:
    more = f", … ({len(chunks) - shown} more)" if len(chunks) > shown else ""
    return f"failed chunks: {', '.join(chunks[:shown])}{more}" if chunks else "no failed call recorded"


def run_queries(ctx: Context, rec: StageRecord, queries: Path, *, concurrency: int | None, use_llm: bool) -> None:
    """Real user questions in the generate stage: imported (redacted, merged), then their answers drafted."""
    from goldset.queries.drafting import draft_answers
    from goldset.queries.intake import import_queries

    got = import_queries(queries, ctx)
    rec.counts |= {"real_questions": len(got.questions), "real_questions_new": len(got.added)}
    if not use_llm:
        rec.summary += f"; {len(got.added)} new real question(s) imported, their answers wait for a build with the LLM"
        return
    r = draft_answers(ctx, concurrency=concurrency)
    rec.counts |= {"real_answered": r.answered, "real_unanswerable": r.unanswerable, "real_rejected": r.rejected,
                   "real_failed": r.failed}  # fmt: skip
    rec.summary += (f"; real questions: {r.questions} drafted ({r.already_done} had pairs): {r.answered} answered, "
                    f"{r.unanswerable} unanswerable, {r.rejected} rejected, {r.failed} failed")  # fmt: skip
    if r.questions and rec.status == "unchanged":
        rec.status = "done"


def _no_pairs(data: WorkspaceData, rec: StageRecord) -> bool:
    """True (and the stage skipped) when the workspace has no candidates file yet (a build without the LLM)."""
    if data.has_pairs():
        return False
    rec.status = "skipped"
    rec.summary = f"no pairs yet ({data.pairs_path} does not exist: generation needs an LLM endpoint)"
    return True


def run_filter(ctx: Context, report: BuildReport, rec: StageRecord, *, use_llm: bool,
               progress: ProgressCallback | None) -> None:  # fmt: skip
    from goldset.filters.pipeline import run_filters

    if _no_pairs(ctx.data, rec):
        return
    r = run_filters(ctx, use_llm=use_llm, progress=progress)
    report.filters = r
    rec.status = "done" if r.written else "unchanged"
    rec.counts = {"pairs": r.n_pairs, "computed": r.computed, "reused": r.reused, **r.status_counts}
    totals = ", ".join(f"{k} {v}" for k, v in r.status_counts.items()) or "none"
    rec.summary = f"{r.n_pairs} pairs ({totals}); verdicts computed {r.computed}, reused {r.reused}"
    if r.skipped_checks:
        rec.summary += "; " + ", ".join(f"{k} {v}" for k, v in r.skipped_checks.items())
    if r.judge_errors:
        rec.summary += f"; {len(r.judge_errors)} judge call(s) failed (those pairs stay unjudged: run again)"
    rec.outputs["pairs"] = str(ctx.data.pairs_path)


def run_sample(ctx: Context, report: BuildReport, rec: StageRecord, *, fraction: float | None,
               size: int | None) -> None:  # fmt: skip
    from goldset.review.sampling import sample, waiting

    if _no_pairs(ctx.data, rec):
        return
    open_ = waiting(ctx.data.pairs())
    if open_:
        rounds = sorted({p.review.round for p in open_ if p.review.round is not None})
        rec.status = "unchanged"
        rec.counts = {"waiting": len(open_)}
        rec.summary = (
            f"round {rounds[-1] if rounds else '?'} still waits for {len(open_)} decision(s): no new round drawn"
        )
        return
    r = sample(ctx, fraction=fraction, size=size)
    report.sample = r
    if r.round is None:
        rec.status = "unchanged"
        rec.summary = "no passed pair that no earlier round held: nothing new to sample"
        return
    rec.counts = {"round": r.round, "sampled": r.sampled, "population": r.population, "random": r.random,
                  "risk": r.risk}  # fmt: skip
    rec.summary = f"round {r.round}: {r.sampled} of {r.population} passed pairs ({r.random} random, {r.risk} risk)"


def run_review(ctx: Context, report: BuildReport, rec: StageRecord, target: ReviewTarget,
               export_path: Path | str | None, *, progress: ProgressCallback | None) -> None:  # fmt: skip
    from goldset.review.sampling import waiting

    ws = ctx.workspace
    if _no_pairs(ctx.data, rec):
        return
    todo = waiting(ctx.data.pairs())
    if target == "none":
        rec.status = "skipped"
        rec.counts = {"waiting": len(todo)}
        rec.summary = f"skipped: {len(todo)} pair(s) wait for review (goldset review push, or export FILE)"
        return
    if not todo:
        rec.status = "unchanged"
        rec.summary = "no sampled pair waits for a decision: nothing to push or export"
        return
    if target == "label-studio":
        from goldset.review.project import push

        r = push(ctx, progress=progress)
        report.push = r
        rec.status = "done" if r.imported or r.updated or r.created else "unchanged"
        rec.counts = {"project": r.project, "waiting": r.waiting, "imported": r.imported, "updated": r.updated,
                      "unchanged": r.unchanged}  # fmt: skip
        made = "created" if r.created else "reused"
        rec.summary = (
            f"Label Studio project {r.project} ({made}): {r.waiting} pair(s) wait for review; {r.imported} "
            f"imported, {r.updated} updated, {r.unchanged} already there"
        )
        rec.outputs["Label Studio"] = f"{r.url}/projects/{r.project}/data"
        return
    from goldset.review.offline import export

    path = Path(export_path) if export_path is not None else ws.root / DEFAULT_EXPORT
    path.parent.mkdir(parents=True, exist_ok=True)
    before = path.read_bytes() if path.is_file() else None
    e = export(path, ctx)
    report.export = e
    rec.status = "unchanged" if before == path.read_bytes() else "done"
    rec.counts = {"tasks": e.tasks}
    rec.summary = (
        f"{e.tasks} review task(s) exported (no Label Studio configured): import them into a project made with "
        f"{e.config_path.name}, then goldset review import EXPORT.json"
    )
    rec.outputs.update({"review tasks": str(e.tasks_path), "labeling config": str(e.config_path),
                        "reviewer instructions": str(e.instructions_path)})  # fmt: skip


def run_release(ctx: Context, report: BuildReport, rec: StageRecord, version: str | None, message: str | None,
                *, progress: ProgressCallback | None) -> None:  # fmt: skip
    ws = ctx.workspace
    if version is None:
        rec.status = "skipped"
        rec.summary = "not asked: review, pull the decisions, then goldset build --release VERSION -m MESSAGE"
        return
    from goldset.review.sampling import waiting
    from goldset.versioning.release import release

    undecided = len(waiting(ctx.data.pairs()))
    r = release(version, message=message or "", ws=ctx, progress=progress)
    report.release = r
    m = r.manifest
    rec.counts = {"golden": len(m.golden_ids), "unreviewed": len(m.unreviewed_ids), "pairs": m.n_pairs,
                  "pushed": r.pushed}  # fmt: skip
    rec.summary = (
        f"released {r.version} (commit {r.commit[:10]}): {len(m.golden_ids)} golden pairs "
        f"({len(m.unreviewed_ids)} unreviewed) of {m.n_pairs}; {r.pushed} object(s) pushed to {r.remote}"
    )
    rec.outputs.update({"release tag": r.version, "dataset": str(ws.data_dir)})
    if undecided:
        rec.counts["undecided"] = undecided
        rec.summary += f"; {undecided} sampled pair(s) had no review decision yet"
    if r.notes:
        rec.summary += f"; note: {r.notes[0]}"

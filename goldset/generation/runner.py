"""The generation run: plans the selected chunks, calls the endpoint with bounded concurrency, validates and
merges the replies into the candidates file, and reports what happened."""

from __future__ import annotations

import asyncio
import dataclasses
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from goldset.collector import paused_gc
from goldset.context import Context
from goldset.errors import RunFailed
from goldset.generation.estimate import Estimate, estimate
from goldset.generation.planning import CallPlan, fewer_pairs, fitted_max_tokens, planner_for_run
from goldset.generation.reply import SCHEMA_NAME, GeneratedPairs
from goldset.generation.selection import kb_snapshot_id, select
from goldset.generation.settings import GenerateSettings
from goldset.generation.sink import CandidateSink, write_failures
from goldset.generation.validation import validate_reply
from goldset.hashing import hash_obj
from goldset.llm.stats import CallStats
from goldset.progress import Progress, ProgressCallback
from goldset.schema import (
    Chunk,
    PairStatus,
    Provenance,
    QAPair,
)
from goldset.schema.generation import GenerationFailure

if TYPE_CHECKING:
    from goldset.llm import CallResult, LLMClient
    from goldset.workspace import WorkspaceLike


_REASON_HEAD = re.compile(r": |; ")


@dataclass
class GenerationReport:
    """What a generation run did (returned by :func:`generate`; also filled in as the run goes, for its progress).

    ``llm`` holds the LLM client's own counters (calls, HTTP requests, retries, repairs, cache hits, tokens, cost,
    the retry budget left): they are what was really sent, not a tally of the results. ``chunks_failed`` counts
    the chunks whose call failed (two identical chunks share one call, so it can exceed ``llm.failures``).
    A call cut off at max_tokens that was asked again with fewer pairs (``fewer_pairs``) is a failure in ``llm``
    but not in ``chunks_failed`` / ``failures`` when the smaller call worked.
    """

    chunks: int = 0
    skipped_small: int = 0
    already_done: int = 0
    chunks_failed: int = 0
    pairs_kept: int = 0
    pairs_rejected: int = 0
    pairs_existing: int = 0
    items_failed: int = 0
    pairs_missing: int = 0
    #: Calls asked again with fewer pairs because the reply asking for more was cut off at max_tokens (each
    #: step counts: 3 → 2 → 1 is two); also when the journal already knew the longer call was cut off.
    fewer_pairs: int = 0
    #: Planned pairs no call asked for in the end, because the call was asked again with fewer.
    pairs_not_asked: int = 0
    llm: CallStats = field(default_factory=CallStats)
    seconds: float = 0.0
    failures: list[GenerationFailure] = field(default_factory=list)
    new_pairs: list[QAPair] = field(default_factory=list)
    pairs_path: Path | None = None
    failures_path: Path | None = None
    estimate: Estimate | None = None

    @property
    def pairs_failed(self) -> int:
        """Items that did not become a kept candidate: rejected pairs plus malformed items."""
        return self.pairs_rejected + self.items_failed

    @property
    def failure_reasons(self) -> dict[str, int]:
        """Failure reasons (call failures, malformed items) with counts, most frequent first. A reason is counted by
        its head, the words before its first ": " or "; " (``HTTP 500``, ``the reply does not match the schema``)."""
        counts = Counter(_REASON_HEAD.split(f.reason, maxsplit=1)[0] for f in self.failures)
        return dict(counts.most_common())


@dataclass
class GenerationProgress:
    """A running generation: its report so far and how many of its chunks have their result.
    :meth:`as_progress` is what the ``progress`` callback gets after each call."""

    report: GenerationReport
    chunks_done: int = 0

    def as_progress(self) -> Progress:
        """The counters worth watching: pairs, calls and the requests, retries and repairs they took, cache hits,
        the retry budget left, tokens, cost, and errors (failed calls and rejected pairs)."""
        report, llm = self.report, self.report.llm
        cost = "$?" if llm.cost is None else f"${llm.cost:.4f}"
        counters: dict[str, int | float | str] = {
            "pairs": report.pairs_kept, "calls": llm.calls, "requests": llm.requests, "retries": llm.retries,
            "repairs": llm.repairs, "cached": llm.cache_hits, "budget left": llm.retry_budget_left,
            "tokens": llm.tokens, "cost": cost, "errors": llm.failures + report.pairs_rejected,
        }  # fmt: skip
        if report.fewer_pairs:
            counters["fewer pairs"] = report.fewer_pairs
        return Progress("generate", self.chunks_done, report.chunks, counters)


def generate(
    ws: WorkspaceLike | Context = None,
    *,
    limit: int | None = None,
    docs: str | None = None,
    all_chunks: bool = False,
    concurrency: int | None = None,
    no_cache: bool = False,
    dry_run: bool = False,
    progress: ProgressCallback | None = None,
    chunks: Sequence[Chunk] | None = None,
    chunk_ids: Iterable[str] | None = None,
    settings: GenerateSettings | None = None,
    model: str | None = None,
    write: bool = True,
) -> GenerationReport:
    """Generate candidate pairs for the selected chunks and merge them into the workspace's candidates file.

    ``ws`` is the workspace, a folder inside one, ``None`` for the one around $GOLDSET_WORKSPACE or the current
    folder, or the :class:`~goldset.context.Context` of the entry point calling this one. By default the chunks
    of its KB that have no pairs yet are asked about, in document order: ``limit``
    keeps the first N, ``docs`` those of documents matching a glob, ``all_chunks`` takes chunks that already have
    pairs too (unchanged calls then come from the journal); ``chunks`` replaces the workspace's KB (e.g. for
    refresh or tests) and ``chunk_ids`` restricts the run to those chunks, whether or not they already have pairs.

    ``settings`` replaces the workspace's ``generate`` section; ``concurrency`` and ``model`` override the endpoint's
    for this run. ``no_cache`` sends every call even when the journal holds its reply. ``progress`` gets a
    :class:`goldset.progress.Progress` after each call. ``dry_run`` calls nothing and returns a report whose
    ``estimate`` says what a run would take. ``write=False`` leaves every file alone and returns all the pairs
    the run produced in ``report.new_pairs``, even those whose id is already in the file (for callers that merge
    pairs themselves, such as refresh).

    Raises :class:`goldset.errors.EndpointError` when the endpoint cannot work (none configured, authentication,
    unknown model, unreachable) and :class:`goldset.errors.RunFailed` when every call failed (the reasons are in
    ``.goldset/generation_failures.jsonl``; no dataset is written).
    """
    ctx = Context.of(ws, generate={"concurrency": concurrency})
    ws = ctx.workspace
    if settings is None:
        settings = ctx.section(GenerateSettings)
    elif concurrency is not None:
        settings = settings.model_copy(update={"concurrency": concurrency})
    if dry_run:
        est = estimate(
            ctx,
            chunks=chunks,
            chunk_ids=chunk_ids,
            limit=limit,
            docs=docs,
            all_chunks=all_chunks,
            no_cache=no_cache,
            settings=settings,
            model=model,
        )
        return GenerationReport(
            chunks=est.chunks, skipped_small=est.skipped_small, already_done=est.already_done, estimate=est
        )
    from goldset.llm import resolve_endpoint, session

    endpoint = resolve_endpoint(ctx, "generate", overrides={"concurrency": settings.concurrency, "model": model})
    data = ctx.data
    existing = data.pairs()
    kb, selection = select(
        data,
        chunks,
        limit=limit,
        docs=docs,
        all_chunks=all_chunks,
        chunk_ids=chunk_ids,
        settings=settings,
        existing=existing,
    )
    plan_for = planner_for_run(selection.chunks, kb, settings, ws.prompts_dir)
    snapshot_id = kb_snapshot_id(data)
    n_chunks = len(selection.chunks)
    report = GenerationReport(chunks=n_chunks, skipped_small=selection.too_small, already_done=selection.already_done)
    sink = CandidateSink(data if write else None, existing if write else [], settings.flush_seconds)
    state = GenerationProgress(report)
    endpoint_name = endpoint.name
    started = time.monotonic()

    def on_result(plan: CallPlan, res: CallResult[GeneratedPairs], planned: CallPlan) -> None:
        state.chunks_done += 1
        if plan is not planned:
            report.pairs_not_asked += len(planned.types) - len(plan.types)
        if res.value is None:
            report.chunks_failed += 1
            report.failures.append(
                GenerationFailure(
                    id=hash_obj(["call", res.key]),
                    kind="call",
                    chunk_ids=[c.id for c in plan.chunks],
                    reason=res.error or "the call failed (the client gave no reason)",
                    call_key=res.key,
                )
            )
        else:
            prov = Provenance(
                model=res.model or endpoint.model,
                endpoint=endpoint_name,
                prompt_id=plan.prompt.id,
                prompt_hash=plan.prompt.hash,
                kb_snapshot_id=snapshot_id,
                chunk_hashes={c.id: c.content_hash for c in plan.chunks},
                call_key=res.key,
            )
            report.pairs_missing += max(0, len(plan.types) - len(res.value.pairs))
            outcome = validate_reply(res.value, plan, prov)
            report.failures.extend(outcome.failures)
            report.items_failed += len(outcome.failures)
            before = sink.added
            sink.add(outcome.pairs)
            new = sink.new_pairs[before:]
            report.pairs_kept += sum(1 for p in new if p.status is not PairStatus.rejected)
            report.pairs_rejected += sum(1 for p in new if p.status is PairStatus.rejected)
        if progress is not None:
            progress(state.as_progress())

    async def run() -> None:
        async with session(ws, endpoint, use_cache=not no_cache) as client:
            report.llm = client.stats  # the client's live counters: the report and the progress show them
            if progress is not None:
                progress(state.as_progress())
            await _run_plans(client, selection.chunks, plan_for, on_result, settings, report)

    completed = False
    try:
        with paused_gc():  # a run makes no cyclic garbage to speak of (goldset/collector.py)
            asyncio.run(run())
        completed = True
    finally:
        if not (completed and write):
            sink.flush()  # what a stopped run received is kept; a whole run's file is written just below
        report.seconds = time.monotonic() - started
    if state.chunks_done and report.chunks_failed == state.chunks_done:
        # Nothing worked: record why, but write no dataset (an empty or unchanged one would read as a result).
        reasons = ", ".join(f"{k} ×{v}" for k, v in list(report.failure_reasons.items())[:3])
        where = ""
        if write:
            path = write_failures(ws, report.failures, {c.id for c in selection.chunks})
            where = f"; nothing was written to {data.pairs_path}, the reasons are in {path}"
        raise RunFailed(f"all {state.chunks_done} generation calls failed ({reasons}){where}", report=report)
    report.pairs_existing = sink.existing_hits
    report.new_pairs = sink.new_pairs
    if write:
        try:
            all_chunks_by_id = {c.id: c for c in data.cited_chunks()} | {c.id: c for c in kb}
            # writes the candidates file first (sink.pairs, as sink.flush would), then chunks and manifest
            data.write(sink.pairs.values(), all_chunks_by_id.values(), kb_snapshot_id=snapshot_id)
        except BaseException:
            sink.flush()  # the pairs of this run are kept even when the dataset files cannot be written
            raise
        report.pairs_path = data.pairs_path
        report.failures_path = write_failures(ws, report.failures, {c.id for c in selection.chunks})
    return report


async def _run_plans(
    client: LLMClient,
    chunks: Sequence[Chunk],
    plan_for: Callable[[Chunk], CallPlan],
    on_result: Callable[[CallPlan, CallResult[GeneratedPairs], CallPlan], None],
    settings: GenerateSettings,
    report: GenerationReport,
) -> None:
    """Plan and run the calls, in the order of ``chunks`` (:func:`~goldset.llm.fan_out`: a chunk is planned when its
    call is about to go out, which keeps memory flat on large KBs). The first unexpected error cancels the rest;
    results already received are flushed by the caller.

    A reply cut off at max_tokens is asked again with fewer pairs (:func:`fewer_pairs`: half, rounded up, down to
    one; :meth:`CallPlan.fewer`: the first types of the plan), each call with the schema's ``maxItems`` and
    max_tokens fitted to the pairs it asks (:func:`fitted_max_tokens`). A longer call the journal knows was cut
    off is not sent again (``known_cut_off``), so a re-run is free; a one-pair call cut off fails with its reason,
    and is sent again on a re-run, as any failed call."""
    from goldset.llm import fan_out, fan_out_limit

    endpoint_max = client.endpoint.settings.max_tokens

    async def one(chunk: Chunk) -> None:
        planned = plan = plan_for(chunk)
        asked: list[int] = []
        while True:
            n = len(plan.types)
            asked.append(n)
            res = await client.complete_json(
                plan.messages(), plan.reply_model, schema_name=SCHEMA_NAME, seed=settings.seed,
                max_tokens=fitted_max_tokens(n, settings, endpoint_max), known_cut_off=n > 1,
            )  # fmt: skip
            if not (res.cut_off and n > 1):
                break
            plan = plan.fewer(fewer_pairs(n))
            report.fewer_pairs += 1
        if res.cut_off and len(asked) > 1:
            counts = ", ".join(map(str, asked))
            res = dataclasses.replace(res, error=f"{res.error}; cut off each time with {counts} pair(s) asked")
        try:
            # The call slot this one freed has a waiter (another call, its request ready): let it send first, then
            # check and merge this reply (~0.5 ms) while that request is on the wire.
            await asyncio.sleep(0)
        finally:
            on_result(plan, res, planned)  # also when cancelled meanwhile: a received result is always recorded

    await fan_out(chunks, one, limit=fan_out_limit(client.endpoint))

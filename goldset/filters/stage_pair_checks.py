"""Pipeline stage 1: every pair check on every live pair, reusing verdicts whose input and settings are unchanged."""

from __future__ import annotations

import gc
import multiprocessing
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from goldset.filters.base import CheckSettings, CheckSpec, ChunkMap, Severity, make_result
from goldset.filters.incremental import current, field_hashes, fields_read, input_hash, settings_hash
from goldset.filters.registry import CHECKS
from goldset.filters.run_state import FilterRun
from goldset.schema import QAPair

if TYPE_CHECKING:
    from goldset.filters.neardup import SentenceIndex

#: Pairs one task checks (in a worker or here), and between two progress updates.
_SPAN = 200
#: Fewer verdicts to look at than this: checked in this process by default (forking would cost more than it saves).
_MIN_PARALLEL = 2000

T = TypeVar("T")

#: A verdict as a worker sends it: passed, score, reason, severity, duplicate_of, checked_at (plain values).
_Values = tuple[bool, float | None, str, Severity, str | None, datetime]
#: What one pair's task sends back: the checks (their positions in the job's specs) whose verdict stands, and
#: ``(position, input hash, values)`` of each computed.
_PairOut = tuple[tuple[int, ...], list[tuple[int, str, _Values]]]


def run_pair_checks(run: FilterRun, pairs: list[QAPair]) -> None:
    """Run the run's pair-kind checks on ``pairs``, counting in ``run.report``. A pair with a new verdict gets it
    in place (its id in ``run.changed``): one record per pair at 50,000 candidates, not the one read and a copy."""
    specs = [CHECKS[n] for n in run.names if CHECKS[n].kind == "pair"]
    if not specs:
        return
    check_settings: dict[str, CheckSettings] = {spec.name: run.settings_of(spec) for spec in specs}
    # Checks that read the whole KB: its hash is part of their input.
    kb_wide = {
        spec.name
        for spec in specs
        if spec.kb_sentences is not None and spec.kb_sentences.wanted(check_settings[spec.name])
    }
    job = _Job(
        pairs=pairs,
        chunks=run.chunks,
        specs=specs,
        check_settings=check_settings,
        s_hashes=[settings_hash(spec, check_settings[spec.name]) for spec in specs],
        kb_wide=kb_wide,
        extra={"kb": run.kb_hash} if kb_wide else {},
        needed=set().union(*(fields_read(spec) for spec in specs)),
    )
    total = len(pairs) * len(specs)
    done = 0
    for start, rows in _in_workers(partial(_check_span, job), len(pairs), _SPAN, _workers(run.settings.workers, total)):
        for idx, (kept, computed) in enumerate(rows, start=start):
            for i in kept:
                run.report.reuse(specs[i].name)
            if computed:
                # fresh results of ours, their hashes set as they are made
                results = {
                    specs[i].name: make_result(*v, settings_hash=job.s_hashes[i], input_hash=i_hash)
                    for i, i_hash, v in computed
                }
                run.set_checks(pairs, idx, results)
                run.report.computed += len(computed)
        done += len(rows) * len(specs)
        run.tell("checks", done, total)


@dataclass
class _Job:
    """What checking the pairs reads; a forked worker inherits it (only spans and plain results are sent)."""

    pairs: list[QAPair]
    chunks: ChunkMap
    specs: list[CheckSpec[Any]]
    check_settings: dict[str, CheckSettings]
    s_hashes: list[str]
    kb_wide: set[str]
    #: Part of the input hash of the checks in ``kb_wide`` (the KB's hash).
    extra: dict[str, str]
    #: The pair fields the checks read (:func:`~goldset.filters.incremental.field_hashes`).
    needed: set[str]
    #: The KB's sentence index, built on first need in each process (never, when every verdict stands).
    index: SentenceIndex | None = field(default=None, repr=False)


def _check_span(job: _Job, a: int, b: int) -> list[_PairOut]:
    """Each of ``job.pairs[a:b]``: which verdicts stand (input and settings unchanged), and the others computed."""
    rows: list[tuple[tuple[int, ...], list[tuple[int, str]]]] = []
    for pair in job.pairs[a:b]:
        fields = field_hashes(pair, job.chunks, job.needed)
        # checks reading the same fields have the same input hash: computed once per pair for each such group
        by_shape: dict[tuple[tuple[str, ...], bool, bool], str] = {}
        kept: list[int] = []
        todo: list[tuple[int, str]] = []
        for i, spec in enumerate(job.specs):
            wide = spec.name in job.kb_wide
            shape = (spec.reads, spec.uses_chunks, wide)
            i_hash = by_shape.get(shape)
            if i_hash is None:
                i_hash = by_shape[shape] = input_hash(spec, pair, job.chunks, job.extra if wide else None, fields)
            if current(pair, spec.name, job.s_hashes[i], i_hash) is not None:
                kept.append(i)
            else:
                todo.append((i, i_hash))
        rows.append((tuple(kept), todo))
    # KB sentences are looked up only for the questions whose verdict must be computed, in one batch per check
    kb_sentences: dict[str, dict[str, list[str]]] = {}
    for i, spec in enumerate(job.specs):
        if spec.name in job.kb_wide:
            wanting = [job.pairs[a + k] for k, (_, todo) in enumerate(rows) if any(j == i for j, _ in todo)]
            kb_sentences[spec.name] = _kb_sentences(job, spec, wanting)
    out: list[_PairOut] = []
    for k, (stands, todo) in enumerate(rows):
        pair = job.pairs[a + k]
        computed = []
        for i, i_hash in todo:
            spec = job.specs[i]
            st = job.check_settings[spec.name]
            if spec.name in job.kb_wide and spec.kb_sentences is not None:
                res = spec.kb_sentences.check(pair, job.chunks, st, kb_sentences[spec.name].get(pair.id, ()))
            elif spec.func is not None:
                res = spec.func(pair, job.chunks, st)
            else:  # a registry entry of kind "pair" always has a function
                raise TypeError(f"pair check {spec.name!r} has no function")
            values = (res.passed, res.score, res.reason, res.severity, res.duplicate_of, res.checked_at)
            computed.append((i, i_hash, values))
        out.append((stands, computed))
    return out


def _kb_sentences(job: _Job, spec: CheckSpec[Any], pairs: Sequence[QAPair]) -> dict[str, list[str]]:
    """Near-matching KB sentences for each pair's question, via one batched LSH query over every KB sentence."""
    if not pairs or not job.chunks or spec.kb_sentences is None:
        return {}
    if job.index is None:
        from goldset.filters.neardup import SentenceIndex
        from goldset.filters.textsim import split_sentences

        job.index = SentenceIndex([s for c in job.chunks.values() for s in split_sentences(c.text)])
    index = job.index
    hits = index.query_many([p.question for p in pairs], threshold=spec.kb_sentences.min_similarity)
    return {p.id: [index.sentences[i] for i, _ in h] for p, h in zip(pairs, hits, strict=True)}


def _workers(setting: int | None, total: int) -> int:
    """How many processes look at ``total`` verdicts: ``setting``, or by default up to 2 (CPUs permitting) from
    :data:`_MIN_PARALLEL` verdicts on; 1 without the 'fork' start method (the workers inherit the job)."""
    if "fork" not in multiprocessing.get_all_start_methods():
        return 1
    if setting is not None:
        return setting
    return min(2, os.cpu_count() or 1) if total >= _MIN_PARALLEL else 1


def _in_workers(task: Callable[[int, int], list[T]], n: int, step: int, workers: int) -> Iterator[tuple[int, list[T]]]:
    """``task(a, b)`` over ``range(n)`` in spans of ``step``, as ``(a, its results)`` in order: computed here (1
    worker) or in forked worker processes, which inherit ``task`` and what it reads (only the spans and the plain
    results are sent). An exception in a worker is raised here (pickled back: the same type and message)."""
    spans = [(a, min(a + step, n)) for a in range(0, n, step)]
    if workers <= 1 or len(spans) <= 1:
        for a, b in spans:
            yield a, task(a, b)
        return
    global _TASK
    _TASK = task
    gc.freeze()  # the workers' collections then leave the inherited objects (and their pages) alone
    try:
        with multiprocessing.get_context("fork").Pool(min(workers, len(spans))) as pool:
            for (a, _), values in zip(spans, pool.imap(_run_span, spans), strict=True):
                yield a, values
    finally:
        gc.unfreeze()
        _TASK = None


#: The task the forked workers run (set by the parent just before forking them).
_TASK: Callable[[int, int], list[Any]] | None = None


def _run_span(span: tuple[int, int]) -> list[Any]:
    """In a worker: the inherited task on one span."""
    if _TASK is None:  # only ever called in a worker forked with the task set
        raise RuntimeError("no pair-check task in this worker")
    return _TASK(*span)

"""Pipeline stage 1: every pair check on every live pair, reusing verdicts whose input and settings are unchanged."""

from __future__ import annotations

import gc
import multiprocessing
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from goldset.filters.base import CheckSettings, CheckSpec, ChunkMap, Severity, make_result
from goldset.filters.incremental import current, field_hashes, fields_read, input_hasher, settings_hash
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


def run_pair_checks(run: FilterRun, pairs: list[QAPair], meanwhile: Callable[[], T] | None = None) -> T | None:
    """Run the run's pair-kind checks on ``pairs``, counting in ``run.report``. A pair with a new verdict gets it
    in place (its id in ``run.changed``): one record per pair at 50,000 candidates, not the one read and a copy.

    ``meanwhile``: work of a later stage that does not depend on these verdicts, done here while the workers
    check (this process would wait for them): its result is returned."""
    specs = [CHECKS[n] for n in run.names if CHECKS[n].kind == "pair"]
    ahead: list[T] = []
    call = (lambda: ahead.append(meanwhile())) if meanwhile is not None else None
    if not specs:
        if call is not None:
            call()
        return ahead[0] if ahead else None
    job = _Job.of(run, pairs, specs)
    total = len(pairs) * len(specs)
    done = 0
    workers = _workers(run.settings.workers, total)
    for start, rows in _in_workers(partial(_check_span, job), len(pairs), _SPAN, workers, meanwhile=call):
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
    return ahead[0] if ahead else None


@dataclass
class _Job:
    """What checking the pairs reads; a forked worker inherits it (only spans and plain results are sent)."""

    pairs: list[QAPair]
    chunks: ChunkMap
    specs: list[CheckSpec[Any]]
    check_settings: list[CheckSettings]
    s_hashes: list[str]
    #: Whether each check reads the whole KB (its hash is part of its input).
    kb_wide: list[bool]
    #: The input hash of each distinct input (fields read, the KB's hash or not), and each check's one.
    hashers: list[Callable[[Mapping[str, str]], str]]
    shape_of: list[int]
    #: The pair fields the checks read (:func:`~goldset.filters.incremental.field_hashes`).
    needed: set[str]
    #: The chunk hashes of each set of cited chunks (``field_hashes``'s memo; each process its own).
    memo: dict[tuple[str, ...], tuple[str, str]] = field(default_factory=dict, repr=False)
    #: The KB's sentence index, built on first need in each process (never, when every verdict stands).
    index: SentenceIndex | None = field(default=None, repr=False)

    @classmethod
    def of(cls, run: FilterRun, pairs: list[QAPair], specs: list[CheckSpec[Any]]) -> _Job:
        check_settings = [run.settings_of(spec) for spec in specs]
        kb_wide = [
            spec.kb_sentences is not None and spec.kb_sentences.wanted(st)
            for spec, st in zip(specs, check_settings, strict=True)
        ]
        # checks reading the same fields have the same input hash: computed once per pair for each such group
        shapes: dict[tuple[tuple[str, ...], bool, bool], int] = {}
        hashers: list[Callable[[Mapping[str, str]], str]] = []
        for spec, wide in zip(specs, kb_wide, strict=True):
            if shapes.setdefault((spec.reads, spec.uses_chunks, wide), len(hashers)) == len(hashers):
                hashers.append(input_hasher(spec, {"kb": run.kb_hash} if wide else None))
        return cls(
            pairs=pairs,
            chunks=run.chunks,
            specs=specs,
            check_settings=check_settings,
            s_hashes=[settings_hash(spec, st) for spec, st in zip(specs, check_settings, strict=True)],
            kb_wide=kb_wide,
            hashers=hashers,
            shape_of=[shapes[(spec.reads, spec.uses_chunks, wide)] for spec, wide in zip(specs, kb_wide, strict=True)],
            needed=set().union(*(fields_read(spec) for spec in specs)),
        )


def _check_span(job: _Job, a: int, b: int) -> list[_PairOut]:
    """Each of ``job.pairs[a:b]``: which verdicts stand (input and settings unchanged), and the others computed."""
    rows: list[tuple[tuple[int, ...], list[tuple[int, str]]]] = []
    steps = list(enumerate(zip(job.specs, job.s_hashes, job.shape_of, strict=True)))
    for pair in job.pairs[a:b]:
        fields = field_hashes(pair, job.chunks, job.needed, job.memo)
        hashes = [of(fields) for of in job.hashers]
        kept: list[int] = []
        todo: list[tuple[int, str]] = []
        for i, (spec, s_hash, shape) in steps:
            if current(pair, spec.name, s_hash, hashes[shape]) is not None:
                kept.append(i)
            else:
                todo.append((i, hashes[shape]))
        rows.append((tuple(kept), todo))
    # KB sentences are looked up only for the questions whose verdict must be computed, in one batch per check
    kb_sentences: dict[int, dict[str, list[str]]] = {}
    for i, spec in enumerate(job.specs):
        if job.kb_wide[i]:
            wanting = [job.pairs[a + k] for k, (_, todo) in enumerate(rows) if any(j == i for j, _ in todo)]
            kb_sentences[i] = _kb_sentences(job, spec, wanting)
    out: list[_PairOut] = []
    for pair, (stands, todo) in zip(job.pairs[a:b], rows, strict=True):
        computed = []
        for i, i_hash in todo:
            spec, st = job.specs[i], job.check_settings[i]
            if job.kb_wide[i] and spec.kb_sentences is not None:
                res = spec.kb_sentences.check(pair, job.chunks, st, kb_sentences[i].get(pair.id, ()))
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


def _in_workers(
    task: Callable[[int, int], list[T]],
    n: int,
    step: int,
    workers: int,
    meanwhile: Callable[[], None] | None = None,
) -> Iterator[tuple[int, list[T]]]:
    """``task(a, b)`` over ``range(n)`` in spans of ``step``, as ``(a, its results)`` in order: computed here (1
    worker) or in forked worker processes, which inherit ``task`` and what it reads (only the spans and the plain
    results are sent). An exception in a worker is raised here (pickled back: the same type and message).
    ``meanwhile`` is called here before the first span's results: while the workers compute, if there are any."""
    spans = [(a, min(a + step, n)) for a in range(0, n, step)]
    if workers <= 1 or len(spans) <= 1:
        if meanwhile is not None:
            meanwhile()
        for a, b in spans:
            yield a, task(a, b)
        return
    global _TASK
    _TASK = task
    gc.freeze()  # the workers' collections then leave the inherited objects (and their pages) alone
    try:
        with multiprocessing.get_context("fork").Pool(min(workers, len(spans))) as pool:
            results = pool.imap(_run_span, spans)  # the workers start now
            if meanwhile is not None:
                meanwhile()
            for (a, _), values in zip(spans, results, strict=True):
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

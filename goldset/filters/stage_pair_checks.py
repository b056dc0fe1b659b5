"""Pipeline stage 1: every pair check on every live pair, reusing verdicts whose input and settings are unchanged."""

from __future__ import annotations

import gc
import multiprocessing
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any, TypeVar

from goldset.filters.base import CheckSettings, CheckSpec, ChunkMap, Severity, make_result
from goldset.filters.incremental import current, field_hashes, fields_read, input_hash, settings_hash
from goldset.filters.registry import CHECKS
from goldset.filters.run_state import FilterRun
from goldset.schema import CheckResult, QAPair

#: Verdicts between two progress updates.
_PROGRESS_EVERY = 500
#: Fewer verdicts to make than this: computed in this process by default (forking would cost more than it saves).
_MIN_PARALLEL = 2000
#: Pairs whose input hashes one worker task computes.
_HASH_SPAN = 2000

T = TypeVar("T")


def run_pair_checks(run: FilterRun, pairs: list[QAPair]) -> None:
    """Run the run's pair-kind checks on ``pairs`` (updated in place), counting in ``run.report``."""
    specs = [CHECKS[n] for n in run.names if CHECKS[n].kind == "pair"]
    if not specs:
        return
    check_settings: dict[str, CheckSettings] = {spec.name: run.settings_of(spec) for spec in specs}
    s_hashes = {spec.name: settings_hash(spec, check_settings[spec.name]) for spec in specs}
    # Checks that read the whole KB: its hash is part of their input.
    kb_wide = {
        spec.name
        for spec in specs
        if spec.kb_sentences is not None and spec.kb_sentences.wanted(check_settings[spec.name])
    }
    extra = {"kb": run.kb_hash} if kb_wide else {}
    needed = set().union(*(fields_read(spec) for spec in specs))
    # Checks reading the same fields have the same input hash: computed once per pair for each such group.
    shapes = {spec.name: (spec.reads, spec.uses_chunks, spec.name in kb_wide) for spec in specs}

    def hash_span(a: int, b: int) -> list[tuple[str, ...]]:
        """The input hash of each check (in ``specs`` order) on each of ``pairs[a:b]``."""
        out: list[tuple[str, ...]] = []
        for pair in pairs[a:b]:
            fields = field_hashes(pair, run.chunks, needed)
            hashes: dict[tuple[tuple[str, ...], bool, bool], str] = {}
            for spec in specs:
                shape = shapes[spec.name]
                if shape not in hashes:
                    hashes[shape] = input_hash(spec, pair, run.chunks, extra if shape[2] else None, fields)
            out.append(tuple(hashes[shapes[spec.name]] for spec in specs))
        return out

    todo: list[tuple[int, CheckSpec[Any], str]] = []
    hash_workers = _workers(run.settings.workers, len(pairs) * len(specs))
    for start, rows in _in_workers(hash_span, len(pairs), _HASH_SPAN, hash_workers):
        for idx, row in enumerate(rows, start=start):
            pair = pairs[idx]
            for spec, i_hash in zip(specs, row, strict=True):
                if current(pair, spec.name, s_hashes[spec.name], i_hash) is not None:
                    run.report.reuse(spec.name)
                else:
                    todo.append((idx, spec, i_hash))
    # KB sentences are looked up only for the pairs whose verdict must be computed, in one batch per check.
    kb_sentences = {
        name: _kb_sentences(run, CHECKS[name], check_settings[name], [pairs[i] for i, s, _ in todo if s.name == name])
        for name in kb_wide
    }
    job = _Job(pairs, run.chunks, todo, check_settings, kb_wide, kb_sentences)
    total = len(todo)
    new_checks: dict[int, dict[str, CheckResult]] = {}
    done = 0
    for start, values in _verdicts(job, _workers(run.settings.workers, total)):
        for (idx, spec, i_hash), v in zip(todo[start : start + len(values)], values, strict=True):
            # a fresh result of ours, its hashes set as it is made
            res = make_result(*v, settings_hash=s_hashes[spec.name], input_hash=i_hash)
            new_checks.setdefault(idx, {})[spec.name] = res
        done += len(values)
        run.report.computed += len(values)
        run.tell("checks", done, total)
    for idx, results in new_checks.items():  # one copy per pair, not one per check
        pairs[idx] = pairs[idx].model_copy(update={"checks": {**pairs[idx].checks, **results}})


#: A verdict as a worker sends it: passed, score, reason, severity, duplicate_of, checked_at (plain values).
_Values = tuple[bool, float | None, str, Severity, str | None, datetime]


@dataclass
class _Job:
    """What computing the verdicts of ``todo`` reads; a forked worker inherits it (nothing of it is sent)."""

    pairs: list[QAPair]
    chunks: ChunkMap
    todo: list[tuple[int, CheckSpec[Any], str]]
    check_settings: dict[str, CheckSettings]
    kb_wide: set[str]
    kb_sentences: dict[str, dict[str, list[str]]]


def _workers(setting: int | None, total: int) -> int:
    """How many processes compute ``total`` verdicts: ``setting``, or by default up to 2 (CPUs permitting) from
    :data:`_MIN_PARALLEL` verdicts on; 1 without the 'fork' start method (the workers inherit the job)."""
    if "fork" not in multiprocessing.get_all_start_methods():
        return 1
    if setting is not None:
        return setting
    return min(2, os.cpu_count() or 1) if total >= _MIN_PARALLEL else 1


def _verdicts(job: _Job, workers: int) -> Iterator[tuple[int, list[_Values]]]:
    """The values of the verdicts of ``job.todo`` in batches of :data:`_PROGRESS_EVERY`, in order, as
    ``(start, values)`` (see :func:`_in_workers`)."""
    return _in_workers(partial(_compute, job), len(job.todo), _PROGRESS_EVERY, workers)


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


def _compute(job: _Job, a: int, b: int) -> list[_Values]:
    """The values of the verdicts ``job.todo[a:b]``."""
    out: list[_Values] = []
    for idx, spec, _ in job.todo[a:b]:
        pair = job.pairs[idx]
        st = job.check_settings[spec.name]
        if spec.name in job.kb_wide and spec.kb_sentences is not None:
            res = spec.kb_sentences.check(pair, job.chunks, st, job.kb_sentences[spec.name].get(pair.id, ()))
        elif spec.func is not None:
            res = spec.func(pair, job.chunks, st)
        else:  # a registry entry of kind "pair" always has a function
            raise TypeError(f"pair check {spec.name!r} has no function")
        out.append((res.passed, res.score, res.reason, res.severity, res.duplicate_of, res.checked_at))
    return out


def _kb_sentences(
    run: FilterRun, spec: CheckSpec[Any], settings: CheckSettings, pairs: Sequence[QAPair]
) -> dict[str, list[str]]:
    """Near-matching KB sentences for each pair's question, via one batched LSH query over every KB sentence."""
    if not pairs or not run.chunks or spec.kb_sentences is None:
        return {}
    from goldset.filters.neardup import SentenceIndex
    from goldset.filters.textsim import split_sentences

    index = SentenceIndex([s for c in run.chunks.values() for s in split_sentences(c.text)])
    hits = index.query_many([p.question for p in pairs], threshold=spec.kb_sentences.min_similarity)
    return {p.id: [index.sentences[i] for i, _ in h] for p, h in zip(pairs, hits, strict=True)}

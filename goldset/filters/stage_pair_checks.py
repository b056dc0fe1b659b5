"""Pipeline stage 1: every pair check on every live pair, reusing verdicts whose input and settings are unchanged."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from goldset.filters.base import CheckSettings, CheckSpec
from goldset.filters.incremental import current, field_hashes, fields_read, input_hash, settings_hash
from goldset.filters.registry import CHECKS
from goldset.filters.run_state import FilterRun
from goldset.schema import CheckResult, QAPair

#: Verdicts between two progress updates.
_PROGRESS_EVERY = 500


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
    todo: list[tuple[int, CheckSpec[Any], str]] = []
    # Checks reading the same fields have the same input hash: computed once per pair for each such group.
    shapes = {spec.name: (spec.reads, spec.uses_chunks, spec.name in kb_wide) for spec in specs}
    for idx, pair in enumerate(pairs):
        fields = field_hashes(pair, run.chunks, needed)
        hashes: dict[tuple[tuple[str, ...], bool, bool], str] = {}
        for spec in specs:
            shape = shapes[spec.name]
            i_hash = hashes.get(shape) or hashes.setdefault(
                shape, input_hash(spec, pair, run.chunks, extra if shape[2] else None, fields)
            )
            if current(pair, spec.name, s_hashes[spec.name], i_hash) is not None:
                run.report.reuse(spec.name)
            else:
                todo.append((idx, spec, i_hash))
    # KB sentences are looked up only for the pairs whose verdict must be computed, in one batch per check.
    kb_sentences = {
        name: _kb_sentences(run, CHECKS[name], check_settings[name], [pairs[i] for i, s, _ in todo if s.name == name])
        for name in kb_wide
    }
    total = len(todo)
    new_checks: dict[int, dict[str, CheckResult]] = {}
    for done, (idx, spec, i_hash) in enumerate(todo, start=1):
        pair = pairs[idx]
        st = check_settings[spec.name]
        if spec.name in kb_wide and spec.kb_sentences is not None:
            res = spec.kb_sentences.check(pair, run.chunks, st, kb_sentences[spec.name].get(pair.id, ()))
        elif spec.func is not None:
            res = spec.func(pair, run.chunks, st)
        else:  # a registry entry of kind "pair" always has a function
            raise TypeError(f"pair check {spec.name!r} has no function")
        res.settings_hash, res.input_hash = s_hashes[spec.name], i_hash  # a fresh result of ours: set in place
        new_checks.setdefault(idx, {})[spec.name] = res
        run.report.computed += 1
        if done % _PROGRESS_EVERY == 0 or done == total:
            run.tell("checks", done, total)
    for idx, results in new_checks.items():  # one copy per pair, not one per check
        pairs[idx] = pairs[idx].model_copy(update={"checks": {**pairs[idx].checks, **results}})


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

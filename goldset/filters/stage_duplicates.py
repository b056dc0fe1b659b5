"""Pipeline stage 2: near-duplicate questions across the set and against an earlier release.

Duplicates are a property of the whole set, so they are recomputed every run; a pair's verdict is only replaced
when it changed (same verdict and settings: the old one, with its timestamp, stays).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from goldset.filters import duplicates
from goldset.filters.incremental import input_hash, same_verdict, settings_hash, with_check
from goldset.filters.run_state import FilterRun
from goldset.filters.status import generation_rejects
from goldset.schema import PairStatus, QAPair

if TYPE_CHECKING:
    from goldset.llm import Endpoint


def rank(names: Sequence[str]) -> Callable[[QAPair], tuple[int, int, int, float]]:
    """Which of two near-duplicates to keep: reviewed first, then fewest rejecting failures (generation's
    included), then fewest flags, then least copying."""
    order = {PairStatus.accepted: 0, PairStatus.stale: 1}

    def key(p: QAPair) -> tuple[int, int, int, float]:
        others = [p.checks[n] for n in names if n != duplicates.NAME and n in p.checks]
        rejects = sum(1 for c in others if c.rejects) + generation_rejects(p)
        flags = sum(1 for c in others if c.flagged)
        copy = p.checks["verbatim"].score if "verbatim" in p.checks and p.checks["verbatim"].score else 0.0
        return (order.get(p.status, 2), rejects, flags, copy)

    return key


async def semantic_edges(
    run: FilterRun, endpoint: Endpoint, live: Sequence[QAPair], against: Sequence[QAPair]
) -> list[tuple[int, int, float]]:
    """Embedding links between questions (indices into :func:`duplicates.participants`), embeddings cached in the
    call journal so a re-run sends nothing."""
    from goldset.llm import CallJournal, LLMClient

    st = run.settings_of(duplicates.SPEC)
    everyone = duplicates.participants(live, against)
    with CallJournal(run.ws.cache_path) as journal:
        async with LLMClient(endpoint, journal) as client:
            vectors = await client.embed([p.question for p in everyone])
            run.report.embedding = client.stats.as_dict()
    missing = sum(1 for v in vectors if v is None)
    if missing:
        run.report.judge_errors.append(
            f"embeddings: {missing} question(s) got no vector; lexical duplicates only there"
        )
    return duplicates.semantic_edges(vectors, st.semantic_threshold)


def run_duplicates(
    run: FilterRun,
    live: list[QAPair],
    against: Sequence[QAPair],
    edges: Sequence[tuple[int, int, float]] = (),
    embedding_model: str | None = None,
) -> None:
    """Record the duplicate verdict of every pair in ``live`` (updated in place). ``edges``: semantic links from
    :func:`semantic_edges`, made with ``embedding_model`` (part of the settings hash)."""
    spec = duplicates.SPEC
    st = run.settings_of(spec)
    verdicts = duplicates.find(live, st, rank=rank(run.names), against=against, extra_edges=edges)
    extra = {"against": sorted((a.id, a.question) for a in against), "embedding_model": embedding_model}
    s_hash = settings_hash(spec, st, extra)
    groups: set[str] = set()
    for idx, pair in enumerate(live):
        res = verdicts[pair.id]
        if res.duplicate_of:
            groups.add(res.duplicate_of)
        old = pair.checks.get(duplicates.NAME)
        if same_verdict(old, res) and old is not None and old.settings_hash == s_hash:
            run.report.reuse(duplicates.NAME)
            continue
        upd = {"settings_hash": s_hash, "input_hash": input_hash(spec, pair, {})}
        live[idx] = with_check(pair, duplicates.NAME, res.model_copy(update=upd))
        run.report.computed += 1
    run.report.duplicate_groups = len(groups)

"""Pipeline stage 2: near-duplicate questions across the set and against an earlier release.

Duplicates are a property of the whole set, so they are recomputed every run; a pair's verdict is only replaced
when it changed (same verdict and settings: the old one, with its timestamp, stays). The embeddings and the
duplicate judge's calls go through the call journal, so an unchanged re-run sends nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from goldset.filters import duplicate_judge, duplicates
from goldset.filters.duplicate_judge import Judged, JudgePlan
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


async def run_duplicate_stage(
    run: FilterRun,
    live: list[QAPair],
    against: Sequence[QAPair],
    *,
    semantic_endpoint: Endpoint | None = None,
    judge_plan: JudgePlan | None = None,
) -> None:
    """Embeddings (when semantic duplicates are on, or the judge's endpoint has an embedding model), the strict
    links, the duplicate judge on candidate pairs (when planned), then the verdicts (:func:`run_duplicates`)."""
    st = run.settings_of(duplicates.SPEC)
    everyone = duplicates.participants(live, against)
    embed_endpoint = semantic_endpoint
    if embed_endpoint is None and judge_plan is not None and st.judge.embeddings:
        embed_endpoint = judge_plan.endpoint if judge_plan.endpoint.embedding_model else None
    vectors = await embed_questions(run, embed_endpoint, everyone) if embed_endpoint is not None else None
    edges = duplicates.semantic_edges(vectors, st.semantic_threshold) if semantic_endpoint and vectors else []
    strict = duplicates.links(everyone, st, edges)
    judged = await judge_candidates(run, judge_plan, everyone, len(live), strict, vectors) if judge_plan else None
    run_duplicates(
        run, live, against, edges, embed_endpoint.embedding_model if embed_endpoint else None, strict=strict,
        judged=judged, judge_plan=judge_plan,
    )  # fmt: skip


async def embed_questions(
    run: FilterRun, endpoint: Endpoint, everyone: Sequence[QAPair]
) -> list[list[float] | None]:
    """The questions' embedding vectors (None where none came), cached in the call journal (a re-run sends
    nothing)."""
    from goldset.llm import CallJournal, LLMClient

    with CallJournal(run.ws.cache_path) as journal:
        async with LLMClient(endpoint, journal) as client:
            vectors = await client.embed([p.question for p in everyone])
            run.report.embedding = client.stats.as_dict()
    missing = sum(1 for v in vectors if v is None)
    if missing:
        run.report.judge_errors.append(
            f"embeddings: {missing} question(s) got no vector; lexical duplicates only there"
        )
    return vectors


async def judge_candidates(
    run: FilterRun,
    plan: JudgePlan,
    everyone: Sequence[QAPair],
    n_own: int,
    strict: duplicates.Links,
    vectors: Sequence[Sequence[float] | None] | None,
) -> Judged:
    """The duplicate judge on the candidate pairs among ``everyone`` (two released pairs and identical questions
    are not asked about); failed calls are reported in ``judge_errors``, grouped by their reason."""
    from goldset.llm import CallJournal, LLMClient

    st = run.settings_of(duplicates.SPEC)
    found = duplicate_judge.candidates(
        everyone, st.judge, strict=strict.strict_pairs(), vectors=vectors,
        skip=lambda i, j: (i >= n_own and j >= n_own) or (i, j) in strict.identical,
    )  # fmt: skip
    with CallJournal(run.ws.cache_path) as journal:
        async with LLMClient(plan.endpoint, journal) as client:
            judged = await duplicate_judge.judge(
                everyone, found, st.judge, client, plan.prompt,
                on_done=lambda done, total: run.tell("duplicate judge", done, total),
            )  # fmt: skip
            run.report.duplicate_judge = {**client.stats.as_dict(), "candidates": len(found), "batches": judged.calls}
    by_error: dict[str, list[str]] = {}
    for (i, j), err in sorted(judged.failed.items()):
        by_error.setdefault(err, []).append(f"{everyone[i].id}~{everyone[j].id}")
    for err, which in by_error.items():
        shown = ", ".join(which[:3]) + (", …" if len(which) > 3 else "")
        run.report.judge_errors.append(
            f"duplicate judge: no verdict on {len(which)} candidate pair(s) ({shown}): {err}; the thresholds' "
            "verdicts stand there"
        )
    return judged


def add_stats(a: Mapping[str, Any] | None, b: Mapping[str, Any]) -> dict[str, Any]:
    """Two clients' call statistics (:meth:`goldset.llm.CallStats.as_dict`) as one: counters and budgets summed,
    ``retry_budget_left`` recomputed; ``b``'s keys that are not counters (``candidates``, ``batches``) left out."""
    from goldset.llm import CallStats

    fields = CallStats.__dataclass_fields__
    out: dict[str, Any] = {k: (a or {}).get(k, 0) + b.get(k, 0) for k in fields}
    out["retry_budget_left"] = out["retry_budget"] - out["retries"]
    return out


def run_duplicates(
    run: FilterRun,
    live: list[QAPair],
    against: Sequence[QAPair],
    edges: Sequence[tuple[int, int, float]] = (),
    embedding_model: str | None = None,
    *,
    strict: duplicates.Links | None = None,
    judged: Judged | None = None,
    judge_plan: JudgePlan | None = None,
) -> None:
    """Record the duplicate verdict of every pair in ``live`` (updated in place). ``edges``: semantic links, made
    with ``embedding_model`` (part of the settings hash, as are the judge's model and prompt); ``strict``: the
    links already computed; ``judged``: the duplicate judge's verdicts (:func:`judge_candidates`)."""
    spec = duplicates.SPEC
    st = run.settings_of(spec)
    verdicts = duplicates.find(
        live, st, rank=rank(run.names), against=against, extra_edges=edges, strict=strict, judged=judged
    )
    extra: dict[str, object] = {
        "against": sorted((a.id, a.question) for a in against),
        "embedding_model": embedding_model,
    }
    if judge_plan is not None and judged is not None:
        extra["judge"] = judge_plan.settings_extra()
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

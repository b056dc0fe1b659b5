"""Pipeline stage 2: near-duplicate questions across the set and against an earlier release.

Duplicates are a property of the whole set, so they are recomputed every run; a pair's verdict is only replaced
when it changed (same verdict and settings: the old one, with its timestamp, stays). The embeddings and the
duplicate judge's calls go through the call journal, so an unchanged re-run sends nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goldset.context import Context
from goldset.filters import duplicate_judge, duplicates
from goldset.filters.duplicate_judge import DuplicateJudgePlan, Judged
from goldset.filters.incremental import field_hashes, fields_read, input_hasher, same_verdict, settings_hash
from goldset.filters.registry import CHECKS
from goldset.filters.run_state import FilterRun
from goldset.filters.status import generation_rejects, rejected_before_judges
from goldset.hashing import hash_obj
from goldset.schema import PairStatus, QAPair

if TYPE_CHECKING:
    from goldset.filters.settings import FilterSettings
    from goldset.llm import CallJournal, Endpoint
    from goldset.workspace import Workspace, WorkspaceLike


#: Why the duplicate judge did not run when the settings turn it off (its earlier verdicts are then recomputed).
JUDGE_DISABLED = "filter.checks.duplicate.judge.enabled is false"
#: Why it did not run when no judge endpoint is configured (its earlier verdicts stay).
NO_JUDGE_ENDPOINT = "no judge endpoint configured"
#: Why the duplicate judge did not run under --no-llm (also the report's ``skipped_checks`` entry).
SKIPPED_NO_LLM = "skipped: --no-llm; lexical duplicates only"
#: The same when a judge endpoint is configured: verdicts the call journal holds are reused, without a call.
SKIPPED_NO_LLM_REPLAY = "skipped: --no-llm; the verdicts the call journal holds count, the other pairs lexical only"


def duplicate_judge_plan(
    ctx: Context, settings: FilterSettings, use_llm: bool
) -> tuple[DuplicateJudgePlan | None, str]:
    """The duplicate judge's endpoint and prompt when it runs, else None and why not.

    ``filter.checks.duplicate.judge.enabled``: None (default) = when a judge endpoint is configured and the LLM is
    on; true = required (a missing endpoint is an :class:`goldset.errors.EndpointError`); false = off.
    """
    from goldset.filters.duplicate_judge import PROMPT_ID
    from goldset.llm import endpoint_configured, resolve_endpoint
    from goldset.prompts import load_prompt

    enabled = settings.for_check(duplicates.SPEC).judge.enabled
    if enabled is False:
        return None, JUDGE_DISABLED
    if not use_llm:
        return None, SKIPPED_NO_LLM
    if enabled is None and not endpoint_configured(ctx, "judge"):
        return None, NO_JUDGE_ENDPOINT
    prompt = load_prompt(PROMPT_ID, ctx.workspace.prompts_dir)
    return DuplicateJudgePlan(endpoint=resolve_endpoint(ctx, "judge"), prompt=prompt), ""


@dataclass
class DuplicateJudgeEstimate:
    """What the duplicate judge would do on the candidates file as it is (:func:`estimate_duplicate_judge`).

    ``enabled`` False: it would not run, ``reason`` says why. ``candidates``: pairs of questions it is asked about,
    ``known`` those whose verdict the journal holds already; ``calls``: batches it would make about the others,
    ``cached`` those the call journal answers (``to_send`` the rest); ``notes``: what the count leaves out.
    """

    enabled: bool
    reason: str = ""
    model: str | None = None
    pairs: int = 0
    candidates: int = 0
    known: int = 0
    calls: int = 0
    cached: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def to_send(self) -> int:
        """Calls the journal does not hold."""
        return self.calls - self.cached


def estimate_duplicate_judge(
    ws: WorkspaceLike | Context = None, *, against: Path | str | None = None, use_llm: bool = True
) -> DuplicateJudgeEstimate:
    """The duplicate judge's calls for a ``goldset filter`` run now, and how many the journal holds. Calls nothing:
    the candidates and their prompts are made exactly as the run would make them (embedding neighbours from the
    journal's vectors; the questions without one are said in ``notes``)."""
    from goldset.filters.inputs import read_against
    from goldset.filters.settings import FilterSettings
    from goldset.schema import PairStatus

    ctx = Context.of(ws)
    ws = ctx.workspace
    settings = ctx.section(FilterSettings)
    st = settings.for_check(duplicates.SPEC)
    if not st.enabled:
        return DuplicateJudgeEstimate(enabled=False, reason="filter.checks.duplicate is off")
    plan, why = duplicate_judge_plan(ctx, settings, use_llm)
    if plan is None:
        return DuplicateJudgeEstimate(enabled=False, reason=why)
    live = [p for p in ctx.data.require_pairs() if p.status != PairStatus.retired]
    old = read_against(against) if against is not None else []
    everyone = duplicates.participants(live, old)
    out = DuplicateJudgeEstimate(enabled=True, model=plan.endpoint.model, pairs=len(live))
    with journal_or_none(ws) as journal:
        excluded = not_judged(settings, live, [n for n in CHECKS if settings.for_check(n).enabled is not False])
        _, vectors, _, found = journal_candidates(
            journal, plan.endpoint, everyone, len(live), st, semantic=st.semantic, excluded=excluded
        )
        missing = sum(1 for v in vectors or () if v is None)
        if missing:
            out.notes.append(
                f"{missing} question(s) have no embedding in the journal yet: their embedding neighbours (up to "
                f"{st.judge.embedding_top_k} each) are not counted"
            )
        known, groups = duplicate_judge.plan_calls(everyone, found, st.judge, plan.endpoint, plan.prompt, journal)
        keys = [duplicate_judge.batch_key(everyone, b, plan.endpoint, plan.prompt) for b in groups]
        out.candidates, out.known, out.calls = len(found), len(known), len(keys)
        out.cached = 0 if journal is None else sum(1 for k in keys if journal.get(k) is not None)
    return out


def rank(names: Sequence[str]) -> Callable[[QAPair], tuple[int, int, int, float]]:
    """Which of two near-duplicates to keep: reviewed first, then fewest rejecting failures (generation's
    included), then fewest flags, then least copying.

    Only verdicts this run has already made count: generation's and the pair checks' (stage 1). The LLM judge's
    verdicts come after the duplicates (stage 3), so on a pair they are an earlier run's leftovers: counting them
    made a second run with the same settings keep another pair of a group than the first (and than a fresh run)."""
    order = {PairStatus.accepted: 0, PairStatus.stale: 1}
    current = [n for n in names if n != duplicates.NAME and CHECKS[n].kind == "pair"]

    def key(p: QAPair) -> tuple[int, int, int, float]:
        others = [p.checks[n] for n in current if n in p.checks]
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
    judge_plan: DuplicateJudgePlan | None = None,
    replay_plan: DuplicateJudgePlan | None = None,
    strict: duplicates.Links | None = None,
) -> None:
    """Embeddings (when semantic duplicates are on, or the judge's endpoint has an embedding model), the strict
    links, the duplicate judge on candidate pairs (when planned), then the verdicts (:func:`run_duplicates`).

    ``replay_plan`` (``--no-llm`` with a judge endpoint configured): no call at all, but the verdicts the call
    journal holds for these candidates still count (:func:`goldset.filters.duplicate_judge.replay`), so a run
    without the LLM does not undo what the judge found; nor does one without a journal or an endpoint: unless
    the settings turn the judge off, verdicts it made stay (``keep_judged`` of :func:`run_duplicates`).
    ``strict``: the lexical links of ``participants(live, against)``, already computed (without semantic
    duplicates or a replay, which add links of their own).
    """
    st = run.settings_of(duplicates.SPEC)
    everyone = duplicates.participants(live, against)
    # the pairs no judge is asked about: only wanted when a judge's verdicts are (asked for or replayed)
    excluded = not_judged(run.settings, live, run.names) if judge_plan or replay_plan else []
    keep_judged = judge_plan is None and st.judge.enabled is not False
    edges: Sequence[tuple[int, int, float]] = ()
    judged: Judged | None
    if replay_plan is not None:
        judge_plan, endpoint = replay_plan, replay_plan.endpoint
        with journal_or_none(run.ws) as journal:
            model, _, strict, found = journal_candidates(
                journal, endpoint, everyone, len(live), st, semantic=False, excluded=excluded
            )
            judged = duplicate_judge.replay(everyone, found, st.judge, endpoint, replay_plan.prompt, journal)
    else:
        embed_endpoint = semantic_endpoint
        if embed_endpoint is None and judge_plan is not None and st.judge.embeddings:
            embed_endpoint = judge_plan.endpoint if judge_plan.endpoint.embedding_model else None
        vectors = await embed_questions(run, embed_endpoint, everyone) if embed_endpoint is not None else None
        if semantic_endpoint and vectors:
            edges = duplicates.semantic_edges(vectors, st.threshold_for(semantic_endpoint.embedding_model))
            warning = st.threshold_warning(semantic_endpoint.embedding_model)
            if warning:
                run.report.warnings.append(warning)
        if strict is None or edges:
            strict = duplicates.links(everyone, st, edges)
        judged = (
            await judge_candidates(run, judge_plan, everyone, len(live), strict, vectors, excluded)
            if judge_plan
            else None
        )
        model = embed_endpoint.embedding_model if embed_endpoint else None
    run_duplicates(
        run, live, against, edges, model, strict=strict, judged=judged, judge_plan=judge_plan, keep_judged=keep_judged
    )


@contextmanager
def journal_or_none(ws: Workspace) -> Iterator[CallJournal | None]:
    """``with journal_or_none(ws) as journal``: the workspace's call journal if it exists, else None (reading must
    not create one)."""
    from goldset.llm import CallJournal

    if not ws.cache_path.exists():
        yield None
        return
    with CallJournal(ws.cache_path) as journal:
        yield journal


def journal_vectors(
    journal: CallJournal | None, model: str, everyone: Sequence[QAPair]
) -> list[list[float] | None]:
    """The questions' embeddings as the call journal holds them (None where it holds none); calls nothing."""
    from goldset.llm.embeddings import embedding_key, journal_vector

    if journal is None:
        return [None] * len(everyone)
    return [journal_vector(journal, embedding_key(model, p.question)) for p in everyone]


def journal_candidates(
    journal: CallJournal | None,
    endpoint: Endpoint,
    everyone: Sequence[QAPair],
    n_own: int,
    st: duplicates.Settings,
    *,
    semantic: bool,
    excluded: Collection[int] = (),
) -> tuple[str | None, list[list[float] | None] | None, duplicates.Links, list[duplicate_judge.Candidate]]:
    """The embedding model, the questions' vectors as the journal holds them, the strict links (with semantic
    links when ``semantic``) and the judge's candidates, calling nothing: for an estimate, and for a replay."""
    model = endpoint.embedding_model if (semantic or st.judge.embeddings) else None
    vectors = journal_vectors(journal, model, everyone) if model else None
    edges = duplicates.semantic_edges(vectors, st.threshold_for(model)) if semantic and vectors else []
    strict = duplicates.links(everyone, st, edges)
    return model, vectors, strict, judge_candidates_of(everyone, n_own, st, strict, vectors, excluded)


def judge_candidates_of(
    everyone: Sequence[QAPair],
    n_own: int,
    st: duplicates.Settings,
    strict: duplicates.Links,
    vectors: Sequence[Sequence[float] | None] | None,
    excluded: Collection[int] = (),
) -> list[duplicate_judge.Candidate]:
    """The candidate pairs the judge is asked about: not two released pairs, not identical questions, none of the
    ``excluded`` pairs (a cheaper verdict already rejects them: their strict links stand as they are)."""
    out = set(excluded)
    return duplicate_judge.candidates(
        everyone, st.judge, strict=strict.strict_pairs(), vectors=vectors,
        skip=lambda i, j: (i >= n_own and j >= n_own) or (i, j) in strict.identical or i in out or j in out,
    )  # fmt: skip


def not_judged(settings: FilterSettings, own: Sequence[QAPair], names: Collection[str]) -> list[int]:
    """Indices of the pairs of ``own`` that no LLM judge is asked about: a cheaper verdict (generation, an expert,
    one of the pair checks among ``names``) already rejects them, unless ``filter.judge_rejected``."""
    if settings.judge_rejected:
        return []
    cheaper = [n for n in names if CHECKS[n].kind == "pair"]
    return [i for i, p in enumerate(own) if rejected_before_judges(p, cheaper)]


async def embed_questions(
    run: FilterRun, endpoint: Endpoint, everyone: Sequence[QAPair]
) -> list[list[float] | None]:
    """The questions' embedding vectors (None where none came), cached in the call journal (a re-run sends
    nothing)."""
    from goldset.llm import session

    async with session(run.ws, endpoint) as client:
        vectors = await client.embed([p.question for p in everyone])
        run.report.embedding = client.stats.as_dict()
        errors = client.embedding_errors
    missing = sum(1 for v in vectors if v is None)
    if missing:
        why = f" ({errors[0]})" if errors else ""
        run.report.judge_errors.append(
            f"embeddings: {missing} question(s) got no vector{why}; lexical duplicates only there"
        )
    return vectors


async def judge_candidates(
    run: FilterRun,
    plan: DuplicateJudgePlan,
    everyone: Sequence[QAPair],
    n_own: int,
    strict: duplicates.Links,
    vectors: Sequence[Sequence[float] | None] | None,
    excluded: Collection[int] = (),
) -> Judged:
    """The duplicate judge on the candidate pairs among ``everyone`` (two released pairs and identical questions
    are not asked about); failed calls are reported in ``judge_errors``, grouped by their reason."""
    from goldset.llm import session

    st = run.settings_of(duplicates.SPEC)
    found = judge_candidates_of(everyone, n_own, st, strict, vectors, excluded)
    if excluded:
        run.report.not_judged[duplicates.NAME] = len(excluded)
    async with session(run.ws, plan.endpoint) as client:
        judged = await duplicate_judge.judge(
            everyone, found, st.judge, client, plan.prompt,
            on_done=lambda done, total: run.tell("duplicate judge", done, total),
        )  # fmt: skip
        run.report.duplicate_judge = {**client.stats.as_dict(), "candidates": len(found), "batches": judged.calls}
    run.report.count_consistency(duplicates.NAME, judged.verdicts, judged.inconsistent)
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
    out: dict[str, Any] = {}
    for k in fields:
        x, y = (a or {}).get(k), b.get(k)
        if isinstance(x, int | float) or isinstance(y, int | float):
            out[k] = (x or 0) + (y or 0)
        elif isinstance(x, Mapping) or isinstance(y, Mapping):  # by_kind: summed kind by kind
            xs, ys = x or {}, y or {}
            out[k] = {kind: xs.get(kind, 0) + ys.get(kind, 0) for kind in sorted({*xs, *ys})}
        else:  # a note (concurrency_note): the first client's that has one
            out[k] = x or y
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
    judge_plan: DuplicateJudgePlan | None = None,
    keep_judged: bool = False,
) -> None:
    """Record the duplicate verdict of every pair in ``live`` (updated in place). ``edges``: semantic links, made
    with ``embedding_model`` (part of the settings hash, as are the judge's model and prompt); ``strict``: the
    links already computed; ``judged``: the duplicate judge's verdicts (:func:`judge_candidates`).

    ``keep_judged`` (the judge is unavailable here: no endpoint, or --no-llm with nothing in the journal): a verdict
    the judge made under the same settings stays as it is. Otherwise a machine without the judge, such as a CI
    runner making the release, would silently undo what the judge found with lexical verdicts. A verdict's settings
    hash is ``<settings>+judge-<model and prompt>`` when a judge made it, so this can be told from the hash alone."""
    spec = duplicates.SPEC
    st = run.settings_of(spec)
    verdicts = duplicates.find(
        live, st, rank=rank(run.names), against=against, extra_edges=edges, strict=strict, judged=judged
    )
    extra: dict[str, object] = {
        "against": sorted((a.id, a.question) for a in against),
        "embedding_model": embedding_model,
    }
    base = settings_hash(spec, st, extra)
    judge_mark = f"{base}+judge-"
    s_hash = base
    if judge_plan is not None and judged is not None:
        s_hash = judge_mark + hash_obj(judge_plan.settings_extra())[:16]
    groups: set[str] = set()
    hasher, reads = input_hasher(spec), fields_read(spec)
    for idx, pair in enumerate(live):
        res = verdicts[pair.id]
        old = pair.checks.get(duplicates.NAME)
        if old is not None and (
            (same_verdict(old, res) and old.settings_hash == s_hash)
            or (keep_judged and old.settings_hash.startswith(judge_mark))
        ):
            if old.duplicate_of:
                groups.add(old.duplicate_of)
            run.report.reuse(duplicates.NAME)
            continue
        if res.duplicate_of:
            groups.add(res.duplicate_of)
        # A fresh verdict of duplicates.find, this pair's alone: the hashes are set in place (a copy of each of
        # 50,000 verdicts was ~50 MiB alive at once), and so is the verdict on the pair.
        res.settings_hash, res.input_hash = s_hash, hasher(field_hashes(pair, {}, reads))
        run.set_checks(live, idx, {duplicates.NAME: res})
        run.report.computed += 1
    run.report.duplicate_groups = len(groups)

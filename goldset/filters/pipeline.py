"""`goldset filter` as a library call: :func:`run_filters` reads everything, validates, runs the stages, decides
each pair's status and writes back.

Order of work: settings and check names are validated, the candidates file, chunks and ``against`` pairs are
read (a malformed line stops the run before anything is written), the judge endpoint is resolved; only then do
the stages run, each in its own module: pair checks (:mod:`~goldset.filters.stage_pair_checks`), duplicates
(:mod:`~goldset.filters.stage_duplicates`), the LLM judge and repair (:mod:`~goldset.filters.stage_llm`). Pair
checks and the judge are incremental (:mod:`~goldset.filters.incremental`). Pairs in review's hands (accepted,
stale) get their checks recorded but keep their status; retired pairs are left alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from goldset.collector import paused_gc
from goldset.context import Context
from goldset.dataset import same_model_notes
from goldset.errors import ConfigError, UsageError
from goldset.filters import closed_book, copy_judge, duplicates, groundedness
from goldset.filters import repair as repair_mod
from goldset.filters.inputs import read_against
from goldset.filters.registry import CHECKS, unknown_check
from goldset.filters.report import CheckCounts, FilterReport, count_verdicts
from goldset.filters.run_state import FilterRun
from goldset.filters.settings import FilterSettings
from goldset.filters.stage_duplicates import (
    NO_JUDGE_ENDPOINT,
    SKIPPED_NO_LLM,
    SKIPPED_NO_LLM_REPLAY,
    add_stats,
    duplicate_judge_plan,
    run_duplicate_stage,
)
from goldset.filters.stage_llm import LLMPlan, groundedness_input, run_llm
from goldset.filters.stage_pair_checks import run_pair_checks
from goldset.filters.status import owned_by_filters, pair_status, restamp_severity
from goldset.progress import ProgressCallback
from goldset.schema import PairStatus, QAPair

if TYPE_CHECKING:
    from goldset.filters.duplicate_judge import DuplicateJudgePlan
    from goldset.llm import Endpoint
    from goldset.workspace import WorkspaceLike

__all__ = ["FilterReport", "resolve_checks", "run_filters"]


def resolve_checks(
    settings: FilterSettings, requested: Sequence[str] | None, *, repair: bool = False, use_llm: bool = True
) -> list[str]:
    """Names to run, in registry order: the requested ones or every enabled check; whether the judge runs is
    decided later (it needs an endpoint). The arguments are checked here, once, for :func:`run_filters` and for a
    dry run alike: an unknown name (:func:`~goldset.filters.registry.unknown_check`), ``repair`` without the LLM
    or without the verbatim check."""
    if requested:
        problem = unknown_check(requested)
        if problem is not None:
            raise ConfigError(problem)
        names = [n for n in CHECKS if n in set(requested)]
    else:
        names = [n for n in CHECKS if settings.for_check(n).enabled is not False]
    if repair and not use_llm:
        raise UsageError("repair needs the LLM to rewrite answers; it cannot run with the LLM turned off")
    if repair and "verbatim" not in names:
        raise UsageError(
            "repair rewrites answers that fail the verbatim check, which this run leaves out; run the verbatim "
            "check too (or enable filter.checks.verbatim)"
        )
    return names


def run_filters(
    ws: WorkspaceLike | Context = None,
    *,
    checks: Sequence[str] | None = None,
    against: Path | str | None = None,
    repair: bool = False,
    use_llm: bool = True,
    progress: ProgressCallback | None = None,
) -> FilterReport:
    """Run the filter pipeline over the workspace's candidates file and write the verdicts back.

    ``ws``: a workspace, a folder inside one, None for the one around the current folder, or the calling entry
    point's :class:`~goldset.context.Context`. ``checks``: names
    to run (default: every enabled check). ``against``: a dataset folder or pairs file whose questions count as
    already taken (the previous release). ``repair``: rewrite answers failing only the verbatim check (needs
    the LLM). ``use_llm=False`` turns the judge and the embeddings off. ``progress`` receives stage updates.
    Errors (bad settings, unknown checks, malformed files, a missing endpoint) are raised before anything is
    written.
    """
    from goldset.llm import endpoint_configured, resolve_endpoint
    from goldset.prompts import load_prompt

    ctx = Context.of(ws)
    ws = ctx.workspace
    # 1. Settings and names: errors before any work.
    settings = ctx.section(FilterSettings)
    names = resolve_checks(settings, checks, repair=repair, use_llm=use_llm)
    report = FilterReport()
    g_settings = settings.for_check(groundedness.SPEC)
    if groundedness.NAME in names:
        explicit = bool(checks) or g_settings.enabled is True
        if not use_llm:
            names.remove(groundedness.NAME)
            report.skipped_checks[groundedness.NAME] = "skipped: --no-llm"
        elif not explicit and not endpoint_configured(ctx, "judge"):
            names.remove(groundedness.NAME)
            report.skipped_checks[groundedness.NAME] = "skipped: no judge endpoint configured"
    if closed_book.NAME in names:
        explicit = bool(checks) or settings.for_check(closed_book.SPEC).enabled is True
        if not use_llm:
            names.remove(closed_book.NAME)
            report.skipped_checks[closed_book.NAME] = "skipped: --no-llm"
        elif not explicit and not endpoint_configured(ctx, "generate"):
            names.remove(closed_book.NAME)
            report.skipped_checks[closed_book.NAME] = "skipped: no generation endpoint configured"

    # 2. Read everything (a malformed line raises RecordError here, before anything is written).
    data = ctx.data
    with paused_gc():  # 10,000s of records and no cycles: the collector's passes would walk them all, for nothing
        pairs = data.require_pairs()
    sources = data.chunk_sources()
    chunks = sources.kb
    against_pairs = read_against(against) if against is not None else []

    # 3. The endpoint, if the judge or the repair will be used (EndpointError now, not halfway).
    plan: LLMPlan | None = None
    if groundedness.NAME in names or repair or closed_book.NAME in names:
        cb_plan = None
        if closed_book.NAME in names:
            cb_plan = closed_book.Plan(
                answer_endpoint=resolve_endpoint(ctx, "generate"),
                answer_prompt=load_prompt(closed_book.ANSWER_PROMPT_ID, ws.prompts_dir),
                judge_prompt=load_prompt(closed_book.JUDGE_PROMPT_ID, ws.prompts_dir),
            )
        plan = LLMPlan(
            endpoint=resolve_endpoint(ctx, "judge"),
            judge_prompt=load_prompt(groundedness.PROMPT_ID, ws.prompts_dir) if groundedness.NAME in names else None,
            repair_prompt=load_prompt(repair_mod.PROMPT_ID, ws.prompts_dir) if repair else None,
            closed_book=cb_plan,
        )
    copy_plan, why_no_copy_judge = copy_judge.plan_for(ctx, settings, names, use_llm)
    if why_no_copy_judge:
        report.skipped_checks[copy_judge.SKIP_KEY] = why_no_copy_judge
    semantic_endpoint: Endpoint | None = None
    if duplicates.NAME in names and settings.for_check(duplicates.SPEC).semantic:
        if not use_llm:
            report.skipped_checks["duplicate (semantic)"] = "skipped: --no-llm; lexical duplicates only"
        else:
            semantic_endpoint = resolve_endpoint(ctx, "judge")
            if not semantic_endpoint.embedding_model:
                raise ConfigError(
                    "filter.checks.duplicate.semantic needs an embedding model: set GOLDSET_EMBEDDING_MODEL or "
                    f"llm.endpoints.{semantic_endpoint.name}.embedding_model"
                )
    dup_judge: DuplicateJudgePlan | None = None
    dup_replay: DuplicateJudgePlan | None = None  # --no-llm: the judge's verdicts the journal holds still count
    if duplicates.NAME in names:
        dup_judge, why = duplicate_judge_plan(ctx, settings, use_llm)
        if why == NO_JUDGE_ENDPOINT:
            report.skipped_checks["duplicate (judge)"] = (
                "skipped: no judge endpoint configured; verdicts the judge made earlier stay, other pairs lexical only"
            )
        if why == SKIPPED_NO_LLM:
            report.skipped_checks["duplicate (judge)"] = why
            if endpoint_configured(ctx, "judge"):
                dup_replay, _ = duplicate_judge_plan(ctx, settings, True)
            if dup_replay is not None:
                report.skipped_checks["duplicate (judge)"] = SKIPPED_NO_LLM_REPLAY

    report.checks = list(names)
    report.n_pairs = len(pairs)
    report.per_check = {name: CheckCounts() for name in names}
    original = {p.id: p for p in pairs}
    live = [p for p in pairs if p.status != PairStatus.retired]
    report.n_judged = sum(1 for p in live if owned_by_filters(p))
    judges = {plan.endpoint.model} if plan is not None and plan.judge_prompt is not None else set()
    judges |= {dup_judge.endpoint.model} if dup_judge is not None else set()
    for model in sorted(judges):  # a judge of the generator's model favours its own pairs
        report.warnings += [f"warning: {note}" for note in same_model_notes(model, live)]
    run = FilterRun(ws=ws, settings=settings, names=names, chunks=chunks, report=report, progress=progress)

    # 4. Pair checks (pure, fast); a verdict per check per pair, no cycles: the collector paused as for reading.
    #    The lexical links among the questions (what the duplicates start from) need no verdict: computed here
    #    while the pair checks' workers run, unless embeddings or the judge's journal add links to them.
    links_ahead = None
    if duplicates.NAME in names and semantic_endpoint is None and dup_replay is None:
        everyone = duplicates.participants(live, against_pairs)
        links_ahead = partial(duplicates.links, everyone, run.settings_of(duplicates.SPEC))
    with paused_gc():
        strict = run_pair_checks(run, live, meanwhile=links_ahead)
    #    The verbatim check's borderline band decided by the copy judge (before the duplicates rank the pairs).
    import asyncio

    copied = asyncio.run(
        copy_judge.run_copy_judge(run, live, copy_plan, revert=settings.copy_judge.enabled is False)
    )
    report.copy_judge = copied.as_dict() if copy_plan is not None or copied.reverted else None

    # 5. Duplicates across the set (and against the earlier release): lexical, optionally by embeddings, and the
    #    duplicate judge on candidate pairs.
    if duplicates.NAME in names:
        asyncio.run(
            run_duplicate_stage(
                run,
                live,
                against_pairs,
                semantic_endpoint=semantic_endpoint,
                judge_plan=dup_judge,
                replay_plan=dup_replay,
                strict=strict,
            )
        )

    # 6. The LLM: judge, then repair.
    if plan is not None:
        asyncio.run(run_llm(run, plan, live, repair=repair))
    if report.duplicate_judge is not None:  # `llm` counts every chat call of the run, the duplicate judge's too
        report.llm = add_stats(report.llm, report.duplicate_judge)
    if copied.stats is not None:  # and the copy judge's
        report.llm = add_stats(report.llm, copied.stats)

    # 7. Severities, status, counts, write-back.
    severities = {n: settings.for_check(n).severity for n in CHECKS}
    by_id = {p.id: p for p in pairs}
    by_id.update((p.id, restamp_severity(p, severities)) for p in live)
    status_names = set(names) | {
        n for n in CHECKS
        if settings.for_check(n).enabled is True or (n not in (groundedness.NAME, closed_book.NAME) and n in names)
    }
    status_names -= set(report.skipped_checks)
    # A judge skipped this run (--no-llm, no endpoint) is not a judge disabled: an earlier verdict on the same
    # text still stands, so an unsupported answer does not become "passed" by running without the LLM.
    keep_judged = groundedness.NAME in report.skipped_checks and g_settings.enabled is not False
    final: list[QAPair] = []
    for p in pairs:
        p = by_id[p.id]
        if owned_by_filters(p):
            names_p = status_names
            old = p.checks.get(groundedness.NAME)
            if keep_judged and old is not None and old.input_hash == groundedness_input(p, chunks, run.related):
                names_p = status_names | {groundedness.NAME}
            status = pair_status(p, names_p)
            if status != p.status and p is original[p.id] and p.id not in run.changed:
                p = p.model_copy(update={"status": status})
            elif status != p.status:  # a stage's copy or changed in place already: changed in place
                p.__dict__["status"] = status
                run.changed.add(p.id)
        final.append(p)
    count_verdicts(report, final, names, settings.examples, severities)
    # Stages change a pair in place (run.changed) or replace it only to change it; a replaced one may still
    # serialise the same (a verdict re-made identical): compare those alone, so an unchanged re-run serialises
    # nothing.
    if run.changed or any(
        p is not original[p.id] and p.model_dump_json() != original[p.id].model_dump_json() for p in final
    ):
        data.write(final, sources.kept.values())
        report.written = True
    return report

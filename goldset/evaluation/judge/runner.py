"""Running the judge over a run: plan (endpoint, prompts, what is recorded), the calls of every sample, the
metrics they give, and what failed.

:func:`prepare_judge` decides, before the system runs, whether the judge runs and with what (so a missing
endpoint or prompt fails in a second, and the run's ``metric_config`` records the judge model and prompt hashes
from the start). :func:`judge_run` then judges every answered sample: its calls (:mod:`.calls`, at most 3) go out
concurrently through one :class:`goldset.llm.LLMClient` with the workspace's call journal, so judge calls share the
journal, concurrency, rate limits, retries and cost accounting of generation, and re-scoring a run makes no call.
The embeddings of the reverse questions of every sample go out afterwards, in batches.

A judge call that fails for good (no valid reply after the client's retries and one repair, a cut-off reply, a
fatal endpoint error) marks the metrics it feeds as failed *for that sample*: they are left out of those metrics'
means, counted in ``RunSummary.judge_failed`` and explained in the sample's ``SampleJudgement.failed``; the run
goes on. Samples the system failed on are not judged: their judge metrics take the value their definition gives a
failure (``MetricInfo.on_failure``), as the other metrics do.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goldset.evaluation.judge import claims as claims_mod
from goldset.evaluation.judge import completeness as coverage_mod
from goldset.evaluation.judge import consistency
from goldset.evaluation.judge import context_relevance as contexts_mod
from goldset.evaluation.judge.calls import (
    CALL_METRICS,
    EMBEDDING_METRIC,
    PROMPT_IDS,
    SCHEMAS,
    JudgeItem,
    RelevanceReply,
    calls_for,
    make_item,
    render,
)
from goldset.evaluation.judge.relevancy import reverse_cosines
from goldset.evaluation.judge.settings import JudgeCall, JudgeSettings
from goldset.evaluation.metrics.judged import ClaimTally, ContextTally, CoverageTally, JudgedSample, RelevanceTally
from goldset.evaluation.metrics.registry import get_metric
from goldset.schema.runs import ConsistencyCheck, JudgeInfo, SampleJudgement

if TYPE_CHECKING:
    from goldset.context import Context
    from goldset.evaluation.settings import EvalSettings
    from goldset.llm import CallResult, CallStats, Endpoint, LLMClient
    from goldset.progress import ProgressCallback
    from goldset.prompts import Prompt
    from goldset.schema import QAPair, RunSample, SampleScores

#: The metrics each judge call (and the embeddings pass, and the verdict checks that can fail a metric) feeds, by
#: the name failures are recorded under.
_FEEDS: dict[str, tuple[str, ...]] = {
    "embeddings": (EMBEDDING_METRIC,),
    consistency.KEY_POINTS: ("completeness",),
    consistency.REVERSE_QUESTIONS: (EMBEDDING_METRIC,),
    **{k: v for k, v in CALL_METRICS.items()},
}
#: Most calls one sample can need: one of each kind (the budget the tests and the benchmark hold it to).
MAX_CALLS_PER_SAMPLE = len(PROMPT_IDS)
#: Version of the verdict checks of :mod:`.consistency` (part of the judge's identity: a change re-scores).
VERDICT_CHECKS = 1


@dataclass(frozen=True)
class JudgePlan:
    """What the judge will do: its settings, endpoint and prompts, whether answer relevancy also uses embeddings,
    and where the call journal is (None: no journal)."""

    settings: JudgeSettings
    endpoint: Endpoint
    prompts: dict[JudgeCall, Prompt]
    embeddings: bool
    journal_path: Path | None

    @property
    def n_questions(self) -> int:
        """Reverse questions asked per answer (0 without an embedding model)."""
        return self.settings.reverse_questions if self.embeddings else 0

    @property
    def metric_names(self) -> list[str]:
        """The judge metrics this plan computes, in call order."""
        return [
            m for call in self.settings.calls for m in CALL_METRICS[call] if m != EMBEDDING_METRIC or self.embeddings
        ]

    @property
    def max_tokens(self) -> int | None:
        """The reply limit sent with each judge call."""
        return self.settings.max_tokens if self.settings.max_tokens is not None else self.endpoint.settings.max_tokens

    def identity(self) -> dict[str, Any]:
        """What, besides the judge settings, changes judge scores: recorded in ``metric_config["judge"]``."""
        return {
            "model": self.endpoint.model,
            "prompts": {p.id: p.hash for p in self.prompts.values()},
            "embedding_model": self.endpoint.embedding_model if self.embeddings else None,
            "reverse_questions": self.n_questions,
            "max_tokens": self.max_tokens,
            # the verdicts checked against their evidence (.consistency): runs scored before these checks took
            # the judge at its word, so their judge scores are not comparable with these
            "verdict_checks": VERDICT_CHECKS,
        }

    def call_params(self) -> dict[str, Any]:
        """The sampling parameters of every judge call, as the client puts them in the journal key."""
        return {"temperature": self.settings.temperature, "seed": None, "max_tokens": self.max_tokens}


def prepare_judge(
    ctx: Context, settings: EvalSettings, judge: bool | None, journal_path: Path | None
) -> JudgePlan | None:
    """The judge plan, or None when the judge does not run.

    ``judge`` (the caller's ``--judge`` / ``--no-judge``) wins over ``eval.judge.enabled``; with neither set, the
    judge runs when a judge endpoint is configured. When it must run, a missing endpoint raises
    :class:`goldset.errors.EndpointError` saying how to configure one, a missing prompt a ConfigError.
    """
    from goldset.llm import endpoint_configured, resolve_endpoint
    from goldset.prompts import load_prompt

    wanted = judge if judge is not None else settings.judge.enabled
    if wanted is False:
        return None
    if wanted is None and not endpoint_configured(ctx, "judge"):
        return None
    endpoint = resolve_endpoint(ctx, "judge")
    prompts_dir = ctx.ws.prompts_dir if ctx.ws is not None else None
    prompts = {call: load_prompt(PROMPT_IDS[call], prompts_dir) for call in settings.judge.calls}
    embeddings = (
        "relevance" in settings.judge.calls and settings.judge.reverse_questions > 0 and bool(endpoint.embedding_model)
    )
    return JudgePlan(settings.judge, endpoint, prompts, embeddings, journal_path)


# --------------------------------------------------------------------------------------------------- one sample


@dataclass
class SampleResult:
    """One sample's judging: the tallies the metrics read, the stored details, and the calls that failed."""

    judged: JudgedSample
    details: SampleJudgement
    failed: dict[str, str] = field(default_factory=dict)  # call (or "embeddings", a verdict check) → reason
    checks: dict[str, tuple[int, int]] = field(default_factory=dict)  # verdict check → (checked, caught)


def _interpret(
    item: JudgeItem, results: Mapping[JudgeCall, CallResult[Any]], reverse_questions: int = 0
) -> SampleResult:
    """The tallies and details of one sample from its call results (failed calls leave their parts None), each
    verdict checked against its own evidence (:mod:`.consistency`). ``reverse_questions``: how many the relevance
    call asked for (0: none, no embeddings)."""
    details = SampleJudgement(calls=len(results))
    failed: dict[str, str] = {}
    checks: dict[str, tuple[int, int]] = {}
    claim_tally: ClaimTally | None = None
    coverage_tally: CoverageTally | None = None
    relevance: RelevanceTally | None = None
    context_tally: ContextTally | None = None
    stance: str | None = None
    if "claims" not in results and not item.answer.strip():
        claim_tally = ClaimTally(0, 0, 0, 0, len(item.contexts))  # a blank answer states nothing: no call
        details.claims = []
    for call, res in results.items():
        value = res.value
        if value is None:
            failed[call] = res.error or "judge call failed"
        elif isinstance(value, claims_mod.ClaimsReply):
            claim_tally, details.claims = claims_mod.tally(value, item.contexts, item.has_reference)
            checks[consistency.SUPPORTED_QUOTES] = (claim_tally.said_supported, claim_tally.downgraded)
        elif isinstance(value, coverage_mod.CoverageReply):
            coverage_tally, details.points = coverage_mod.tally(value, item.question_type, item.reference)
            details.readings_acknowledged = coverage_tally.readings_acknowledged
            listed = coverage_tally.listed
            checks[consistency.KEY_POINTS] = (listed, listed - coverage_tally.total)
            if item.has_reference and not coverage_tally.total:
                failed[consistency.KEY_POINTS] = (
                    f"none of the {listed} key point(s) the judge listed is in the reference (e.g. "
                    f"{details.points[0].point[:80]!r})"
                    if listed
                    else "the judge listed no claim of the reference"
                )
        elif isinstance(value, RelevanceReply):
            relevance = RelevanceTally(rating=value.relevance.rating)
            details.relevance_rating = value.relevance.rating
            details.relevance_reason = value.relevance.reason
            written = [q for q in value.relevance.reverse_questions if q.strip()]
            details.reverse_questions = [q for q in written if consistency.usable_question(q)]
            if reverse_questions and item.answerable:
                checks[consistency.REVERSE_QUESTIONS] = (1, 0 if details.reverse_questions else 1)
                if not details.reverse_questions:
                    got = ", ".join(repr(q[:40]) for q in written[:3]) or "none"
                    failed[consistency.REVERSE_QUESTIONS] = (
                        f"the judge wrote no usable reverse question ({reverse_questions} asked for; got {got})"
                    )
            context_tally, details.contexts = contexts_mod.tally(value.contexts, len(item.contexts))
            stance = details.stance = value.stance.stance
            details.stance_reason = value.stance.reason
    details.failed = dict(failed)
    judged = JudgedSample(
        question_type=item.question_type,
        claims=claim_tally,
        coverage=coverage_tally,
        relevance=relevance,
        contexts=context_tally,
        stance=stance,
    )
    return SampleResult(judged, details, failed, checks)


def _probe(item: JudgeItem, embeddings: bool) -> JudgedSample:
    """A sample judged in full (every part present): the metrics that give a value on it are those that apply to
    ``item``, whatever the judge would say. Used to count failures only where a metric applied."""
    n = len(item.contexts)
    return JudgedSample(
        question_type=item.question_type,
        claims=ClaimTally(1, 0, 0, 1 if n else 0, n, 1 if item.has_reference else 0, 0),
        coverage=CoverageTally(1, 1, True),
        relevance=RelevanceTally(3, (1.0,) if embeddings else None),
        contexts=ContextTally(n, n),
        stance="answered",
    )


def applicable(names: Sequence[str], item: JudgeItem, embeddings: bool) -> list[str]:
    """The metrics of ``names`` that apply to ``item`` (see :func:`_probe`)."""
    probe = _probe(item, embeddings)
    return [m for m in names if get_metric(m).fn(probe) is not None]


def failure_values(names: Sequence[str], item: JudgeItem, embeddings: bool) -> dict[str, float | None]:
    """Judge metrics of a sample the *system* failed on: each applicable metric's failure value (its worst, or
    None when its definition leaves failures out), None where it does not apply."""
    out: dict[str, float | None] = dict.fromkeys(names)
    for m in applicable(names, item, embeddings):
        out[m] = get_metric(m).failure_value
    return out


# --------------------------------------------------------------------------------------------------- a whole run


@dataclass
class JudgeOutcome:
    """What judging a run added: the judge's record for ``RunMeta.judge``, failures per metric, and notes."""

    info: JudgeInfo
    failed: dict[str, int]
    notes: list[str]
    consistency: dict[str, ConsistencyCheck] = field(default_factory=dict)


async def _judge_items(
    plan: JudgePlan, client: LLMClient, items: Sequence[JudgeItem], progress: ProgressCallback | None
) -> list[SampleResult]:
    from goldset.errors import EndpointError
    from goldset.llm import CallResult, Usage, fan_out, fan_out_limit
    from goldset.progress import Progress

    total = len(items)

    def tick(done: int, _total: int) -> None:
        if progress is not None:
            s = client.stats
            counters: dict[str, int | float | str] = {"calls": s.calls, "cached": s.cache_hits}
            if s.failures:
                counters["failed"] = s.failures
            if s.cost is not None and s.cost_usd:
                counters["cost"] = f"${s.cost_usd:.4f}"
            progress(Progress("judge", done, total, counters))

    async def call(item: JudgeItem, kind: JudgeCall) -> CallResult[Any]:
        schema, name = SCHEMAS[kind]
        messages = render(kind, item, plan.prompts[kind], plan.settings, plan.n_questions)
        try:
            return await client.complete_json(
                messages, schema, schema_name=name, temperature=plan.settings.temperature, max_tokens=plan.max_tokens
            )
        except EndpointError as exc:  # the endpoint cannot serve any call: every judge metric fails, the run goes on
            return CallResult(
                value=None, error=str(exc), key="", cached=False, usage=Usage(), cost_usd=None,
                model=plan.endpoint.model, attempts=0,
            )  # fmt: skip

    async def one(item: JudgeItem) -> SampleResult:
        kinds = calls_for(item, plan.settings.calls)
        results = await asyncio.gather(*(call(item, k) for k in kinds))  # a sample's calls go out together
        return _interpret(item, dict(zip(kinds, results, strict=True)), plan.n_questions)

    if progress is not None:
        progress(Progress("judge", 0, total))
    # Samples in progress at once: enough to keep the client's pool full (a sample makes one to three calls), few
    # enough that the rendered prompts of a 10,000-question run are not all held in memory at the same time.
    out = await fan_out(items, one, limit=max(32, fan_out_limit(plan.endpoint)), on_done=tick)
    if plan.embeddings:
        await _embed_reverse_questions(client, items, out)
    return out


async def _embed_reverse_questions(client: LLMClient, items: Sequence[JudgeItem], out: list[SampleResult]) -> None:
    """answer_relevancy_embedding of every judged answerable sample: one batched pass over all the texts."""
    from goldset.errors import EndpointError

    todo = [
        (item, res)
        for item, res in zip(items, out, strict=True)
        if item.answerable and res.judged.relevance is not None and res.details.reverse_questions
    ]
    texts = sorted({t for item, res in todo for t in (item.question, *res.details.reverse_questions)})
    if not texts:
        return
    try:
        vectors = dict(zip(texts, await client.embed(texts), strict=True))
    except EndpointError as exc:
        vectors, error = {}, str(exc)
    else:
        error = "the embeddings request failed"
    for item, res in todo:
        cosines = reverse_cosines(vectors.get(item.question), [vectors.get(q) for q in res.details.reverse_questions])
        if cosines is None:
            res.failed["embeddings"] = error
            res.details.failed["embeddings"] = error
            continue
        rel = res.judged.relevance
        if rel is not None:  # always: filtered above
            res.judged = dataclasses.replace(res.judged, relevance=RelevanceTally(rel.rating, cosines))


def judge_info(plan: JudgePlan, stats: CallStats, results: Sequence[Any]) -> JudgeInfo:
    """What a run records of its judge: model, endpoint, prompt hashes, embedding model, the calls as the server
    saw them and the most calls one sample took (``results``: the per-sample outcomes, each with ``details``)."""
    return JudgeInfo(
        model=plan.endpoint.model,
        endpoint=plan.endpoint.name,
        prompts={p.id: p.hash for p in plan.prompts.values()},
        embedding_model=plan.endpoint.embedding_model if plan.embeddings else None,
        calls=stats.as_dict(),
        max_calls_per_sample=max((r.details.calls for r in results), default=0),
    )


def judge_run(
    plan: JudgePlan,
    pairs: Sequence[QAPair],
    samples: Mapping[str, RunSample],
    scores: list[SampleScores],
    *,
    progress: ProgressCallback | None = None,
) -> JudgeOutcome:
    """Judge every answered sample of ``scores`` (updated in place: judge metrics added to ``metrics``, the
    verdicts to ``judge``) and return what the run records about it."""
    from goldset.llm import session

    by_id = {p.id: p for p in pairs}
    names = plan.metric_names
    todo: list[tuple[SampleScores, JudgeItem]] = []
    for s in scores:
        pair = by_id[s.pair_id]
        sample = samples.get(s.pair_id)
        if s.failed or sample is None:
            stand_in = make_item(pair, sample or _blank(pair.id), plan.settings)
            s.metrics.update(failure_values(names, stand_in, plan.embeddings))
            continue
        todo.append((s, make_item(pair, sample, plan.settings)))

    items = [item for _, item in todo]

    async def go() -> tuple[list[SampleResult], CallStats]:
        async with session(plan.journal_path, plan.endpoint) as client:
            results = await _judge_items(plan, client, items, progress)
            return results, client.stats

    results, stats = asyncio.run(go())

    failed: Counter[str] = Counter()
    first_reason: dict[str, str] = {}
    for (s, item), res in zip(todo, results, strict=True):
        for m in names:
            s.metrics[m] = get_metric(m).fn(res.judged)
        for call, reason in res.failed.items():
            group = [m for m in _FEEDS[call] if m in names]
            for m in applicable(group, item, plan.embeddings):
                failed[m] += 1
            first_reason.setdefault(call, reason)
        s.judge = res.details

    info = judge_info(plan, stats, results)
    notes = []
    n_failed_samples = sum(1 for r in results if r.failed)
    if n_failed_samples:
        why = "; ".join(f"{call}: {reason}" for call, reason in sorted(first_reason.items()))
        shown = ", ".join(f"{m} {n}" for m, n in failed.items())
        notes.append(
            f"judge: {n_failed_samples} of {len(results)} judged sample(s) had a judge call or verdict that failed; "
            f"their metrics are left out of those means (not counted as 0 or 1): {shown}. First reasons: {why}"
        )
    totals = consistency.rates(r.checks for r in results)
    line = consistency.note(totals)
    if line:
        notes.append(line)
    checks = {
        name: ConsistencyCheck(checked=n, caught=k, rate=round(k / n, 4) if n else None)
        for name, (n, k) in totals.items()
    }
    return JudgeOutcome(info=info, failed=dict(failed), notes=notes, consistency=checks)


def _blank(pair_id: str) -> RunSample:
    from goldset.schema import RunSample

    return RunSample(pair_id=pair_id)

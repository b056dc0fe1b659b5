"""The copy judge: the LLM decides the verbatim check's borderline band (issue #22).

The verbatim check (:mod:`goldset.filters.verbatim`) is lexical: five measures, each failing the pair at or over its
threshold. Its *margin* on a pair is the highest of (measure − its threshold): at or over 0 the check fails the pair.
A pair whose margin lies in the band ``[-borderline, +borderline)`` (``filter.copy_judge.borderline``, 0.1 by
default) is one the measures cannot tell apart well: a careful paraphrase that keeps many of the source's words, or
a light edit that changed just enough of them. When a judge endpoint is configured, the judge decides those pairs
(the prompt ``prompts/copy_judge.md`` asks: is this answer a light edit / near copy of the passage(s), or a
paraphrase in its own words?); every other pair keeps its lexical verdict, and no call is made for it.

Why the judge and not embeddings: an embedding says how close two texts are *in meaning*. A light edit and a good
paraphrase both say what the passage says, so both sit close to it; what tells them apart is the wording, which is
what the lexical measures already see. A judge can be asked about the wording directly.

The decided verdict replaces the pair's ``verbatim`` verdict (same settings and input hashes, same lexical score,
same severity), its reason ``copy (judged): …`` or ``not a copy (judged): …`` followed by the lexical reason, so the
later stages (duplicates' ranking, the groundedness judge's "no call for a rejected pair", the repair) see the
decision. A verdict whose fields disagree (:func:`contradiction`) is a failed judgement: the lexical verdict stands
and its reason says so; a failed call leaves the lexical verdict as it is (asked again next run).

Cost: only band pairs are asked, and none that a cheaper verdict already rejects (another check, generation, an
expert; unless ``filter.judge_rejected``). The call reads the answer and the passages only (not the question), and
the call journal keys it on the model, the rendered prompt and the reply schema: a re-run asks the journal, not the
endpoint. Without the judge this run (``--no-llm``, no endpoint) the band is not asked and a verdict the judge made
earlier stands, as the groundedness judge's does (a release built on a machine with no endpoint changes no
verdict; a changed answer or passage gets a new lexical verdict from the verbatim check anyway). Turned off
(``filter.copy_judge.enabled: false``), the band is decided lexically: earlier judged verdicts are replaced by the
lexical one (the journal keeps the calls, so turning it on again restores them without a call).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from goldset.filters import verbatim
from goldset.filters.base import ChunkMap, evidence_texts
from goldset.filters.settings import CopyJudgeSettings, FilterSettings
from goldset.filters.status import JUDGED, rejected_before_judges
from goldset.filters.textsim import tokens as text_tokens
from goldset.schema import CheckResult, QAPair

if TYPE_CHECKING:
    from goldset.context import Context
    from goldset.filters.run_state import FilterRun
    from goldset.llm import Endpoint, LLMClient
    from goldset.prompts import Prompt

NAME = "copy_judge"
PROMPT_ID = "copy_judge"
SCHEMA_NAME = "copy_judge"
#: The setting holding each verbatim measure's threshold (:data:`goldset.filters.verbatim.MEASURES`).
LIMITS = {
    "similarity": "max_edit_similarity",
    "containment": "max_containment",
    "overlap": "max_sentence_overlap",
    "run": "max_lcs_ratio",
    "clause": "max_clause_share",
}
COPY_PREFIX = "copy (judged): "
NOT_COPY_PREFIX = "not a copy (judged): "
#: The note a failed judgement adds to the lexical reason.
LEXICAL_STANDS = "the lexical verdict stands"
#: skipped_checks key of the report.
SKIP_KEY = "verbatim (copy judge)"


class CopyVerdict(BaseModel):
    """The judge's structured reply about one answer."""

    model_config = ConfigDict(extra="ignore")

    near_copy: bool = Field(
        description="The answer is the passage's own text lightly edited: words swapped for synonyms, clauses or "
        "items reordered, a lead-in added, sentences merged, a clause copied and the rest reworded."
    )
    own_words: bool = Field(
        description="The answer says it in its own words and sentence structure (a paraphrase); the opposite of "
        "near_copy."
    )
    copied_phrases: list[str] = Field(
        default_factory=list,
        description="The passage's phrases the answer keeps word for word or nearly (empty when there are none).",
    )
    reason: str = Field("", description="One sentence: why the judge decided so.")


def contradiction(verdict: CopyVerdict) -> str | None:
    """Why ``verdict`` contradicts itself, or None: ``near_copy`` and ``own_words`` both true or both false, or a
    near copy that names no phrase it copied."""
    if verdict.near_copy == verdict.own_words:
        both = "true" if verdict.near_copy else "false"
        return f"the judge said near_copy and own_words both {both}"
    if verdict.near_copy and not any(p.strip() for p in verdict.copied_phrases):
        return "the judge said near copy but named no copied phrase"
    return None


def margin(pair: QAPair, chunks: ChunkMap, settings: verbatim.Settings) -> float | None:
    """The verbatim check's margin on ``pair``: the highest (measure − its threshold); None when the check does not
    judge the pair (no evidence, an answer too short)."""
    sources = evidence_texts(pair, chunks)
    tokens = text_tokens(pair.answer)
    if not sources or len(tokens) < settings.min_answer_tokens:
        return None
    values = verbatim.measure(pair.answer, sources, settings, tokens, pair.question)
    return max(values[m] - getattr(settings, LIMITS[m]) for m in verbatim.MEASURES)


def in_band(value: float | None, borderline: float) -> bool:
    """The margin lies in ``[-borderline, +borderline)``."""
    return value is not None and -borderline <= value < borderline


def is_judged(res: CheckResult) -> bool:
    """A verbatim verdict this module made (decided by the judge, or lexical with a failed judgement's note)."""
    return res.reason.startswith((COPY_PREFIX, NOT_COPY_PREFIX)) or f"; {LEXICAL_STANDS})" in res.reason


def render_messages(
    pair: QAPair, chunks: ChunkMap, prompt: Prompt, settings: CopyJudgeSettings
) -> list[dict[str, str]]:
    """The call's messages: the answer and its evidence passages (cut at ``max_source_chars``), nothing else."""
    text = "\n\n".join(f"<passage>\n{body}\n</passage>" for body in evidence_texts(pair, chunks))
    if len(text) > settings.max_source_chars:
        text = text[: settings.max_source_chars] + "\n[...]"
    return prompt.render(answer=pair.answer, passages=text)


def decided(lexical: CheckResult, verdict: CopyVerdict) -> CheckResult:
    """The verbatim verdict the judge's (consistent) ``verdict`` makes of the ``lexical`` one."""
    why = verdict.reason.strip() or ("a light edit of the passage" if verdict.near_copy else "its own words")
    prefix = COPY_PREFIX if verdict.near_copy else NOT_COPY_PREFIX
    reason = f"{prefix}{why} (lexical: {lexical.reason})"
    return lexical.model_copy(update={"passed": not verdict.near_copy, "reason": reason})


def failed_judgement(lexical: CheckResult, why: str) -> CheckResult:
    """The lexical verdict with the note that the judge's verdict contradicted itself."""
    return lexical.model_copy(update={"reason": f"{lexical.reason} ({why}; {LEXICAL_STANDS})"})


@dataclass
class CopyJudgePlan:
    """What the copy judge will use, resolved before any check runs."""

    endpoint: Endpoint
    prompt: Prompt
    settings: CopyJudgeSettings


def plan_for(
    ctx: Context, settings: FilterSettings, names: Sequence[str], use_llm: bool
) -> tuple[CopyJudgePlan | None, str]:
    """(the plan, "") when the judge decides the band this run; else (None, why: "" when it is simply off)."""
    from goldset.llm import endpoint_configured, resolve_endpoint
    from goldset.prompts import load_prompt

    st = settings.copy_judge
    if verbatim.NAME not in names or st.enabled is False:
        return None, ""
    if not use_llm:
        return None, "skipped: --no-llm; the borderline band is decided lexically"
    if st.enabled is None and not endpoint_configured(ctx, "judge"):
        return None, "skipped: no judge endpoint configured; the borderline band is decided lexically"
    endpoint = resolve_endpoint(ctx, "judge")  # enabled: true without an endpoint is an EndpointError, up front
    return CopyJudgePlan(endpoint, load_prompt(PROMPT_ID, ctx.workspace.prompts_dir), st), ""


@dataclass
class CopyJudgeCounts:
    """What the copy judge did this run: ``band`` pairs asked about (``cached`` of them answered by the journal),
    ``copies`` / ``paraphrases`` its decisions, ``failed`` calls that failed or verdicts that contradicted
    themselves (the lexical verdict stands), ``reverted`` earlier judged verdicts replaced by the lexical one (the
    judge is not used this run), ``stats`` the client's call statistics."""

    band: int = 0
    cached: int = 0
    copies: int = 0
    paraphrases: int = 0
    failed: int = 0
    reverted: int = 0
    stats: dict[str, object] | None = field(default=None, repr=False)

    def as_dict(self) -> dict[str, int]:
        return {k: int(v) for k, v in vars(self).items() if k != "stats" and isinstance(v, int)}


def _lexical(run: FilterRun, pair: QAPair, old: CheckResult, st: verbatim.Settings) -> CheckResult:
    """The lexical verdict of ``pair``, stamped like ``old`` (same settings and input hashes)."""
    res = verbatim.check(pair, run.chunks, st)
    return res.model_copy(update={"settings_hash": old.settings_hash, "input_hash": old.input_hash})


def band_targets(
    pairs: Sequence[QAPair], chunks: ChunkMap, settings: FilterSettings, names: Sequence[str]
) -> tuple[list[int], int]:
    """(indexes of the band pairs the judge is asked about, band pairs not asked because a cheaper verdict rejects
    them)."""
    st = settings.for_check(verbatim.SPEC)
    from goldset.filters.registry import CHECKS

    # The other pair checks' verdicts are this run's (stage 1); the LLM checks' and duplicates' are not yet.
    cheaper = [n for n in names if n != verbatim.NAME and CHECKS[n].kind == "pair"]
    limit = max(getattr(st, name) for name in LIMITS.values()) + settings.copy_judge.borderline
    todo: list[int] = []
    not_asked = 0
    for idx, p in enumerate(pairs):
        res = p.checks.get(verbatim.NAME)
        if res is None or p.status not in JUDGED:  # accepted and stale pairs: review owns them
            continue
        if not res.passed and res.score is not None and res.score >= limit:
            continue  # a failing measure past every threshold's band: a plain copy
        if not in_band(margin(p, chunks, st), settings.copy_judge.borderline):
            continue
        if not settings.judge_rejected and rejected_before_judges(p, cheaper):
            not_asked += 1  # its status is rejected whatever the judge says: no call
        else:
            todo.append(idx)
    return todo, not_asked


async def run_copy_judge(
    run: FilterRun, live: list[QAPair], plan: CopyJudgePlan | None, *, revert: bool = False
) -> CopyJudgeCounts:
    """Decide the band pairs of ``live`` (updated in place) with the judge of ``plan``. Without a plan, earlier
    judged verdicts stand, unless ``revert`` (the copy judge is turned off): then the lexical verdict is put back."""
    from goldset.llm import session

    counts = CopyJudgeCounts()
    if verbatim.NAME not in run.names or (plan is None and not revert):
        return counts
    st = run.settings_of(verbatim.SPEC)
    restored: dict[int, QAPair] = {}
    for idx, p in enumerate(live):  # judged verdicts back to lexical first (changed text or settings re-decide)
        res = p.checks.get(verbatim.NAME)
        if res is not None and is_judged(res):
            restored[idx] = p.model_copy(update={"checks": {**p.checks, verbatim.NAME: _lexical(run, p, res, st)}})
    work = live.copy()
    for idx, p in restored.items():
        work[idx] = p
    if plan is None:
        for idx, p in restored.items():
            live[idx] = p
            run.report.computed += 1
        counts.reverted = len(restored)
        return counts
    todo, not_asked = band_targets(work, run.chunks, run.settings, run.names)
    if not_asked:
        run.report.not_judged[NAME] = run.report.not_judged.get(NAME, 0) + not_asked
    counts.band = len(todo)
    async with session(run.ws, plan.endpoint) as client:
        outcomes = await _ask(run, client, plan, [work[i] for i in todo])
        counts.stats = dict(client.stats.as_dict())
    verdicts = inconsistent = 0
    decided_idx: dict[int, CheckResult] = {}
    for idx, (value, error, cached) in zip(todo, outcomes, strict=True):
        lexical = work[idx].checks[verbatim.NAME]
        counts.cached += cached
        if value is None:
            counts.failed += 1
            run.report.judge_errors.append(f"{work[idx].id}: copy judge: {error}; {LEXICAL_STANDS}")
            decided_idx[idx] = lexical
            continue
        verdicts += 1
        why = contradiction(value)
        if why is not None:
            inconsistent += 1
            counts.failed += 1
            run.report.judge_errors.append(f"{work[idx].id}: copy judge: {why}: a failed judgement, {LEXICAL_STANDS}")
            decided_idx[idx] = failed_judgement(lexical, why)
            continue
        counts.copies += value.near_copy
        counts.paraphrases += not value.near_copy
        decided_idx[idx] = decided(lexical, value)
    run.report.count_consistency(NAME, verdicts, inconsistent)
    for idx in set(restored) | set(decided_idx):
        old = live[idx].checks[verbatim.NAME]
        new = decided_idx.get(idx, work[idx].checks[verbatim.NAME])
        if (old.passed, old.score, old.reason) == (new.passed, new.score, new.reason):
            continue  # the same decision as the file holds: keep its verdict (an unchanged re-run writes nothing)
        live[idx] = live[idx].model_copy(update={"checks": {**live[idx].checks, verbatim.NAME: new}})
        run.report.computed += 1
    return counts


async def _ask(
    run: FilterRun, client: LLMClient, plan: CopyJudgePlan, pairs: Sequence[QAPair]
) -> list[tuple[CopyVerdict | None, str | None, bool]]:
    """(the verdict or None, the error, whether the journal answered) per pair, in order."""
    from goldset.llm.fanout import fan_out, fan_out_limit

    done = 0

    async def one(pair: QAPair) -> tuple[CopyVerdict | None, str | None, bool]:
        nonlocal done
        messages = render_messages(pair, run.chunks, plan.prompt, plan.settings)
        res = await client.complete_json(messages, CopyVerdict, schema_name=SCHEMA_NAME)
        done += 1
        run.tell("copy judge", done, len(pairs))
        return res.value, res.error or (None if res.value is not None else "copy judge call failed"), res.cached

    return await fan_out(pairs, one, limit=fan_out_limit(client.endpoint))


@dataclass
class CopyJudgeEstimate:
    """The copy judge's calls for a ``goldset filter`` run now (:func:`estimate_copy_judge`): ``enabled`` False and
    ``reason`` when it would not run; ``band`` pairs it would ask about (one call each), ``cached`` of them the call
    journal answers, ``not_asked`` pairs left out because a cheaper verdict rejects them."""

    enabled: bool
    reason: str = ""
    model: str | None = None
    pairs: int = 0
    band: int = 0
    cached: int = 0
    not_asked: int = 0

    @property
    def to_send(self) -> int:
        """Calls the journal does not hold."""
        return self.band - self.cached


def estimate_copy_judge(ctx: Context, names: Sequence[str], use_llm: bool = True) -> CopyJudgeEstimate:
    """What the copy judge would ask on the candidates file as it is: the band is measured on the pairs' current
    verbatim verdicts (made now for a pair that has none; the other checks' verdicts as the file holds them, so a
    pair whose other checks have not run yet counts as not rejected). Calls nothing, writes nothing."""
    from goldset.filters.stage_duplicates import journal_or_none
    from goldset.llm.client import request_key
    from goldset.schema import PairStatus

    settings = ctx.section(FilterSettings)
    plan, why = plan_for(ctx, settings, names, use_llm)
    if plan is None:
        return CopyJudgeEstimate(enabled=False, reason=why or "filter.copy_judge.enabled is false or no verbatim check")
    live = [p for p in ctx.data.require_pairs() if p.status != PairStatus.retired]
    chunks = ctx.data.chunk_sources().kb
    st = settings.for_check(verbatim.SPEC)
    work = [
        p.model_copy(update={"checks": {**p.checks, verbatim.NAME: verbatim.check(p, chunks, st)}})
        if verbatim.NAME not in p.checks or is_judged(p.checks[verbatim.NAME])
        else p
        for p in live
    ]
    todo, not_asked = band_targets(work, chunks, settings, names)
    out = CopyJudgeEstimate(enabled=True, model=plan.endpoint.model, pairs=len(live), band=len(todo),
                            not_asked=not_asked)  # fmt: skip
    with journal_or_none(ctx.workspace) as journal:
        if journal is not None:
            keys = [
                request_key(plan.endpoint, render_messages(work[i], chunks, plan.prompt, plan.settings), CopyVerdict)
                for i in todo
            ]
            out.cached = sum(1 for k in keys if journal.get(k) is not None)
    return out

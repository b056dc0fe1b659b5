"""Check 6 (LLM, optional): does the question need the documents? ("the question needs the document to be
answered, not common sense").

The generation model is asked the question with no context at all (prompt ``closed_book_answer``); when it gives an
answer, the judge (prompt ``closed_book_judge``) decides whether that answer agrees with the pair's reference
answer. A pair whose reference the model reproduces from general knowledge fails: it tests what the model knows,
not what retrieval finds. The default severity is ``flag``, not ``reject``: a model knowing the answer does not
make the pair wrong (it may still be worth keeping, e.g. when a product's behaviour matches common practice), and
the agreement is a second model's judgement, so the expert decides in review; ``severity: reject`` drops them.

Only pairs no cheaper check (the groundedness judge included), generation or an expert already rejected are asked.
Each call goes through the call journal and is keyed on exactly what it read: the closed-book answer on (generation
model, question, prompt), the agreement on (judge model, question, reference answer, closed-book answer, prompt);
so a change to a pair's evidence or to another check re-pays nothing. A verdict whose fields contradict each other
(``agrees: true`` with a reason saying they differ, or ``agrees: false`` with one saying they agree) is a failed
judgement: the pair is left without a verdict (a candidate) and the reason is in the report's judge errors.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from goldset.filters.base import CheckSettings, CheckSpec, Severity, result
from goldset.schema import CheckResult, QAPair, QuestionType

if TYPE_CHECKING:
    from goldset.llm import Endpoint, LLMClient
    from goldset.prompts import Prompt

NAME = "closed_book"
ANSWER_PROMPT_ID = "closed_book_answer"
JUDGE_PROMPT_ID = "closed_book_judge"
ANSWER_SCHEMA = "closed_book_answer"
JUDGE_SCHEMA = "closed_book_agreement"


class Settings(CheckSettings):
    """Settings of the closed-book check (``filter.checks.closed_book``); both models and prompt hashes join its
    settings hash."""

    enabled: bool | None = Field(  # type: ignore[assignment]
        None, description="None (default): on when a generation endpoint is configured; true: required; false: off."
    )
    severity: Severity = Field(
        "flag",
        description="'flag' (default): a pair answerable from general knowledge passes, marked for review; "
        "'reject': it is rejected.",
    )


class ClosedAnswer(BaseModel):
    """The generation model's reply to the bare question."""

    model_config = ConfigDict(extra="ignore")

    knows: bool = Field(description="The model can answer from general knowledge alone.")
    answer: str = Field("", description="Its answer (empty when it does not know).")


class Agreement(BaseModel):
    """The judge's verdict: does the closed-book answer agree with the reference answer?"""

    model_config = ConfigDict(extra="ignore")

    agrees: bool = Field(description="The closed-book answer states the reference answer's key facts, no conflict.")
    reason: str = Field("", description="One sentence: why.")


_DIFFER_RE = re.compile(
    r"\b(?:does\s+not|doesn't|do\s+not|don't|not)\s+(?:agree|match|state|mention|give)|\bdisagree|\bcontradict"
    r"|\bdiffers?\b|\bdifferent\b|\bconflicts?\b|\bwrong\b|\bmissing\b|不一致|不同|矛盾|没有提到|未提及",
    re.IGNORECASE,
)
_AGREE_RE = re.compile(r"\b(?:agrees|matches|same\s+(?:answer|facts?))\b|一致|相同", re.IGNORECASE)


def contradiction(verdict: Agreement) -> str | None:
    """Why ``verdict`` contradicts itself, or None (see the module docstring)."""
    why = verdict.reason.strip()
    if verdict.agrees and _DIFFER_RE.search(why):
        return f"the judge said the answers agree but its reason says they differ ({why[:200]})"
    if not verdict.agrees and _AGREE_RE.search(why) and not _DIFFER_RE.search(why):
        return f"the judge said the answers differ but its reason says they agree ({why[:200]})"
    return None


def applies(pair: QAPair) -> bool:
    """Unanswerable pairs have no reference to reproduce: the check passes them without a call."""
    return pair.question_type != QuestionType.unanswerable


def answer_messages(pair: QAPair, prompt: Prompt) -> list[dict[str, str]]:
    """The closed-book call: the question alone (nothing else of the pair, no context)."""
    return prompt.render(question=pair.question)


def judge_messages(pair: QAPair, closed: str, prompt: Prompt) -> list[dict[str, str]]:
    """The agreement call: the question, the reference answer and the closed-book answer."""
    return prompt.render(question=pair.question, reference=pair.answer, closed_answer=closed)


def interpret(closed: ClosedAnswer, verdict: Agreement | None) -> CheckResult:
    """The check's verdict from the closed-book answer and, when it answered, the judge's agreement."""
    if not closed.knows or not closed.answer.strip():
        return result(True, 0.0, "the model cannot answer it without the documents")
    assert verdict is not None
    why = verdict.reason.strip()
    tail = f" ({why})" if why else ""
    if verdict.agrees:
        said = closed.answer.strip()[:160]
        return result(False, 1.0, f"answerable from general knowledge: the model answered {said!r} without context, "
                      f"and the judge finds it agrees with the reference{tail}")  # fmt: skip
    return result(True, 0.0, f"the model's answer without context does not agree with the reference{tail}")


@dataclass
class Outcome:
    """One pair: its verdict, or the error of a failed call / contradictory judgement (``inconsistent``)."""

    pair_id: str
    check: CheckResult | None
    error: str | None = None
    inconsistent: bool = False
    judged: bool = False


@dataclass
class Plan:
    """The two endpoints and prompts the check uses."""

    answer_endpoint: Endpoint
    answer_prompt: Prompt
    judge_prompt: Prompt


async def check_many(
    pairs: Sequence[QAPair],
    answerer: LLMClient,
    judge: LLMClient,
    plan: Plan,
    *,
    on_done: Callable[[], Any] | None = None,
) -> list[Outcome]:
    """Ask each pair's question closed-book, then judge the agreement of the answers given, concurrently."""
    from goldset.llm.fanout import fan_out, fan_out_limit

    async def one(pair: QAPair) -> Outcome:
        out = await _one(pair, answerer, judge, plan)
        if on_done is not None:
            on_done()
        return out

    return await fan_out(pairs, one, limit=fan_out_limit(answerer.endpoint))


async def _one(pair: QAPair, answerer: LLMClient, judge: LLMClient, plan: Plan) -> Outcome:
    if not applies(pair):
        return Outcome(pair.id, result(True, None, "unanswerable pair: no reference answer to reproduce"))
    got = await answerer.complete_json(answer_messages(pair, plan.answer_prompt), ClosedAnswer,
                                       schema_name=ANSWER_SCHEMA)  # fmt: skip
    if got.value is None:
        return Outcome(pair.id, None, f"closed-book answer: {got.error or 'call failed'}")
    closed = got.value
    if not closed.knows or not closed.answer.strip():
        return Outcome(pair.id, interpret(closed, None))
    res = await judge.complete_json(judge_messages(pair, closed.answer, plan.judge_prompt), Agreement,
                                    schema_name=JUDGE_SCHEMA)  # fmt: skip
    if res.value is None:
        return Outcome(pair.id, None, f"agreement judge: {res.error or 'call failed'}")
    why = contradiction(res.value)
    if why is not None:
        return Outcome(pair.id, None, f"{why}: a failed judgement, the pair is left unjudged", True, True)
    return Outcome(pair.id, interpret(closed, res.value), judged=True)


def check_settings_hash(settings: Settings, plan: Plan, judge_model: str) -> str:
    """The settings hash of the check's verdicts: its version and both models and prompts."""
    from goldset.filters.incremental import settings_hash

    extra = {"model": plan.answer_endpoint.model, "judge": judge_model, "prompt": plan.answer_prompt.hash,
             "judge_prompt": plan.judge_prompt.hash}  # fmt: skip
    return settings_hash(SPEC, settings, extra)


@dataclass
class Estimate:
    """What the check would call on the candidates file as it is (:func:`estimate`). ``enabled`` False: it would
    not run (``reason``). ``asked``: pairs it would ask (no current verdict, no rejecting verdict yet);
    ``answers_cached`` of their closed-book calls the journal holds; ``judge_calls`` agreement calls for the
    journaled answers that answered (``judge_cached`` of them journaled) plus at most one per answer to send."""

    enabled: bool
    reason: str = ""
    model: str | None = None
    judge: str | None = None
    asked: int = 0
    reused: int = 0
    not_asked: int = 0
    answers_cached: int = 0
    judge_calls: int = 0
    judge_cached: int = 0

    @property
    def to_send(self) -> int:
        """Calls the journal does not hold (agreement calls after answers to send counted at most)."""
        return self.asked - self.answers_cached + self.judge_calls - self.judge_cached


def estimate(ctx: Any, *, checks: Sequence[str] | None = None, use_llm: bool = True) -> Estimate:
    """The closed-book calls of a ``goldset filter`` run now (``ctx``: a Context), calling nothing. Pairs the
    groundedness judge will reject this run are still counted (an upper bound)."""
    from goldset.filters.incremental import current, input_hash
    from goldset.filters.registry import CHECKS
    from goldset.filters.settings import FilterSettings
    from goldset.filters.stage_duplicates import journal_or_none
    from goldset.filters.status import JUDGED, rejected_before_judges
    from goldset.llm import endpoint_configured, resolve_endpoint
    from goldset.llm.client import request_key
    from goldset.prompts import load_prompt

    settings = ctx.section(FilterSettings)
    st = settings.for_check(SPEC)
    if (checks and NAME not in checks) or (not checks and st.enabled is False):
        return Estimate(enabled=False, reason=f"filter.checks.{NAME} is off" if not checks else "not requested")
    if not use_llm:
        return Estimate(enabled=False, reason="--no-llm")
    if not (checks or st.enabled is True) and not endpoint_configured(ctx, "generate"):
        return Estimate(enabled=False, reason="no generation endpoint configured")
    ws = ctx.workspace
    plan = Plan(resolve_endpoint(ctx, "generate"), load_prompt(ANSWER_PROMPT_ID, ws.prompts_dir),
                load_prompt(JUDGE_PROMPT_ID, ws.prompts_dir))  # fmt: skip
    judge_ep = resolve_endpoint(ctx, "judge")
    s_hash = check_settings_hash(st, plan, judge_ep.model)
    names = list(checks) if checks else [n for n in CHECKS if settings.for_check(n).enabled is not False]
    cheaper = [n for n in names if n != NAME]
    chunks = ctx.data.chunk_sources().kb
    out = Estimate(enabled=True, model=plan.answer_endpoint.model, judge=judge_ep.model)
    with journal_or_none(ws) as journal:
        for p in ctx.data.require_pairs():
            if p.status not in JUDGED:
                continue
            if current(p, NAME, s_hash, input_hash(SPEC, p, chunks)) is not None:
                out.reused += 1
            elif not settings.judge_rejected and rejected_before_judges(p, cheaper):
                out.not_asked += 1
            elif applies(p):
                out.asked += 1
                entry = None
                if journal is not None:
                    entry = journal.get(request_key(plan.answer_endpoint, answer_messages(p, plan.answer_prompt),
                                                    ClosedAnswer))  # fmt: skip
                if entry is None:
                    out.judge_calls += 1  # at most one agreement call after it
                    continue
                out.answers_cached += 1
                closed = ClosedAnswer.model_validate(entry.reply)
                if closed.knows and closed.answer.strip():
                    out.judge_calls += 1
                    key = request_key(judge_ep, judge_messages(p, closed.answer, plan.judge_prompt), Agreement)
                    out.judge_cached += journal is not None and journal.get(key) is not None
    return out


SPEC = CheckSpec(
    name=NAME,
    settings_model=Settings,
    kind="llm",
    summary="the question needs the documents: the model cannot give the reference answer without context",
    reads=("question", "answer", "question_type"),
)

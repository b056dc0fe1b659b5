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
    if verdict.agrees:
        return result(False, 1.0, f"answerable from general knowledge: the model answered {closed.answer.strip()[:160]!r} "
                      f"without context, and the judge finds it agrees with the reference ({why})".rstrip(" ()"))
    return result(True, 0.0, f"the model's answer without context does not agree with the reference ({why})"
                  .rstrip(" ()"))


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


SPEC = CheckSpec(
    name=NAME,
    settings_model=Settings,
    kind="llm",
    summary="the question needs the documents: the model cannot give the reference answer without context",
    reads=("question", "answer", "question_type"),
)

"""The judge's three calls per sample: what each asks, its prompt, its reply schema, and the metrics it feeds.

============  =======================================  ==========================================================
call          prompt (``prompts/``)                    metrics
============  =======================================  ==========================================================
claims        judge_claims: question, answer,          faithfulness, hallucination, contradiction,
              contexts, reference                      context_utilization, reference_contradiction
coverage      judge_coverage: question, reference,     completeness, readings_acknowledged
              answer (no contexts)
relevance     judge_relevance: question, answer,       answer_relevancy (+ answer_relevancy_embedding),
              contexts                                 context_relevance, correct/false_refusal_judged
============  =======================================  ==========================================================

Which calls a sample needs (:func:`calls_for`): ``claims`` unless the answer is blank (no claim to check),
``coverage`` for answerable pairs with a reference, ``relevance`` always: 3 calls for an answerable pair, 2 for an
unanswerable one, none for a sample the system failed. Combining more into one call would make one prompt ask
for everything at once (and resend the contexts less often); keeping the reference out of the relevance call
keeps context relevance reference-free, and keeping the contexts out of the coverage call keeps it cheap.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from goldset.evaluation.judge import claims, completeness
from goldset.evaluation.judge.context_relevance import ContextVerdict
from goldset.evaluation.judge.refusals import StanceVerdict
from goldset.evaluation.judge.relevancy import AnswerRelevance
from goldset.evaluation.judge.settings import JudgeCall, JudgeSettings

if TYPE_CHECKING:
    from goldset.prompts import Prompt
    from goldset.schema import QAPair, RunSample

RELEVANCE_PROMPT_ID = "judge_relevance"
RELEVANCE_SCHEMA_NAME = "judge_relevance"

PROMPT_IDS: dict[JudgeCall, str] = {
    "claims": claims.PROMPT_ID,
    "coverage": completeness.PROMPT_ID,
    "relevance": RELEVANCE_PROMPT_ID,
}

#: The judge metrics each call feeds (names registered in :mod:`goldset.evaluation.metrics.judged`).
CALL_METRICS: dict[JudgeCall, tuple[str, ...]] = {
    "claims": ("faithfulness", "hallucination", "contradiction", "context_utilization", "reference_contradiction"),
    "coverage": ("completeness", "readings_acknowledged"),
    "relevance": (
        "answer_relevancy",
        "answer_relevancy_embedding",
        "context_relevance",
        "correct_refusal_judged",
        "false_refusal_judged",
    ),
}
EMBEDDING_METRIC = "answer_relevancy_embedding"
NO_REFERENCE = "(none)"
NO_CONTEXT = "(no context was retrieved)"
NO_ANSWER = "(empty answer)"


class RelevanceReply(BaseModel):
    """The judge's reply to ``judge_relevance``: three independent judgements in one call."""

    model_config = ConfigDict(extra="ignore")

    relevance: AnswerRelevance = Field(description="How directly the answer addresses the question.")
    contexts: list[ContextVerdict] = Field(
        default_factory=list, description="One verdict per retrieved context, in the order shown (empty when none)."
    )
    stance: StanceVerdict = Field(description="Whether the answer answers the question or declines to.")


SCHEMAS: dict[JudgeCall, tuple[type[BaseModel], str]] = {
    "claims": (claims.ClaimsReply, claims.SCHEMA_NAME),
    "coverage": (completeness.CoverageReply, completeness.SCHEMA_NAME),
    "relevance": (RelevanceReply, RELEVANCE_SCHEMA_NAME),
}


@dataclass(frozen=True, slots=True)
class JudgeItem:
    """What the judge reads of one sample: the pair's question, type and reference, the system's answer and the
    contexts it retrieved (cut to ``max_contexts`` in rank order). ``reference`` is '' for unanswerable pairs."""

    pair_id: str
    question_type: str
    question: str
    reference: str
    answer: str
    contexts: tuple[str, ...]

    @property
    def answerable(self) -> bool:
        """Everything but ``unanswerable`` pairs."""
        return self.question_type != "unanswerable"

    @property
    def has_reference(self) -> bool:
        """An answerable pair with a reference answer to compare with."""
        return self.answerable and bool(self.reference.strip())


def make_item(pair: QAPair, sample: RunSample, settings: JudgeSettings) -> JudgeItem:
    """The judge's view of ``pair`` answered by ``sample``. The question type is read as a string: the judge knows
    every type by name, including ones added after it (``ambiguous``, ``open_ended``)."""
    qtype = str(getattr(pair.question_type, "value", pair.question_type))
    return JudgeItem(
        pair_id=pair.id,
        question_type=qtype,
        question=pair.question,
        reference=pair.answer if qtype != "unanswerable" else "",
        answer=sample.answer,
        contexts=tuple(c.text for c in sample.contexts[: settings.max_contexts]),
    )


def calls_for(item: JudgeItem, enabled: Sequence[JudgeCall]) -> list[JudgeCall]:
    """The calls ``item`` needs, of those ``enabled`` (see the module docstring)."""
    out: list[JudgeCall] = []
    for call in enabled:
        if call == "claims" and not item.answer.strip():
            continue
        if call == "coverage" and not item.has_reference:
            continue
        out.append(call)
    return out


def _contexts_block(contexts: Sequence[str], max_chars: int) -> str:
    if not contexts:
        return NO_CONTEXT
    parts = []
    for i, text in enumerate(contexts, 1):
        body = text if len(text) <= max_chars else text[:max_chars] + " [...]"
        parts.append(f'<context index="{i}">\n{body}\n</context>')
    return "\n".join(parts)


def render(
    call: JudgeCall, item: JudgeItem, prompt: Prompt, settings: JudgeSettings, n_questions: int = 0
) -> list[dict[str, str]]:
    """The chat messages of ``call`` for ``item``. ``n_questions``: reverse questions the relevance call asks for
    (0 without an embedding model)."""
    answer = item.answer if item.answer.strip() else NO_ANSWER
    common = {"question_type": item.question_type, "question": item.question, "answer": answer}
    if call == "claims":
        return prompt.render(
            **common,
            reference=item.reference if item.has_reference else NO_REFERENCE,
            contexts=_contexts_block(item.contexts, settings.max_context_chars),
        )
    if call == "coverage":
        return prompt.render(**common, reference=item.reference)
    return prompt.render(
        **common,
        contexts=_contexts_block(item.contexts, settings.max_context_chars),
        n_contexts=str(len(item.contexts)),
        n_questions=str(n_questions),
    )

"""``eval.judge`` in goldset.yaml: the LLM judge of answers (which calls, which model role, how much it reads).

Kept apart from the judge's code so reading settings imports nothing heavy. The judge's endpoint is the role
``judge`` of the ``llm`` section (:func:`goldset.llm.resolve_endpoint`); every setting here changes judge scores, so
a judged run records them, with the judge model and the prompt hashes, in ``RunMeta.metric_config["judge"]``
(:meth:`goldset.evaluation.settings.EvalSettings.scoring`) and runs judged differently are not compared silently.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

#: The judge's calls, at most one of each per sample (so at most 3 calls per sample):
#: ``claims``: the answer's claims against the retrieved contexts (and the reference);
#: ``coverage``: the reference's claims (key points) the answer covers, readings of an ambiguous question;
#: ``relevance``: answer relevancy, each retrieved context's relevance, and whether the answer declined.
JudgeCall = Literal["claims", "coverage", "relevance"]
JUDGE_CALLS: tuple[JudgeCall, ...] = ("claims", "coverage", "relevance")


class JudgeSettings(BaseModel):
    """The ``eval.judge`` block: whether `goldset eval` judges answers with an LLM, and how."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool | None = Field(
        None,
        description="None (default): judge when a judge endpoint is configured (llm.judge, GOLDSET_JUDGE_MODEL or "
        "the generation endpoint); true: required (an error without an endpoint); false: never (--judge/--no-judge).",
    )
    calls: list[JudgeCall] = Field(
        default_factory=lambda: list(JUDGE_CALLS),
        description="Which judge calls to make per sample: claims (faithfulness, hallucination, context "
        "utilization, contradictions of the reference), coverage (completeness, readings of ambiguous questions), "
        "relevance (answer relevancy, context relevance, judged refusals).",
    )
    temperature: float = Field(0.0, ge=0, le=2, description="Sampling temperature of judge calls.")
    max_tokens: int | None = Field(
        None, ge=1, description="Reply limit of a judge call (unset: the judge endpoint's max_tokens)."
    )
    max_contexts: int = Field(
        10, ge=1, le=100, description="Retrieved contexts the judge reads per sample, in rank order (the rest: unread)."
    )
    max_context_chars: int = Field(
        4000, ge=200, description="Each context is cut to this many characters in the judge's prompt."
    )
    reverse_questions: int = Field(
        3,
        ge=0,
        le=10,
        description="answer_relevancy_embedding: questions the judge writes back from the answer, compared with the "
        "question by embeddings (RAGAS' response relevancy); used only when the judge endpoint has an embedding "
        "model; 0 turns it off.",
    )

    @field_validator("calls")
    @classmethod
    def _calls(cls, v: list[JudgeCall]) -> list[JudgeCall]:
        if not v:
            raise ValueError(f"name at least one judge call ({', '.join(JUDGE_CALLS)}), or set enabled: false")
        return [c for c in JUDGE_CALLS if c in v]  # one order, no duplicates: the same settings hash alike

    def scoring(self) -> dict[str, Any]:
        """The settings that change judge scores (``enabled`` says whether to judge, not how)."""
        return self.model_dump(mode="json", exclude={"enabled"})

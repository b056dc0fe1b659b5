"""Answer relevancy: does the answer address the question? Part of the ``judge_relevance`` call.

Two measures, kept apart because they are not the same number:

- ``answer_relevancy``: the judge's rating on a 1–5 rubric with a one-sentence reason (stored per sample);
- ``answer_relevancy_embedding``: RAGAS' reverse-question method, when the judge endpoint has an embedding model:
  the judge writes ``eval.judge.reverse_questions`` questions the answer would answer (in the same reply: no extra
  chat call), and the metric is the mean cosine similarity of their embeddings with the question's. The embeddings
  of every sample are requested in batches after the judge calls, through the same client and journal.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from goldset.evaluation.metrics.judged import cosine


class AnswerRelevance(BaseModel):
    """How directly the answer addresses the question."""

    model_config = ConfigDict(extra="ignore")

    rating: int = Field(
        ge=1,
        le=5,
        description="5: addresses the question fully and only; 4: addresses it with a minor digression or gap; "
        "3: partly; 2: mostly beside the question; 1: does not address it (a refusal rates 1).",
    )
    reason: str = Field("", description="One sentence: why this rating.")
    reverse_questions: list[str] = Field(
        default_factory=list,
        description="As many questions as asked for, that the answer would be a good answer to, in its language.",
    )


def reverse_cosines(
    question_vector: Sequence[float] | None, vectors: Sequence[Sequence[float] | None]
) -> tuple[float, ...] | None:
    """Cosines of the question with each reverse question (None when an embedding is missing or none was asked)."""
    if question_vector is None or not vectors or any(v is None for v in vectors):
        return None
    return tuple(cosine(question_vector, v) for v in vectors if v is not None)

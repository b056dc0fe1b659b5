"""The ``queries`` section of goldset.yaml: real user questions (import, draft answers, coverage)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field


class QueriesSettings(BaseModel):
    """How real questions are merged, answered from the KB and matched against the golden set."""

    model_config = ConfigDict(extra="forbid")
    section: ClassVar[str] = "queries"

    near_duplicate: float = Field(
        0.8, gt=0, le=1,
        description="Two questions whose token sets have at least this Jaccard similarity are merged as one "
        "(their counts summed); exact duplicates (case, width, punctuation, spacing) always are.",
    )  # fmt: skip
    candidates: int = Field(
        5, ge=1, le=20, description="Chunks retrieved (BM25, plus embeddings when configured) per question to draft."
    )
    lexical_threshold: float = Field(
        0.5, gt=0, le=1,
        description="Coverage without embeddings: a real question is covered when a golden question's token "
        "overlap (Dice of tokens, CJK characters one token each) reaches this.",
    )  # fmt: skip
    embedding_threshold: float = Field(
        0.8, gt=-1, le=1,
        description="Coverage with an embedding model: covered when the cosine similarity reaches this.",
    )  # fmt: skip
    cluster_similarity: float = Field(
        0.3, gt=0, le=1, description="Uncovered questions at least this similar (token Dice) share a topic cluster."
    )
    examples: int = Field(3, ge=1, le=20, description="Example questions shown per cluster of uncovered questions.")
    output_tokens: int = Field(300, ge=1, description="Expected output tokens of one draft call (for the estimate).")

"""Runs: one RAG system's output on one dataset version, and the scores goldset gives it.

A run file is JSON Lines of :class:`RunSample`, one per pair of the dataset (the format users' systems write
for ``goldset eval --run FILE``). An evaluation folder ``runs/<run-id>/`` holds ``meta.json``
(:class:`RunMeta`), ``samples.jsonl`` (the run), ``scores.jsonl`` (:class:`SampleScores`) and
``summary.json`` (:class:`RunSummary`).
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from goldset.schema.base import Record, utcnow


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RetrievedContext(_Part):
    """One retrieved context, in rank order. Ids are optional: systems chunk documents their own way."""

    text: str
    doc_id: str | None = None
    chunk_id: str | None = None
    score: float | None = None


class Latency(_Part):
    """Milliseconds. ``total_ms`` is measured by goldset for targets and endpoints."""

    total_ms: float | None = None
    retrieval_ms: float | None = None
    generation_ms: float | None = None
    ttft_ms: float | None = Field(None, description="Time to first token, when the system streams.")


class RunSample(Record):
    pair_id: str
    question: str | None = None
    answer: str = ""
    contexts: list[RetrievedContext] = Field(default_factory=list)
    latency: Latency = Field(default_factory=Latency)
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost_usd: float | None = None
    error: str | None = Field(None, description="Set when the system failed on this question.")


class RunMeta(Record):
    run_id: str
    created_at: datetime = Field(default_factory=utcnow)
    dataset: str = Field(description="Dataset version or folder the run was scored against.")
    dataset_version: str | None = None
    manifest_hash: str | None = None
    target: str = Field("", description="'file:…', 'target:module:function' or 'endpoint:URL' (no secrets).")
    git_revision: str | None = None
    metric_config: dict = Field(default_factory=dict)
    n_samples: int = 0
    sample: dict | None = Field(None, description="{'n': N, 'seed': S} when a stratified subset was run.")


class SampleScores(Record):
    """Every metric of one sample; ``None`` means 'not applicable' (e.g. retrieval metrics of unanswerable)."""

    pair_id: str
    question_type: str
    language: str
    doc_ids: list[str] = Field(default_factory=list)
    failed: bool = False
    error: str | None = None
    metrics: dict[str, float | None] = Field(default_factory=dict)


class RunSummary(Record):
    run_id: str
    n_samples: int = 0
    n_failed: int = 0
    overall: dict[str, float] = Field(default_factory=dict)
    by_type: dict[str, dict[str, float]] = Field(default_factory=dict)
    by_language: dict[str, dict[str, float]] = Field(default_factory=dict)
    by_doc: dict[str, dict[str, float]] = Field(default_factory=dict)
    system: dict[str, float] = Field(default_factory=dict, description="Latency percentiles, tokens, cost, errors.")
    overall_score: float | None = None
    weights_used: dict[str, float] = Field(default_factory=dict, description="Renormalised over computed metrics.")
    left_out: list[str] = Field(default_factory=list, description="Weighted metrics not computed in this run.")

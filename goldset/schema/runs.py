"""Runs: one RAG system's output on one dataset version, and the scores goldset gives it.

A run file is JSON Lines of :class:`RunSample`, one per pair of the dataset (the format users' systems write
for ``goldset eval --run FILE``). An evaluation folder ``runs/<run-id>/`` holds ``meta.json``
(:class:`RunMeta`), ``samples.jsonl.gz`` (the run, gzip-compressed; older folders hold ``samples.jsonl``),
``scores.jsonl`` (:class:`SampleScores`) and ``summary.json`` (:class:`RunSummary`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from goldset.schema.base import Record, utcnow


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RetrievedContext(_Part):
    """One retrieved context, in rank order. Ids are optional: systems chunk documents their own way, and the
    matcher (``eval.matcher``) can decide relevance from the text alone."""

    text: str = Field(description="The retrieved text as the system passed it on (must not be blank).")
    doc_id: str | None = Field(None, description="Document the context comes from, when the system knows it.")
    chunk_id: str | None = Field(
        None, description="Id of the context's chunk; matches evidence only when the system indexes goldset's chunks."
    )
    score: float | None = Field(None, description="The retriever's score (informative; ranks come from the order).")


class Latency(_Part):
    """Milliseconds per stage of one question. ``total_ms`` is measured by goldset for targets and endpoints;
    the stages are whatever the system reported."""

    total_ms: float | None = Field(None, description="Question in to answer out.")
    retrieval_ms: float | None = Field(None, description="Time spent retrieving contexts.")
    generation_ms: float | None = Field(None, description="Time spent generating the answer.")
    ttft_ms: float | None = Field(None, description="Time to first token, when the system streams.")


class RunSample(Record):
    """What a system did with one question: its answer, the contexts it retrieved (in rank order), its latency,
    tokens and cost, or the error it failed with. One JSON line of a run file or of a run folder's samples."""

    pair_id: str = Field(description="Id of the dataset pair this sample answers.")
    question: str | None = Field(
        None, description="The question asked (goldset fills it in from the dataset so a run folder reads alone)."
    )
    answer: str = Field("", description="The system's answer ('' when it failed).")
    contexts: list[RetrievedContext] = Field(default_factory=list, description="Retrieved contexts, best first.")
    latency: Latency = Field(default_factory=Latency, description="Latency of this question, in milliseconds.")
    tokens_in: int | None = Field(None, description="Prompt tokens the system's LLM read.")
    tokens_out: int | None = Field(None, description="Tokens the system's LLM wrote.")
    cost_usd: float | None = Field(None, description="Cost in USD as reported (else priced from eval.prices).")
    error: str | None = Field(
        None, description="Set when the system failed on this question: the sample is scored as a failure."
    )


class RunMeta(Record):
    """How a run was made: which dataset (version and content hash), which system, which scoring settings.

    Two runs are comparable only when ``manifest_hash`` and ``metric_config`` agree (``goldset compare`` checks).
    """

    run_id: str = Field(description="<UTC time>-<what ran>-<short hash>; also the run folder's default name.")
    created_at: datetime = Field(default_factory=utcnow, description="When the run was scored (UTC).")
    dataset: str = Field(description="Dataset version or folder the run was scored against.")
    dataset_version: str | None = Field(None, description="The manifest's release name; None for a working copy.")
    manifest_hash: str | None = Field(
        None, description="Hash of the dataset's files (pairs.jsonl, chunks.jsonl): the content runs are compared by."
    )
    target: str = Field("", description="'file:…', 'target:module:function' or 'endpoint:URL' (no secrets).")
    git_revision: str | None = Field(None, description="Commit of the repository the run was made in (+ -dirty).")
    metric_config: dict[str, Any] = Field(
        default_factory=dict,
        description="The eval settings that change scores (EvalSettings.scoring()): runs that differ here differ "
        "in how they were scored, not only in what the system did.",
    )
    n_samples: int = Field(0, description="Questions evaluated.")
    sample: dict[str, Any] | None = Field(None, description="{'n': N, 'seed': S} when a stratified subset was run.")


class SampleScores(Record):
    """Every metric of one sample; ``None`` means 'not applicable' (e.g. retrieval metrics of unanswerable)."""

    pair_id: str = Field(description="Id of the dataset pair.")
    question_type: str = Field(description="The pair's question type (for per-type averages).")
    language: str = Field(description="The pair's language (for per-language averages).")
    doc_ids: list[str] = Field(default_factory=list, description="Documents the pair's evidence cites.")
    failed: bool = Field(
        False, description="The system failed on this question or the run lacks it: scored as a failure."
    )
    error: str | None = Field(None, description="Why the sample failed ('missing from the run' for absent pairs).")
    metrics: dict[str, float | None] = Field(
        default_factory=dict, description="metric name (e.g. recall@5) → value, None when not applicable."
    )


class RunSummary(Record):
    """The numbers of a run: metric means overall and per group, system figures, the weighted overall score, and
    the notes a reader needs to read them right."""

    run_id: str = Field(description="The run these numbers belong to.")
    n_samples: int = Field(0, description="Questions evaluated (failed ones included).")
    n_failed: int = Field(0, description="Questions the system failed on or the run lacks.")
    overall: dict[str, float] = Field(
        default_factory=dict,
        description="Mean of each quality metric over the samples it applies to; failed samples count with the "
        "value their metric gives a failure (0 for most, left out of false_refusal: a failure is not a refusal).",
    )
    answered: dict[str, float] = Field(
        default_factory=dict,
        description="The same means over the samples that did not fail; empty when none failed (then equal to "
        "overall). What the system does when it answers: the diagnosis reads these.",
    )
    answered_by_type: dict[str, dict[str, float]] = Field(
        default_factory=dict, description="answered, per question type; empty when no sample failed."
    )
    by_type: dict[str, dict[str, float]] = Field(
        default_factory=dict, description="question type → metric means (and n, the samples in the group)."
    )
    by_language: dict[str, dict[str, float]] = Field(default_factory=dict, description="language → metric means.")
    by_doc: dict[str, dict[str, float]] = Field(
        default_factory=dict, description="document → metric means over the pairs citing it."
    )
    system: dict[str, float] = Field(default_factory=dict, description="Latency percentiles, tokens, cost, errors.")
    overall_score: float | None = Field(None, description="Weighted mean of eval.weights over the computed metrics.")
    weights_used: dict[str, float] = Field(default_factory=dict, description="Renormalised over computed metrics.")
    left_out: list[str] = Field(default_factory=list, description="Weighted metrics not computed in this run.")
    notes: list[str] = Field(
        default_factory=list,
        description="What a reader must know to read these numbers (pairs missing from the run, a subset, a "
        "baseline that searched only the dataset's cited chunks, ...).",
    )

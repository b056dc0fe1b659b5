"""Runs: one RAG system's output on one dataset version, and the scores goldset gives it.

A run file is JSON Lines of :class:`RunSample`, one per pair of the dataset (the format users' systems write
for ``goldset eval --run FILE``). An evaluation folder ``runs/<run-id>/`` holds ``meta.json``
(:class:`RunMeta`), ``samples.jsonl.zst`` (the run, zstd-compressed; older folders: ``.gz`` or plain),
``scores.jsonl`` (:class:`SampleScores`) and ``summary.json`` (:class:`RunSummary`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from goldset.schema.base import Record, utcnow
from goldset.schema.manifest import JudgeCalibration

#: The judge's vocabulary, shared by its reply schemas (:mod:`goldset.evaluation.judge`) and the stored verdicts.
#: A claim against the retrieved contexts:
Verdict = Literal["supported", "contradicted", "not_found"]
#: A claim against the reference answer:
ReferenceVerdict = Literal["agrees", "contradicts", "not_in_reference"]
#: What the answer did with the question:
Stance = Literal["answered", "declined", "hedged"]


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
    page: int | None = Field(
        None, ge=1, description="The page (or slide) of the document the context is on, when the system knows it."
    )


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
    model: str | None = Field(
        None, description="The model the system's LLM answered with, when it says (checked against the judge's)."
    )


class LogSample(RunSample):
    """One line of a production log (``goldset eval --log``): the run format without a dataset pair, with when it
    was asked and what the user thought of the answer. Nothing in it is a reference: only reference-free metrics
    are computed from it."""

    pair_id: str = Field(
        "", description="Optional id of the log line (default: the file's name and the line number)."
    )
    question: str | None = Field(
        None, description="The question the user asked (required: a log line without one is refused)."
    )
    timestamp: datetime | None = Field(
        None, description="When the question was asked (ISO 8601; UTC when no zone is given): the day it counts in."
    )
    feedback: float | None = Field(
        None,
        description="The user's verdict on the answer, when given: 1 (thumbs up, 'up', true), 0 (thumbs down, "
        "'down', false), or a rating in between.",
    )
    topic: str | None = Field(None, description="The question's topic, when the system logs one (trends per topic).")
    language: str | None = Field(None, description="The question's language (default: detected from its text).")

    @field_validator("feedback", mode="before")
    @classmethod
    def _feedback(cls, v: Any) -> Any:
        words = {"up": 1.0, "down": 0.0, "+1": 1.0, "-1": 0.0, "👍": 1.0, "👎": 0.0, "positive": 1.0, "negative": 0.0}
        if isinstance(v, bool):
            return 1.0 if v else 0.0
        if isinstance(v, str):
            if v.strip().lower() not in words:
                raise ValueError(f"feedback {v!r}: give up/down, true/false or a number in 0-1")
            return words[v.strip().lower()]
        return v

    @field_validator("feedback")
    @classmethod
    def _feedback_range(cls, v: float | None) -> float | None:
        if v is not None and not 0.0 <= v <= 1.0:
            raise ValueError(f"feedback {v}: give a number in 0-1 (1 thumbs up, 0 thumbs down)")
        return v


class JudgeInfo(_Part):
    """Who judged a run's answers and what it cost. The judge model and prompt hashes that change scores are also
    in ``RunMeta.metric_config["judge"]``, where the comparability check reads them."""

    model: str = Field(description="The judge model.")
    endpoint: str = Field(description="Name of the judge endpoint (llm.endpoints; 'default' for the environment's).")
    prompts: dict[str, str] = Field(default_factory=dict, description="Judge prompt id → hash of its text.")
    embedding_model: str | None = Field(
        None, description="Embedding model of answer_relevancy_embedding (None: that metric was not computed)."
    )
    calls: dict[str, Any] = Field(
        default_factory=dict,
        description="The judge client's counters (goldset.llm.CallStats): calls sent, HTTP requests, journal hits, "
        "failures, tokens, cost.",
    )
    max_calls_per_sample: int = Field(0, description="Most judge calls one sample needed (at most 3 by design).")


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
    judge: JudgeInfo | None = Field(None, description="The LLM judge of the answers; None when none judged them.")
    system_model: str | None = Field(
        None, description="The model of the system under test, when given (`goldset eval --system-model`)."
    )
    reference_free: bool = Field(
        False,
        description="A run of a production log (`goldset eval --log`): no dataset, only reference-free metrics; "
        "never compared with golden-set runs.",
    )
    log: dict[str, Any] | None = Field(
        None,
        description="A log run's reading: files, lines read, days, the --sample drawn, personal data redacted.",
    )
    calibration: JudgeCalibration | None = Field(
        None,
        description="The dataset's judge calibration (its manifest's, from `goldset judge calibrate`): how far the "
        "groundedness judge agrees with the experts. Shown in the report; not part of what makes runs comparable.",
    )


class JudgedClaim(_Part):
    """One atomic claim of the answer with the judge's verdicts."""

    claim: str = Field(description="The claim, in the answer's language.")
    verdict: Verdict = Field(description="Against the retrieved contexts the judge read.")
    context: int | None = Field(None, description="1-based rank of the context supporting or contradicting it.")
    quote: str = Field("", description="The judge's verbatim quote of that context.")
    quote_verified: bool | None = Field(
        None, description="The quote occurs in that context (normalised text); None when there is no quote."
    )
    reference: ReferenceVerdict | None = Field(
        None, description="Against the reference answer; None without one (unanswerable pairs)."
    )
    downgraded: bool = Field(
        False,
        description="The judge said supported, but its quote is not found in the context it names (or it named "
        "none): counted as not_found (``verdict``).",
    )


class JudgedPoint(_Part):
    """One claim (an open_ended pair's key point) of the reference answer."""

    point: str = Field(description="The claim or key point.")
    covered: bool = Field(description="The answer covers it.")
    in_reference: bool = Field(
        True,
        description="The point is found in the reference (more than half its content words are there); a point "
        "that is not is not counted by completeness.",
    )


class JudgedContext(_Part):
    """The judge's verdict on one retrieved context."""

    index: int = Field(description="1-based rank of the context.")
    relevant: bool = Field(description="It helps answer the question (judged without the reference).")


class ConsistencyCheck(_Part):
    """One self-consistency check of the judge's verdicts over a run (goldset.evaluation.judge.consistency):
    how many verdicts it read, and how many their own evidence does not bear out."""

    checked: int = Field(0, description="Verdicts the check read (claims marked supported, key points, replies).")
    caught: int = Field(0, description="Of those, verdicts their own evidence does not bear out.")
    rate: float | None = Field(None, description="caught / checked; None when nothing was checked.")


class SampleJudgement(_Part):
    """What the LLM judge said about one sample: the evidence behind its judge metrics, and the calls that failed."""

    claims: list[JudgedClaim] | None = Field(None, description="The answer's claims (None: not judged).")
    points: list[JudgedPoint] | None = Field(None, description="The reference's claims (None: not judged).")
    readings_acknowledged: bool | None = Field(None, description="Ambiguous pairs: the answer named the readings.")
    relevance_rating: int | None = Field(None, description="Answer relevancy, 1–5.")
    relevance_reason: str = Field("", description="Why that rating.")
    reverse_questions: list[str] = Field(
        default_factory=list, description="Questions the judge wrote back from the answer (embedding relevancy)."
    )
    contexts: list[JudgedContext] | None = Field(None, description="Per retrieved context: relevant or not.")
    stance: Stance | None = Field(None, description="Whether the answer answered, declined or hedged.")
    stance_reason: str = Field("", description="Why.")
    failed: dict[str, str] = Field(
        default_factory=dict,
        description="Judge call (claims, coverage, relevance, embeddings) or verdict check (key_points: no key "
        "point in the reference; reverse_questions: none usable) → why it failed: its metrics are left out for "
        "this sample, not scored 0 or 1.",
    )
    calls: int = Field(0, description="Judge calls this sample needed (answered from the journal or sent).")


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
    judge: SampleJudgement | None = Field(None, description="The LLM judge's verdicts; None when not judged.")
    day: str | None = Field(None, description="Log runs: the UTC day (YYYY-MM-DD) the question was asked.")
    topic: str | None = Field(None, description="Log runs: the question's topic, when the log gives one.")


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
    by_day: dict[str, dict[str, float]] = Field(
        default_factory=dict, description="Log runs: UTC day → metric means of the questions asked that day."
    )
    by_topic: dict[str, dict[str, float]] = Field(
        default_factory=dict, description="Log runs: topic → metric means (questions the log gives a topic)."
    )
    system: dict[str, float] = Field(default_factory=dict, description="Latency percentiles, tokens, cost, errors.")
    overall_score: float | None = Field(None, description="Weighted mean of eval.weights over the computed metrics.")
    weights_used: dict[str, float] = Field(default_factory=dict, description="Renormalised over computed metrics.")
    left_out: list[str] = Field(default_factory=list, description="Weighted metrics not computed in this run.")
    judge_failed: dict[str, int] = Field(
        default_factory=dict,
        description="Judge metric → samples where it applied but its judge call failed: they are left out of that "
        "metric's means (neither 0 nor 1); the reasons are in scores.jsonl.",
    )
    judge_consistency: dict[str, ConsistencyCheck] = Field(
        default_factory=dict,
        description="Judge self-consistency, per check (supported_quotes: supported claims whose quote is not in "
        "the context they name, counted as not found; key_points: key points not in the reference, not counted; "
        "reverse_questions: replies with no usable reverse question, that metric failed); empty without a judge.",
    )
    notes: list[str] = Field(
        default_factory=list,
        description="What a reader must know to read these numbers (pairs missing from the run, a subset, a "
        "baseline that searched only the dataset's cited chunks, ...).",
    )

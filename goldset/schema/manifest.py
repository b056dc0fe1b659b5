"""The manifest of a dataset folder (``pairs.jsonl`` + ``chunks.jsonl`` + ``manifest.json``)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from goldset.schema.base import Record, utcnow

PAIRS_FILE = "pairs.jsonl"
CHUNKS_FILE = "chunks.jsonl"
MANIFEST_FILE = "manifest.json"
#: The fixed layout of a dataset folder, shared by every command.
DATASET_FILES = (PAIRS_FILE, CHUNKS_FILE, MANIFEST_FILE)


class AcceptanceEstimate(BaseModel):
    """The acceptance rate of the pairs nobody reviewed, estimated from the reviewed random part of the sample."""

    model_config = ConfigDict(extra="forbid")

    population: int = Field(0, description="Pairs the estimate speaks for (the random part and the unreviewed rest).")
    random: int = Field(0, description="Pairs in the random part.")
    reviewed: int = Field(0, description="Random-part pairs with a decision: what the estimate rests on.")
    accepted: int = Field(0, description="Of those, accepted as they were.")
    effective_n: float | None = Field(None, description="Kish effective sample size (= reviewed when unweighted).")
    acceptance_rate: float | None = Field(None, description="Estimated acceptance rate (weighted).")
    ci_low: float | None = Field(None, description="Wilson interval, lower bound.")
    ci_high: float | None = Field(None, description="Wilson interval, upper bound.")


class ReviewRound(BaseModel):
    """One draw of the expert-review sample."""

    model_config = ConfigDict(extra="forbid")

    round: int = Field(description="Round number, from 1.")
    seed: int = Field(description="Seed the round was drawn with.")
    drawn_at: datetime = Field(default_factory=utcnow, description="When it was drawn (UTC).")
    population: int = Field(0, description="Passed, unreviewed pairs the round drew from.")
    sampled: int = Field(0, description="Pairs drawn.")
    random: int = Field(0, description="Drawn uniformly at random within strata.")
    risk: int = Field(0, description="Drawn risk first (flags, borderline scores, multi_hop/unanswerable, changes).")
    strata: int = Field(0, description="Strata (question type|language|document) of the population.")


class ReviewSampleStats(BaseModel):
    """The human review of a random sample of the dataset's pairs, and what it says about the whole."""

    model_config = ConfigDict(extra="forbid")

    sampled: int = Field(0, description="Pairs drawn for review.")
    reviewed: int = Field(0, description="Pairs a reviewer decided on.")
    accepted: int = Field(0, description="Pairs accepted as they were.")
    rejected: int = Field(0, description="Pairs rejected.")
    edited: int = Field(0, description="Pairs accepted after an edit.")
    acceptance_rate: float | None = Field(
        None, description="Estimated acceptance rate of the pairs nobody reviewed, from the random part of the sample."
    )
    ci_low: float | None = Field(None, description="Wilson interval of the acceptance rate, lower bound.")
    ci_high: float | None = Field(None, description="Wilson interval of the acceptance rate, upper bound.")
    confidence: float | None = Field(None, description="Confidence level of the Wilson intervals.")
    random: int = Field(0, description="Pairs in the random part of the sample.")
    random_reviewed: int = Field(0, description="Random-part pairs reviewed: what acceptance_rate rests on.")
    effective_n: float | None = Field(None, description="Kish effective sample size of the random part.")
    population: int = Field(0, description="Pairs the overall estimate speaks for.")
    edits_count_as_accepted: bool = Field(False, description="Edited pairs counted as accepted in the rate.")
    rounds: list[ReviewRound] = Field(default_factory=list, description="Every sample round, oldest first.")
    strata: dict[str, AcceptanceEstimate] = Field(default_factory=dict, description="Per stratum of the sample.")
    by_question_type: dict[str, AcceptanceEstimate] = Field(default_factory=dict, description="Per question type.")
    by_language: dict[str, AcceptanceEstimate] = Field(default_factory=dict, description="Per language.")
    estimated_at: datetime | None = Field(None, description="When the estimate was computed (UTC).")


class Manifest(Record):
    """What a dataset folder holds, written with it: counts, the prompts that made it, the review, and the sha256
    of each content file. Evaluation checks those hashes against the files (a stale manifest is an error)."""

    version: str | None = Field(None, description="Release name (e.g. 'v1'); None for a working copy.")
    created_at: datetime = Field(default_factory=utcnow, description="When the folder was written (UTC).")
    goldset_version: str = Field("", description="The goldset version that wrote it.")
    kb_snapshot_id: str | None = Field(None, description="The KB snapshot the pairs were generated from.")
    n_pairs: int = Field(0, description="Pairs in pairs.jsonl, whatever their status.")
    n_chunks: int = Field(0, description="Chunks in chunks.jsonl (the ones the pairs cite).")
    counts_by_status: dict[str, int] = Field(default_factory=dict, description="pair status → count.")
    counts_by_type: dict[str, int] = Field(default_factory=dict, description="question type → count.")
    counts_by_language: dict[str, int] = Field(default_factory=dict, description="language → count.")
    prompt_hashes: dict[str, str] = Field(default_factory=dict, description="prompt id → content hash.")
    review: ReviewSampleStats | None = Field(None, description="The sample review, once one was done.")
    files: dict[str, str] = Field(default_factory=dict, description="file name → sha256 of its bytes.")

    # -- set by `goldset release` (absent from working-copy manifests and from manifests written before releases)
    message: str = Field("", description="The release message (`goldset release -m`).")
    previous_version: str | None = Field(None, description="The release this one was diffed against.")
    golden_ids: list[str] = Field(
        default_factory=list, description="Ids of the pairs that form the golden set (accepted, and passed if allowed)."
    )
    unreviewed_ids: list[str] = Field(
        default_factory=list, description="Golden pairs that passed the filters but were not reviewed one by one."
    )
    golden_counts_by_type: dict[str, int] = Field(default_factory=dict, description="Golden pairs per type.")
    golden_counts_by_language: dict[str, int] = Field(
        default_factory=dict, description="Golden pairs per language."
    )
    n_documents: int = Field(0, description="Documents in the release's corpus (corpus/<doc_id>.jsonl shards).")
    golden_rule: str | None = Field(None, description="versioning.golden when the release was made.")

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


class ReviewSampleStats(BaseModel):
    """The human review of a random sample of the dataset's pairs, and what it says about the whole."""

    model_config = ConfigDict(extra="forbid")

    sampled: int = Field(0, description="Pairs drawn for review.")
    reviewed: int = Field(0, description="Pairs a reviewer decided on.")
    accepted: int = Field(0, description="Pairs accepted as they were.")
    rejected: int = Field(0, description="Pairs rejected.")
    edited: int = Field(0, description="Pairs accepted after an edit.")
    acceptance_rate: float | None = Field(None, description="Share of the reviewed pairs that were kept.")
    ci_low: float | None = Field(None, description="Wilson interval of the acceptance rate, lower bound.")
    ci_high: float | None = Field(None, description="Wilson interval of the acceptance rate, upper bound.")


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

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
    model_config = ConfigDict(extra="forbid")

    sampled: int = 0
    reviewed: int = 0
    accepted: int = 0
    rejected: int = 0
    edited: int = 0
    acceptance_rate: float | None = None
    ci_low: float | None = Field(None, description="Wilson interval of the acceptance rate, lower bound.")
    ci_high: float | None = None


class Manifest(Record):
    version: str | None = Field(None, description="Release name (e.g. 'v1'); None for a working copy.")
    created_at: datetime = Field(default_factory=utcnow)
    goldset_version: str = ""
    kb_snapshot_id: str | None = None
    n_pairs: int = 0
    n_chunks: int = 0
    counts_by_status: dict[str, int] = Field(default_factory=dict)
    counts_by_type: dict[str, int] = Field(default_factory=dict)
    counts_by_language: dict[str, int] = Field(default_factory=dict)
    prompt_hashes: dict[str, str] = Field(default_factory=dict, description="prompt id → content hash.")
    review: ReviewSampleStats | None = None
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
    golden_counts_by_type: dict[str, int] = Field(default_factory=dict)
    golden_counts_by_language: dict[str, int] = Field(default_factory=dict)
    n_documents: int = Field(0, description="Documents in the release's corpus (corpus/<doc_id>.jsonl shards).")
    golden_rule: str | None = Field(None, description="versioning.golden when the release was made.")

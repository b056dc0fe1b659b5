"""Pydantic models: the single definition of every record goldset writes.

Records are stored as JSON Lines sorted by id (see :mod:`goldset.io`); each carries a ``schema_version`` so a
later goldset can read, migrate or refuse an older file knowingly.
"""

from goldset.schema.base import SCHEMA_VERSION, Record
from goldset.schema.coverage import CoverageCluster, CoverageMatch, CoverageRecord
from goldset.schema.kb import Chunk, DocumentEntry, KBSnapshot
from goldset.schema.manifest import DATASET_FILES, Manifest, ReviewSampleStats
from goldset.schema.pairs import (
    CheckResult,
    DuplicateLabel,
    Evidence,
    PairStatus,
    Provenance,
    QAPair,
    QuestionType,
    Review,
    ReviewDecision,
    Revision,
    pair_id,
)
from goldset.schema.runs import Latency, LogSample, RetrievedContext, RunMeta, RunSample, RunSummary, SampleScores

__all__ = [
    "DATASET_FILES",
    "SCHEMA_VERSION",
    "CheckResult",
    "Chunk",
    "CoverageCluster",
    "CoverageMatch",
    "CoverageRecord",
    "DocumentEntry",
    "DuplicateLabel",
    "Evidence",
    "KBSnapshot",
    "Latency",
    "LogSample",
    "Manifest",
    "PairStatus",
    "Provenance",
    "QAPair",
    "QuestionType",
    "Record",
    "RetrievedContext",
    "Review",
    "ReviewDecision",
    "ReviewSampleStats",
    "Revision",
    "RunMeta",
    "RunSample",
    "RunSummary",
    "SampleScores",
    "pair_id",
]

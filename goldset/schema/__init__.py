"""Pydantic models: the single definition of every record goldset writes.

Records are stored as JSON Lines sorted by id (see :mod:`goldset.io`); each carries a ``schema_version`` so a
later goldset can read, migrate or refuse an older file knowingly.
"""

from goldset.schema.base import SCHEMA_VERSION, Record
from goldset.schema.kb import Chunk, DocumentEntry, KBSnapshot
from goldset.schema.manifest import DATASET_FILES, Manifest, ReviewSampleStats
from goldset.schema.pairs import (
    CheckResult,
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

__all__ = [
    "DATASET_FILES",
    "SCHEMA_VERSION",
    "CheckResult",
    "Chunk",
    "DocumentEntry",
    "Evidence",
    "KBSnapshot",
    "Manifest",
    "PairStatus",
    "Provenance",
    "QAPair",
    "QuestionType",
    "Record",
    "Review",
    "ReviewDecision",
    "ReviewSampleStats",
    "Revision",
    "pair_id",
]

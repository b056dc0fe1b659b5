"""Pydantic models: the single definition of every record goldset writes.

Records are stored as JSON Lines sorted by id (see :mod:`goldset.io`); each carries a ``schema_version`` so a
later goldset can read, migrate or refuse an older file knowingly.

Names are imported lazily (:mod:`goldset._lazy`): ``from goldset.schema import Chunk`` builds the KB records'
models only, not the run, coverage or manifest models a command such as ``goldset generate`` never uses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from goldset._lazy import lazy_exports

#: public name → module that defines it
_EXPORTS: dict[str, str] = {
    "SCHEMA_VERSION": "goldset.schema.base",
    "Record": "goldset.schema.base",
    "CoverageCluster": "goldset.schema.coverage",
    "CoverageMatch": "goldset.schema.coverage",
    "CoverageRecord": "goldset.schema.coverage",
    "Chunk": "goldset.schema.kb",
    "DocumentEntry": "goldset.schema.kb",
    "KBSnapshot": "goldset.schema.kb",
    "DATASET_FILES": "goldset.schema.manifest",
    "Manifest": "goldset.schema.manifest",
    "ReviewSampleStats": "goldset.schema.manifest",
    "CheckResult": "goldset.schema.pairs",
    "DuplicateLabel": "goldset.schema.pairs",
    "Evidence": "goldset.schema.pairs",
    "PairStatus": "goldset.schema.pairs",
    "Provenance": "goldset.schema.pairs",
    "QAPair": "goldset.schema.pairs",
    "QuestionType": "goldset.schema.pairs",
    "Review": "goldset.schema.pairs",
    "ReviewDecision": "goldset.schema.pairs",
    "Revision": "goldset.schema.pairs",
    "pair_id": "goldset.schema.pairs",
    "Latency": "goldset.schema.runs",
    "LogSample": "goldset.schema.runs",
    "RetrievedContext": "goldset.schema.runs",
    "RunMeta": "goldset.schema.runs",
    "RunSample": "goldset.schema.runs",
    "RunSummary": "goldset.schema.runs",
    "SampleScores": "goldset.schema.runs",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
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

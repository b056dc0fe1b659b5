"""Knowledge-base ingestion: read a documents folder, cut it into chunks, keep a snapshot and diff it.

Library entry points (the CLI `goldset ingest` is a thin layer over :func:`ingest`)::

    ingest(docs_dir, ws=None, *, settings=None, out_dir=None) -> IngestResult
    load_snapshot(ws) -> KBSnapshot | None
    load_chunks(ws) -> list[Chunk]
    chunk_document(text, doc_id, settings=None) -> list[Chunk]    # pure, one document
    diff_snapshots(old_chunks, new_chunks) -> KBDiff
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from goldset._lazy import lazy_exports

_EXPORTS = {
    "OVERSIZED": "goldset.kb.chunker",
    "chunk_document": "goldset.kb.chunker",
    "chunk_id": "goldset.kb.chunker",
    "content_hash": "goldset.kb.chunker",
    "content_text": "goldset.kb.chunker",
    "KBSettings": "goldset.kb.settings",
    "CHUNKS_FILE": "goldset.kb.snapshot",
    "SNAPSHOT_FILE": "goldset.kb.snapshot",
    "IngestResult": "goldset.kb.ingestion",
    "KBDiff": "goldset.kb.snapshot",
    "NothingToIngest": "goldset.kb.ingestion",
    "diff_snapshots": "goldset.kb.snapshot",
    "ingest": "goldset.kb.ingestion",
    "load_chunks": "goldset.kb.snapshot",
    "load_snapshot": "goldset.kb.snapshot",
    "snapshot_id": "goldset.kb.snapshot",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


if TYPE_CHECKING:  # the same names, for type checkers (a test holds the two lists equal)
    from goldset.kb.chunker import OVERSIZED, chunk_document, chunk_id, content_hash, content_text
    from goldset.kb.ingestion import IngestResult, NothingToIngest, ingest
    from goldset.kb.settings import KBSettings
    from goldset.kb.snapshot import (
        CHUNKS_FILE,
        SNAPSHOT_FILE,
        KBDiff,
        diff_snapshots,
        load_chunks,
        load_snapshot,
        snapshot_id,
    )

"""Knowledge-base ingestion: read a documents folder, cut it into chunks, keep a snapshot and diff it.

Library entry points (the CLI `goldset ingest` is a thin layer over :func:`ingest`)::

    ingest(docs_dir, ws=None, *, settings=None, out_dir=None) -> IngestResult
    load_snapshot(ws) -> KBSnapshot | None
    load_chunks(ws) -> list[Chunk]
    chunk_document(text, doc_id, settings=None) -> list[Chunk]    # pure, one document
    diff_snapshots(old_chunks, new_chunks) -> KBDiff
"""

from goldset.kb.chunker import OVERSIZED, chunk_document, chunk_id, content_hash, content_text
from goldset.kb.settings import KBSettings
from goldset.kb.snapshot import (
    CHUNKS_FILE,
    SNAPSHOT_FILE,
    IngestResult,
    KBDiff,
    NothingToIngest,
    diff_snapshots,
    ingest,
    load_chunks,
    load_snapshot,
    snapshot_id,
)

__all__ = [
    "CHUNKS_FILE",
    "OVERSIZED",
    "SNAPSHOT_FILE",
    "IngestResult",
    "KBDiff",
    "KBSettings",
    "NothingToIngest",
    "chunk_document",
    "chunk_id",
    "content_hash",
    "content_text",
    "diff_snapshots",
    "ingest",
    "load_chunks",
    "load_snapshot",
    "snapshot_id",
]

"""Which chunks a generation run asks about, and reading what a workspace already holds."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, NamedTuple

from goldset.errors import InputError
from goldset.schema import (
    Chunk,
    QAPair,
)

if TYPE_CHECKING:
    from goldset.data import WorkspaceData
    from goldset.generation.settings import GenerateSettings


def primary_chunk_ids(pairs: Iterable[QAPair]) -> set[str]:
    """Chunks that already have pairs generated from them (see the module docstring on "primary")."""
    out: set[str] = set()
    for p in pairs:
        if p.provenance.chunk_hashes:
            out.add(next(iter(p.provenance.chunk_hashes)))
        else:
            out.update(p.chunk_ids)
    return out


class Selection(NamedTuple):
    """The chunks a run asks about, in document order, and why the others of the KB were left out."""

    chunks: list[Chunk]
    too_small: int
    already_done: int


def select_chunks(
    chunks: Sequence[Chunk],
    existing: Iterable[QAPair] = (),
    *,
    limit: int | None = None,
    docs: str | None = None,
    all_chunks: bool = False,
    chunk_ids: Iterable[str] | None = None,
    min_tokens: int = 0,
) -> Selection:
    """The chunks to generate for: ``docs`` glob, then size, then (unless ``all_chunks``) only chunks that were
    never the primary chunk of a pair, then ``limit``. ``chunk_ids`` (used by refresh) names chunks explicitly
    and implies ``all_chunks`` for them.
    """
    selected = sorted(chunks, key=lambda c: (c.doc_id, c.char_start, c.position, c.id))
    if chunk_ids is not None:
        wanted = set(chunk_ids)
        selected = [c for c in selected if c.id in wanted]
        all_chunks = True
    if docs:
        selected = [c for c in selected if fnmatch.fnmatchcase(c.doc_id, docs)]
    n_before = len(selected)
    selected = [c for c in selected if c.n_tokens >= min_tokens]
    too_small = n_before - len(selected)
    already_done = 0
    if not all_chunks:
        done = primary_chunk_ids(existing)
        n_before = len(selected)
        selected = [c for c in selected if c.id not in done]
        already_done = n_before - len(selected)
    if limit is not None:
        selected = selected[: max(0, limit)]
    return Selection(selected, too_small, already_done)




# ------------------------------------------------------------------------------------------- the workspace


def kb_snapshot_id(data: WorkspaceData) -> str | None:
    """The id of the workspace's KB snapshot (recorded in each pair's provenance), ``None`` before any ingest."""
    snapshot = data.kb_snapshot()
    return snapshot.id if snapshot is not None else None


def load_kb_chunks(data: WorkspaceData) -> list[Chunk]:
    """The chunks of the workspace's KB; :class:`InputError` saying to ingest when there are none."""
    chunks = data.kb_chunks()
    if not chunks:
        raise InputError(f"{data.kb_dir}: the knowledge base has no chunks; run `goldset ingest DOCS_DIR` first")
    return chunks


def select(
    data: WorkspaceData,
    chunks: Sequence[Chunk] | None,
    *,
    limit: int | None,
    docs: str | None,
    all_chunks: bool,
    chunk_ids: Iterable[str] | None,
    settings: GenerateSettings,
    existing: list[QAPair],
) -> tuple[list[Chunk], Selection]:
    """The KB (``chunks``, else the workspace's) and the chunks a run asks about (see :func:`select_chunks`)."""
    if chunks is None:
        chunks = load_kb_chunks(data)
    kb = list(chunks)
    selection = select_chunks(
        kb,
        existing,
        limit=limit,
        docs=docs,
        all_chunks=all_chunks,
        chunk_ids=chunk_ids,
        min_tokens=settings.min_tokens,
    )
    return kb, selection

"""A KB snapshot: reading the workspace's (:func:`load_snapshot`, :func:`load_chunks`), and what changed between
two (:func:`diff_snapshots`). Making one from a documents folder is :mod:`goldset.kb.ingestion`'s.

Storage (``ws.kb_dir`` or any ``out_dir``, read and written by :mod:`goldset.data`): ``chunks.jsonl`` (every chunk,
sorted by id) and ``snapshot.json`` (:class:`~goldset.schema.KBSnapshot`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from goldset.context import Context, workspace_of
from goldset.data import CHUNKS_FILE, SNAPSHOT_FILE, read_kb_chunks, read_kb_snapshot, snapshot_id
from goldset.schema import Chunk, KBSnapshot

if TYPE_CHECKING:
    from goldset.workspace import WorkspaceLike

__all__ = ["CHUNKS_FILE", "SNAPSHOT_FILE", "KBDiff", "diff_snapshots", "load_chunks", "load_snapshot", "snapshot_id"]


@dataclass(frozen=True)
class KBDiff:
    """What changed between two sets of chunks. Lists are sorted ids (doc_ids for documents).

    A chunk is *changed* when its id is in both and its ``content_hash`` differs; a document is *changed*
    when it is in both and any of its chunks was added, changed or removed.
    """

    documents_added: list[str] = field(default_factory=list)
    documents_changed: list[str] = field(default_factory=list)
    documents_removed: list[str] = field(default_factory=list)
    documents_unchanged: list[str] = field(default_factory=list)
    chunks_added: list[str] = field(default_factory=list)
    chunks_changed: list[str] = field(default_factory=list)
    chunks_removed: list[str] = field(default_factory=list)
    chunks_unchanged: list[str] = field(default_factory=list)

    @property
    def has_changes(self) -> bool:
        return bool(self.chunks_added or self.chunks_changed or self.chunks_removed)

    def counts(self) -> dict[str, dict[str, int]]:
        """{"documents": {"added": n, …}, "chunks": {…}}."""
        return {
            kind: {
                state: len(getattr(self, f"{kind}_{state}")) for state in ("added", "changed", "removed", "unchanged")
            }
            for kind in ("documents", "chunks")
        }

    def to_dict(self) -> dict[str, list[str]]:
        return {name: list(getattr(self, name)) for name in self.__dataclass_fields__}


def diff_snapshots(old_chunks: list[Chunk], new_chunks: list[Chunk]) -> KBDiff:
    """Compare two chunk sets by id and content hash (see :class:`KBDiff`)."""
    old = {c.id: c for c in old_chunks}
    new = {c.id: c for c in new_chunks}
    added = sorted(set(new) - set(old))
    removed = sorted(set(old) - set(new))
    both = set(old) & set(new)
    changed = sorted(i for i in both if old[i].content_hash != new[i].content_hash)
    unchanged = sorted(i for i in both if old[i].content_hash == new[i].content_hash)
    old_docs = _doc_signatures(old_chunks)
    new_docs = _doc_signatures(new_chunks)
    return KBDiff(
        documents_added=sorted(set(new_docs) - set(old_docs)),
        documents_changed=sorted(d for d in set(old_docs) & set(new_docs) if old_docs[d] != new_docs[d]),
        documents_removed=sorted(set(old_docs) - set(new_docs)),
        documents_unchanged=sorted(d for d in set(old_docs) & set(new_docs) if old_docs[d] == new_docs[d]),
        chunks_added=added,
        chunks_changed=changed,
        chunks_removed=removed,
        chunks_unchanged=unchanged,
    )


def _doc_signatures(chunks: list[Chunk]) -> dict[str, frozenset[tuple[str, str]]]:
    docs: dict[str, set[tuple[str, str]]] = {}
    for c in chunks:
        docs.setdefault(c.doc_id, set()).add((c.id, c.content_hash))
    return {d: frozenset(s) for d, s in docs.items()}


def _target_dir(ws: WorkspaceLike | Context, out_dir: Path | None) -> Path:
    """``out_dir`` when given, else the KB folder of the workspace (``ws``, or the one around the current folder)."""
    if out_dir is not None:
        return Path(out_dir)
    return workspace_of(ws).kb_dir


def load_snapshot(ws: WorkspaceLike | Context = None, *, out_dir: Path | None = None) -> KBSnapshot | None:
    """The current snapshot, or None when nothing was ingested yet (:func:`goldset.data.read_kb_snapshot`)."""
    return read_kb_snapshot(_target_dir(ws, out_dir))


def load_chunks(
    ws: WorkspaceLike | Context = None, *, out_dir: Path | None = None, check: bool = True
) -> list[Chunk]:
    """Every chunk of the current snapshot, sorted by id ([] when nothing was ingested yet); with ``check`` they must
    match ``snapshot.json`` (:func:`goldset.data.read_kb_chunks`)."""
    return read_kb_chunks(_target_dir(ws, out_dir), check=check)

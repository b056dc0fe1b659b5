"""Ingest a documents folder into a KB snapshot (`goldset ingest`), and tell what changed since the previous one.

Everything is read, parsed and chunked in memory first; only then are the two files of the snapshot replaced (by
:mod:`goldset.data`), each through a temp file and a rename, chunks first. A run that fails (no supported file, a
bad setting, an interrupted write) therefore leaves the previous pair as it was.

Re-ingesting an unchanged KB rewrites both files byte for byte identically: ids and hashes depend only on
the content, and the snapshot keeps its earlier ``created_at`` when nothing in it changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from goldset.context import Context
from goldset.data import read_kb_chunks, read_kb_snapshot, snapshot_id, write_kb
from goldset.errors import InputError
from goldset.hashing import sha256_hex
from goldset.kb.chunker import chunk_parsed, document_language
from goldset.kb.decoding import SkipFile
from goldset.kb.discovery import discover
from goldset.kb.readers import FORMATS, read_document
from goldset.kb.settings import KBSettings
from goldset.kb.snapshot import KBDiff, diff_snapshots
from goldset.schema import Chunk, DocumentEntry, KBSnapshot

if TYPE_CHECKING:
    from goldset.workspace import WorkspaceLike

__all__ = ["IngestResult", "NothingToIngest", "ingest"]


class NothingToIngest(InputError):
    """No document could be ingested. ``warnings`` holds the per-file reasons, for the CLI to print."""

    def __init__(self, message: str, warnings: list[str]) -> None:
        super().__init__(message)
        self.warnings = warnings


@dataclass
class IngestResult:
    snapshot: KBSnapshot
    chunks: list[Chunk]
    diff: KBDiff
    #: one line per file left out or read with a fallback encoding, naming the file
    warnings: list[str]
    out_dir: Path
    previous_snapshot_id: str | None = None
    #: False when the KB content and settings were unchanged (the files were rewritten identically)
    changed: bool = True


def ingest(
    docs_dir: Path,
    ws: WorkspaceLike | Context = None,
    *,
    settings: KBSettings | None = None,
    out_dir: Path | None = None,
) -> IngestResult:
    """Read ``docs_dir``, chunk every supported file and replace the snapshot in ``out_dir`` (default
    the workspace's ``.goldset/kb``; ``ws`` is a workspace, a path inside one, or None for the one around the
    current folder). Settings default to the workspace's ``kb`` section (to the defaults with ``out_dir`` and no
    workspace).

    Files that cannot be read are skipped with a warning naming them; the run stops with an
    :class:`~goldset.errors.InputError` (and writes nothing) when the folder is missing or no document at
    all could be ingested.
    """
    ctx = Context.open(None) if out_dir is not None and ws is None else Context.of(ws)
    target = Path(out_dir) if out_dir is not None else ctx.workspace.kb_dir
    if settings is None:
        settings = ctx.section(KBSettings)
    docs_dir = Path(docs_dir)
    if not docs_dir.exists():
        raise InputError(f"{docs_dir}: folder not found; give the folder of your documents (or set kb.path)")
    if not docs_dir.is_dir():
        raise InputError(f"{docs_dir}: not a folder; give the folder that holds your documents")

    found = discover(docs_dir, settings)
    warnings: list[str] = []
    skipped: list[str] = []
    for rel, reason in found.skipped:
        skipped.append(f"{rel}: {reason}")
    documents: list[DocumentEntry] = []
    chunks: list[Chunk] = []
    for source in found.files:
        try:
            doc = read_document(source.path, settings)
        except SkipFile as exc:
            skipped.append(f"{source.doc_id}: {exc}")
            continue
        text, encoding, data, parsed = doc.text, doc.encoding, doc.data, doc.parsed
        warnings.extend(f"{docs_dir / source.doc_id}: {note}" for note in doc.notes)
        skipped.extend(f"{source.doc_id}: {part}" for part in parsed.left_out)
        language = document_language(text, parsed)
        doc_chunks = chunk_parsed(text, parsed, source.doc_id, settings, doc_language=language)
        if not doc_chunks:
            skipped.append(f"{source.doc_id}: no text left once markup is removed; skipped")
            continue
        chunks.extend(doc_chunks)
        documents.append(
            DocumentEntry(
                doc_id=source.doc_id,
                title=parsed.title or Path(source.doc_id).stem,
                raw_hash=sha256_hex(data),
                encoding=encoding,
                language=language,
                n_chunks=len(doc_chunks),
                n_bytes=len(data),
            )
        )
    warnings = [f"{docs_dir / line}" for line in skipped] + warnings
    if found.unsupported:
        kinds = ", ".join(f"{suffix} ×{n}" for suffix, n in sorted(found.unsupported.items()))
        warnings.append(
            f"{docs_dir}: {sum(found.unsupported.values())} file(s) of unsupported types left out ({kinds})"
        )

    if not chunks:
        supported = ", ".join(sorted(FORMATS))
        if not found.files:
            raise NothingToIngest(
                f"{docs_dir}: no supported documents ({supported}); point ingest at your documents folder",
                warnings,
            )
        raise NothingToIngest(
            f"{docs_dir}: none of the {len(found.files)} document(s) could be ingested (see the warnings); "
            "the previous snapshot is kept",
            warnings,
        )

    ids = [c.id for c in chunks]
    if len(set(ids)) != len(ids):  # cannot happen by construction; checked because ids are a promise
        raise InputError(f"{docs_dir}: two chunks got the same id; please report this with the documents")

    previous = _previous(target, warnings)
    prev_snapshot, prev_chunks = previous
    snap = KBSnapshot(
        id=snapshot_id(chunks),
        root=str(docs_dir),
        chunking=settings.chunking(),
        documents=documents,
        n_chunks=len(chunks),
        skipped=skipped,
    )
    changed = True
    if prev_snapshot is not None:
        same = snap.model_dump(exclude={"created_at"}) == prev_snapshot.model_dump(exclude={"created_at"})
        if same:
            snap = snap.model_copy(update={"created_at": prev_snapshot.created_at})
            changed = False
    diff = diff_snapshots(prev_chunks, chunks)
    write_kb(target, chunks, snap)  # chunks first, then the snapshot: each replaced whole by a rename
    return IngestResult(
        snapshot=snap,
        chunks=sorted(chunks, key=lambda c: c.id),
        diff=diff,
        warnings=warnings,
        out_dir=target,
        previous_snapshot_id=prev_snapshot.id if prev_snapshot else None,
        changed=changed,
    )


def _previous(target: Path, warnings: list[str]) -> tuple[KBSnapshot | None, list[Chunk]]:
    """The snapshot being replaced, for the diff. An unreadable one is reported, not fatal: it is
    rebuildable working state, and the new ingest is what fixes it."""
    from goldset.errors import GoldsetError

    try:
        snap = read_kb_snapshot(target)
        chunks = read_kb_chunks(target, check=False)
    except GoldsetError as exc:
        warnings.append(f"previous snapshot unreadable ({exc}); the diff is against an empty KB")
        return None, []
    return snap, chunks

"""The workspace's data, read and written in one place: the candidates file, the chunks the pairs cite and the
manifest (``data/``), the KB snapshot (``.goldset/kb/``), and any dataset, KB or release folder.

Only this module knows the data files' names (defined in :mod:`goldset.schema.manifest`, re-exported here) and how
each is read and written (through :mod:`goldset.io`: whole files replaced by a rename, JSON Lines sorted by id, a
bad line an error naming file:line). Modules above it take records or a :class:`WorkspaceData` (``ctx.data``), not
the files' paths; a path appears in their messages as ``data.pairs_path`` and the like.

- A **dataset folder** (the workspace's ``data/``): ``pairs.jsonl`` (every pair, whatever its status),
  ``chunks.jsonl`` (the chunks the pairs cite) and ``manifest.json``. A **release folder** has ``corpus/`` (every
  chunk of the pinned KB snapshot, one shard per document: :mod:`goldset.corpus`) and ``snapshot.json`` in place of
  ``chunks.jsonl``, and a ``CHANGELOG.md``; :func:`read_dataset` reads either.
- A **KB folder** (``.goldset/kb``, or an ingest's ``out_dir``): ``chunks.jsonl`` (every chunk) and
  ``snapshot.json``, replaced one after the other, chunks first; :func:`read_kb_chunks` notices a pair of files
  from two different ingests.

What a golden pair is, is a rule over records: :func:`goldset.dataset.golden_ids`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from goldset.corpus import CORPUS_DIR, corpus_files, parse_shards, read_corpus
from goldset.dataset import Dataset, build_manifest
from goldset.errors import InputError
from goldset.hashing import short_hash
from goldset.io import (
    atomic_write_bytes,
    atomic_write_text,
    dump_record,
    read_json,
    read_jsonl,
    write_json,
    write_jsonl,
)
from goldset.schema import Chunk, KBSnapshot, Manifest, QAPair
from goldset.schema.coverage import COVERAGE_DIR, CoverageRecord
from goldset.schema.manifest import CHUNKS_FILE, MANIFEST_FILE, PAIRS_FILE, SNAPSHOT_FILE

if TYPE_CHECKING:
    from pydantic import BaseModel

    from goldset.workspace import Workspace

__all__ = [
    "CHUNKS_FILE", "COVERAGE_DIR", "MANIFEST_FILE", "NO_CANDIDATES", "PAIRS_FILE", "SNAPSHOT_FILE", "ChunkSources",
    "WorkspaceData", "dataset_from_files", "file_hashes", "is_dataset_folder", "json_bytes", "read_chunk_sources",
    "read_coverage", "read_dataset", "read_kb_chunks", "read_kb_snapshot", "read_manifest", "read_pairs",
    "release_files", "snapshot_id", "write_coverage", "write_dataset", "write_kb",
]  # fmt: skip

#: What a missing candidates file means (InputError ``{path}: …``), unless the caller says it in its own words.
NO_CANDIDATES = "no candidates file; run `goldset generate` first"


def snapshot_id(chunks: Iterable[Chunk]) -> str:
    """Names the KB content: a hash of the sorted (chunk id, content hash) pairs."""
    return "kb-" + short_hash("\n".join(sorted(f"{c.id}\x1f{c.content_hash}" for c in chunks)))


# ------------------------------------------------------------------------------------------------ dataset folders


def is_dataset_folder(folder: Path) -> bool:
    """The folder holds a dataset (its pairs file)."""
    return (Path(folder) / PAIRS_FILE).exists()


def read_pairs(folder: Path) -> list[QAPair]:
    """The pairs of a dataset folder (its pairs file must be there)."""
    return read_jsonl(Path(folder) / PAIRS_FILE, QAPair)


def read_manifest(folder: Path) -> Manifest | None:
    """The manifest of a dataset folder, None when it has none."""
    path = Path(folder) / MANIFEST_FILE
    return read_json(path, Manifest) if path.is_file() else None


def read_dataset(folder: Path) -> Dataset:
    """Read a dataset folder; its chunks come from ``corpus/`` (a release) or ``chunks.jsonl`` (a working copy;
    optional, like ``manifest.json``)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(f"{folder}: no such dataset folder (expected {', '.join((PAIRS_FILE, CHUNKS_FILE))})")
    if not is_dataset_folder(folder):
        raise InputError(f"{folder}: no {PAIRS_FILE} in this folder; is it a goldset dataset folder?")
    pairs = read_pairs(folder)
    whole_corpus = (folder / CORPUS_DIR).is_dir()
    chunks = {c.id: c for c in (read_corpus(folder) if whole_corpus else _read_chunks(folder / CHUNKS_FILE))}
    return Dataset(pairs=pairs, chunks=chunks, manifest=read_manifest(folder), path=folder, whole_corpus=whole_corpus)


def file_hashes(folder: Path, names: Iterable[str] = ()) -> dict[str, str]:
    """sha256 of the content files of a dataset folder that exist: ``pairs.jsonl``, ``chunks.jsonl`` and the
    ``names`` given (relative POSIX paths, e.g. every file a release manifest lists: its corpus shards)."""
    folder = Path(folder)
    wanted = sorted({PAIRS_FILE, CHUNKS_FILE, *names})
    return {name: _file_sha256(folder / name) for name in wanted if (folder / name).is_file()}


def _file_sha256(path: Path) -> str:
    """:func:`~goldset.hashing.sha256_hex` of a file's bytes, read in blocks (a large pairs file is not held whole)."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_dataset(
    folder: Path,
    pairs: Iterable[QAPair],
    chunks: Iterable[Chunk],
    *,
    version: str | None = None,
    kb_snapshot_id: str | None = None,
) -> Manifest:
    """Write all three files of a dataset folder, pairs first. Only the chunks that some pair cites are kept in
    ``chunks.jsonl``; the manifest's review and calibration carry over from the one it replaces."""
    folder = Path(folder)
    pairs = list(pairs)
    cited = {cid for p in pairs for cid in p.chunk_ids}
    kept = [c for c in chunks if c.id in cited]
    write_jsonl(folder / PAIRS_FILE, pairs)
    write_jsonl(folder / CHUNKS_FILE, kept)
    base = read_manifest(folder)
    manifest = build_manifest(
        pairs, kept, files=file_hashes(folder), version=version, kb_snapshot_id=kb_snapshot_id, base=base
    )
    write_json(folder / MANIFEST_FILE, manifest)
    return manifest


def _read_chunks(path: Path) -> list[Chunk]:
    return read_jsonl(path, Chunk) if path.exists() else []


# ------------------------------------------------------------------------------------------------ release files


def json_bytes(record: BaseModel) -> bytes:
    """A JSON record file's bytes (``manifest.json``, ``snapshot.json``) as :func:`goldset.io.write_json` writes it."""
    return (record.model_dump_json(indent=2) + "\n").encode("utf-8")


def release_files(pairs: Iterable[QAPair], chunks: Iterable[Chunk], snapshot: KBSnapshot) -> dict[str, bytes]:
    """The files of a release folder made from its records (relative path → bytes): the pairs file, the corpus
    shards and the snapshot record. The changelog and the manifest (which hashes them all) are the release's."""
    files = {PAIRS_FILE: "".join(dump_record(p) + "\n" for p in sorted(pairs, key=lambda p: p.id)).encode("utf-8")}
    files.update(corpus_files(chunks))
    files[SNAPSHOT_FILE] = json_bytes(snapshot)
    return files


def dataset_from_files(files: Mapping[str, bytes], where: str) -> Dataset:
    """A release folder's dataset from its files' bytes (as :func:`release_files` and the manifest give them)."""
    manifest = Manifest.model_validate_json(files[MANIFEST_FILE])
    lines = files[PAIRS_FILE].decode("utf-8").splitlines()
    pairs = [QAPair.model_validate_json(line) for line in lines if line.strip()]
    chunks = {c.id: c for c in parse_shards(files, where)}
    return Dataset(pairs=pairs, chunks=chunks, manifest=manifest)


# ------------------------------------------------------------------------------------------------ KB folders


def read_kb_snapshot(folder: Path) -> KBSnapshot | None:
    """The snapshot record of a KB folder, or None when nothing was ingested there yet."""
    path = Path(folder) / SNAPSHOT_FILE
    return read_json(path, KBSnapshot) if path.is_file() else None


def read_kb_chunks(folder: Path, *, check: bool = True) -> list[Chunk]:
    """Every chunk of a KB folder, sorted by id ([] when nothing was ingested there yet).

    With ``check`` the chunks must match ``snapshot.json`` (its id is a hash of them): the two files are
    replaced one after the other, and a run stopped between the two renames must not go unnoticed.
    """
    folder = Path(folder)
    path = folder / CHUNKS_FILE
    if not path.is_file():
        return []
    chunks = read_jsonl(path, Chunk)
    if check:
        snap = read_kb_snapshot(folder)
        if snap is not None and snap.id != snapshot_id(chunks):
            raise InputError(
                f"{path}: does not match {folder / SNAPSHOT_FILE} (an interrupted ingest?); run `goldset ingest` again"
            )
    return chunks


def write_kb(folder: Path, chunks: Iterable[Chunk], snapshot: KBSnapshot) -> None:
    """Replace a KB folder's chunks, then its snapshot record, each whole by a rename."""
    folder = Path(folder)
    for path, write in (
        (folder / CHUNKS_FILE, lambda p: write_jsonl(p, chunks)),
        (folder / SNAPSHOT_FILE, lambda p: write_json(p, snapshot)),
    ):
        try:
            write(path)
        except OSError as exc:
            raise InputError(
                f"{path}: cannot write ({exc.strerror or exc}); check the folder's permissions and free space"
            ) from None


# ------------------------------------------------------------------------------------------------ coverage records


def read_coverage(path: Path) -> CoverageRecord:
    """A coverage record file (`goldset coverage --out FILE`, or one the workspace keeps)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such coverage file; write one: `goldset coverage --queries FILE --out {path}`")
    return read_json(path, CoverageRecord)


def write_coverage(path: Path, record: CoverageRecord) -> Path:
    """Write a coverage record file whole (by a rename)."""
    write_json(Path(path), record)
    return Path(path)


# ------------------------------------------------------------------------------------------------ the workspace


@dataclass(frozen=True)
class ChunkSources:
    """The chunks of a filter run (and of review, calibration and import).

    ``kb``: what the checks read: the KB snapshot's chunks (``.goldset/kb/chunks.jsonl``), or the dataset folder's
    when there is no snapshot (a dataset copied without its KB). A chunk missing here is "not in the KB".
    ``kept``: what is written back to ``data/chunks.jsonl`` beside the pairs: the dataset's chunks, refreshed by the
    KB's, so a chunk that left the KB is not lost for the pairs that still cite it.
    """

    kb: dict[str, Chunk]
    kept: dict[str, Chunk]


class WorkspaceData:
    """The data of one workspace (``ctx.data``): its dataset folder ``data/`` and its KB folder ``.goldset/kb``.

    Readers read whole files and raise before anything is written (a bad line: a RecordError naming file:line);
    writers replace files whole. The ``*_path`` properties are for messages."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws

    def __repr__(self) -> str:
        return f"WorkspaceData({self.ws.root})"

    @property
    def folder(self) -> Path:
        """The dataset folder (``data/``)."""
        return self.ws.data_dir

    @property
    def pairs_path(self) -> Path:
        """The candidates file: every pair, whatever its status."""
        return self.folder / PAIRS_FILE

    @property
    def manifest_path(self) -> Path:
        return self.folder / MANIFEST_FILE

    @property
    def kb_dir(self) -> Path:
        return self.ws.kb_dir

    # -- the dataset folder ----------------------------------------------------------------------------------------
    def has_pairs(self) -> bool:
        """The candidates file exists (something was generated or imported)."""
        return self.pairs_path.exists()

    def pairs(self) -> list[QAPair]:
        """Every pair of the candidates file; [] when there is none yet."""
        return read_pairs(self.folder) if self.has_pairs() else []

    def require_pairs(self, missing: str = NO_CANDIDATES) -> list[QAPair]:
        """Every pair of the candidates file; an InputError ``{path}: {missing}`` when there is none."""
        if not self.has_pairs():
            raise InputError(f"{self.pairs_path}: {missing}")
        return read_pairs(self.folder)

    def write_pairs_text(self, text: str) -> None:
        """Replace the candidates file with ``text``: the file :func:`goldset.io.write_jsonl` writes for the pairs
        (the generation sink keeps each pair's line, so a rewrite during a run does not dump them again)."""
        atomic_write_text(self.pairs_path, text)

    def cited_chunks(self) -> list[Chunk]:
        """The chunks the dataset folder keeps beside its pairs; [] when there are none."""
        return _read_chunks(self.folder / CHUNKS_FILE)

    def manifest(self) -> Manifest | None:
        """The dataset folder's manifest, None before the first write."""
        return read_manifest(self.folder)

    def manifest_or_built(self, pairs: Iterable[QAPair]) -> Manifest:
        """The manifest; for a dataset folder without one, one built from its files (``pairs``: its pairs, read)."""
        manifest = self.manifest()
        if manifest is not None:
            return manifest
        return build_manifest(pairs, self.cited_chunks(), files=file_hashes(self.folder))

    def write_manifest(self, manifest: Manifest) -> None:
        write_json(self.manifest_path, manifest)

    def write(self, pairs: Iterable[QAPair], chunks: Iterable[Chunk], *, kb_snapshot_id: str | None = None) -> Manifest:
        """Write the pairs, the chunks they cite (of ``chunks``) and the manifest: :func:`write_dataset`."""
        return write_dataset(self.folder, pairs, chunks, kb_snapshot_id=kb_snapshot_id)

    def dataset(self) -> Dataset:
        """The dataset folder read whole: :func:`read_dataset`."""
        return read_dataset(self.folder)

    # -- the KB folder ---------------------------------------------------------------------------------------------
    def kb_snapshot(self) -> KBSnapshot | None:
        """The KB snapshot record, None before the first ingest."""
        return read_kb_snapshot(self.kb_dir)

    def kb_chunks(self, *, check: bool = True) -> list[Chunk]:
        """Every chunk of the KB snapshot, sorted by id ([] before the first ingest): :func:`read_kb_chunks`."""
        return read_kb_chunks(self.kb_dir, check=check)

    def write_kb(self, chunks: Iterable[Chunk], snapshot: KBSnapshot) -> None:
        write_kb(self.kb_dir, chunks, snapshot)

    def replace_kb(self, source: Path) -> None:
        """Replace the KB snapshot with the one an ingest wrote into the KB folder ``source`` (chunks first)."""
        for name in (CHUNKS_FILE, SNAPSHOT_FILE):
            atomic_write_bytes(self.kb_dir / name, (Path(source) / name).read_bytes())

    # -- coverage of real traffic (.goldset/coverage/<manifest_hash>.json) ----------------------------------------
    @property
    def coverage_dir(self) -> Path:
        return self.ws.state_dir / COVERAGE_DIR

    def coverage(self, manifest_hash: str) -> CoverageRecord | None:
        """The coverage last computed for the dataset content ``manifest_hash`` (a run's), None when there is none."""
        path = self.coverage_dir / f"{manifest_hash}.json"
        return read_coverage(path) if manifest_hash.isalnum() and path.is_file() else None

    def coverages(self) -> list[CoverageRecord]:
        """Every coverage record kept (one per dataset content), newest first."""
        if not self.coverage_dir.is_dir():
            return []
        found = [read_coverage(p) for p in sorted(self.coverage_dir.glob("*.json"))]
        return sorted(found, key=lambda r: r.computed_at, reverse=True)

    def write_coverage(self, record: CoverageRecord) -> Path:
        """Keep ``record`` as the coverage of its dataset content (replacing an earlier one of the same content)."""
        return write_coverage(self.coverage_dir / f"{record.manifest_hash}.json", record)

    # -- both ------------------------------------------------------------------------------------------------------
    def chunk_sources(self) -> ChunkSources:
        """The dataset folder's and the KB snapshot's chunks (not :meth:`kb_chunks`, which reads the snapshot alone
        and checks it against its record)."""
        dataset = {c.id: c for c in self.cited_chunks()}
        kb_path = self.kb_dir / CHUNKS_FILE
        if not kb_path.exists():
            return ChunkSources(kb=dataset, kept=dataset)
        kb = {c.id: c for c in read_jsonl(kb_path, Chunk)}
        return ChunkSources(kb=kb, kept={**dataset, **kb})


def read_chunk_sources(ws: Workspace) -> ChunkSources:
    """:meth:`WorkspaceData.chunk_sources` of the workspace ``ws``."""
    return WorkspaceData(ws).chunk_sources()

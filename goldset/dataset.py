"""A dataset folder: ``pairs.jsonl`` + the chunks + ``manifest.json``.

The chunks are ``chunks.jsonl`` (the chunks the pairs cite) in a working copy, or ``corpus/`` (every chunk of the
KB snapshot the pairs were written against, one shard per document: :mod:`goldset.corpus`) in a release. This
layout is fixed for every command: generation writes into the workspace's ``data/`` folder, releases version that
folder with DVC, and evaluation reads any such folder (or a released version of it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from goldset.errors import InputError
from goldset.hashing import sha256_hex
from goldset.io import read_json, read_jsonl, write_json, write_jsonl
from goldset.schema import Chunk, Manifest, PairStatus, QAPair
from goldset.schema.manifest import CHUNKS_FILE, MANIFEST_FILE, PAIRS_FILE


@dataclass
class Dataset:
    """A dataset folder read into memory: its pairs, the chunks they cite by id, its manifest and where it lives."""

    pairs: list[QAPair]
    chunks: dict[str, Chunk] = field(default_factory=dict)
    manifest: Manifest | None = None
    path: Path | None = None
    #: ``chunks`` is the whole corpus the pairs were written against (a release's ``corpus/``), not only the
    #: chunks they cite: a retriever searching it faces the real knowledge base.
    whole_corpus: bool = False

    def golden_ids(self) -> set[str]:
        """The golden set: a release's list (``manifest.golden_ids``), else the passed and accepted pairs (a working
        copy). The one definition evaluation, exports, ``goldset.load`` and changelogs use."""
        return golden_ids(self.pairs, self.manifest)

    def pair(self, pair_id: str) -> QAPair:
        """The pair with this id; KeyError when there is none."""
        for p in self.pairs:
            if p.id == pair_id:
                return p
        raise KeyError(pair_id)


def golden_ids(pairs: Iterable[QAPair], manifest: Manifest | None) -> set[str]:
    """See :meth:`Dataset.golden_ids`."""
    if manifest is not None and manifest.golden_ids:
        return set(manifest.golden_ids)
    return {p.id for p in pairs if p.status in (PairStatus.passed, PairStatus.accepted)}


def was_reviewed(pair: QAPair, unreviewed: Collection[str] = ()) -> bool:
    """An expert decided on the pair (``unreviewed``: a release's golden pairs nobody reviewed)."""
    if pair.id in unreviewed:
        return False
    return pair.status is PairStatus.accepted or bool(pair.review.decisions)


#: The columns of a pair as a table row (:func:`pair_row`): ``goldset.load``'s DataFrame and the exports.
PAIR_COLUMNS = (
    "id", "question", "answer", "question_type", "language", "status", "golden", "reviewed", "evidence",
    "chunk_ids", "doc_ids", "tags", "version",
)  # fmt: skip


def pair_row(
    pair: QAPair, manifest: Manifest | None, golden: Collection[str], unreviewed: Collection[str]
) -> dict[str, Any]:
    """A pair as a table row with the :data:`PAIR_COLUMNS`."""
    return {
        "id": pair.id,
        "question": pair.question,
        "answer": pair.answer,
        "question_type": pair.question_type.value,
        "language": pair.language,
        "status": pair.status.value,
        "golden": pair.id in golden,
        "reviewed": was_reviewed(pair, unreviewed),
        "evidence": [e.model_dump(mode="json") for e in pair.evidence],
        "chunk_ids": pair.chunk_ids,
        "doc_ids": pair.doc_ids,
        "tags": list(pair.tags),
        "version": manifest.version if manifest is not None else None,
    }


def read_dataset(folder: Path) -> Dataset:
    """Read a dataset folder; its chunks come from ``corpus/`` (a release) or ``chunks.jsonl`` (a working copy;
    optional, like ``manifest.json``)."""
    from goldset.corpus import CORPUS_DIR, read_corpus

    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(f"{folder}: no such dataset folder (expected {', '.join((PAIRS_FILE, CHUNKS_FILE))})")
    pairs_path = folder / PAIRS_FILE
    if not pairs_path.exists():
        raise InputError(f"{folder}: no {PAIRS_FILE} in this folder; is it a goldset dataset folder?")
    pairs = read_jsonl(pairs_path, QAPair)
    chunks_path = folder / CHUNKS_FILE
    whole_corpus = (folder / CORPUS_DIR).is_dir()
    if whole_corpus:
        chunks = {c.id: c for c in read_corpus(folder)}
    else:
        chunks = {c.id: c for c in read_jsonl(chunks_path, Chunk)} if chunks_path.exists() else {}
    manifest_path = folder / MANIFEST_FILE
    manifest = read_json(manifest_path, Manifest) if manifest_path.exists() else None
    return Dataset(pairs=pairs, chunks=chunks, manifest=manifest, path=folder, whole_corpus=whole_corpus)


def build_manifest(
    pairs: Iterable[QAPair],
    chunks: Iterable[Chunk],
    *,
    files: dict[str, str],
    version: str | None = None,
    kb_snapshot_id: str | None = None,
    base: Manifest | None = None,
) -> Manifest:
    """Counts and hashes derived from the records; fields a later stage owns (review, the judge calibration) carry
    over from base."""
    from goldset import __version__

    pairs = list(pairs)
    prompt_hashes = {
        p.provenance.prompt_id: p.provenance.prompt_hash
        for p in pairs
        if p.provenance.prompt_id and p.provenance.prompt_hash
    }
    return Manifest(
        version=version,
        goldset_version=__version__,
        kb_snapshot_id=kb_snapshot_id or (base.kb_snapshot_id if base else None),
        n_pairs=len(pairs),
        n_chunks=len(list(chunks)),
        counts_by_status=dict(sorted(Counter(p.status.value for p in pairs).items())),
        counts_by_type=dict(sorted(Counter(p.question_type.value for p in pairs).items())),
        counts_by_language=dict(sorted(Counter(p.language for p in pairs).items())),
        prompt_hashes=dict(sorted(prompt_hashes.items())),
        review=base.review if base else None,
        calibration=base.calibration if base else None,
        files=files,
    )


def write_dataset(
    folder: Path,
    pairs: Iterable[QAPair],
    chunks: Iterable[Chunk],
    *,
    version: str | None = None,
    kb_snapshot_id: str | None = None,
) -> Manifest:
    """Write all three files. Only the chunks that some pair cites are kept in ``chunks.jsonl``."""
    folder = Path(folder)
    pairs = list(pairs)
    cited = {cid for p in pairs for cid in p.chunk_ids}
    kept = [c for c in chunks if c.id in cited]
    write_jsonl(folder / PAIRS_FILE, pairs)
    write_jsonl(folder / CHUNKS_FILE, kept)
    files = {name: sha256_hex((folder / name).read_bytes()) for name in (PAIRS_FILE, CHUNKS_FILE)}
    old = folder / MANIFEST_FILE
    base = read_json(old, Manifest) if old.exists() else None
    manifest = build_manifest(pairs, kept, files=files, version=version, kb_snapshot_id=kb_snapshot_id, base=base)
    write_json(old, manifest)
    return manifest

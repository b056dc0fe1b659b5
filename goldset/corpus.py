"""A corpus in a dataset folder: every chunk of the pinned KB snapshot, one JSON Lines shard per document.

A release folder holds its whole corpus (``corpus/``), where a working dataset folder holds only the chunks its
pairs cite (``chunks.jsonl``); :func:`goldset.data.read_dataset` reads either.

``corpus/<doc_id>.jsonl`` holds the chunks of one document, sorted by id, in the same line format as every
goldset records file. DVC stores files by content, so a document that did not change between two releases is
stored once; only the shards of changed documents are new objects. ``snapshot.json`` beside the corpus is the
KB snapshot record (documents, chunking settings, skipped files) the chunks came from.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path

from goldset.errors import RecordError
from goldset.io import dump_record
from goldset.schema import Chunk

CORPUS_DIR = "corpus"
SHARD_SUFFIX = ".jsonl"


def shard_name(doc_id: str) -> str:
    """``corpus/<doc_id>.jsonl`` (doc ids are POSIX paths relative to the documents folder)."""
    return f"{CORPUS_DIR}/{doc_id}{SHARD_SUFFIX}"


def doc_id_of(shard: str) -> str:
    return shard.removeprefix(f"{CORPUS_DIR}/").removesuffix(SHARD_SUFFIX)


def is_shard(relpath: str) -> bool:
    return relpath.startswith(f"{CORPUS_DIR}/") and relpath.endswith(SHARD_SUFFIX)


def corpus_files(chunks: Iterable[Chunk]) -> dict[str, bytes]:
    """Shard name → its bytes, for every document of ``chunks``."""
    by_doc: dict[str, list[Chunk]] = defaultdict(list)
    for chunk in chunks:
        by_doc[chunk.doc_id].append(chunk)
    out: dict[str, bytes] = {}
    for doc_id in sorted(by_doc):
        rows = sorted(by_doc[doc_id], key=lambda c: c.id)
        out[shard_name(doc_id)] = "".join(dump_record(c) + "\n" for c in rows).encode("utf-8")
    return out


def parse_shards(files: Mapping[str, bytes], where: Path | str) -> list[Chunk]:
    """Every chunk of the shards among ``files`` (relpath → bytes), sorted by id; a bad line is a RecordError
    naming the shard and line."""
    from pydantic import ValidationError

    chunks: list[Chunk] = []
    seen: dict[str, str] = {}
    for name in sorted(n for n in files if is_shard(n)):
        for lineno, line in enumerate(files[name].decode("utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                chunk = Chunk.model_validate_json(line)
            except ValidationError as exc:
                raise RecordError(f"{where}/{name}", lineno, str(exc.errors()[0].get("msg", "invalid"))) from None
            if chunk.id in seen:
                raise RecordError(f"{where}/{name}", lineno, f"chunk id {chunk.id!r} also in {seen[chunk.id]}")
            seen[chunk.id] = name
            chunks.append(chunk)
    return sorted(chunks, key=lambda c: c.id)


def read_corpus(folder: Path) -> list[Chunk]:
    """Every chunk of a release folder's ``corpus/``, sorted by id."""
    folder = Path(folder)
    base = folder / CORPUS_DIR
    files = {p.relative_to(folder).as_posix(): p.read_bytes() for p in base.rglob(f"*{SHARD_SUFFIX}") if p.is_file()}
    return parse_shards(files, folder)

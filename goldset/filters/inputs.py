"""What the pipeline reads before it checks anything: the chunks the pairs cite and an earlier release's pairs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from goldset.errors import InputError
from goldset.schema import Chunk, QAPair

if TYPE_CHECKING:
    from goldset.workspace import Workspace


@dataclass(frozen=True)
class ChunkSources:
    """The chunks of a filter run.

    ``kb``: what the checks read: the KB snapshot's chunks (``.goldset/kb/chunks.jsonl``), or the dataset folder's
    when there is no snapshot (a dataset copied without its KB). A chunk missing here is "not in the KB".
    ``kept``: what is written back to ``data/chunks.jsonl`` beside the pairs: the dataset's chunks, refreshed by the
    KB's, so a chunk that left the KB is not lost for the pairs that still cite it.
    """

    kb: dict[str, Chunk]
    kept: dict[str, Chunk]


def read_chunk_sources(ws: Workspace) -> ChunkSources:
    """Read the dataset folder's and the KB snapshot's chunks (not :func:`goldset.kb.load_chunks`, which reads the
    snapshot alone and checks it against its documents)."""
    from goldset.io import read_jsonl

    dataset_path, kb_path = ws.data_dir / "chunks.jsonl", ws.kb_dir / "chunks.jsonl"
    dataset = {c.id: c for c in read_jsonl(dataset_path, Chunk)} if dataset_path.exists() else {}
    if not kb_path.exists():
        return ChunkSources(kb=dataset, kept=dataset)
    kb = {c.id: c for c in read_jsonl(kb_path, Chunk)}
    return ChunkSources(kb=kb, kept={**dataset, **kb})


def read_against(path: Path | str) -> list[QAPair]:
    """Pairs of a dataset folder (its pairs.jsonl) or of a pairs file, for cross-release duplicate checks."""
    from goldset.dataset import read_dataset
    from goldset.io import read_jsonl

    path = Path(path)
    if path.is_dir():
        return read_dataset(path).pairs
    if path.is_file():
        return read_jsonl(path, QAPair)
    raise InputError(f"{path}: against needs a dataset folder or a pairs .jsonl file; it does not exist")

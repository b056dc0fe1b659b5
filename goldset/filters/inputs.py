"""What the pipeline reads before it checks anything: the chunks the pairs cite and an earlier release's pairs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from goldset.errors import InputError
from goldset.schema import Chunk, QAPair

if TYPE_CHECKING:
    from goldset.workspace import Workspace


def dataset_and_kb_chunks(ws: Workspace) -> dict[str, Chunk]:
    """The chunks of the dataset folder (``data/chunks.jsonl``), overridden by the KB snapshot's (the KB is the
    truth): what the checks read, and what is written back beside the pairs. Not :func:`goldset.kb.load_chunks`,
    which reads the KB snapshot alone."""
    from goldset.io import read_jsonl

    chunks: dict[str, Chunk] = {}
    for path in (ws.data_dir / "chunks.jsonl", ws.kb_dir / "chunks.jsonl"):
        if path.exists():
            chunks.update((c.id, c) for c in read_jsonl(path, Chunk))
    return chunks


def read_against(path: Path | str) -> list[QAPair]:
    """Pairs of a dataset folder (its pairs.jsonl) or of a pairs file, for cross-release duplicate checks."""
    from goldset.dataset import read_dataset
    from goldset.io import read_jsonl

    path = Path(path)
    if path.is_dir():
        return read_dataset(path).pairs
    if path.is_file():
        return read_jsonl(path, QAPair)
    raise InputError(f"{path}: against= needs a dataset folder or a pairs .jsonl file; it does not exist")

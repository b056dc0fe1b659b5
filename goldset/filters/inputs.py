"""What the pipeline reads besides the workspace's data (:class:`goldset.data.WorkspaceData`): an earlier release's
pairs."""

from __future__ import annotations

from pathlib import Path

from goldset.errors import InputError
from goldset.schema import QAPair


def read_against(path: Path | str) -> list[QAPair]:
    """Pairs of a dataset folder (its pairs.jsonl) or of a pairs file, for cross-release duplicate checks."""
    from goldset.data import read_dataset
    from goldset.io import read_jsonl

    path = Path(path)
    if path.is_dir():
        return read_dataset(path).pairs
    if path.is_file():
        return read_jsonl(path, QAPair)
    raise InputError(f"{path}: against needs a dataset folder or a pairs .jsonl file; it does not exist")

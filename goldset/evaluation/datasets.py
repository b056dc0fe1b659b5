"""The dataset an evaluation reads: resolving a dataset folder, its identity (fingerprint), the pairs evaluated."""

from __future__ import annotations

import inspect
from pathlib import Path

from goldset.dataset import Dataset, read_dataset
from goldset.errors import InputError
from goldset.hashing import canonical_json, sha256_hex
from goldset.schema import PairStatus, QAPair
from goldset.schema.manifest import CHUNKS_FILE, PAIRS_FILE
from goldset.workspace import Workspace


def resolve_dataset(spec: str | Path, ws: Workspace | None = None) -> Dataset:
    """A dataset given as a folder (``pairs.jsonl`` + ``chunks.jsonl`` + ``manifest.json``).

    Released versions by name plug in here once ``goldset release`` exists; until then a name that is not a
    folder is an error that says so.
    """
    path = Path(spec)
    candidates = [path] if path.is_absolute() else [path, *([ws.root / path] if ws else [])]
    for candidate in candidates:
        if candidate.is_dir():
            return read_dataset(candidate)
    import goldset

    load = getattr(goldset, "load", None)  # the versioning API, once it exists
    if load is not None:
        kwargs = {"ws": ws} if "ws" in inspect.signature(load).parameters else {}
        loaded = load(str(spec), **kwargs)
        return loaded if isinstance(loaded, Dataset) else read_dataset(Path(loaded))
    raise InputError(
        f"{spec}: no such dataset folder; released versions by name arrive with `goldset release` — "
        f"for now pass a dataset folder (e.g. data/)"
    )


def dataset_fingerprint(dataset: Dataset) -> str:
    """A hash of the dataset's *content* (its pairs and chunks files), the identity runs are compared by.

    The manifest's file hashes are used when present (they are what a release pins); ``created_at`` is left out
    on purpose, so rewriting identical data does not make two runs incomparable.
    """
    files = dataset.manifest.files if dataset.manifest is not None else {}
    if files:
        return sha256_hex(canonical_json(dict(sorted(files.items()))))[:16]
    if dataset.path is not None:
        parts = {}
        for name in (PAIRS_FILE, CHUNKS_FILE):
            f = dataset.path / name
            if f.is_file():
                parts[name] = sha256_hex(f.read_bytes())
        return sha256_hex(canonical_json(parts))[:16]
    return sha256_hex(canonical_json([p.model_dump(mode="json") for p in dataset.pairs]))[:16]


def select_pairs(dataset: Dataset) -> tuple[list[QAPair], str | None]:
    """The pairs evaluated: passed/accepted ones when there are any, else every non-rejected, non-retired pair.

    Returns the pairs (sorted by id) and a note for the user when the fallback was used.
    """
    kept = {PairStatus.passed, PairStatus.accepted}
    chosen = [p for p in dataset.pairs if p.status in kept]
    note = None
    if not chosen:
        dropped = {PairStatus.rejected, PairStatus.retired}
        chosen = [p for p in dataset.pairs if p.status not in dropped]
        note = (
            f"no passed or accepted pairs in the dataset: evaluating all {len(chosen)} non-rejected, "
            f"non-retired pairs (run `goldset filter` to check them first)"
        )
    if not chosen:
        where = dataset.path or "dataset"
        raise InputError(f"{where}: no pairs to evaluate (every pair is rejected or retired)")
    return sorted(chosen, key=lambda p: p.id), note

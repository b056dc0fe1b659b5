"""The dataset an evaluation reads: resolving a dataset folder, its identity (fingerprint), the pairs evaluated."""

from __future__ import annotations

from pathlib import Path

from goldset.context import Context
from goldset.data import CHUNKS_FILE, MANIFEST_FILE, PAIRS_FILE, file_hashes, read_dataset
from goldset.dataset import Dataset
from goldset.errors import InputError
from goldset.hashing import canonical_json, sha256_hex
from goldset.schema import PairStatus, QAPair
from goldset.workspace import Workspace


def resolve_dataset(spec: str | Path, ws: Workspace | Context | None = None) -> Dataset:
    """A dataset given as a folder (``pairs.jsonl`` + ``chunks.jsonl`` + ``manifest.json``), or as the name of a
    release (``v1.2.0``) of the workspace's or current folder's repository, materialised from DVC with its hashes
    checked (:func:`goldset.versioning.load.resolve_dataset_version`)."""
    path = Path(spec)
    root = ws.ws if isinstance(ws, Context) else ws
    candidates = [path] if path.is_absolute() else [path, *([root.root / path] if root else [])]
    for candidate in candidates:
        if candidate.is_dir():
            return read_dataset(candidate)
    from goldset.errors import WorkspaceError
    from goldset.versioning.load import load_dataset

    try:
        return load_dataset(str(spec), ws=ws)
    except WorkspaceError as exc:  # no repository to hold releases: the name may be a mistyped folder
        raise InputError(f"{spec}: no such dataset folder, and no release of that name: {exc}") from None


def dataset_fingerprint(dataset: Dataset) -> str:
    """A hash of the dataset's *content*, the identity runs are compared by: the hashes of its files themselves.

    The manifest's file hashes are what a release pins, so they are checked, never trusted: a manifest whose hashes
    disagree with the files (a hand edit after the manifest was written) is an :class:`InputError`, because two runs
    of different data under one identity would be compared as if they were the same. A folder without a manifest is
    identified by its files alone (:func:`manifest_note` says so). ``created_at`` plays no part, so rewriting
    identical data keeps runs comparable, and the formula is the one a manifest's hashes give when they are right.
    """
    if dataset.path is None:  # built in memory: its records are its content
        records = {
            PAIRS_FILE: [p.model_dump(mode="json") for p in sorted(dataset.pairs, key=lambda p: p.id)],
            CHUNKS_FILE: [dataset.chunks[cid].model_dump(mode="json") for cid in sorted(dataset.chunks)],
        }
        return sha256_hex(canonical_json(records))[:16]
    recorded = dataset.manifest.files if dataset.manifest is not None else {}
    actual = file_hashes(dataset.path, recorded)
    if recorded:
        manifest = dataset.path / MANIFEST_FILE
        for name in sorted(set(recorded) | set(actual)):
            want, got = recorded.get(name), actual.get(name)
            if want == got:
                continue
            if got is None:
                problem = f"lists {name} but the folder has no such file"
            elif want is None:
                problem = f"has no hash for {name}"
            else:
                problem = f"records {name} as sha256 {want[:12]}… but the file hashes to {got[:12]}…"
            raise InputError(
                f"{manifest}: {problem}: {name} changed after the manifest was written; restore the file, or write "
                f"the dataset again (goldset.write_dataset, as `goldset filter` does) so the manifest matches it"
            )
    return sha256_hex(canonical_json(dict(sorted(actual.items()))))[:16]


def manifest_note(dataset: Dataset) -> str | None:
    """A note for a dataset folder whose manifest cannot vouch for it (none, or one without file hashes)."""
    if dataset.path is None:
        return None
    if dataset.manifest is None:
        return (
            f"no manifest.json in {dataset.path}: the dataset is identified by the hash of its files "
            f"(its pairs and chunks), not by a released version"
        )
    if not dataset.manifest.files:
        return (
            f"{dataset.path / MANIFEST_FILE} records no file hashes: the dataset is identified by the hash of its files"
        )
    return None


def select_pairs(dataset: Dataset) -> tuple[list[QAPair], str | None]:
    """The pairs evaluated: a release's golden set (its manifest's ``golden_ids``); in a working dataset the
    passed/accepted ones when there are any, else every non-rejected, non-retired pair.

    Returns the pairs (sorted by id) and a note for the user when the fallback was used.
    """
    golden = dataset.golden_ids()
    chosen = [p for p in dataset.pairs if p.id in golden]
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


def pairs_to_evaluate(dataset: Dataset, sample: int | None = None, seed: int = 0) -> tuple[list[QAPair], list[str]]:
    """The pairs an evaluation scores (:func:`select_pairs`, then a stratified subset of ``sample`` of them with
    ``seed``), and notes for the user. :func:`goldset.evaluate` and the judge's estimate choose them here."""
    from goldset.evaluation.sampling import stratified_sample

    pairs, note = select_pairs(dataset)
    notes = [note] if note else []
    if sample is not None:
        pairs = stratified_sample(pairs, sample, seed)
        notes.append(f"stratified sample: {len(pairs)} questions (seed {seed}), every question type represented")
    return pairs, notes

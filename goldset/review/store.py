"""Reading the workspace's pairs for review, and writing them back with the review statistics in the manifest.

Every review entry point reads everything first (a malformed line stops it before anything is written) and
writes once at the end through :func:`goldset.dataset.write_dataset` (atomic files, pairs sorted by id); the
manifest's ``review`` section is then recomputed from the pairs, so it never disagrees with them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from goldset.errors import InputError
from goldset.schema import Chunk, QAPair
from goldset.schema.manifest import ReviewRound

if TYPE_CHECKING:
    from goldset.review.settings import ReviewSettings
    from goldset.schema import Manifest
    from goldset.workspace import Workspace


@dataclass
class Workbench:
    """What a review entry point works on: the pairs, the chunks they cite, the earlier sample rounds."""

    pairs: list[QAPair]
    chunks: dict[str, Chunk]
    rounds: list[ReviewRound]

    def by_id(self) -> dict[str, QAPair]:
        return {p.id: p for p in self.pairs}


def load(ws: Workspace) -> Workbench:
    from goldset.filters.inputs import read_chunk_sources
    from goldset.io import read_json, read_jsonl
    from goldset.schema import Manifest
    from goldset.schema.manifest import MANIFEST_FILE

    if not ws.pairs_path.exists():
        raise InputError(f"{ws.pairs_path}: no pairs yet; run `goldset generate` and `goldset filter` first")
    pairs = read_jsonl(ws.pairs_path, QAPair)
    manifest_path = ws.data_dir / MANIFEST_FILE
    manifest = read_json(manifest_path, Manifest) if manifest_path.exists() else None
    rounds = list(manifest.review.rounds) if manifest is not None and manifest.review is not None else []
    return Workbench(pairs=pairs, chunks=dict(read_chunk_sources(ws).kept), rounds=rounds)


def save(ws: Workspace, bench: Workbench, settings: ReviewSettings) -> Manifest:
    """Write the pairs and the manifest, its ``review`` section recomputed from the pairs."""
    from goldset.dataset import write_dataset
    from goldset.io import write_json
    from goldset.review.estimate import review_stats
    from goldset.schema.manifest import MANIFEST_FILE

    manifest = write_dataset(ws.data_dir, bench.pairs, bench.chunks.values())
    manifest.review = review_stats(bench.pairs, settings, rounds=bench.rounds)
    write_json(ws.data_dir / MANIFEST_FILE, manifest)
    return manifest

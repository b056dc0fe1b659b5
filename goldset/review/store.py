"""Reading the workspace's pairs for review, and writing them back with the review statistics in the manifest.

Every review entry point reads everything first (a malformed line stops it before anything is written) and
writes once at the end through :meth:`goldset.data.WorkspaceData.write` (atomic files, pairs sorted by id); the
manifest's ``review`` section is then recomputed from the pairs, so it never disagrees with them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from goldset.schema import Chunk, QAPair
from goldset.schema.manifest import ReviewRound

if TYPE_CHECKING:
    from goldset.data import WorkspaceData
    from goldset.review.settings import ReviewSettings
    from goldset.schema import Manifest


@dataclass
class Workbench:
    """What a review entry point works on: the pairs, the chunks they cite, the earlier sample rounds."""

    pairs: list[QAPair]
    chunks: dict[str, Chunk]
    rounds: list[ReviewRound]

    def by_id(self) -> dict[str, QAPair]:
        return {p.id: p for p in self.pairs}


def load(data: WorkspaceData) -> Workbench:
    """The pairs, the chunks they cite (the dataset's, refreshed by the KB's) and the manifest's sample rounds."""
    pairs = data.require_pairs("no pairs yet; run `goldset generate` and `goldset filter` first")
    manifest = data.manifest()
    rounds = list(manifest.review.rounds) if manifest is not None and manifest.review is not None else []
    return Workbench(pairs=pairs, chunks=dict(data.chunk_sources().kept), rounds=rounds)


def save(data: WorkspaceData, bench: Workbench, settings: ReviewSettings) -> Manifest:
    """Write the pairs and the manifest, its ``review`` section recomputed from the pairs."""
    from goldset.review.estimate import review_stats

    manifest = data.write(bench.pairs, bench.chunks.values())
    manifest.review = review_stats(bench.pairs, settings, rounds=bench.rounds)
    data.write_manifest(manifest)
    return manifest

"""Check 4: near-duplicate questions across the whole set and against a previous release (``--against``).

One fact asked five times is counted five times. This is a *set* check: it looks at all pairs at once (through
the sub-quadratic index in :mod:`goldset.filters.neardup`), keeps the best pair of each duplicate group and fails
the others with ``duplicate_of`` naming the pair kept. A pair that near-duplicates a pair of the ``--against``
set (the previous release) fails in favour of that one: released pairs are already counted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pydantic import Field, model_validator

from goldset.filters.base import CheckSettings, CheckSpec, result
from goldset.filters.neardup import LSHParams, duplicate_groups
from goldset.filters.textsim import edit_similarity
from goldset.schema import CheckResult, QAPair

NAME = "duplicate"


class Settings(CheckSettings):
    threshold: float = Field(
        0.85, gt=0, le=1, description="Question similarity (normalised Indel) that makes a duplicate."
    )
    num_perm: int = Field(120, ge=8, le=512, description="MinHash permutations.")
    bands: int = Field(20, ge=1, description="LSH bands (num_perm must be a multiple); more bands find weaker pairs.")
    shingle: int = Field(3, ge=1, le=8, description="Character n-gram size of the shingles.")
    semantic: bool = Field(
        False, description="Also compare question embeddings (judge endpoint's embedding model, /v1/embeddings)."
    )
    semantic_threshold: float = Field(
        0.95, gt=0, le=1, description="Cosine similarity of embeddings that makes a semantic duplicate."
    )

    @model_validator(mode="after")
    def _bands_divide(self) -> Settings:
        if self.num_perm % self.bands:
            raise ValueError(f"num_perm ({self.num_perm}) must be a multiple of bands ({self.bands})")
        return self

    def lsh(self) -> LSHParams:
        return LSHParams(num_perm=self.num_perm, bands=self.bands, shingle=self.shingle)


def participants(pairs: Sequence[QAPair], against: Sequence[QAPair] = ()) -> list[QAPair]:
    """``pairs`` then the ``against`` pairs that are not the same pairs (same id): the index space of
    :func:`find`'s ``extra_edges``."""
    ids = {p.id for p in pairs}
    return [*pairs, *(a for a in against if a.id not in ids)]


def semantic_edges(vectors: Sequence[Sequence[float] | None], threshold: float) -> list[tuple[int, int, float]]:
    """(i, j, cosine) for every pair of embedding vectors with cosine ≥ ``threshold`` (None = no vector).

    Exact, blockwise: unit vectors times their transpose, 2,048 rows at a time, so memory stays bounded.
    """
    import numpy as np

    present = [i for i, v in enumerate(vectors) if v is not None and len(v)]
    if len(present) < 2:
        return []
    mat = np.asarray([vectors[i] for i in present], dtype=np.float32)
    norms = np.linalg.norm(mat, axis=1, keepdims=True)
    mat = mat / np.where(norms == 0, 1.0, norms)
    edges: list[tuple[int, int, float]] = []
    block = 2048
    for start in range(0, len(present), block):
        sims = mat[start : start + block] @ mat.T
        rows, cols = np.nonzero(sims >= threshold)
        for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
            i = start + r
            if c > i:
                edges.append((present[i], present[c], float(min(1.0, sims[r, c]))))
    return edges


def find(
    pairs: Sequence[QAPair],
    settings: Settings,
    *,
    rank: Callable[[QAPair], Any] = lambda p: p.id,
    against: Sequence[QAPair] = (),
    extra_edges: Sequence[tuple[int, int, float]] = (),
) -> dict[str, CheckResult]:
    """A verdict for every pair in ``pairs`` (keyed by id).

    ``rank``: lower is better; the best-ranked member of a group is kept. ``against``: pairs of an earlier
    release; a pair with the same id as one of them is the same pair, not a duplicate. ``extra_edges``: more
    (i, j, similarity) links over ``pairs`` + ``against`` indices, e.g. from embeddings.
    """
    from goldset.filters.neardup import SimilarPair, groups_from_pairs

    everyone = participants(pairs, against)
    n_own = len(pairs)
    _, edges = duplicate_groups([p.question for p in everyone], settings.threshold, settings.lsh())
    edges = [*edges, *(SimilarPair(i, j, s) for i, j, s in extra_edges)]
    sim = {(min(e.i, e.j), max(e.i, e.j)): e.similarity for e in edges}
    groups = groups_from_pairs(len(everyone), edges)

    def similarity(i: int, j: int) -> float:
        key = (min(i, j), max(i, j))
        return sim[key] if key in sim else edit_similarity(everyone[i].question, everyone[j].question)

    out = {p.id: result(True, 0.0, "no near-duplicate question") for p in pairs}
    for group in groups:
        own = [i for i in group if i < n_own]
        if not own:
            continue
        released = [i for i in group if i >= n_own]
        if released:
            for i in own:
                keep = max(released, key=lambda j: (similarity(i, j), -j))
                s = similarity(i, keep)
                out[everyone[i].id] = result(
                    False, s, f"near-duplicate ({s:.0%}) of released pair {everyone[keep].id}",
                    duplicate_of=everyone[keep].id,
                )  # fmt: skip
            continue
        keep = min(own, key=lambda i: (rank(everyone[i]), everyone[i].id))
        dupes = [everyone[i].id for i in own if i != keep]
        out[everyone[keep].id] = result(
            True, 0.0, f"kept as the best of {len(own)} near-duplicates ({', '.join(dupes[:5])})"
        )
        for i in own:
            if i != keep:
                s = similarity(i, keep)
                out[everyone[i].id] = result(
                    False, s, f"near-duplicate ({s:.0%}) of {everyone[keep].id}, which is kept",
                    duplicate_of=everyone[keep].id,
                )  # fmt: skip
    return out


SPEC = CheckSpec(
    name=NAME,
    settings_model=Settings,
    kind="set",
    summary="question is not a near-duplicate of another pair",
    reads=("question",),
)

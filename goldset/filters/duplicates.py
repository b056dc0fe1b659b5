"""Check 4: near-duplicate questions across the whole set and against a previous release (``--against``).

One fact asked five times is counted five times. This is a *set* check: it looks at all pairs at once (through
the sub-quadratic index in :mod:`goldset.filters.neardup`), keeps the best pairs and fails the others with
``duplicate_of`` naming a kept pair each is itself similar to (:func:`find`). A pair that near-duplicates a pair
of the ``--against`` set (the previous release) fails in favour of that one: released pairs are already counted.
Verdicts do not depend on the order of the candidates file.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pydantic import Field, model_validator

from goldset.filters.base import CheckSettings, CheckSpec, verdict
from goldset.filters.neardup import LSHParams, similar_texts
from goldset.filters.textsim import identifier_tokens
from goldset.schema import CheckResult, QAPair

NAME = "duplicate"


class Settings(CheckSettings):
    """Thresholds of the duplicate check (``filter.checks.duplicate``)."""

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
    distinct_identifiers: bool = Field(
        True,
        description="Two questions that each name an identifier or number the other does not (`limit` vs `skip`, "
        "400 vs 404) ask different things, however similar the rest.",
    )

    @model_validator(mode="after")
    def _bands_divide(self) -> Settings:
        if self.num_perm % self.bands:
            raise ValueError(f"num_perm ({self.num_perm}) must be a multiple of bands ({self.bands})")
        return self

    def lsh(self) -> LSHParams:
        """The index's MinHash/LSH parameters."""
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

    ``rank``: lower is better. ``against``: pairs of an earlier release; a pair with the same id as one of them
    is the same pair, not a duplicate. ``extra_edges``: more (i, j, similarity) links over ``pairs`` + ``against``
    indices (:func:`participants`), e.g. from embeddings.

    Pairs are settled best first (by ``rank``, then id): a pair similar to a released pair duplicates the most
    similar one; else a pair similar to a pair already kept duplicates the most similar kept one; else it is
    kept. So a pair is only ever called a duplicate of a pair it is itself similar to (no chain through a
    third), and neither the verdicts nor their wording depend on the order of ``pairs``. With
    ``distinct_identifiers``, two questions naming different identifiers or numbers are never similar.
    """
    everyone = participants(pairs, against)
    n_own = len(pairs)
    forms, text_edges = similar_texts([p.question for p in everyone], settings.threshold, settings.lsh())
    text_of = forms.form_of()
    linked: dict[int, dict[int, float]] = {}  # distinct text -> similar distinct texts
    for ti, tj, sim in text_edges:
        linked.setdefault(ti, {})[tj] = sim
        linked.setdefault(tj, {})[ti] = sim
    semantic: dict[int, dict[int, float]] = {}
    for i, j, sim in extra_edges:
        if i != j:
            semantic.setdefault(i, {})[j] = max(sim, semantic.get(i, {}).get(j, 0.0))
            semantic.setdefault(j, {})[i] = max(sim, semantic.get(j, {}).get(i, 0.0))

    def neighbours(i: int) -> dict[int, float]:
        """Every participant similar to ``i`` at or above the threshold, with the similarity."""
        out: dict[int, float] = {j: 1.0 for j in forms.repeats.get(text_of[i], ()) if j != i}
        for t, sim in linked.get(text_of[i], {}).items():
            for j in forms.texts(t):
                out[j] = max(sim, out.get(j, 0.0))
        for j, sim in semantic.get(i, {}).items():
            out[j] = max(sim, out.get(j, 0.0))
        if settings.distinct_identifiers and out:
            mine = identifier_tokens(everyone[i].question)
            out = {j: s for j, s in out.items() if not _name_different_things(mine, everyone[j].question)}
        return out

    # Only pairs with a neighbour can be duplicates or have one: rank just those (the rest are kept alone).
    near_of = {i: near for i in range(n_own) if (near := neighbours(i))}
    order = sorted(near_of, key=lambda i: (rank(everyone[i]), everyone[i].id))
    position = {i: k for k, i in enumerate(order)}
    kept: set[int] = set()
    duplicate_of: dict[int, tuple[int, float]] = {}
    for i in order:
        near = near_of[i]
        released = [(j, s) for j, s in near.items() if j >= n_own]
        if released:  # released pairs are counted already: the most similar one wins, ties by id
            duplicate_of[i] = min(released, key=lambda js: (-js[1], everyone[js[0]].id))
            continue
        own = [(j, s) for j, s in near.items() if j in kept]
        if own:  # the most similar kept pair, ties by rank order
            duplicate_of[i] = min(own, key=lambda js: (-js[1], position[js[0]]))
        else:
            kept.add(i)

    out = {p.id: verdict(settings, True, 0.0, "no near-duplicate question") for p in pairs}
    members: dict[int, list[str]] = {}
    for i, (j, sim) in duplicate_of.items():
        keep_id = everyone[j].id
        if j >= n_own:
            why = f"near-duplicate ({sim:.0%}) of released pair {keep_id}"
        else:
            why = f"near-duplicate ({sim:.0%}) of {keep_id}, which is kept"
            members.setdefault(j, []).append(everyone[i].id)
        out[everyone[i].id] = verdict(settings, False, sim, why, duplicate_of=keep_id)
    for j, dupes in members.items():
        dupes.sort()
        shown = ", ".join(dupes[:5]) + (", …" if len(dupes) > 5 else "")
        out[everyone[j].id] = verdict(
            settings, True, 0.0, f"kept as the best of {len(dupes) + 1} near-duplicates ({shown})"
        )
    return out


def _name_different_things(mine: frozenset[str], other_question: str) -> bool:
    """Each question names an identifier or number the other does not: one was substituted for the other."""
    theirs = identifier_tokens(other_question)
    return bool(mine - theirs) and bool(theirs - mine)


SPEC = CheckSpec(
    name=NAME,
    settings_model=Settings,
    kind="set",
    version=2,
    summary="question is not a near-duplicate of another pair",
    reads=("question",),
)

"""Check 4: near-duplicate questions across the whole set and against a previous release (``--against``).

One fact asked five times is counted five times. This is a *set* check: it looks at all pairs at once (through
the sub-quadratic index in :mod:`goldset.filters.neardup`), keeps the best pairs and fails the others with
``duplicate_of`` naming a kept pair each is itself similar to (:func:`find`). A pair that near-duplicates a pair
of the ``--against`` set (the previous release) fails in favour of that one: released pairs are already counted.
Verdicts do not depend on the order of the candidates file.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field, field_validator, model_validator

from goldset.filters.base import CheckSettings, CheckSpec, verdict
from goldset.filters.duplicate_judge import DuplicateJudgeSettings, Judged, unit_rows
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
        0.95,
        gt=0,
        le=1,
        description="Cosine similarity of embeddings that makes a semantic duplicate, for an embedding model "
        "semantic_thresholds does not name (a warning says so: cosines differ between models).",
    )
    semantic_thresholds: dict[str, float] = Field(
        default_factory=dict,
        description="Embedding model -> its cosine threshold of a semantic duplicate (`goldset judge "
        "duplicate-threshold LABELLED.jsonl` picks one from labelled pairs); wins over semantic_threshold.",
    )
    distinct_identifiers: bool = Field(
        True,
        description="Two questions that each name an identifier or number the other does not (`limit` vs `skip`, "
        "400 vs 404) ask different things, however similar the rest.",
    )
    judge: DuplicateJudgeSettings = Field(
        default_factory=DuplicateJudgeSettings,
        description="The LLM duplicate judge over candidate pairs (goldset.filters.duplicate_judge); false: off.",
    )

    @field_validator("judge", mode="before")
    @classmethod
    def _judge_shorthand(cls, value: Any) -> Any:
        """``judge: false`` / ``judge: true`` (or the same text from an environment variable) set ``enabled``."""
        if isinstance(value, str) and value.lower() in ("true", "false"):
            value = value.lower() == "true"
        return {"enabled": value} if isinstance(value, bool) else value

    @model_validator(mode="after")
    def _bands_divide(self) -> Settings:
        if self.num_perm % self.bands:
            raise ValueError(f"num_perm ({self.num_perm}) must be a multiple of bands ({self.bands})")
        return self

    @field_validator("semantic_thresholds")
    @classmethod
    def _cosines(cls, v: dict[str, float]) -> dict[str, float]:
        bad = {m: t for m, t in v.items() if not 0 < t <= 1}
        if bad:
            raise ValueError(f"a cosine threshold is in (0, 1]; got {bad}")
        return dict(sorted(v.items()))

    def lsh(self) -> LSHParams:
        """The index's MinHash/LSH parameters."""
        return LSHParams(num_perm=self.num_perm, bands=self.bands, shingle=self.shingle)

    def threshold_for(self, model: str | None) -> float:
        """The semantic threshold of embedding ``model``: its own (``semantic_thresholds``), else the default."""
        return self.semantic_thresholds.get(model or "", self.semantic_threshold)

    def threshold_warning(self, model: str | None) -> str | None:
        """A warning when semantic duplicates use ``model`` with a threshold that was not set for it."""
        if model is None or model in self.semantic_thresholds:
            return None
        return (
            f"warning: semantic duplicates use embedding model {model} with semantic_threshold "
            f"{self.semantic_threshold}, which was not set for it (cosines differ between models: with one, different "
            "questions sit at 0.81-0.95); pick one from labelled pairs with `goldset judge duplicate-threshold` and "
            f"set filter.checks.duplicate.semantic_thresholds.{model}"
        )


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

    present, mat = unit_rows(vectors)
    if mat is None:
        return []
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


@dataclass
class Links:
    """The strict measures' links between participants (:func:`participants` indices): ``near[i]`` = every
    participant similar to ``i`` at or above a threshold (lexical, or semantic from ``extra_edges``), with the
    similarity, the identifier guard applied; ``identical``: pairs (i < j) with the same canonical question."""

    near: dict[int, dict[int, float]]
    identical: set[tuple[int, int]]
    semantic_only: set[tuple[int, int]] = field(default_factory=set)  # (i < j) linked by embeddings alone

    def strict_pairs(self) -> dict[tuple[int, int], float]:
        """Each link once, as (i < j) -> similarity, identical questions left out."""
        return {
            (i, j): s
            for i, near in self.near.items()
            for j, s in near.items()
            if i < j and (i, j) not in self.identical
        }


def links(
    everyone: Sequence[QAPair], settings: Settings, extra_edges: Sequence[tuple[int, int, float]] = ()
) -> Links:
    """The strict links among ``everyone`` (see :class:`Links`)."""
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
    identical: set[tuple[int, int]] = set()
    for same in forms.repeats.values():
        identical.update((a, b) for a in same for b in same if a < b)

    def neighbours(i: int) -> dict[int, float]:
        out: dict[int, float] = {j: 1.0 for j in forms.repeats.get(text_of[i], ()) if j != i}
        for t, sim in linked.get(text_of[i], {}).items():
            for j in forms.texts(t):
                out[j] = max(sim, out.get(j, 0.0))
        for j, sim in semantic.get(i, {}).items():
            out[j] = max(sim, out.get(j, 0.0))
        if settings.distinct_identifiers and out:
            mine = identifier_tokens(everyone[i].question)
            out = {
                j: s for j, s in out.items()
                if (min(i, j), max(i, j)) in identical or not _name_different_things(mine, everyone[j].question)
            }  # fmt: skip
        return out

    near = {i: got for i in range(len(everyone)) if (got := neighbours(i))}
    semantic_only = {
        (i, j) for i, js in semantic.items() for j in js
        if i < j and (i, j) not in identical and text_of[j] not in linked.get(text_of[i], {})
    }  # fmt: skip
    return Links(near=near, identical=identical, semantic_only=semantic_only)


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def find(
    pairs: Sequence[QAPair],
    settings: Settings,
    *,
    rank: Callable[[QAPair], Any] = lambda p: p.id,
    against: Sequence[QAPair] = (),
    extra_edges: Sequence[tuple[int, int, float]] = (),
    strict: Links | None = None,
    judged: Judged | None = None,
) -> dict[str, CheckResult]:
    """A verdict for every pair in ``pairs`` (keyed by id).

    ``rank``: lower is better. ``against``: pairs of an earlier release; a pair with the same id as one of them
    is the same pair, not a duplicate. ``extra_edges``: more (i, j, similarity) links over ``pairs`` + ``against``
    indices (:func:`participants`), e.g. from embeddings; ``strict``: the :func:`links` already computed from them.
    ``judged``: the duplicate judge's verdicts (:mod:`goldset.filters.duplicate_judge`) on candidate pairs of the
    same indices: a pair it calls the same is linked, a strict link it calls different is dropped (identical
    questions stay linked), a pair whose call failed keeps what the thresholds said; each verdict's reason names
    the judge's.

    Pairs are settled best first (by ``rank``, then id): a pair linked to a released pair duplicates the most
    similar one; else a pair linked to a pair already kept duplicates the most similar kept one; else it is
    kept. So a pair is only ever called a duplicate of a pair it is itself linked to (no chain through a
    third), and neither the verdicts nor their wording depend on the order of ``pairs``. With
    ``distinct_identifiers``, two questions naming different identifiers or numbers are never linked by the
    thresholds (the judge reads them itself).
    """
    everyone = participants(pairs, against)
    n_own = len(pairs)
    got = strict if strict is not None else links(everyone, settings, extra_edges)
    # The judge's verdicts edit the links: on a copy (without a judge, the links are only read).
    near_all = {i: dict(near) for i, near in got.near.items()} if judged is not None else got.near
    if judged is not None:
        for (i, j) in judged.different:
            if (i, j) not in got.identical:
                near_all.get(i, {}).pop(j, None)
                near_all.get(j, {}).pop(i, None)
        for (i, j) in judged.same:  # a threshold link keeps its similarity; a judge-only link the pre-filter's
            sim = judged.scores.get((i, j), 0.0)
            near_all.setdefault(i, {}).setdefault(j, sim)
            near_all.setdefault(j, {}).setdefault(i, sim)

    # Only pairs with a neighbour can be duplicates or have one: rank just those (the rest are kept alone).
    near_of = {i: near for i in range(n_own) if (near := near_all.get(i))}
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

    def key(i: int, j: int) -> tuple[int, int]:
        return (min(i, j), max(i, j))

    def link_words(i: int, j: int, sim: float) -> tuple[str, str]:
        """How the link from ``i`` to ``j`` is named (judged, semantic or lexical), and the judge's reason for it
        (empty if none)."""
        reason = judged.same.get(key(i, j), "") if judged is not None else ""
        if reason and j not in got.near.get(i, {}):
            return "judged duplicate: asks for the same information as", reason
        if key(i, j) in got.semantic_only:
            return f"semantic near-duplicate (cosine {sim:.2f}) of", reason
        return f"lexical near-duplicate ({sim:.0%}) of", reason

    out = {p.id: verdict(settings, True, 0.0, "no near-duplicate question") for p in pairs}
    members: dict[int, list[str]] = {}
    for i, (j, sim) in duplicate_of.items():
        keep_id = everyone[j].id
        words, judge_reason = link_words(i, j, sim)
        if j >= n_own:
            why = f"{words} released pair {keep_id}"
        else:
            why = f"{words} {keep_id}, which is kept"
            members.setdefault(j, []).append(everyone[i].id)
        if judge_reason:
            why += f" (duplicate judge: {_short(judge_reason)})"
        elif judged is not None and key(i, j) in judged.failed:
            why += f" (no duplicate judge verdict: {_short(judged.failed[key(i, j)])}; the threshold's verdict stands)"
        out[everyone[i].id] = verdict(settings, False, sim, why, duplicate_of=keep_id)
    for j, dupes in members.items():
        dupes.sort()
        shown = ", ".join(dupes[:5]) + (", …" if len(dupes) > 5 else "")
        out[everyone[j].id] = verdict(
            settings, True, 0.0, f"kept as the best of {len(dupes) + 1} near-duplicates ({shown})"
        )
    if judged is not None:
        _explain_kept(out, everyone, n_own, settings, judged, duplicate_of)
    return out


def _explain_kept(
    out: dict[str, CheckResult],
    everyone: Sequence[QAPair],
    n_own: int,
    settings: Settings,
    judged: Judged,
    duplicate_of: dict[int, tuple[int, float]],
) -> None:
    """Add the judge's word to the reasons of pairs that are not duplicates: the candidates it found different,
    a candidate it found the same that is itself a duplicate of a third pair (kept apart: groups do not chain),
    and the candidates it gave no verdict on."""
    notes: dict[int, dict[str, list[str]]] = {}

    def note(i: int, kind: str, text: str) -> None:
        if i < n_own and i not in duplicate_of:
            notes.setdefault(i, {}).setdefault(kind, []).append(text)

    def by_ids(items: dict[tuple[int, int], str]) -> list[tuple[int, int, str]]:
        """Both directions of each pair, ordered by the ids (not the positions): the wording is order-free."""
        both = [(a, b, v) for (i, j), v in items.items() for a, b in ((i, j), (j, i))]
        return sorted(both, key=lambda t: (everyone[t[0]].id, everyone[t[1]].id))

    for a, b, why in by_ids(judged.different):
        note(a, "different", f"{everyone[b].id}: {_short(why)}")
    for a, b, _ in by_ids(judged.same):
        if b in duplicate_of and duplicate_of[b][0] != a:
            note(a, "chain", f"{everyone[b].id} (itself a duplicate of {everyone[duplicate_of[b][0]].id})")
    for a, _, err in by_ids(judged.failed):
        note(a, "failed", _short(err))
    for i, kinds in notes.items():
        parts = []
        if "chain" in kinds:
            parts.append(f"the duplicate judge found it the same as {', '.join(kinds['chain'][:3])}; not merged "
                         "through a third pair")  # fmt: skip
        if "different" in kinds:
            diff = kinds["different"]
            parts.append(f"the duplicate judge found {len(diff)} candidate(s) asking something else ({diff[0]}"
                         f"{'; …' if len(diff) > 1 else ''})")  # fmt: skip
        if "failed" in kinds:
            parts.append(f"no duplicate judge verdict on {len(kinds['failed'])} candidate(s) ({kinds['failed'][0]}); "
                         "the threshold's verdict stands")  # fmt: skip
        base = out[everyone[i].id].reason
        out[everyone[i].id] = verdict(settings, True, 0.0, f"{base}; {'; '.join(parts)}")


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

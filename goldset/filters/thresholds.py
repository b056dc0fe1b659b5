"""The semantic-duplicate threshold of an embedding model, picked from labelled pairs of questions.

Cosines are not comparable between embedding models: with multilingual-e5-small, different questions sit at
0.81-0.95 (median 0.86), so the default 0.95 makes two different questions duplicates; with another model the
same threshold finds nothing. The threshold therefore belongs to the model (``filter.checks.duplicate.
semantic_thresholds``), and :func:`calibrate_semantic_threshold` picks it: the questions of the labelled pairs
(:class:`goldset.schema.DuplicateLabel`, one JSON object a line) are embedded with the judge endpoint's embedding
model (through the call journal: a rerun sends nothing), and :func:`pick_threshold` takes the cut with the best
F1 of "cosine >= threshold means duplicate" against the labels (ties: the higher threshold, fewer false merges).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from goldset.context import Context


@dataclass(frozen=True)
class Cut:
    """One threshold and how it does on the labelled pairs."""

    threshold: float
    precision: float
    recall: float
    f1: float


@dataclass
class ThresholdCalibration:
    """What :func:`calibrate_semantic_threshold` found: the embedding model, the labelled pairs, the threshold it
    picks, and how the threshold now in the settings does on the same pairs."""

    model: str
    n_same: int
    n_different: int
    pick: Cut
    current: Cut
    cosines: list[tuple[float, bool]] = field(default_factory=list)

    def yaml(self) -> str:
        """The goldset.yaml lines that set the picked threshold for the model."""
        return (
            "filter:\n  checks:\n    duplicate:\n      semantic_thresholds:\n"
            f'        "{self.model}": {self.pick.threshold:.4f}\n'
        )


def score(cosines: Sequence[float], same: Sequence[bool], threshold: float) -> Cut:
    """Precision, recall and F1 of "cosine >= threshold is a duplicate" against the labels."""
    tp = sum(1 for c, s in zip(cosines, same, strict=True) if s and c >= threshold)
    fp = sum(1 for c, s in zip(cosines, same, strict=True) if not s and c >= threshold)
    fn = sum(1 for c, s in zip(cosines, same, strict=True) if s and c < threshold)
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return Cut(threshold, precision, recall, f1)


def pick_threshold(cosines: Sequence[float], same: Sequence[bool]) -> Cut:
    """The threshold with the best F1 among the cosines of the pairs labelled the same (each is a cut that keeps
    that pair a duplicate); ties go to the higher threshold. At least one pair of each label is needed."""
    candidates = sorted({round(c, 6) for c, s in zip(cosines, same, strict=True) if s}, reverse=True)
    if not candidates or all(same):
        raise ValueError("need pairs labelled the same and pairs labelled different")
    cuts = []
    for t in candidates:  # highest first: a later cut replaces the best only with a better F1
        got = score(cosines, same, t - 1e-9)
        cuts.append(Cut(t, got.precision, got.recall, got.f1))
    return max(cuts, key=lambda c: (round(c.f1, 9), c.threshold))


def calibrate_semantic_threshold(ctx: Context, labelled: Path) -> ThresholdCalibration:
    """Embed the questions of ``labelled`` (:class:`goldset.schema.DuplicateLabel` lines) with the judge
    endpoint's embedding model and pick its semantic-duplicate threshold (:func:`pick_threshold`).

    Raises :class:`goldset.errors.InputError` for a file without both labels, :class:`goldset.errors.ConfigError`
    when the judge endpoint has no embedding model, :class:`goldset.errors.RunFailed` when questions got no vector.
    """
    import asyncio

    from goldset.errors import ConfigError, InputError, RunFailed
    from goldset.filters import duplicates
    from goldset.filters.duplicate_judge import unit_rows
    from goldset.filters.settings import FilterSettings
    from goldset.io import read_jsonl
    from goldset.llm import resolve_endpoint, session
    from goldset.schema import DuplicateLabel

    rows = read_jsonl(labelled, DuplicateLabel)
    n_same = sum(1 for r in rows if r.same)
    if not n_same or n_same == len(rows):
        raise InputError(
            f"{labelled}: {n_same} pair(s) labelled same and {len(rows) - n_same} different; a threshold needs both"
        )
    endpoint = resolve_endpoint(ctx, "judge")
    model = endpoint.embedding_model
    if not model:
        raise ConfigError(
            f"the judge endpoint ({endpoint.name}) has no embedding model: set llm.endpoints.{endpoint.name}."
            "embedding_model or GOLDSET_EMBEDDING_MODEL"
        )
    texts = sorted({q for r in rows for q in (r.question_a, r.question_b)})

    errors: list[str] = []

    async def embed() -> list[list[float] | None]:
        async with session(ctx, endpoint) as client:
            got = await client.embed(texts)
            errors.extend(client.embedding_errors)
            return got

    vectors = dict(zip(texts, asyncio.run(embed()), strict=True))
    missing = [t for t, v in vectors.items() if v is None]
    if missing:
        why = f": {errors[0]}" if errors else ""
        raise RunFailed(f"{len(missing)} question(s) got no vector from {model} (e.g. {missing[0][:60]!r}){why}")
    cosines = []
    for r in rows:
        _, mat = unit_rows([vectors[r.question_a], vectors[r.question_b]])
        cos = float(mat[0] @ mat[1]) if mat is not None else 0.0
        cosines.append(min(1.0, cos) if math.isfinite(cos) else 0.0)
    labels = [r.same for r in rows]
    settings = ctx.section(FilterSettings).for_check(duplicates.SPEC)
    return ThresholdCalibration(
        model=model,
        n_same=n_same,
        n_different=len(rows) - n_same,
        pick=pick_threshold(cosines, labels),
        current=score(cosines, labels, settings.threshold_for(model)),
        cosines=list(zip(cosines, labels, strict=True)),
    )

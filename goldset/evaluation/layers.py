"""The three layers a RAG evaluation reads in (retrieval, generation, system), their headline metrics, the
weights that make the overall score, and bootstrap intervals of the headline means.

A metric belongs to a layer by its registry family (``retrieval`` → retrieval; ``lexical``, ``refusal``,
``conciseness`` and the judge's answer metrics → generation; system figures → system); the judge's
``context_relevance`` judges the retrieved contexts, so it is a retrieval metric. A layer's headline metrics are
its weighted ones (``eval.weights``) first, then :data:`HEADLINES` in order, at most :data:`MAX_HEADLINES`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from goldset.evaluation.metrics.registry import get_metric, metric_order
from goldset.schema import SampleScores

LAYERS = ("retrieval", "generation", "system")
#: What each layer answers, as the report's section heading says it.
QUESTIONS = {
    "retrieval": "Did the system find the passages that hold the answer?",
    "generation": "Is the answer grounded in those passages, complete and to the point?",
    "system": "How fast, how costly and how reliable was it?",
}
#: Candidate headline metrics per layer, in order of preference (those the run has are shown).
HEADLINES = {
    "retrieval": ("recall@5", "mrr", "ndcg@5", "context_precision", "context_relevance"),
    "generation": ("faithfulness", "completeness", "hallucination", "answer_relevancy", "token_f1", "correct_refusal"),
    "system": ("latency_p50_ms", "latency_p95_ms", "error_rate", "cost_usd_total"),
}
MAX_HEADLINES = 4
_RETRIEVAL_JUDGE = {"context_relevance"}


def layer_of(metric: str) -> str:
    """The layer of a metric by (output) name; unknown names count as generation (an answer metric)."""
    try:
        family = get_metric(metric).family
    except KeyError:
        return "system" if metric.endswith("_ms") or metric.startswith(("n_", "tokens_", "cost_")) else "generation"
    if family == "retrieval" or metric in _RETRIEVAL_JUDGE:
        return "retrieval"
    return "system" if family == "system" else "generation"


def split_layers(metrics: Iterable[str]) -> dict[str, list[str]]:
    """Quality metric names (``RunSummary.overall``) by layer, each in the registry's order."""
    out: dict[str, list[str]] = {layer: [] for layer in LAYERS}
    for m in sorted(metrics, key=metric_order):
        out[layer_of(m)].append(m)
    return out


def headlines(layer: str, present: Iterable[str], weights: Mapping[str, float]) -> list[str]:
    """The layer's headline metrics among ``present``: its weighted ones, then :data:`HEADLINES`, at most
    :data:`MAX_HEADLINES` (the weighted ones all, even beyond it: the overall score must be explained)."""
    have = list(present)
    weighted = [m for m in sorted(have, key=metric_order) if weights.get(m, 0) > 0 and layer_of(m) == layer]
    out = list(weighted)
    for m in HEADLINES[layer]:
        if len(out) >= MAX_HEADLINES:
            break
        if m in have and m not in out:
            out.append(m)
    return out


@dataclass(frozen=True)
class Interval:
    """A mean (or percentile) and its percentile-bootstrap interval over the questions."""

    value: float
    low: float
    high: float
    n: int


def _resample_counts(n: int, n_resamples: int, seed: int) -> Iterable[object]:
    """Blocks of resample count matrices (rows × n): how often each question was drawn, memory bounded."""
    import numpy as np

    rng = np.random.default_rng(seed)
    block = max(1, min(n_resamples, 2_000_000 // max(n, 1)))
    for start in range(0, n_resamples, block):
        rows = min(block, n_resamples - start)
        idx = rng.integers(0, n, size=(rows, n)) + (np.arange(rows) * n)[:, None]
        yield np.bincount(idx.ravel(), minlength=rows * n).reshape(rows, n).astype(float)


def mean_intervals(
    scores: Sequence[SampleScores],
    metrics: Sequence[str],
    *,
    weights: Mapping[str, float] | None = None,
    penalties: Iterable[str] = (),
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, Interval]:
    """Per metric, its mean over the questions that have a value and the percentile bootstrap interval (questions
    resampled, the same draws for every metric); with ``weights``, also ``"overall score"``: the weighted score of
    each resample's means (penalties as 1 - mean), so its interval carries the metrics' covariance."""
    import numpy as np

    names = [m for m in metrics if any(s.metrics.get(m) is not None for s in scores)]
    if not scores or not names:
        return {}
    vals = np.array(
        [[(v if (v := s.metrics.get(m)) is not None and not math.isnan(v) else np.nan) for s in scores] for m in names]
    )
    have = ~np.isnan(vals)
    filled = np.where(have, vals, 0.0)
    mask = have.astype(float)
    chunks = []
    for counts in _resample_counts(len(scores), n_resamples, seed):
        c = counts  # rows × n
        with np.errstate(invalid="ignore", divide="ignore"):
            chunks.append((c @ filled.T) / (c @ mask.T))  # rows × m
    means = np.vstack(chunks)
    alpha = (1 - confidence) / 2
    out: dict[str, Interval] = {}
    for j, m in enumerate(names):
        col = means[:, j][~np.isnan(means[:, j])]
        n = int(have[j].sum())
        mean = float(filled[j].sum() / n)
        low, high = np.quantile(col, [alpha, 1 - alpha]) if col.size else (mean, mean)
        out[m] = Interval(mean, float(low), float(high), n)
    used = {m: w for m, w in (weights or {}).items() if w > 0 and m in names}
    if used:
        total = sum(used.values())
        pen = set(penalties)
        score = np.zeros(means.shape[0])
        point = 0.0
        for m, w in used.items():
            j = names.index(m)
            col = np.nan_to_num(means[:, j], nan=out[m].value)
            score += w / total * ((1 - col) if m in pen else col)
            point += w / total * ((1 - out[m].value) if m in pen else out[m].value)
        low, high = np.quantile(score, [alpha, 1 - alpha])
        out["overall score"] = Interval(point, float(low), float(high), len(scores))
    return out


def percentile_interval(
    values: Sequence[float], q: float, *, n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0
) -> Interval | None:
    """A percentile of ``values`` (latencies) and its percentile-bootstrap interval; None without values."""
    import numpy as np

    if not values:
        return None
    xs = np.asarray(values, dtype=float)
    rng = np.random.default_rng(seed)
    draws = np.quantile(rng.choice(xs, size=(n_resamples, xs.size), replace=True), q, axis=1)
    alpha = (1 - confidence) / 2
    low, high = np.quantile(draws, [alpha, 1 - alpha])
    return Interval(float(np.quantile(xs, q)), float(low), float(high), int(xs.size))

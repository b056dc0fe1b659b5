"""Comparing two runs of the same dataset version: per-metric differences with paired-bootstrap intervals.

Two systems answer the same questions, so the per-question differences are paired: resampling the *questions*
(with replacement) and averaging ``B - A`` each time gives an interval that accounts for how much each question
moves, which is far tighter and more honest than comparing two independent means. A difference whose 95% interval
excludes zero is reported as significant.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from goldset.errors import InputError
from goldset.evaluation.metrics.registry import higher_is_better, is_quality_metric, metric_order
from goldset.evaluation.runs import StoredRun
from goldset.schema import SampleScores


@dataclass(frozen=True)
class MetricDiff:
    metric: str
    n: int  # questions where both runs have a value
    mean_a: float
    mean_b: float
    diff: float  # mean of (b - a)
    ci_low: float
    ci_high: float
    higher_is_better: bool | None = True  # None: the metric has no direction (its change is not better or worse)

    @property
    def significant(self) -> bool:
        return self.n > 1 and (self.ci_low > 0 or self.ci_high < 0)

    @property
    def verdict(self) -> str:
        """'better', 'worse' or 'no clear change', from B's point of view ('higher' / 'lower' for a metric
        without a direction)."""
        if not self.significant:
            return "no clear change"
        up = self.diff > 0
        if self.higher_is_better is None:
            return "higher" if up else "lower"
        return "better" if up == self.higher_is_better else "worse"


@dataclass(frozen=True)
class Regression:
    """A question B answers worse than A on ``metric`` (the quality metric with its largest drop)."""

    pair_id: str
    question_type: str
    metric: str
    value_a: float
    value_b: float
    question: str | None = None


@dataclass
class Comparison:
    run_a: str
    run_b: str
    metrics: list[MetricDiff] = field(default_factory=list)
    regressions: list[Regression] = field(default_factory=list)
    only_a: list[str] = field(default_factory=list)
    only_b: list[str] = field(default_factory=list)
    n_resamples: int = 0
    confidence: float = 0.95
    seed: int = 0
    n_worse: int = 0  # questions worse on at least one quality metric (regressions holds the worst of them)


def paired_bootstrap(
    a: list[float], b: list[float], *, n_resamples: int = 2000, confidence: float = 0.95, seed: int = 0
) -> tuple[float, float, float]:
    """Mean of ``b - a`` and its percentile bootstrap interval. Deterministic for a given seed."""
    import numpy as np

    if len(a) != len(b):
        raise ValueError("paired_bootstrap needs two lists of the same length")
    n = len(a)
    if n == 0:
        return math.nan, math.nan, math.nan
    d = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    mean = float(d.mean())
    if n == 1:
        return mean, mean, mean
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples)
    # Resample in blocks so a 10,000-question set does not allocate n_resamples × n integers at once.
    block = max(1, min(n_resamples, 2_000_000 // n))
    for start in range(0, n_resamples, block):
        stop = min(start + block, n_resamples)
        idx = rng.integers(0, n, size=(stop - start, n))
        means[start:stop] = d[idx].mean(axis=1)
    alpha = (1 - confidence) / 2
    low, high = np.quantile(means, [alpha, 1 - alpha])
    return mean, float(low), float(high)


def _paired_values(
    a: dict[str, SampleScores], b: dict[str, SampleScores], metric: str
) -> tuple[list[str], list[float], list[float]]:
    ids, va, vb = [], [], []
    for pid in sorted(set(a) & set(b)):
        x = a[pid].metrics.get(metric)
        y = b[pid].metrics.get(metric)
        if x is None or y is None or math.isnan(x) or math.isnan(y):
            continue
        ids.append(pid)
        va.append(float(x))
        vb.append(float(y))
    return ids, va, vb


def check_same_dataset(a: StoredRun, b: StoredRun) -> None:
    """Refuse to compare runs scored against different dataset contents: their differences would mean nothing."""
    ma, mb = a.meta, b.meta
    if ma.manifest_hash and mb.manifest_hash and ma.manifest_hash != mb.manifest_hash:
        raise InputError(
            f"{a.folder} and {b.folder} were scored against different datasets "
            f"({ma.dataset_version or ma.dataset} hash {ma.manifest_hash} vs {mb.dataset_version or mb.dataset} "
            f"hash {mb.manifest_hash}); re-run both against the same version"
        )
    if ma.dataset_version and mb.dataset_version and ma.dataset_version != mb.dataset_version:
        raise InputError(
            f"{a.folder} and {b.folder} were scored against different dataset versions "
            f"({ma.dataset_version} vs {mb.dataset_version}); re-run both against the same version"
        )


def compare_runs(
    a: StoredRun,
    b: StoredRun,
    *,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
    max_regressions: int = 20,
    min_drop: float = 1e-9,
) -> Comparison:
    """Per-metric ``B − A`` with paired-bootstrap intervals over the questions both runs scored."""
    check_same_dataset(a, b)
    sa, sb = a.scores_by_id(), b.scores_by_id()
    metrics = sorted({m for s in (*a.scores, *b.scores) for m in s.metrics}, key=metric_order)
    out = Comparison(
        run_a=a.run_id,
        run_b=b.run_id,
        only_a=sorted(set(sa) - set(sb)),
        only_b=sorted(set(sb) - set(sa)),
        n_resamples=n_resamples,
        confidence=confidence,
        seed=seed,
    )
    if not set(sa) & set(sb):
        raise InputError(f"{a.folder} and {b.folder} have no question in common; nothing to compare")
    worst: dict[str, Regression] = {}
    for metric in metrics:
        ids, va, vb = _paired_values(sa, sb, metric)
        if not ids:
            continue
        diff, low, high = paired_bootstrap(va, vb, n_resamples=n_resamples, confidence=confidence, seed=seed)
        direction = higher_is_better(metric)
        out.metrics.append(
            MetricDiff(metric, len(ids), sum(va) / len(va), sum(vb) / len(vb), diff, low, high, direction)
        )
        if direction is not True or not is_quality_metric(metric):
            # A question "got worse" on quality metrics where more is better (latency and cost are in other units).
            continue
        for pid, x, y in zip(ids, va, vb, strict=True):
            drop = x - y
            if drop <= min_drop:
                continue
            prev = worst.get(pid)
            prev_drop = None if prev is None else abs(prev.value_a - prev.value_b)
            if prev_drop is None or drop > prev_drop:
                question = b.samples.get(pid) or a.samples.get(pid)
                worst[pid] = Regression(
                    pid, sb[pid].question_type, metric, x, y, question.question if question else None
                )
    out.n_worse = len(worst)
    out.regressions = sorted(worst.values(), key=lambda r: (-abs(r.value_a - r.value_b), r.pair_id))[:max_regressions]
    return out

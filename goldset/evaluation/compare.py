"""Comparing two runs of the same dataset, scored the same way: per-metric differences, intervals and verdicts.

Only comparable numbers are compared. Two runs must have been scored against the same dataset content (the hash
of its files) and with the same scoring settings (``RunMeta.metric_config``: matcher, cut-offs, refusal patterns,
weights...): a difference between runs scored differently measures the settings, not the systems. Different
settings are refused unless the caller says ``allow_different_settings``; the differing settings are then listed
beside the numbers.

Two systems answer the same questions, so the per-question differences are paired:

- the **interval** of each metric's mean difference is a paired bootstrap (resampling the *questions* with
  replacement): far tighter and more honest than comparing two independent means. It is a per-metric 95% interval,
  not adjusted for the number of metrics;
- the **verdict** ("better" / "worse") comes from a two-sided paired permutation test (random sign flips of the
  per-question differences; all of them when there are few questions), with the p-values of all metrics compared
  corrected by Holm–Bonferroni. Comparing 26 metrics at 5% each flags about one of them by chance alone in a
  comparison of two identical systems; Holm keeps the chance of *any* false verdict at most 5%, whatever the
  dependence between the metrics (they are strongly correlated: hit@5, recall@5, ndcg@5...).

The random draws are shared by the metrics measured on the same questions (one matrix product per block of
resamples serves them all), so a comparison of 10,000 questions × 26 metrics takes about a second.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from goldset.errors import InputError, UsageError
from goldset.evaluation.metrics.registry import higher_is_better, is_quality_metric, metric_order
from goldset.evaluation.runs import StoredRun
from goldset.schema import RunMeta, SampleScores

if TYPE_CHECKING:
    import numpy as np

#: How the verdicts are corrected for testing many metrics at once (shown with every comparison).
CORRECTION = "Holm–Bonferroni"


@dataclass(frozen=True)
class MetricDiff:
    """One metric of two runs over the questions both scored: means, the mean paired difference ``B − A`` with its
    bootstrap interval, and the permutation test's p-value, raw and Holm-adjusted over every metric compared."""

    metric: str
    n: int  # questions where both runs have a value
    mean_a: float
    mean_b: float
    diff: float  # mean of (b - a)
    ci_low: float
    ci_high: float
    higher_is_better: bool | None = True  # None: the metric has no direction (its change is not better or worse)
    p_value: float = 1.0
    p_adjusted: float = 1.0
    alpha: float = 0.05

    @property
    def significant(self) -> bool:
        """The difference survives the multiplicity correction (adjusted p-value below ``alpha``)."""
        return self.n > 1 and self.p_adjusted < self.alpha

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
    """Run B against run A: one :class:`MetricDiff` per metric, the questions that got worse, and how the numbers
    were obtained (:meth:`method`)."""

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
    setting_differences: list[str] = field(default_factory=list)  # compared anyway (allow_different_settings)

    def method(self) -> str:
        """One sentence saying how intervals and verdicts were computed (printed with every comparison)."""
        level = f"{self.confidence:.0%}"
        return (
            f"Verdicts: paired permutation test (sign flips) per metric, {CORRECTION} over the "
            f"{len(self.metrics)} metrics (at most {1 - self.confidence:.0%} chance of any false verdict); "
            f"intervals: paired bootstrap {level} per metric, not adjusted "
            f"({self.n_resamples} resamples, seed {self.seed})"
        )


# --------------------------------------------------------------------------------------------------- statistics


def _bootstrap_means(d: np.ndarray, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """(n_resamples × m) means of the m rows of ``d`` (m × n) over the same resampled questions.

    A resample is a vector of counts (how often each question was drawn), so one matrix product per block serves
    every metric; blocks keep memory at a few million numbers whatever the number of questions.
    """
    import numpy as np

    m, n = d.shape
    out = np.empty((n_resamples, m))
    block = max(1, min(n_resamples, 2_000_000 // n))
    for start in range(0, n_resamples, block):
        rows = min(block, n_resamples - start)
        idx = rng.integers(0, n, size=(rows, n)) + (np.arange(rows) * n)[:, None]
        counts = np.bincount(idx.ravel(), minlength=rows * n).reshape(rows, n).astype(float)
        out[start : start + rows] = counts @ d.T / n
    return out


def _sign_flip_null(d: np.ndarray, n_resamples: int, rng: np.random.Generator) -> tuple[np.ndarray, bool]:
    """The permutation null of the mean paired difference: each question's difference keeps or flips its sign
    (the two runs' values swap). Every one of the 2**n flips when that is no more than ``n_resamples`` (exact),
    else ``n_resamples`` random ones. Returns (null means, R × m; exact)."""
    import numpy as np

    m, n = d.shape
    if 2**n <= n_resamples:
        signs = ((np.arange(2**n)[:, None] >> np.arange(n)) & 1) * 2.0 - 1.0
        return signs @ d.T / n, True
    out = np.empty((n_resamples, m))
    total = d.sum(axis=1)
    block = max(1, min(n_resamples, 2_000_000 // n))
    for start in range(0, n_resamples, block):
        rows = min(block, n_resamples - start)
        # One random bit per sign, eight from each random byte: sum(sign * d) = 2 * sum(kept d) - sum(d).
        bits = np.unpackbits(np.frombuffer(rng.bytes(rows * n), dtype=np.uint8))[: rows * n]
        kept = bits.reshape(rows, n).astype(float) @ d.T
        out[start : start + rows] = (2 * kept - total) / n
    return out, False


def _p_values(observed: np.ndarray, null: np.ndarray, exact: bool) -> np.ndarray:
    """Two-sided p-values, as ``scipy.stats.permutation_test`` computes them: twice the smaller tail, the observed
    statistic counted in a random null (+1 on both sides of the fraction, so p is never 0), a relative tolerance
    so rounding does not decide ties."""
    import numpy as np

    adjustment = 0 if exact else 1
    gamma = np.abs(observed) * np.finfo(float).eps * 100
    total = null.shape[0] + adjustment
    less = ((null <= observed + gamma).sum(axis=0) + adjustment) / total
    greater = ((null >= observed - gamma).sum(axis=0) + adjustment) / total
    return np.clip(2 * np.minimum(less, greater), 0.0, 1.0)


def paired_bootstrap(
    a: list[float], b: list[float], *, n_resamples: int = 2000, confidence: float = 0.95, seed: int = 0
) -> tuple[float, float, float]:
    """Mean of ``b - a`` and its percentile bootstrap interval. Deterministic for a given seed."""
    import numpy as np

    if len(a) != len(b):
        raise ValueError("paired_bootstrap needs two lists of the same length")
    if not a:
        return math.nan, math.nan, math.nan
    d = (np.asarray(b, dtype=float) - np.asarray(a, dtype=float))[None, :]
    mean = float(d.mean())
    if d.shape[1] == 1:
        return mean, mean, mean
    means = _bootstrap_means(d, n_resamples, np.random.default_rng(seed))[:, 0]
    alpha = (1 - confidence) / 2
    low, high = np.quantile(means, [alpha, 1 - alpha])
    return mean, float(low), float(high)


def paired_permutation_test(a: list[float], b: list[float], *, n_resamples: int = 2000, seed: int = 0) -> float:
    """Two-sided p-value of "the mean of ``b - a`` is 0" by random sign flips (exact for few pairs)."""
    import numpy as np

    if len(a) != len(b):
        raise ValueError("paired_permutation_test needs two lists of the same length")
    if not a:
        return math.nan
    d = (np.asarray(b, dtype=float) - np.asarray(a, dtype=float))[None, :]
    null, exact = _sign_flip_null(d, n_resamples, np.random.default_rng(seed))
    return float(_p_values(d.mean(axis=1), null, exact)[0])


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values (step-down): the i-th smallest of m is multiplied by m - i + 1, and the
    adjusted values are made non-decreasing in that order. Reject where the adjusted p-value is below alpha."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    out = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        out[i] = running
    return out


# --------------------------------------------------------------------------------------------------- comparability


_ABSENT = object()


def _show(value: Any) -> str:
    if value is _ABSENT:
        return "not set"
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 40 else text[:39] + "…"


def setting_differences(a: Mapping[str, Any], b: Mapping[str, Any], prefix: str = "") -> list[str]:
    """Every scoring setting (dotted name) whose value differs between two ``metric_config``, with both values."""
    out: list[str] = []
    for key in sorted(set(a) | set(b)):
        va, vb = a.get(key, _ABSENT), b.get(key, _ABSENT)
        if isinstance(va, Mapping) and isinstance(vb, Mapping):
            out += setting_differences(va, vb, f"{prefix}{key}.")
        elif va != vb:
            out.append(f"{prefix}{key} ({_show(va)} vs {_show(vb)})")
    return out


def _with_defaults(config: Mapping[str, Any]) -> dict[str, Any]:
    """A run's scoring settings with today's defaults for the settings it does not record: a setting added to goldset
    since the run was made comes with the default that keeps the old behaviour, and must not make it incomparable."""
    from goldset.context import merge_layers  # the merge of the settings layers
    from goldset.evaluation.settings import EvalSettings

    return merge_layers(EvalSettings().scoring(), config)


def check_comparable(
    a: RunMeta, b: RunMeta, labels: tuple[str, str] | None = None, *, allow_different_settings: bool = False
) -> list[str]:
    """Refuse to set two runs side by side when their numbers do not measure the same thing.

    A log run (``reference_free``) and a golden-set run, different dataset content or version:
    :class:`InputError`, always (nothing makes those comparable).
    Different scoring settings (``metric_config``): :class:`UsageError` naming them, unless
    ``allow_different_settings``; then the differences are returned, for the reader to see beside the numbers.
    """
    la, lb = labels or (a.run_id, b.run_id)
    if a.reference_free != b.reference_free:
        log, golden = (la, lb) if a.reference_free else (lb, la)
        raise InputError(
            f"{log} scores a production log (reference-free) and {golden} a golden set: not the same data, their "
            "numbers are not comparable; compare log runs with log runs (goldset trend)"
        )
    if a.manifest_hash and b.manifest_hash and a.manifest_hash != b.manifest_hash:
        raise InputError(
            f"{la} and {lb} were scored against different datasets "
            f"({a.dataset_version or a.dataset} hash {a.manifest_hash} vs {b.dataset_version or b.dataset} "
            f"hash {b.manifest_hash}); re-run both against the same version"
        )
    if a.dataset_version and b.dataset_version and a.dataset_version != b.dataset_version:
        raise InputError(
            f"{la} and {lb} were scored against different dataset versions "
            f"({a.dataset_version} vs {b.dataset_version}); re-run both against the same version"
        )
    if a.metric_config == b.metric_config:
        return []
    if not a.metric_config or not b.metric_config:
        which = la if not a.metric_config else lb
        differ = [f"{which} records no scoring settings (metric_config)"]
    else:
        differ = setting_differences(_with_defaults(a.metric_config), _with_defaults(b.metric_config))
        if not differ:
            return []
    if allow_different_settings:
        return differ
    shown = "; ".join(differ[:5]) + (f" (+{len(differ) - 5} more)" if len(differ) > 5 else "")
    raise UsageError(
        f"{la} and {lb} were scored with different settings: {shown}; their numbers are not comparable: re-score "
        f"one run with the other's settings, or compare them anyway with allow_different_settings"
    )


# --------------------------------------------------------------------------------------------------- comparing


def _paired_values(
    a: dict[str, SampleScores], b: dict[str, SampleScores], metric: str, common: list[str]
) -> tuple[list[str], list[float], list[float]]:
    ids, va, vb = [], [], []
    for pid in common:
        x = a[pid].metrics.get(metric)
        y = b[pid].metrics.get(metric)
        if x is None or y is None or math.isnan(x) or math.isnan(y):
            continue
        ids.append(pid)
        va.append(float(x))
        vb.append(float(y))
    return ids, va, vb


def compare_runs(
    a: StoredRun,
    b: StoredRun,
    *,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
    max_regressions: int = 20,
    min_drop: float = 1e-9,
    allow_different_settings: bool = False,
) -> Comparison:
    """Per-metric ``B − A`` over the questions both runs scored: bootstrap intervals, Holm-corrected verdicts.

    Raises when the runs are not comparable (:func:`check_comparable`).
    """
    import numpy as np

    differ = check_comparable(
        a.meta, b.meta, (str(a.folder), str(b.folder)), allow_different_settings=allow_different_settings
    )
    sa, sb = a.scores_by_id(), b.scores_by_id()
    common = sorted(set(sa) & set(sb))
    if not common:
        hint = "; log runs of different traffic are drawn over time: goldset trend" if a.meta.reference_free else ""
        raise InputError(f"{a.folder} and {b.folder} have no question in common; nothing to compare{hint}")
    out = Comparison(
        run_a=a.run_id,
        run_b=b.run_id,
        only_a=sorted(set(sa) - set(sb)),
        only_b=sorted(set(sb) - set(sa)),
        n_resamples=n_resamples,
        confidence=confidence,
        seed=seed,
        setting_differences=differ,
    )
    metrics = sorted({m for s in (*a.scores, *b.scores) for m in s.metrics}, key=metric_order)
    paired = {m: _paired_values(sa, sb, m, common) for m in metrics}
    paired = {m: v for m, v in paired.items() if v[0]}

    # Metrics measured on the same questions share one set of random draws (see the module docstring).
    groups: dict[tuple[str, ...], list[str]] = {}
    for m, (pair_ids, _, _) in paired.items():
        groups.setdefault(tuple(pair_ids), []).append(m)
    stats: dict[str, tuple[float, float, float, float]] = {}  # metric -> (diff, low, high, p)
    tail = (1 - confidence) / 2
    # A Monte Carlo p-value is at least 1 / (R + 1): enough sign flips that this floor sits ten times below the
    # strictest Holm threshold (alpha / number of metrics), or no verdict could ever pass the correction.
    n_flips = max(n_resamples, math.ceil(10 * len(paired) / (1 - confidence)))
    for group, names in groups.items():
        d = np.array([np.asarray(paired[m][2]) - np.asarray(paired[m][1]) for m in names])
        observed = d.mean(axis=1)
        if len(group) == 1:
            stats |= {m: (float(observed[i]), float(observed[i]), float(observed[i]), 1.0) for i, m in enumerate(names)}
            continue
        rng = np.random.default_rng(seed)
        boot = _bootstrap_means(d, n_resamples, rng)
        lows, highs = np.quantile(boot, [tail, 1 - tail], axis=0)
        null, exact = _sign_flip_null(d, n_flips, rng)
        ps = _p_values(observed, null, exact)
        for i, m in enumerate(names):
            stats[m] = (float(observed[i]), float(lows[i]), float(highs[i]), float(ps[i]))

    names = list(paired)
    adjusted = holm([stats[m][3] for m in names])
    worst: dict[str, Regression] = {}
    for m, p_adj in zip(names, adjusted, strict=True):
        ids, va, vb = paired[m]
        diff, low, high, p = stats[m]
        direction = higher_is_better(m)
        mean_a, mean_b = math.fsum(va) / len(va), math.fsum(vb) / len(vb)
        out.metrics.append(
            MetricDiff(m, len(ids), mean_a, mean_b, diff, low, high, direction, p, p_adj, 1 - confidence)
        )
        if direction is not True or not is_quality_metric(m):
            # A question "got worse" on quality metrics where more is better (latency and cost are in other units).
            continue
        for pid, x, y in zip(ids, va, vb, strict=True):
            drop = x - y
            if drop <= min_drop:
                continue
            prev = worst.get(pid)
            if prev is None or drop > prev.value_a - prev.value_b:
                question = b.samples.get(pid) or a.samples.get(pid)
                worst[pid] = Regression(pid, sb[pid].question_type, m, x, y, question.question if question else None)
    out.n_worse = len(worst)
    out.regressions = sorted(worst.values(), key=lambda r: (-(r.value_a - r.value_b), r.pair_id))[:max_regressions]
    return out

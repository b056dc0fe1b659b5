"""System metrics of a run: latency percentiles and means, tokens, throughput, cost, errors.

These aggregate a whole run (lists of per-sample values), unlike the per-sample quality metrics. Percentiles
interpolate linearly between order statistics (numpy's default ``linear`` method, Hyndman & Fan type 7), so
p50 of [1, 2, 3, 4] is 2.5. Samples that did not report a value are left out of that value's statistics.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from goldset.evaluation.metrics.registry import metric

PERCENTILES = (50, 90, 95, 99)


@metric(
    name="latency_p",
    family="system",
    description="Latency percentile q (ms), linear interpolation between order statistics.",
    citation="Hyndman & Fan, Sample Quantiles in Statistical Packages, The American Statistician 1996 (type 7)",
    params={"q": "percentile in [0, 100]: 50, 90, 95, 99"},
    higher_is_better=False,
)
def percentile(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


@metric(
    name="latency_mean",
    family="system",
    description="Arithmetic mean latency (ms).",
    citation="-- (arithmetic mean)",
    higher_is_better=False,
)
def mean(values: Sequence[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


@metric(
    name="output_tokens_per_s",
    family="system",
    description="Output tokens per second of generation: sum of tokens out / sum of generation (else total) time.",
    citation="-- (throughput, as reported by LLM serving benchmarks)",
)
def tokens_per_second(tokens: Sequence[float], millis: Sequence[float]) -> float | None:
    seconds = math.fsum(millis) / 1000.0
    return math.fsum(tokens) / seconds if tokens and seconds > 0 else None


@metric(
    name="error_rate",
    family="system",
    description="Share of the dataset's pairs whose sample failed or is missing from the run.",
    citation="-- (share of failures)",
    higher_is_better=False,
)
def error_rate(n_failed: int, n_total: int) -> float | None:
    return n_failed / n_total if n_total else None


@metric(
    name="cost_usd_total",
    family="system",
    description="Total cost in USD: the run's cost_usd, else tokens priced with eval.prices.",
    citation="-- (sum)",
    higher_is_better=False,
)
def sample_cost(
    cost_usd: float | None,
    tokens_in: int | None,
    tokens_out: int | None,
    input_per_mtok: float | None,
    output_per_mtok: float | None,
) -> float | None:
    """One sample's cost: as reported, else priced from its tokens when both the tokens and a price are known."""
    if cost_usd is not None:
        return cost_usd
    parts = []
    if tokens_in is not None and input_per_mtok is not None:
        parts.append(tokens_in * input_per_mtok / 1e6)
    if tokens_out is not None and output_per_mtok is not None:
        parts.append(tokens_out * output_per_mtok / 1e6)
    return math.fsum(parts) if parts else None

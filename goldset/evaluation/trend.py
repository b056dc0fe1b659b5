"""``goldset trend``: each metric over time (per day of production logs, or per run of a golden set), with its
interval, per language and topic (question type for golden-set runs), and the drops that exceed the interval.

Only runs that measure the same thing are drawn on one line (:func:`goldset.evaluation.compare.check_comparable`:
the same dataset content and version, the same scoring settings; log runs never beside golden-set runs). Given
runs that are not comparable are refused with the reason; runs found in ``runs/`` that are not comparable with the
latest are left out, and the notes say which.

- A **point** is the mean of a metric over the samples of one day (log runs; a day held by several runs is taken
  from the latest of them) or one run, with a normal-approximation 95% interval (mean ± 1.96 standard errors;
  the questions of a day are independent draws of the traffic; cut to [0, 1] for metrics in [0, 1]). Latency
  percentiles get a bootstrap standard error.
  A point of fewer than two values has no interval.
- A **drop** is a step from one point to the next that goes the worse way by more than its interval: the
  difference of the two means with a 95% interval (standard errors of independent samples added in quadrature), and
  a two-sided z-test whose p-values are corrected by Holm–Bonferroni over the metrics of that step and group, so
  the chance of any false drop at a step stays at 5%, however many metrics are watched. A step is tested only with
  at least 10 values on each side (:data:`MIN_N_FOR_DROP`). Metrics without a direction
  (tokens) are drawn, never flagged.
- The **gate** (``goldset trend --gate``) fails on a drop at the latest step of the whole traffic ("all"); drops in
  a language or topic, and earlier ones, are shown, not gated: a scheduled job fails on the day the drop happens.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from goldset.errors import InputError, UsageError
from goldset.evaluation.compare import holm
from goldset.evaluation.logs import LOG_METRICS
from goldset.evaluation.metrics.registry import higher_is_better, metric_order

if TYPE_CHECKING:
    from goldset.context import Context
    from goldset.evaluation.runs import StoredRun
    from goldset.schema import RunSample, SampleScores
    from goldset.workspace import WorkspaceLike

__all__ = ["Drop", "Point", "Series", "Trend", "find_runs", "metric_direction", "trend", "trend_of_runs"]

By = Literal["day", "run"]
Z95 = 1.959963984540054
ALL = "all"
#: The metrics shown first (and drawn on the page), when the runs have them.
HEADLINE = (
    "faithfulness",
    "hallucination",
    "contradiction",
    "answer_relevancy",
    "context_relevance",
    "refusal_judged",
    "refusal",
    "feedback",
    "recall@5",
    "mrr",
    "completeness",
    "token_f1",
    "error_rate",
    "latency_p50_ms",
    "latency_p95_ms",
    "latency_p99_ms",
    "ttft_p95_ms",
    "cost_usd_mean",
)
_PERCENTILES = {"latency_p50_ms": ("total_ms", 50), "latency_p95_ms": ("total_ms", 95),
                "latency_p99_ms": ("total_ms", 99), "ttft_p95_ms": ("ttft_ms", 95)}  # fmt: skip
_BOOTSTRAP = 200
#: Fewest values on either side of a step for it to be tested: below that the normal approximation is no guide
#: (two answers of 1 then two of 0 would be a "certain" drop).
MIN_N_FOR_DROP = 10


def metric_direction(name: str) -> bool | None:
    """True when higher is better, False when lower is, None when neither (log metrics included)."""
    return LOG_METRICS[name] if name in LOG_METRICS else higher_is_better(name)


@dataclass(frozen=True)
class Point:
    """One metric over one day or run: its value, the values it rests on and its 95% interval (None below 2)."""

    label: str  # the day (YYYY-MM-DD) or the run id
    short: str  # what a chart's axis shows: 03-01, #2
    n: int
    value: float
    se: float | None
    low: float | None
    high: float | None


@dataclass(frozen=True)
class Drop:
    """A step from ``before`` to ``after`` where ``metric`` got worse by more than its interval."""

    metric: str
    group: str
    before: str
    after: str
    value_before: float
    value_after: float
    diff: float
    low: float
    high: float
    p_value: float
    p_adjusted: float

    def line(self) -> str:
        """The drop in one line."""
        return (
            f"{self.metric} ({self.group}): {self.value_before:.3f} on {self.before} → {self.value_after:.3f} on "
            f"{self.after} ({self.diff:+.3f}, 95% interval [{self.low:+.3f}, {self.high:+.3f}], p (Holm) "
            f"{self.p_adjusted:.3g})"
        )


@dataclass
class Series:
    """One metric of one group across the points, in order."""

    metric: str
    group: str
    higher_is_better: bool | None
    points: list[Point] = field(default_factory=list)


@dataclass
class Trend:
    """Metrics across days or runs (see the module docstring)."""

    by: By
    runs: list[str]
    reference_free: bool
    labels: list[str]
    series: list[Series] = field(default_factory=list)
    drops: list[Drop] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    alpha: float = 0.05

    def of(self, group: str = ALL) -> list[Series]:
        """The series of one group, headline metrics first."""
        return [s for s in self.series if s.group == group]

    def groups(self) -> list[str]:
        """Every group, ``all`` first."""
        seen = dict.fromkeys(s.group for s in self.series)
        return [ALL, *sorted(g for g in seen if g != ALL)] if seen else []

    def gated_drops(self) -> list[Drop]:
        """Drops of the whole traffic at the latest step: what ``--gate`` fails on."""
        if len(self.labels) < 2:
            return []
        last = self.labels[-1]
        return [d for d in self.drops if d.group == ALL and d.after == last]

    @property
    def passed(self) -> bool:
        """No drop at the latest step (:meth:`gated_drops`)."""
        return not self.gated_drops()

    def method(self) -> str:
        """How the intervals and drops were computed (shown with every trend)."""
        return (
            "Intervals: mean ± 1.96 standard errors per point (latency percentiles: bootstrap standard error); a drop: "
            "a step that goes the worse way with the 95% interval of the difference excluding 0, z-test p-values "
            f"corrected by Holm–Bonferroni over the metrics of each step and group (alpha {self.alpha}; at least "
            f"{MIN_N_FOR_DROP} values each side)"
        )


# --------------------------------------------------------------------------------------------------- points


def _mean_point(label: str, short: str, values: Sequence[float], unit: bool = False) -> Point | None:
    """The mean with its interval; ``unit``: the values lie in [0, 1], and so does the interval shown."""
    n = len(values)
    if not n:
        return None
    mean = math.fsum(values) / n
    if n < 2:
        return Point(label, short, n, mean, None, None, None)
    var = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    se = math.sqrt(var / n)
    low, high = mean - Z95 * se, mean + Z95 * se
    if unit:
        low, high = max(0.0, low), min(1.0, high)
    return Point(label, short, n, mean, se, low, high)


def _percentile_point(label: str, short: str, values: Sequence[float], q: float, seed: int) -> Point | None:
    import numpy as np

    n = len(values)
    if not n:
        return None
    xs = np.asarray(values, dtype=float)
    value = float(np.percentile(xs, q))
    if n < 2:
        return Point(label, short, n, value, None, None, None)
    rng = np.random.default_rng(seed)
    block = max(1, min(_BOOTSTRAP, 2_000_000 // n))
    boots = []
    for start in range(0, _BOOTSTRAP, block):
        rows = min(block, _BOOTSTRAP - start)
        boots.append(np.percentile(xs[rng.integers(0, n, size=(rows, n))], q, axis=1))
    se = float(np.std(np.concatenate(boots), ddof=1))
    return Point(label, short, n, value, se, value - Z95 * se, value + Z95 * se)


def _points(
    label: str, short: str, scores: Sequence[SampleScores], samples: dict[str, RunSample], seed: int
) -> dict[str, Point]:
    """Every metric's point over ``scores`` (and their samples, for latency and cost)."""
    out: dict[str, Point] = {}
    names: dict[str, None] = {}
    for s in scores:
        names.update(dict.fromkeys(s.metrics))
    for m in names:
        values = [v for s in scores if (v := s.metrics.get(m)) is not None]
        p = _mean_point(label, short, values, unit=all(0.0 <= v <= 1.0 for v in values))
        if p is not None:
            out[m] = p
    rate = _mean_point(label, short, [1.0 if s.failed else 0.0 for s in scores], unit=True)
    if rate is not None:
        out["error_rate"] = rate
    present = [samples[s.pair_id] for s in scores if s.pair_id in samples and not s.failed]
    for name, (attr, q) in _PERCENTILES.items():
        values = [v for x in present if (v := getattr(x.latency, attr)) is not None]
        pp = _percentile_point(label, short, values, q, seed)
        if pp is not None:
            out[name] = pp
    for name, get in (("cost_usd_mean", lambda x: x.cost_usd), ("tokens_out_mean", lambda x: x.tokens_out)):
        cp = _mean_point(label, short, [float(v) for x in present if (v := get(x)) is not None])
        if cp is not None:
            out[name] = cp
    return out


def _order(name: str) -> tuple[int, tuple[str, int, str]]:
    return (HEADLINE.index(name) if name in HEADLINE else len(HEADLINE), metric_order(name))


def _steps(series: Series) -> list[tuple[Drop, bool]]:
    """Every step of one series with an interval, tested, and whether it goes the worse way (Holm: the caller)."""
    out: list[tuple[Drop, bool]] = []
    hib = series.higher_is_better
    if hib is None:
        return out
    pts = series.points
    for i in range(1, len(pts)):
        a, b = pts[i - 1], pts[i]
        if a.se is None or b.se is None or min(a.n, b.n) < MIN_N_FOR_DROP:
            continue
        diff = b.value - a.value
        se = math.sqrt(a.se**2 + b.se**2)
        if se == 0:
            p = 0.0 if diff else 1.0
        else:
            p = math.erfc(abs(diff / se) / math.sqrt(2))
        worse = diff < 0 if hib else diff > 0
        out.append((Drop(series.metric, series.group, a.label, b.label, a.value, b.value, diff,
                         diff - Z95 * se, diff + Z95 * se, p, p), worse))  # fmt: skip
    return out


def _find_drops(series: list[Series], alpha: float) -> list[Drop]:
    """Holm over the metrics compared at each step of each group; a drop is a worse step that survives it."""
    steps: dict[tuple[str, str], list[tuple[Drop, bool]]] = {}
    for s in series:
        for d, worse in _steps(s):
            steps.setdefault((d.group, d.after), []).append((d, worse))
    out = []
    for candidates in steps.values():
        adjusted = holm([d.p_value for d, _ in candidates])
        for (d, worse), p in zip(candidates, adjusted, strict=True):
            if worse and p < alpha:
                out.append(Drop(**{**d.__dict__, "p_adjusted": p}))
    return sorted(out, key=lambda d: (d.after, d.group != ALL, d.group, _order(d.metric)))


# --------------------------------------------------------------------------------------------------- runs


def _check_same_kind(runs: Sequence[StoredRun]) -> None:
    kinds = {r.meta.reference_free for r in runs}
    if len(kinds) > 1:
        log = next(r for r in runs if r.meta.reference_free)
        golden = next(r for r in runs if not r.meta.reference_free)
        raise InputError(
            f"{log.run_id} scores a production log (reference-free) and {golden.run_id} a golden set: they are not "
            "drawn on one line; give log runs or golden-set runs"
        )


def trend_of_runs(
    runs: Sequence[StoredRun],
    *,
    by: By | None = None,
    allow_different_settings: bool = False,
    alpha: float = 0.05,
    seed: int = 0,
) -> Trend:
    """The trend of ``runs`` (in the order given; see the module docstring). Refuses runs that are not comparable
    on one line (InputError or UsageError, one line). ``by``: ``day`` (default for log runs) or ``run`` (default
    for golden-set runs, the only choice for them)."""
    from goldset.evaluation.compare import check_comparable

    if not runs:
        raise InputError("no run to draw; give log runs (goldset eval --log) or golden-set runs")
    _check_same_kind(runs)
    reference_free = runs[0].meta.reference_free
    notes: list[str] = []
    for r in runs[1:]:
        differ = check_comparable(runs[0].meta, r.meta, (runs[0].run_id, r.run_id),
                                  allow_different_settings=allow_different_settings)  # fmt: skip
        if differ:
            notes.append(f"{r.run_id} was scored with other settings than {runs[0].run_id}: {'; '.join(differ)}")
    by = by or ("day" if reference_free else "run")
    if by == "day" and not reference_free:
        raise UsageError("by day needs log runs (goldset eval --log): a golden-set run has no days; use by run")

    # (label, short, scores, samples) per point
    chunks: list[tuple[str, str, list[SampleScores], dict[str, RunSample]]] = []
    if by == "run":
        for i, r in enumerate(runs, 1):
            chunks.append((r.run_id, f"#{i}", r.scores, r.samples))
    else:
        owner: dict[str, StoredRun] = {}
        for r in sorted(runs, key=lambda r: r.meta.created_at):
            for day in sorted({s.day for s in r.scores if s.day}):
                if day in owner:
                    notes.append(f"{day} is in {owner[day].run_id} and {r.run_id}: the latest run's scores are used")
                owner[day] = r
        for day in sorted(owner):
            r = owner[day]
            chunks.append((day, day[5:], [s for s in r.scores if s.day == day], r.samples))
        undated = sum(1 for r in runs for s in r.scores if not s.day)
        if undated:
            notes.append(f"{undated} sample(s) without a timestamp are in no day")
    if not chunks:
        raise InputError("the runs hold no dated sample: nothing to draw per day (give the log lines a timestamp)")

    group_key: Callable[[SampleScores], Iterable[str]]
    if reference_free:
        group_key = lambda s: [f"language {s.language}", *([f"topic {s.topic}"] if s.topic else [])]  # noqa: E731
    else:
        group_key = lambda s: [f"language {s.language}", f"type {s.question_type}"]  # noqa: E731
    by_group: dict[tuple[str, str], Series] = {}
    for label, short, scores, samples in chunks:
        members: dict[str, list[SampleScores]] = {ALL: list(scores)}
        for s in scores:
            for g in group_key(s):
                members.setdefault(g, []).append(s)
        for group, rows in members.items():
            for metric, point in _points(label, short, rows, samples, seed).items():
                key = (group, metric)
                if key not in by_group:
                    by_group[key] = Series(metric, group, metric_direction(metric))
                by_group[key].points.append(point)
    series = sorted(by_group.values(), key=lambda s: (s.group != ALL, s.group, _order(s.metric)))
    return Trend(
        by=by,
        runs=[r.run_id for r in runs],
        reference_free=reference_free,
        labels=[c[0] for c in chunks],
        series=series,
        drops=_find_drops(series, alpha),
        notes=notes,
        alpha=alpha,
    )


def find_runs(runs_dir: Path, *, reference_free: bool = True) -> list[Path]:
    """Run folders under ``runs_dir`` of one kind (log runs, or golden-set runs), oldest first."""
    from goldset.evaluation.runs import META_FILE
    from goldset.io import read_json
    from goldset.schema import RunMeta

    found = []
    if runs_dir.is_dir():
        for folder in runs_dir.iterdir():
            if folder.name.startswith(".") or not (folder / META_FILE).is_file():
                continue
            meta = read_json(folder / META_FILE, RunMeta)
            if meta.reference_free == reference_free:
                found.append((meta.created_at, folder.name, folder))
    return [f for _, _, f in sorted(found)]


def trend(
    runs: Sequence[str | Path] | None = None,
    *,
    ws: WorkspaceLike | Context = None,
    by: By | None = None,
    last: int | None = None,
    allow_different_settings: bool = False,
    alpha: float = 0.05,
) -> Trend:
    """The trend of ``runs`` (folders or run ids, in time order), or of every log run in the runs folder (``last``:
    the latest N of them). Found runs not comparable with the latest one are left out (a note says so); given runs
    that are not comparable are refused (see :func:`trend_of_runs`)."""
    from goldset.context import Context
    from goldset.errors import GoldsetError
    from goldset.evaluation.compare import check_comparable
    from goldset.evaluation.runs import read_run, runs_folder
    from goldset.evaluation.settings import EvalSettings

    ctx = Context.optional(ws)
    runs_dir = runs_folder(ctx.ws, ctx.section(EvalSettings))
    notes: list[str] = []
    if runs is not None:
        stored = [read_run(r, ctx.ws, runs_dir) for r in runs]
    else:
        folders = find_runs(runs_dir)
        if last is not None:
            folders = folders[-last:]
        if not folders:
            raise InputError(f"{runs_dir}: no log run to draw; score a log first (goldset eval --log FILE)")
        stored = [read_run(f) for f in folders]
        latest = stored[-1]
        kept = []
        for r in stored:
            try:
                check_comparable(r.meta, latest.meta, allow_different_settings=allow_different_settings)
            except GoldsetError as exc:
                notes.append(f"left out {r.run_id}: {exc}")
                continue
            kept.append(r)
        stored = kept
    out = trend_of_runs(stored, by=by, allow_different_settings=allow_different_settings, alpha=alpha)
    out.notes = notes + out.notes
    return out

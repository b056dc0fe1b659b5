"""Thresholds a run must meet: what a CI job checks after ``goldset eval``.

A thresholds file (YAML)::

    min: {recall@5: 0.6, mrr: 0.5}              # absolute minimums over all evaluated questions
    max: {latency_p95_ms: 2500}                 # absolute maximums (latency, cost, error rate...)
    by_type: {factual: {recall@5: 0.7}}         # minimums inside one question type
    relative:                                   # compared with a baseline run
      baseline: runs/20260101T000000Z-bm25-abc123
      metrics: {recall@5: 0.95}                 # ≥ 95% of the baseline's value

For a lower-is-better metric (latency, cost, errors: the metric registry says which) a relative ratio is the most
it may grow to: ``latency_p95_ms: 1.2`` means at most 120% of the baseline; a metric without a direction (token
counts) cannot have a relative limit. A threshold on a metric the run did not measure fails (with a note saying
so), and a file that sets no threshold at all is an error: a gate that silently passes because of a typo is worse
than no gate. The baseline must be a run of the same dataset scored with the same settings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from goldset.errors import ConfigError, InputError
from goldset.evaluation.metrics.registry import higher_is_better
from goldset.schema import RunSummary


class RelativeThresholds(BaseModel):
    """Limits relative to a baseline run of the same dataset, scored with the same settings."""

    model_config = ConfigDict(extra="forbid")

    baseline: str = Field(description="Run folder or run id of the baseline run.")
    metrics: dict[str, float] = Field(
        default_factory=dict,
        description="metric → ratio of the baseline's value: at least that (at most, for lower-is-better metrics).",
    )


class Thresholds(BaseModel):
    """A thresholds file: what a run must meet for the gate to pass."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    min_: dict[str, float] = Field(default_factory=dict, alias="min", description="metric → minimum, overall.")
    max_: dict[str, float] = Field(default_factory=dict, alias="max", description="metric → maximum, overall.")
    by_type: dict[str, dict[str, float]] = Field(
        default_factory=dict, description="question type → metric → minimum inside that type."
    )
    relative: RelativeThresholds | None = Field(None, description="Limits relative to a baseline run.")

    def count(self) -> int:
        """How many limits the file sets."""
        relative = len(self.relative.metrics) if self.relative is not None else 0
        return len(self.min_) + len(self.max_) + sum(len(v) for v in self.by_type.values()) + relative


def check_thresholds(thresholds: Thresholds, where: str) -> None:
    """Refuse thresholds that would make a gate pass or decide for the wrong reason: none at all (an empty file
    passes every run), a relative block without metrics, or a relative limit on a metric without a direction."""
    if thresholds.count() == 0:
        raise ConfigError(f"{where}: no thresholds are set; give min, max, by_type or relative limits")
    if thresholds.relative is not None and not thresholds.relative.metrics:
        raise ConfigError(f"{where}: relative.metrics is empty; give metric: ratio limits for the baseline")
    for metric in sorted(thresholds.relative.metrics if thresholds.relative else {}):
        if higher_is_better(metric) is None:
            raise ConfigError(
                f"{where}: relative.metrics.{metric}: goldset knows no direction for this metric (neither higher "
                f"nor lower is better, or the name is wrong); give it an absolute limit under min or max"
            )


@dataclass(frozen=True)
class GateRow:
    """One threshold checked: ``value`` against ``limit`` (None when the run did not measure the metric)."""

    check: str  # "min", "max", "relative"
    scope: str  # "overall" or "type:<question type>"
    metric: str
    value: float | None
    limit: float
    passed: bool
    note: str = ""


@dataclass
class GateResult:
    """Every threshold checked, in the order of the file (min, max, by_type, relative)."""

    rows: list[GateRow] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """Every threshold met (and at least one was checked: :func:`check_thresholds`)."""
        return bool(self.rows) and all(r.passed for r in self.rows)

    @property
    def failures(self) -> list[GateRow]:
        """The thresholds not met."""
        return [r for r in self.rows if not r.passed]

    def summary_line(self) -> str:
        """``gate passed: N thresholds met`` or ``gate failed: …`` naming the first failures."""
        failed = self.failures
        if not failed:
            return f"gate passed: {len(self.rows)} thresholds met"
        names = ", ".join(f"{r.metric} ({r.scope})" for r in failed[:5])
        more = f" and {len(failed) - 5} more" if len(failed) > 5 else ""
        return f"gate failed: {len(failed)} of {len(self.rows)} thresholds not met: {names}{more}"


def load_thresholds(path: Path) -> Thresholds:
    """Read and validate a thresholds YAML file; errors name the file and the offending key."""
    import yaml
    from pydantic import ValidationError

    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except FileNotFoundError:
        raise InputError(f"{path}: thresholds file not found") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{path}{line}: not valid YAML; fix the syntax") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: expected a mapping with min, max, by_type and/or relative")
    try:
        thresholds = Thresholds.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err.get("loc", ()))
        unknown = err.get("type") == "extra_forbidden"
        hint = "unknown key (known: min, max, by_type, relative)" if unknown else err["msg"]
        raise ConfigError(f"{path}: {loc}: {hint}") from None
    check_thresholds(thresholds, str(path))
    return thresholds


def metric_value(summary: RunSummary, metric: str, question_type: str | None = None) -> float | None:
    """A metric's value in a summary: quality metrics in ``overall``, system figures in ``system``."""
    if question_type is not None:
        return summary.by_type.get(question_type, {}).get(metric)
    if metric in summary.overall:
        return summary.overall[metric]
    if metric in summary.system:
        return summary.system[metric]
    if metric == "overall_score":
        return summary.overall_score
    return None


def _not_measured(summary: RunSummary, question_type: str | None = None) -> str:
    if question_type is not None and question_type not in summary.by_type:
        return f"no {question_type} questions in this run"
    return "not measured in this run; check the metric name"


def check_min(summary: RunSummary, metric: str, limit: float, question_type: str | None = None) -> GateRow:
    """``value ≥ limit`` overall or inside one question type; a metric the run did not measure fails."""
    scope = f"type:{question_type}" if question_type else "overall"
    value = metric_value(summary, metric, question_type)
    if value is None:
        return GateRow("min", scope, metric, None, limit, False, _not_measured(summary, question_type))
    return GateRow("min", scope, metric, value, limit, value >= limit)


def check_max(summary: RunSummary, metric: str, limit: float) -> GateRow:
    """``value ≤ limit`` overall; a metric the run did not measure fails."""
    value = metric_value(summary, metric)
    if value is None:
        return GateRow("max", "overall", metric, None, limit, False, _not_measured(summary))
    return GateRow("max", "overall", metric, value, limit, value <= limit)


def check_relative(summary: RunSummary, baseline: RunSummary, metric: str, ratio: float) -> GateRow:
    """``value ≥ ratio × baseline`` (or ``≤`` for lower-is-better metrics), with the limit in absolute terms."""
    value = metric_value(summary, metric)
    base = metric_value(baseline, metric)
    note = f"{ratio:g} × baseline {baseline.run_id}"
    if base is None:
        return GateRow("relative", "overall", metric, value, float("nan"), False, "not measured in the baseline run")
    limit = ratio * base
    if value is None:
        return GateRow("relative", "overall", metric, None, limit, False, _not_measured(summary))
    ok = value <= limit if higher_is_better(metric) is False else value >= limit  # None refused by check_thresholds
    return GateRow("relative", "overall", metric, value, limit, ok, note)


def check_gate(summary: RunSummary, thresholds: Thresholds, baseline: RunSummary | None = None) -> GateResult:
    """Every threshold checked, failing and passing alike (the table shows both)."""
    check_thresholds(thresholds, "thresholds")
    rows: list[GateRow] = []
    rows += [check_min(summary, m, v) for m, v in sorted(thresholds.min_.items())]
    rows += [check_max(summary, m, v) for m, v in sorted(thresholds.max_.items())]
    for qtype, limits in sorted(thresholds.by_type.items()):
        rows += [check_min(summary, m, v, qtype) for m, v in sorted(limits.items())]
    if thresholds.relative is not None and thresholds.relative.metrics:
        if baseline is None:
            raise ConfigError("thresholds: relative.baseline was given but its run could not be read")
        rows += [check_relative(summary, baseline, m, r) for m, r in sorted(thresholds.relative.metrics.items())]
    return GateResult(rows)

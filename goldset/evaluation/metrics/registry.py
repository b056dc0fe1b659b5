"""The metric registry: every metric is a small pure function registered with a name, a family, a description,
its parameters and a citation, so documentation (``list_metrics()``) and scoring read one source of truth.

Families and the per-sample input their functions take:

- ``retrieval``: :class:`~goldset.evaluation.metrics.retrieval.RankedRelevance` (+ ``k`` for ``@k`` metrics)
- ``lexical``, ``refusal``, ``conciseness``: :class:`~goldset.evaluation.metrics.lexical.AnswerInput`
- ``system``: a list of per-sample values (these aggregate a run, they are not per-sample)
- ``judge``: :class:`~goldset.evaluation.metrics.judged.JudgedSample` (what the LLM judge decided about one sample:
  faithfulness, hallucination, completeness, relevancy...). Computed by :mod:`goldset.evaluation.judge` after
  :func:`~goldset.evaluation.scoring.score_sample`, into the same ``SampleScores.metrics``; registered here like the
  others, so they carry a direction, description and citation, and ``on_failure`` says what a sample the system
  failed on scores.

A function returns ``float`` or ``None`` (``None`` = not applicable to this sample, e.g. retrieval metrics of
an unanswerable pair; it is left out of averages).
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

FAMILIES = ("retrieval", "lexical", "refusal", "conciseness", "system", "judge")


@dataclass(frozen=True)
class MetricInfo:
    """A registered metric. ``name`` may hold ``@k`` (expanded per cut-off: ``recall@k`` → ``recall@5``)."""

    name: str
    family: str
    description: str
    citation: str
    fn: Callable[..., Any]
    params: dict[str, str] = field(default_factory=dict)
    higher_is_better: bool = True
    on_failure: Literal["worst", "skip"] = "worst"
    """What a failed sample (the system raised, timed out, or the run lacks it) scores: the metric's worst value
    when its definition covers a failure (a failure retrieved nothing, answered nothing), or ``skip`` (None: left
    out) when it does not (a failure is not a refusal, so it is neither a false nor a correct one)."""

    @property
    def failure_value(self) -> float | None:
        """What a failed sample scores on this metric (see ``on_failure``): its worst value, or None (left out)."""
        if self.on_failure == "skip":
            return None
        return 0.0 if self.higher_is_better else 1.0

    def output_name(self, **params: Any) -> str:
        """The name a value is stored under, e.g. ``recall@5`` for ``recall@k`` with ``k=5``."""
        if "k" in params and self.name.endswith("@k"):
            return f"{self.name[:-2]}@{params['k']}"
        return self.name


_REGISTRY: dict[str, MetricInfo] = {}


def metric(
    *,
    name: str,
    family: str,
    description: str,
    citation: str,
    params: dict[str, str] | None = None,
    higher_is_better: bool = True,
    on_failure: Literal["worst", "skip"] = "worst",
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated pure function under ``name``. Names are unique across families."""
    if family not in FAMILIES:
        raise ValueError(f"unknown metric family {family!r}; known: {', '.join(FAMILIES)}")

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        if name in _REGISTRY and _REGISTRY[name].fn is not fn:
            raise ValueError(f"metric {name!r} is registered twice")
        if fn.__doc__ is None:  # help(recall_at_k) says what the registry says
            fn.__doc__ = f"{description}\n\n{citation}"
        _REGISTRY[name] = MetricInfo(
            name, family, description, citation, fn, dict(params or {}), higher_is_better, on_failure
        )
        return fn

    return register


_loaded = False


def _load() -> None:
    """Import every module of the metrics package once, so their decorators have run before anyone asks.

    Modules are found on disk, not listed here: a new family module is registered without touching this file,
    and no caller sees a registry that holds only the families some earlier import happened to load.
    (Cheap: pure Python, no heavy imports.)
    """
    global _loaded
    if _loaded:
        return
    package = __name__.rpartition(".")[0]
    for info in pkgutil.iter_modules([str(Path(__file__).parent)]):
        if info.name != "registry":
            importlib.import_module(f"{package}.{info.name}")
    _loaded = True


def list_metrics(family: str | None = None) -> list[MetricInfo]:
    """Every registered metric (of one family), in registration order."""
    _load()
    return [m for m in _REGISTRY.values() if family is None or m.family == family]


def get_metric(name: str) -> MetricInfo:
    """A metric by registered name (``recall@k``) or by output name (``recall@5``); KeyError if unknown."""
    _load()
    if name in _REGISTRY:
        return _REGISTRY[name]
    base, sep, k = name.rpartition("@")
    if sep and k.isdigit() and f"{base}@k" in _REGISTRY:
        return _REGISTRY[f"{base}@k"]
    raise KeyError(name)


#: Directions of the system figures :func:`goldset.evaluation.scoring.system_metrics` writes (by name pattern).
_SYSTEM_DIRECTIONS: tuple[tuple[re.Pattern[str], bool | None], ...] = (
    (re.compile(r".*_ms$"), False),  # latency_p95_ms, ttft_mean_ms, ...
    (re.compile(r"^cost_usd_.*"), False),
    (re.compile(r"^(error_rate|n_errors|n_missing)$"), False),
    (re.compile(r"^output_tokens_per_s$"), True),
    (re.compile(r"^tokens_(in|out)_(total|mean)$"), None),  # a property of the workload, not better or worse
)


def higher_is_better(name: str) -> bool | None:
    """Direction of a metric by (output) name, system figures included; ``None`` when unknown or neutral.

    The one definition of a metric's direction: compare, gates, reports and the overall score all ask here.
    ``output_tokens_per_s`` improves upwards, ``false_refusal`` downwards; a name the registry does not know (a
    judge metric before the judge registers it, a typo) has no direction, and callers must not guess one.
    """
    try:
        return get_metric(name).higher_is_better
    except KeyError:
        pass
    for pattern, direction in _SYSTEM_DIRECTIONS:
        if pattern.match(name):
            return direction
    return None


def is_quality_metric(name: str) -> bool:
    """A per-sample quality metric (any registered family but ``system``): what "a question got worse" reads."""
    try:
        return get_metric(name).family != "system"
    except KeyError:
        return False


def metric_order(name: str) -> tuple[str, int, str]:
    """Sort key of metric names: ``ndcg@3`` before ``ndcg@10`` (cut-offs sort as numbers)."""
    base, sep, k = name.partition("@")
    return (base, int(k) if sep and k.isdigit() else -1, name)

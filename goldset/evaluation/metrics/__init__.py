"""Evaluation metrics: a registry of small pure functions (see :mod:`.registry`), one module per family."""

from goldset.evaluation.metrics.lexical import AnswerInput
from goldset.evaluation.metrics.registry import (
    MetricInfo,
    get_metric,
    higher_is_better,
    is_quality_metric,
    list_metrics,
    metric,
    metric_order,
)
from goldset.evaluation.metrics.retrieval import RankedRelevance

__all__ = [
    "AnswerInput",
    "MetricInfo",
    "RankedRelevance",
    "get_metric",
    "higher_is_better",
    "is_quality_metric",
    "list_metrics",
    "metric",
    "metric_order",
]

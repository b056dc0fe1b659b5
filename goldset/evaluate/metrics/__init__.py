"""Evaluation metrics: a registry of small pure functions (see :mod:`.registry`), one module per family."""

from goldset.evaluate.metrics.lexical import AnswerInput
from goldset.evaluate.metrics.registry import MetricInfo, get_metric, higher_is_better, list_metrics, metric
from goldset.evaluate.metrics.retrieval import RankedRelevance

__all__ = ["AnswerInput", "MetricInfo", "RankedRelevance", "get_metric", "higher_is_better", "list_metrics", "metric"]

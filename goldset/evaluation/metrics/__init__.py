"""Evaluation metrics: a registry of small pure functions (see :mod:`.registry`), one module per family."""

from goldset.evaluation.metrics.lexical import AnswerInput
from goldset.evaluation.metrics.registry import MetricInfo, get_metric, higher_is_better, list_metrics, metric
from goldset.evaluation.metrics.retrieval import RankedRelevance

__all__ = ["AnswerInput", "MetricInfo", "RankedRelevance", "get_metric", "higher_is_better", "list_metrics", "metric"]

"""Evaluation metrics: a registry of small pure functions (see :mod:`.registry`), one module per family."""

from goldset.evaluate.metrics.registry import MetricInfo, get_metric, higher_is_better, list_metrics, metric

__all__ = ["MetricInfo", "get_metric", "higher_is_better", "list_metrics", "metric"]

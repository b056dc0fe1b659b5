"""Evaluation of RAG runs against a golden dataset: runs, relevance matcher, metrics, scoring, gates, reports.

The entry point is :func:`goldset.evaluate` (defined in :mod:`goldset.evaluation.evaluator`). Importing this package
is cheap: everything heavy is imported inside the functions that need it.
"""

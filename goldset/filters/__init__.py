"""Contamination and quality filters: one module per check, a registry, settings and the pipeline.

Each pair check is a small pure function usable on its own, e.g.
``goldset.filters.verbatim.check(pair, chunks, verbatim.Settings()) -> CheckResult``; the pipeline
(:func:`run_filters`) runs them over a workspace's candidates file and records every verdict on the pair.
"""

from __future__ import annotations

from typing import Any

__all__ = ["FilterReport", "FilterSettings", "run_filters"]


def __getattr__(name: str) -> Any:
    # Lazy, so importing one check module does not load the pipeline (and the LLM layer) with it.
    if name == "run_filters":
        from goldset.filters.pipeline import run_filters

        return run_filters
    if name == "FilterReport":
        from goldset.filters.report import FilterReport

        return FilterReport
    if name == "FilterSettings":
        from goldset.filters.settings import FilterSettings

        return FilterSettings
    raise AttributeError(f"module 'goldset.filters' has no attribute {name!r}")

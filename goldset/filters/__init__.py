"""Contamination and quality filters: one module per check, a registry, settings and the pipeline.

Each pair check is a small pure function usable on its own, e.g.
``goldset.filters.verbatim.check(pair, chunks, verbatim.Settings()) -> CheckResult``; the pipeline
(:func:`run_filters`) runs them over a workspace's candidates file and records every verdict on the pair.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from goldset._lazy import lazy_exports

# Lazy, so importing one check module does not load the pipeline (and the LLM layer) with it.
_EXPORTS = {
    "run_filters": "goldset.filters.pipeline",
    "FilterReport": "goldset.filters.report",
    "FilterSettings": "goldset.filters.settings",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


if TYPE_CHECKING:  # the same names, for type checkers (a test holds the two lists equal)
    from goldset.filters.pipeline import run_filters
    from goldset.filters.report import FilterReport
    from goldset.filters.settings import FilterSettings

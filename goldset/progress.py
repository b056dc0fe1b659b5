"""The one progress protocol of every long-running entry point (``generate``, ``run_filters``, ``evaluate``).

An entry point that takes ``progress: ProgressCallback | None`` calls it with a :class:`Progress` after each unit of
work (a call, a batch of pairs, a question). The CLI draws one bar per stage from it (``goldset.cli._common``);
a notebook can print it or ignore it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Progress:
    """Where a job stands: ``done`` of ``total`` units of ``stage`` (``total`` None while unknown), and the counters
    worth showing beside the bar, in display order (e.g. ``{"pairs": 12, "calls": 5, "cost": "$0.0031"}``)."""

    stage: str
    done: int
    total: int | None = None
    counters: Mapping[str, int | float | str] = field(default_factory=dict)


ProgressCallback = Callable[[Progress], None]

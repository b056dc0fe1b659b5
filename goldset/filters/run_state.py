"""The state one run of the filter pipeline shares between its stages (pair checks, duplicates, LLM)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from goldset.filters.base import CheckSpec, S
from goldset.filters.incremental import kb_hash
from goldset.filters.report import FilterReport
from goldset.filters.settings import FilterSettings
from goldset.progress import Progress, ProgressCallback
from goldset.schema import CheckResult, Chunk, QAPair

if TYPE_CHECKING:
    from goldset.filters.groundedness import RelatedChunks
    from goldset.workspace import Workspace


@dataclass
class FilterRun:
    """One run: its workspace, settings, the checks it runs, the chunks they read, and the report it fills.

    Each stage function takes the run and the pairs it works on, so adding a setting or a counter does not grow
    every signature along the way.
    """

    ws: Workspace
    settings: FilterSettings
    names: list[str]
    chunks: dict[str, Chunk]
    report: FilterReport
    progress: ProgressCallback | None = None
    #: Ids of the pairs a stage changed in place (:meth:`set_checks`): the records read no longer show what the
    #: file holds, so the pipeline writes the set back, and sets their status in place too.
    changed: set[str] = field(default_factory=set)

    def settings_of(self, spec: CheckSpec[S]) -> S:
        """The settings of one check, typed by its spec."""
        return self.settings.for_check(spec)

    @cached_property
    def kb_hash(self) -> str:
        """Hash of every chunk the checks read (computed once, when a check that reads the whole KB needs it)."""
        return kb_hash(self.chunks)

    @cached_property
    def related(self) -> RelatedChunks:
        """The related-chunk lookup the groundedness judge uses for unanswerable pairs (token sets built once)."""
        from goldset.filters.groundedness import RelatedChunks

        return RelatedChunks(list(self.chunks.values()), self.settings.kb_context_chunks)

    def set_checks(self, pairs: list[QAPair], idx: int, results: Mapping[str, CheckResult]) -> None:
        """Give ``pairs[idx]`` the verdicts ``results`` (new ones: a stage made them this run), in place: a copy
        of each of 50,000 pairs was ~25 MiB beside the records read."""
        pair = pairs[idx]
        pair.__dict__["checks"] = {**pair.checks, **results}
        self.changed.add(pair.id)

    def tell(self, stage: str, done: int, total: int) -> None:
        """Report progress of a stage, if anyone listens."""
        if self.progress is not None:
            self.progress(Progress(stage, done, total))

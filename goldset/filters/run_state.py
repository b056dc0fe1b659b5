"""The state one run of the filter pipeline shares between its stages (pair checks, duplicates, LLM)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from goldset.filters.base import CheckSpec, S
from goldset.filters.incremental import kb_hash
from goldset.filters.report import FilterReport
from goldset.filters.settings import FilterSettings
from goldset.progress import Progress, ProgressCallback
from goldset.schema import Chunk

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

    def tell(self, stage: str, done: int, total: int) -> None:
        """Report progress of a stage, if anyone listens."""
        if self.progress is not None:
            self.progress(Progress(stage, done, total))

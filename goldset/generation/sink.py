"""Where a run's pairs go: the candidates file, rewritten in batches; existing pairs are never replaced."""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from goldset.io import dump_record, iter_jsonl, write_jsonl
from goldset.schema import (
    QAPair,
)
from goldset.schema.generation import GenerationFailure

if TYPE_CHECKING:
    from goldset.data import WorkspaceData
    from goldset.workspace import Workspace


FAILURES_FILE = "generation_failures.jsonl"


class CandidateSink:
    """Collects results and rewrites the candidates file in batches; existing pairs are never replaced.

    Each pair is serialised once (pairs do not change once added) and kept as its JSON line, so a rewrite is a
    sort and a join instead of dumping every pair again (~1.2 KB per pair, next to ~6.5 KB for the pair itself).
    """

    def __init__(
        self,
        data: WorkspaceData | None,
        existing: list[QAPair],
        flush_seconds: float,
    ) -> None:
        self.data = data
        self.pairs: dict[str, QAPair] = {p.id: p for p in existing}
        self.lines: dict[str, str] = {}
        self.pending = 0
        self.flush_seconds = flush_seconds
        self.last_flush = time.monotonic()
        self.added = 0
        self.existing_hits = 0
        self.new_pairs: list[QAPair] = []

    def add(self, pairs: Iterable[QAPair]) -> None:
        """Take a reply's pairs (those whose id is already in the file are counted in ``existing_hits`` and left
        alone) and rewrite the file if ``flush_seconds`` have passed since the last rewrite."""
        for p in pairs:
            if p.id in self.pairs:
                self.existing_hits += 1
                continue
            self.pairs[p.id] = p
            if self.data is not None:
                self.lines[p.id] = dump_record(p)  # here rather than all at once in the next rewrite
            self.new_pairs.append(p)
            self.added += 1
            self.pending += 1
        if self.pending and time.monotonic() - self.last_flush >= self.flush_seconds:
            self.flush()

    def text(self) -> str:
        """The candidates file: what ``write_jsonl(path, self.pairs.values())`` writes (sorted by id)."""
        lines = self.lines
        for pid, pair in self.pairs.items():
            if pid not in lines:
                lines[pid] = dump_record(pair)
        return "".join(lines[pid] + "\n" for pid in sorted(self.pairs))

    def flush(self) -> None:
        """Rewrite the candidates file now if pairs were added since the last rewrite."""
        if self.data is not None and self.pending:
            started = time.monotonic()
            self.data.write_pairs_text(self.text())
            # The rewrite blocks the event loop; on a large file, space rewrites so they take ≤ ~10% of the run.
            self.flush_seconds = max(self.flush_seconds, 10 * (time.monotonic() - started))
        self.pending = 0
        self.last_flush = time.monotonic()


def write_failures(ws: Workspace, failures: list[GenerationFailure], processed: set[str]) -> Path:
    """Keep earlier failures of chunks this run did not touch; replace those of chunks it did."""
    path = ws.state_dir / FAILURES_FILE
    if not failures and not path.exists():
        return path
    old = list(iter_jsonl(path, GenerationFailure)) if path.exists() else []
    kept = {f.id: f for f in old if not (set(f.chunk_ids[:1]) & processed)}
    kept.update({f.id: f for f in failures})
    write_jsonl(path, kept.values())
    return path

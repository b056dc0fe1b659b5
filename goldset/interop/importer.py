"""Importing pairs from another tool's file: into the workspace's ``data/`` (new pairs only), or into a new
dataset folder.

The file is read whole and every row checked before anything is written (the first bad row stops the import with
one line naming the file and row). Rows become candidate pairs as :func:`goldset.interop.fields.build_pairs` says:
evidence located in the known chunks, ids kept or computed, ``provenance.source = "import"``. The known chunks are
the workspace's (its KB snapshot and ``data/chunks.jsonl``), the corpus given, and those the file carries (a
Hugging Face folder's corpus). Importing into the workspace adds the pairs whose id ``data/pairs.jsonl`` does not
hold yet and leaves the others as they are (a pair is never replaced); ``goldset filter`` then checks them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from goldset.errors import UsageError

if TYPE_CHECKING:
    from goldset.schema import Chunk, QAPair
    from goldset.workspace import Workspace, WorkspaceLike


@dataclass
class ImportReport:
    """What an import did: the pairs read, where they were written, which were already there, how their evidence
    was found, the contexts left out (``unlocated``), what the format does not carry (``lost``) and notes."""

    format: str
    source: Path
    written_to: Path
    pairs: list[QAPair] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    already_there: list[str] = field(default_factory=list)
    evidence: dict[str, int] = field(default_factory=dict)
    unlocated: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _corpus_chunks(spec: str | Path, ws: Workspace | None) -> dict[str, Chunk]:
    """The chunks of a dataset folder, a release, or a chunks ``.jsonl`` file."""
    from goldset.evaluation.datasets import resolve_dataset
    from goldset.io import read_jsonl
    from goldset.schema import Chunk

    path = Path(spec)
    if path.is_file():
        return {c.id: c for c in read_jsonl(path, Chunk)}
    return dict(resolve_dataset(spec, ws).chunks)


def import_pairs(
    format: str,
    path: str | Path,
    *,
    out: str | Path | None = None,
    corpus: str | Path | None = None,
    question_type: str | None = None,
    ws: WorkspaceLike = None,
) -> ImportReport:
    """Read the pairs of a ``format`` file (``ragas``, ``deepeval``, ``hf``, ``labelstudio``, ``csv``) and add
    them to the workspace's ``data/`` (default) or write them to a new dataset folder ``out``.

    ``corpus``: a dataset folder, release name or chunks ``.jsonl`` whose chunks the evidence is located in (beside
    the workspace's). ``question_type``: the type of rows whose file gives none (else such rows are refused).
    """
    from goldset.data import WorkspaceData, is_dataset_folder, write_dataset
    from goldset.interop.fields import build_pairs
    from goldset.interop.registry import get_format
    from goldset.workspace import optional_workspace, resolve_workspace

    fmt = get_format(format)
    source = Path(path)
    into = resolve_workspace(ws) if out is None else None  # the workspace whose data/ receives the pairs
    workspace = into or optional_workspace(ws)
    data = WorkspaceData(into) if into is not None else None
    target = data.folder if data is not None else Path(out or ".")
    if data is None and is_dataset_folder(target):
        raise UsageError(f"out {target}: already holds a dataset (pairs.jsonl); give a new folder as out, or no out "
                         "to add the pairs to the workspace's data/")  # fmt: skip
    read = fmt.read(source)
    known: dict[str, Chunk] = dict(read.chunks)
    if corpus is not None:
        known.update(_corpus_chunks(corpus, workspace))
    kept: dict[str, Chunk] = {}
    if workspace is not None:
        sources = WorkspaceData(workspace).chunk_sources()
        kept = dict(sources.kept)
        known.update(sources.kept)
    built = build_pairs(read.rows, known, question_type=question_type)
    report = ImportReport(
        format=fmt.name,
        source=source,
        written_to=target,
        pairs=built.pairs,
        evidence=dict(sorted(built.located.items())),
        unlocated=built.unlocated,
        lost=fmt.losses(),
        notes=[*read.notes, *built.notes],
    )
    if data is None:
        write_dataset(target, built.pairs, known.values())
        report.added = [p.id for p in built.pairs]
        return report
    existing = data.pairs()
    ids = {p.id for p in existing}
    new = [p for p in built.pairs if p.id not in ids]
    report.already_there = [p.id for p in built.pairs if p.id in ids]
    report.added = [p.id for p in new]
    if new:
        data.write([*existing, *new], {**known, **kept}.values())
    return report

"""Exporting: a dataset's pairs in another tool's format (:func:`export_pairs`), and a run as RAGAS rows
(:func:`export_run`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from goldset.errors import InputError, UsageError
from goldset.interop.base import CONTEXT_MODES, ExportJob

if TYPE_CHECKING:
    from goldset.dataset import Dataset
    from goldset.interop.base import ContextMode
    from goldset.workspace import Workspace, WorkspaceLike


@dataclass
class ExportReport:
    """What an export wrote: the files, how many rows, which pairs, where each goldset field went (``mapping``),
    what the format left behind (``lost``) and what else a reader must know (``notes``)."""

    format: str
    files: list[Path]
    rows: int
    source: str
    selection: str
    mapping: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _dataset(spec: str | Path | None, ws: Workspace | None) -> tuple[Dataset, str]:
    """The dataset a folder or release name gives (default: the workspace's data/), and its label."""
    from goldset.evaluation.datasets import resolve_dataset

    if spec is None:
        if ws is None:
            raise UsageError("dataset: give a dataset folder or a release name (there is no workspace here)")
        spec = ws.data_dir
    return resolve_dataset(spec, ws), str(spec)


def _check_contexts(contexts: str) -> None:
    if contexts not in CONTEXT_MODES:
        raise UsageError(f"contexts {contexts!r}: expected one of {', '.join(CONTEXT_MODES)}")


def export_pairs(
    format: str,
    out: str | Path | None = None,
    *,
    dataset: str | Path | None = None,
    status: str = "golden",
    contexts: ContextMode | None = None,
    license: str | None = None,
    ws: WorkspaceLike = None,
) -> ExportReport:
    """Write the pairs of ``dataset`` (a dataset folder or a release name such as ``v1.2.0``; default: the
    workspace's ``data/``) in ``format`` (``ragas``, ``deepeval``, ``hf``, ``labelstudio``, ``csv``) to ``out``
    (default: the format's file name in the current folder).

    ``status``: ``golden`` (a release's golden set; in a working folder the passed and accepted pairs), ``all``, or
    one status. ``contexts`` (ragas, deepeval): ``quotes`` (each evidence quote) or ``chunks`` (each cited chunk's
    whole text); default: the format's (ragas: ``chunks``, which RAGAS' context metrics compare; deepeval:
    ``quotes``). ``license``: the dataset card's license (hf).
    """
    from goldset.context import Context
    from goldset.interop.fields import select_pairs
    from goldset.interop.registry import get_format
    from goldset.review.settings import ReviewSettings

    fmt = get_format(format)
    if contexts is None:
        contexts = fmt.default_contexts
    _check_contexts(contexts)
    if contexts != "quotes" and not fmt.has_contexts:
        raise UsageError(f"contexts {contexts!r}: the {fmt.name} format has no reference contexts to fill")
    ctx = Context.optional(ws)
    workspace = ctx.ws
    data, source = _dataset(dataset, workspace)
    pairs, selection = select_pairs(data, status)
    job = ExportJob(
        pairs=pairs,
        chunks=data.chunks,
        manifest=data.manifest,
        source=source,
        selection=selection,
        whole_corpus=data.whole_corpus,
        contexts=contexts,
        license=license,
        label_config=workspace.root / ctx.section(ReviewSettings).label_studio.config_file if workspace else None,
    )
    target = Path(out) if out is not None else Path(fmt.default_out)
    files = fmt.write(job, target)
    return ExportReport(
        format=fmt.name,
        files=files,
        rows=len(pairs),
        source=source,
        selection=selection,
        mapping=fmt.mapping_lines(),
        lost=fmt.losses(contexts),
        notes=job.notes,
    )


def export_run(
    run: str | Path,
    out: str | Path | None = None,
    *,
    dataset: str | Path | None = None,
    contexts: ContextMode = "chunks",
    ws: WorkspaceLike = None,
) -> ExportReport:
    """Write a run's samples as RAGAS rows (:func:`goldset.interop.ragas.run_rows`) to ``out`` (default
    ``ragas-run.jsonl``), so RAGAS scores the answers goldset scored.

    ``run``: a run folder or run id (``runs/<run-id>``: its dataset is the one it was scored against, checked by
    content hash, and goldset's scores come along), or a run file (JSON Lines of samples) with ``dataset`` (default:
    the workspace's ``data/``). ``contexts``: the reference contexts, ``chunks`` (the cited chunks' texts, what
    RAGAS' context metrics compare) or ``quotes``.
    """
    from goldset.evaluation import datasets
    from goldset.evaluation.run_files import read_run_file
    from goldset.evaluation.runs import read_run
    from goldset.interop import ragas
    from goldset.interop.fields import json_text
    from goldset.io import atomic_write_text
    from goldset.workspace import optional_workspace

    _check_contexts(contexts)
    workspace = optional_workspace(ws)
    path = Path(run)
    notes: list[str] = []
    if path.is_file():
        data, source = _dataset(dataset, workspace)
        fingerprint = datasets.dataset_fingerprint(data)
        read = read_run_file(path, data, fingerprint=fingerprint)
        samples, scores, notes = read.samples, None, list(read.notes)
        evaluated, _ = datasets.select_pairs(data)
        absent = [p.id for p in evaluated if p.id not in samples]
        if absent:
            notes.append(f"{len(absent)} pair(s) of the golden set are not in the run file (goldset scores them as "
                         f"failed): {', '.join(absent[:3])}{' …' if len(absent) > 3 else ''}")  # fmt: skip
    else:
        stored = read_run(run, workspace)
        spec = dataset if dataset is not None else stored.meta.dataset
        try:
            data, source = _dataset(spec, workspace)
        except InputError as exc:
            raise InputError(
                f"{stored.folder}: the dataset it was scored against ({spec}) cannot be read ({exc}); give dataset, "
                "the dataset or release it was scored against"
            ) from None
        fingerprint = datasets.dataset_fingerprint(data)
        if stored.meta.manifest_hash and fingerprint != stored.meta.manifest_hash:
            raise InputError(
                f"{stored.folder}: scored against dataset content {stored.meta.manifest_hash}, but {source} has "
                f"{fingerprint}; give dataset, the dataset or release the run was scored against"
            )
        samples, scores = stored.samples, stored.scores_by_id()
    pairs = {p.id: p for p in data.pairs}
    unknown = sorted(set(samples) - set(pairs))
    if unknown:
        raise InputError(f"{run}: {len(unknown)} sample(s) answer pairs {source} does not have ({unknown[0]} …)")
    rows = ragas.run_rows(samples, pairs, data.chunks, contexts, notes, scores)
    failed = sum(1 for r in rows if r["error"])
    if failed:
        notes.append(f"{failed} failed sample(s) are written with an empty response and their error (goldset scores "
                     "them as failures); filter on the error column to leave them out")  # fmt: skip
    target = Path(out) if out is not None else Path("ragas-run.jsonl")
    atomic_write_text(target, json_text(rows, ascii_only=True))
    return ExportReport(
        format="ragas",
        files=[target],
        rows=len(rows),
        source=source,
        selection=f"the {len(rows)} samples of run {run}",
        mapping=[
            "user_input ← the sample's question",
            "response ← the sample's answer",
            "retrieved_contexts ← the sample's contexts[].text (rank order)",
            "retrieved_context_ids ← contexts[].chunk_id (when every context has one)",
            *ragas.FORMAT.mapping_lines()[1:],
            "error, goldset_scores ← the sample's error and goldset's metric values (extra columns)",
        ],
        lost=[
            "latency, tokens_in, tokens_out, cost_usd (system figures RAGAS does not take)",
            "contexts[].doc_id, contexts[].score",
        ],
        notes=notes,
    )

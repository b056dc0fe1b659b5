"""`goldset export` and `goldset import`: thin wrappers over :mod:`goldset.interop`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from goldset.cli._common import WorkspaceOption, console, err_console

app = typer.Typer()

FORMAT_NAMES = "ragas, deepeval, hf, labelstudio, csv"


def _print_lines(title: str, lines: list[str], limit: int = 10) -> None:
    if not lines:
        return
    out = console()
    out.print(title)
    for line in lines[:limit]:
        out.print(f"  {line}", markup=False)
    if len(lines) > limit:
        out.print(f"  … and {len(lines) - limit} more")


@app.command("export")
def export(
    format: Annotated[str, typer.Option("--format", "-f", help=f"Target format: {FORMAT_NAMES}.")],
    dataset: Annotated[
        str | None,
        typer.Option("--dataset", "-d", help="Dataset folder or release (e.g. v1.2.0); default: workspace data/."),
    ] = None,
    status: Annotated[
        str, typer.Option("--status", help="golden (the golden set), all, or one status (accepted, passed, …).")
    ] = "golden",
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="File (hf: folder) to write; default: ragas.jsonl, deepeval.json, hf-dataset/, labelstudio.json, "
            "pairs.csv, ragas-run.jsonl (--run).",
        ),
    ] = None,
    run: Annotated[
        str | None,
        typer.Option("--run", help="RAGAS only: export this run (a run folder or id, or a run file) instead of pairs."),
    ] = None,
    contexts: Annotated[
        str | None,
        typer.Option(
            "--contexts",
            help="ragas/deepeval reference contexts: chunks (the cited chunks' texts; ragas default) or quotes "
            "(evidence quotes; deepeval default).",
        ),
    ] = None,
    license: Annotated[
        str | None, typer.Option("--license", help="hf: the dataset card's license (e.g. mit, cc-by-4.0).")
    ] = None,
    workspace: WorkspaceOption = None,
) -> None:
    """Export the golden set (or every pair) for RAGAS, DeepEval, Hugging Face, Label Studio or a spreadsheet."""
    from goldset.errors import UsageError
    from goldset.interop.exporter import export_pairs, export_run

    if run is not None:
        if format != "ragas":
            raise UsageError(f"--run: a run is exported for RAGAS only (--format ragas), not {format}")
        if status != "golden":
            raise UsageError("--status chooses pairs; a run export takes the run's samples")
        report = export_run(run, out, dataset=dataset, contexts=contexts or "chunks", ws=workspace)  # type: ignore[arg-type]
    else:
        report = export_pairs(format, out, dataset=dataset, status=status, contexts=contexts,  # type: ignore[arg-type]
                              license=license, ws=workspace)  # fmt: skip
    shown = ", ".join(str(f) for f in report.files)
    console().print(f"wrote {report.rows} {'sample' if run else 'pair'}(s) of {report.source} ({report.selection}) "
                    f"as {report.format} to {shown}", markup=False)  # fmt: skip
    _print_lines("fields:", report.mapping, limit=len(report.mapping))
    _print_lines("not carried:", report.lost, limit=len(report.lost))
    for note in report.notes:
        err_console().print(f"note: {note}", markup=False)


@app.command("import")
def import_(
    file: Annotated[Path, typer.Argument(help="The file to import (hf: the folder).")],
    format: Annotated[
        str, typer.Option("--format", "-f", help=f"Its format: {FORMAT_NAMES}, queries (real user questions).")
    ],
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Write a new dataset folder instead of adding to the workspace's data/."),
    ] = None,
    corpus: Annotated[
        str | None,
        typer.Option("--corpus", help="Dataset folder, release or chunks .jsonl to find evidence in (besides the KB)."),
    ] = None,
    question_type: Annotated[
        str | None,
        typer.Option(
            "--question-type", "--type", help="Question type of rows whose file gives none (else they are refused)."
        ),
    ] = None,
    workspace: WorkspaceOption = None,
) -> None:
    """Import pairs from RAGAS, DeepEval, Hugging Face, Label Studio or CSV as candidates (then `goldset filter`),
    or real user questions (--format queries: CSV, JSON Lines or one per line; redacted, duplicates merged)."""
    if format == "queries":
        from goldset.queries.intake import import_queries

        got = import_queries(file, workspace)
        if got.encoding != "utf-8":
            err_console().print(f"warning: {got.source}: not UTF-8; decoded as {got.encoding.upper()}", markup=False)
        redacted = ", ".join(f"{k} ×{v}" for k, v in got.redacted.items()) or "nothing"
        blank = f" ({got.blank} without a question, skipped)" if got.blank else ""
        console().print(
            f"read {got.rows} row(s){blank} from {got.source}: {len(got.added)} new question(s), "
            f"{got.merged_exact} exact and {got.merged_near} near duplicate(s) merged, {got.already_imported} already "
            "imported; "
            f"{len(got.questions)} real question(s) asked {got.asked} time(s) in {got.path}; personal data "
            f"redacted: {redacted}",
            markup=False,
        )
        console().print("next: `goldset generate --from-queries` drafts their answers from the KB")
        return
    from goldset.interop.importer import import_pairs

    report = import_pairs(format, file, out=out, corpus=corpus, question_type=question_type, ws=workspace)
    out_console = console()
    there = f", {len(report.already_there)} already there (left as they are)" if report.already_there else ""
    out_console.print(f"read {len(report.pairs)} pair(s) from {report.source}: {len(report.added)} added to "
                      f"{report.written_to} as candidates{there}", markup=False)  # fmt: skip
    if report.evidence:
        out_console.print("evidence: " + ", ".join(f"{how} {n}" for how, n in report.evidence.items()), markup=False)
    _print_lines("contexts left out of the evidence (pairs tagged import:evidence-not-located):", report.unlocated)
    _print_lines("not carried:", report.lost, limit=len(report.lost))
    for note in report.notes:
        err_console().print(f"note: {note}", markup=False)
    if report.added and out is None:
        out_console.print("next: `goldset filter` checks them, `goldset review sample` puts them before experts")

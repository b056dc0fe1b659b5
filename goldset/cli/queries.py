"""`goldset coverage`: how much of real traffic the golden set covers (thin wrapper over goldset.queries)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from goldset.cli._common import WorkspaceOption, console, err_console

app = typer.Typer()


@app.command("coverage")
def coverage(
    queries: Annotated[
        Path | None,
        typer.Option(
            "--queries",
            help="Real questions: CSV, JSON Lines or one per line (default: those `goldset import --format queries` "
            "imported).",
        ),
    ] = None,
    dataset: Annotated[
        str | None, typer.Option("--dataset", "-d", help="Dataset folder or release (e.g. v1.2.0); default data/.")
    ] = None,
    threshold: Annotated[float | None, typer.Option("--threshold", help="Similarity that counts as covered.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the figures and every match as JSON.")] = False,
    html: Annotated[
        Path | None, typer.Option("--html", help="Also write a page with the coverage section of the run report.")
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Also write the coverage record (JSON) here, for `goldset report --coverage`."),
    ] = None,
    store: Annotated[
        bool,
        typer.Option("--store/--no-store", help="Keep it in the workspace as the coverage of the dataset's version."),
    ] = True,
    for_uncovered: Annotated[
        bool, typer.Option("--for-uncovered", help="Import the uncovered questions and draft their answers.")
    ] = False,
    workspace: WorkspaceOption = None,
) -> None:
    """Which real questions the golden set covers: overall, weighted by count, and clusters of the uncovered."""
    import json

    from goldset.cli._common import context as find_ctx
    from goldset.queries.coverage import coverage as run_coverage

    ctx = find_ctx(workspace)
    rep = run_coverage(queries, ctx, dataset=dataset, threshold=threshold, store=store)
    shown = console()
    if as_json:
        shown.print(json.dumps(rep.as_dict(), ensure_ascii=False, indent=2), markup=False, soft_wrap=True)
    else:
        shown.print(f"{rep.questions} real question(s) from {rep.source} (asked {rep.asked} times) against "
                    f"{rep.golden} golden pair(s) of {rep.dataset}", markup=False)  # fmt: skip
        shown.print(f"nearest golden question by {rep.method} similarity; covered at ≥ {rep.threshold:g}")
        shown.print(f"covered   {rep.covered} of {rep.questions} questions ({rep.share:.0%}); {rep.asked_covered} "
                    f"of {rep.asked} asks weighted by count ({rep.weighted_share:.0%})")  # fmt: skip
        if rep.clusters:
            shown.print(f"uncovered {rep.questions - rep.covered} question(s) in {len(rep.clusters)} topic cluster(s):")
        for c in rep.clusters:
            shown.print(f"  [{c.topic}] {len(c.questions)} question(s), asked {c.asked}×", markup=False)
            for example in c.examples:
                shown.print(f"    - {example}", markup=False)
    notes, record = err_console(), rep.record()
    if rep.stored is not None:
        notes.print(f"kept as the coverage of {record.label} in {rep.stored}", markup=False, soft_wrap=True)
    if out is not None:
        from goldset.data import write_coverage

        notes.print(f"coverage record written to {write_coverage(out, record)}", markup=False, soft_wrap=True)
    if html is not None:
        from goldset.evaluation.report import write_coverage_page

        notes.print(f"coverage page written to {write_coverage_page(html, record)}", markup=False, soft_wrap=True)
    if for_uncovered and rep.uncovered:
        from goldset.queries.drafting import draft_answers
        from goldset.queries.intake import import_queries

        wanted = {q.question for q in rep.uncovered}
        known = import_queries(queries, ctx).questions if queries is not None else [m.question for m in rep.matches]
        ids = [q.id for q in known if q.question in wanted]
        drafted = draft_answers(ctx, questions=ids)
        shown.print(
            f"drafted {drafted.answered} answer(s), {drafted.unanswerable} unanswerable, {drafted.rejected} "
            f"rejected, {drafted.failed} failed call(s) for the uncovered questions. Next: goldset filter"
        )

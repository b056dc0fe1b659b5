"""`goldset coverage`: how much of real traffic the golden set covers (thin wrapper over goldset.queries)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from goldset.cli._common import WorkspaceOption, console

app = typer.Typer()


@app.command("coverage")
def coverage(
    queries: Annotated[Path, typer.Option("--queries", help="Real questions: CSV, JSON Lines or one per line.")],
    dataset: Annotated[
        str | None, typer.Option("--dataset", "-d", help="Dataset folder or release (e.g. v1.2.0); default data/.")
    ] = None,
    threshold: Annotated[float | None, typer.Option("--threshold", help="Similarity that counts as covered.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the figures and every match as JSON.")] = False,
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
    rep = run_coverage(queries, ctx, dataset=dataset, threshold=threshold)
    out = console()
    if as_json:
        out.print(json.dumps(rep.as_dict(), ensure_ascii=False, indent=2), markup=False, soft_wrap=True)
    else:
        out.print(f"{rep.questions} real question(s) from {rep.source} (asked {rep.asked} times) against "
                  f"{rep.golden} golden pair(s) of {rep.dataset}", markup=False)  # fmt: skip
        out.print(f"nearest golden question by {rep.method} similarity; covered at ≥ {rep.threshold:g}")
        out.print(f"covered   {rep.covered} of {rep.questions} questions ({rep.share:.0%}); "
                  f"{rep.asked_covered} of {rep.asked} asks weighted by count ({rep.weighted_share:.0%})")  # fmt: skip
        if rep.clusters:
            out.print(f"uncovered {rep.questions - rep.covered} question(s) in {len(rep.clusters)} topic cluster(s):")
        for c in rep.clusters:
            out.print(f"  [{c.topic}] {len(c.questions)} question(s), asked {c.asked}×", markup=False)
            for example in c.examples:
                out.print(f"    - {example}", markup=False)
    if for_uncovered and rep.uncovered:
        from goldset.queries.drafting import draft_answers
        from goldset.queries.intake import import_queries

        imported = import_queries(queries, ctx)
        wanted = {q.question for q in rep.uncovered}
        ids = [q.id for q in imported.questions if q.question in wanted]
        drafted = draft_answers(ctx, questions=ids)
        out.print(
            f"drafted {drafted.answered} answer(s), {drafted.unanswerable} unanswerable, {drafted.rejected} "
            f"rejected, {drafted.failed} failed call(s) for the uncovered questions. Next: goldset filter"
        )

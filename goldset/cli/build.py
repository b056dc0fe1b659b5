"""`goldset build`: the whole loop in one command (ingest → generate → filter → review sample → Label Studio or an
export → release when asked), resumable, with one progress display and a summary of where each output went."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from goldset.cli._common import ProgressDisplay, WorkspaceOption, console, money

if TYPE_CHECKING:
    from goldset.loop import BuildPlan, BuildReport

app = typer.Typer()


@app.command()
def build(
    docs_dir: Annotated[
        Path | None,
        typer.Argument(
            help="Documents folder (default: kb.path from goldset.yaml, else the folder the last build read).",
            show_default=False,
        ),
    ] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", "-n", min=0, help="Generate for at most this many new chunks.")
    ] = None,
    concurrency: Annotated[
        int | None, typer.Option("--concurrency", "-j", min=1, help="Generation calls in flight.")
    ] = None,
    no_llm: Annotated[
        bool,
        typer.Option("--no-llm", help="Call no LLM: skip generation, run the filters without the judge."),
    ] = False,
    keep_going: Annotated[
        bool, typer.Option("--keep-going", help="Carry on when some generation calls failed (default: stop).")
    ] = False,
    label_studio: Annotated[
        bool | None,
        typer.Option(
            "--label-studio/--export",
            help="Push the review sample to Label Studio, or export it as a task file (default: push when a Label "
            "Studio address is configured).",
            show_default=False,
        ),
    ] = None,
    export_file: Annotated[
        Path | None,
        typer.Option("--export-file", help="Task file --export writes (default: review/tasks.json)."),
    ] = None,
    no_review: Annotated[
        bool, typer.Option("--no-review", help="Draw the review sample but neither push nor export it.")
    ] = False,
    sample_fraction: Annotated[
        float | None, typer.Option("--sample-fraction", help="Share of the passed pairs to review (review.fraction).")
    ] = None,
    sample_size: Annotated[
        int | None, typer.Option("--sample-size", min=1, help="Review this many pairs instead of a fraction.")
    ] = None,
    release: Annotated[
        str | None, typer.Option("--release", help="Release the dataset as this version at the end (e.g. 1.0.0).")
    ] = None,
    message: Annotated[
        str | None, typer.Option("--message", "-m", help="The release message (with --release).")
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="Read the documents and estimate the generation calls; change nothing."),
    ] = False,
    queries: Annotated[
        Path | None,
        typer.Option("--queries", help="Real user questions (CSV, JSON Lines, one per line): imported and answered."),
    ] = None,
    workspace: WorkspaceOption = None,
) -> None:
    """Run the loop: ingest, generate, filter, draw the review sample, push it (or export it); release with
    --release. A rerun resumes where the last build stopped."""
    from goldset.cli._common import context as find_ctx
    from goldset.errors import UsageError
    from goldset.loop import BuildStopped, ReviewTarget
    from goldset.loop import build as run_build

    # release, message and the sample's size are checked by goldset.build; the review stage reads sample_fraction
    # (review.fraction) only when it starts, hours later: checked here now
    if sample_fraction is not None and not 0 < sample_fraction <= 1:
        raise UsageError(f"--sample-fraction {sample_fraction}: give a share between 0 and 1")
    if no_review and label_studio is not None:
        raise UsageError("--no-review cannot go with --label-studio/--export")
    if export_file is not None and label_studio is True:
        raise UsageError("--export-file is where --export writes; it cannot go with --label-studio")
    review: ReviewTarget = (
        "none" if no_review else "auto" if label_studio is None else "label-studio" if label_studio else "export"
    )
    if export_file is not None and review == "auto":
        review = "export"
    ws = find_ctx(workspace)
    try:
        with ProgressDisplay(disable=dry_run) as show:
            report = run_build(
                ws, docs=docs_dir, limit=limit, concurrency=concurrency, use_llm=not no_llm, keep_going=keep_going,
                review=review, export_path=export_file, sample_fraction=sample_fraction, sample_size=sample_size,
                release=release, message=message, dry_run=dry_run, queries=queries, progress=show,
            )  # fmt: skip
    except BuildStopped as stopped:
        _print_summary(stopped.report)
        raise
    if report.plan is not None:
        _print_plan(report.plan)
        return
    _print_summary(report)


def _print_plan(plan: BuildPlan) -> None:
    out = console()
    est = plan.estimate
    c = plan.diff.counts()["chunks"]
    out.print(f"documents     {plan.documents} in {plan.docs_dir}: {plan.chunks} chunks "
              f"({c['added']} added, {c['changed']} changed, {c['removed']} removed, {c['unchanged']} unchanged)",
              markup=False)  # fmt: skip
    out.print(f"generate      {est.chunks} chunk(s) to ask ({est.already_done} already have pairs, "
              f"{est.skipped_small} too small): {est.calls} call(s) to pay, "
              f"{est.cache_hits} from the journal")  # fmt: skip
    cost = money(est.cost_usd, est.model)
    out.print(f"              ~{est.tokens:,} tokens, {cost} ({est.model or 'no model configured'})")
    if est.concurrency:
        out.print(f"              {est.concurrency}", markup=False)
    out.print("filter        every check; the judge adds up to one call per new answerable pair")
    review = {"label-studio": "push the sample to Label Studio", "export": "export the sample as a task file",
              "none": "draw the sample only", "auto": "push or export"}[plan.review]  # fmt: skip
    out.print(f"review        {review}")
    out.print(f"release       {plan.release or 'not asked'}")
    out.print("Nothing was changed (dry run).")


def _print_summary(report: BuildReport) -> None:
    from rich.markup import escape

    from goldset.loop import STAGES

    out = console()
    for s in report.stages:
        colour = {"failed": "red", "interrupted": "red", "incomplete": "yellow"}.get(s.status)
        status = f"[{colour}]{s.status:<11}[/]" if colour else f"{s.status:<11}"
        out.print(f"{s.name:<9} {status} {escape(s.summary)}", soft_wrap=True)
    ran = {s.name for s in report.stages}
    missing = [name for name in STAGES if name not in ran]
    if report.stopped_at is not None and missing:
        out.print(f"not run   {', '.join(missing)}")
    if report.outputs:
        out.print("outputs")
        for label, where in report.outputs.items():
            out.print(f"  {label:<22} {where}", markup=False, soft_wrap=True)
    if report.stopped_at is None:
        nxt = _next_step(report)
        if nxt:
            out.print(f"next: {nxt}", markup=False)


def _next_step(report: BuildReport) -> str:
    if report.release is not None:
        v = report.release.version
        return f'goldset eval --dataset {v} (or goldset.load("{v}"))'
    if report.push is not None:
        return "review in Label Studio, then goldset review pull and goldset build --release VERSION -m MESSAGE"
    if report.export is not None:
        return "review the exported tasks, goldset review import EXPORT.json, then goldset build --release VERSION -m M"
    return "goldset build --release VERSION -m MESSAGE when the review is done"

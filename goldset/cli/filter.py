"""`goldset filter`: run the contamination and quality checks over the candidates file (data/pairs.jsonl)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from goldset.cli._common import ProgressDisplay, WorkspaceOption, console, money

if TYPE_CHECKING:
    from goldset.context import Context
    from goldset.filters.report import FilterReport

app = typer.Typer()


@app.command("filter")
def filter_(
    check: Annotated[
        list[str] | None,
        typer.Option("--check", "-c", help="Run only this check (repeatable). Default: every enabled check."),
    ] = None,
    against: Annotated[
        Path | None,
        typer.Option("--against", help="Dataset folder or pairs .jsonl of the previous release (its questions count)."),
    ] = None,
    repair: Annotated[
        bool, typer.Option("--repair", help="Rewrite answers that fail only the verbatim check (LLM), then re-check.")
    ] = False,
    no_llm: Annotated[
        bool, typer.Option("--no-llm", help="Skip the LLM judges (groundedness, duplicate, copy).")
    ] = False,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="Only count the duplicate and copy judges' and closed_book's calls; call "
                     "nothing, write nothing."),
    ] = False,
    workspace: WorkspaceOption = None,
) -> None:
    """Check candidate pairs; record every verdict on the pair; mark them passed or rejected (never deleted)."""
    from goldset.cli._common import context as find_ctx
    from goldset.filters import run_filters

    ws = find_ctx(workspace)
    if dry_run:
        _print_dry_run(ws, check, against, repair, no_llm)
        return
    with ProgressDisplay() as show:
        report = run_filters(ws, checks=check or None, against=against, repair=repair, use_llm=not no_llm,
                             progress=show)  # fmt: skip
    _print_report(report)


def _print_dry_run(ws: Context, check: list[str] | None, against: Path | None, repair: bool, no_llm: bool) -> None:
    from goldset.filters.copy_judge import estimate_copy_judge
    from goldset.filters.pipeline import resolve_checks
    from goldset.filters.settings import FilterSettings
    from goldset.filters.stage_duplicates import estimate_duplicate_judge

    names = resolve_checks(ws.section(FilterSettings), check, repair=repair, use_llm=not no_llm)  # the argument errors
    e = estimate_duplicate_judge(ws, against=against, use_llm=not no_llm)
    out = console()
    if not e.enabled:
        out.print(f"dry run: the duplicate judge would not run ({e.reason}); 0 calls")
    else:
        out.print(f"dry run: duplicate judge {e.model}: {e.candidates} candidate pair(s) among {e.pairs} pair(s), "
                  f"{e.known} judged before; the rest in {e.calls} call(s): {e.cached} from the journal, "
                  f"{e.to_send} to send")  # fmt: skip
        for note in e.notes:
            out.print(f"  note: {note}")
    c = estimate_copy_judge(ws, names, use_llm=not no_llm)
    if not c.enabled:
        out.print(f"dry run: the copy judge would not run ({c.reason}); 0 calls")
    else:
        out.print(f"dry run: copy judge {c.model}: {c.band} pair(s) in the verbatim check's borderline band among "
                  f"{c.pairs} pair(s), one call each: {c.cached} from the journal, {c.to_send} to send; "
                  f"{c.not_asked} not asked (a cheaper check rejects them)")  # fmt: skip
    from goldset.filters import closed_book

    cb = closed_book.estimate(ws, checks=check, use_llm=not no_llm)
    if not cb.enabled:
        out.print(f"dry run: the closed_book check would not run ({cb.reason}); 0 calls")
    else:
        out.print(f"dry run: closed_book {cb.model} (judge {cb.judge}): {cb.asked} pair(s) to ask, {cb.reused} "
                  f"verdict(s) current, {cb.not_asked} already rejected (no call); {cb.asked} closed-book call(s), "
                  f"{cb.answers_cached} from the journal, and up to {cb.judge_calls} agreement call(s), "
                  f"{cb.judge_cached} from the journal: at most {cb.to_send} to send (pairs the groundedness judge "
                  "rejects this run are counted)")  # fmt: skip
    out.print("The groundedness judge and --repair are not counted here. Nothing was called or written.")


def _print_report(report: FilterReport) -> None:
    from rich.table import Table

    out = console()
    if report.n_pairs == 0:
        out.print("No pairs in the candidates file; run `goldset generate` first.")
        return
    types = sorted({t for counts in report.failures_by_type.values() for t in counts} | set(report.status_by_type))
    table = Table(title="checks (then failures per question type)", title_justify="left")
    table.add_column("check", no_wrap=True, min_width=16)
    table.add_column("failure", no_wrap=True)
    for col in ("passed", "failed", "reused", *types):
        table.add_column(col, justify="right")
    for name in report.checks:
        c = report.per_check[name]
        by_type = report.failures_by_type.get(name, {})
        failure = "rejects" if c.severity == "reject" else "flags"
        table.add_row(name, failure, str(c.passed), str(c.failed), str(c.reused),
                      *(str(by_type.get(t, 0)) for t in types))  # fmt: skip
    out.print(table)

    statuses = sorted({s for counts in report.status_by_type.values() for s in counts})
    st = Table(title="status by question type", title_justify="left")
    for col in ("type", *statuses):
        st.add_column(col, justify="left" if col == "type" else "right")
    for t, counts in report.status_by_type.items():
        st.add_row(t, *(str(counts.get(s, 0)) for s in statuses))
    out.print(st)

    for name, why in report.skipped_checks.items():
        out.print(f"{name}: {why}")
    for name, examples in report.examples.items():
        kind = "flags" if report.per_check[name].severity == "flag" else "failures"
        out.print(f"[bold]{name}[/] {kind}, e.g.:")
        for ex in examples:
            out.print(f"  {ex.pair_id}  {ex.question[:70]!r}: {ex.reason}", soft_wrap=True)
    if report.duplicate_groups:
        out.print(f"duplicate groups: {report.duplicate_groups} (one pair kept of each)")
    if report.repaired or report.repair_failed:
        out.print(f"repaired {len(report.repaired)} answer(s); {len(report.repair_failed)} not repaired")
        for pid, why in list(report.repair_failed.items())[:5]:
            out.print(f"  {pid}: {why}")
    if report.judge_errors:
        out.print(f"[yellow]{len(report.judge_errors)} judge call(s) failed; those pairs stay unjudged: re-run[/]")
        for line in report.judge_errors[:3]:
            out.print(f"  {line}", soft_wrap=True)
    for line in report.consistency_lines():
        out.print(line, soft_wrap=True)
    if report.warnings:
        from rich.markup import escape

        from goldset.cli._common import err_console

        for line in report.warnings:
            err_console().print(f"[yellow]{escape(line)}[/]", soft_wrap=True)
    if report.llm:
        out.print(
            f"llm: {report.llm.get('calls', 0)} calls, {report.llm.get('cache_hits', 0)} from the journal, "
            + money(None if report.llm.get("unpriced_requests") else report.llm.get("cost_usd", 0.0), "the judge model")
        )
    if report.duplicate_judge:
        dj = report.duplicate_judge
        out.print(f"  of which duplicate judge: {dj.get('candidates', 0)} candidate pair(s) in {dj.get('batches', 0)} "
                  f"call(s), {dj.get('cache_hits', 0)} from the journal")  # fmt: skip
    if report.copy_judge:
        cj = report.copy_judge
        out.print(f"  copy judge: {cj.get('band', 0)} pair(s) in the borderline band asked ({cj.get('cached', 0)} "
                  f"from the journal): {cj.get('copies', 0)} copies, {cj.get('paraphrases', 0)} paraphrases, "
                  f"{cj.get('failed', 0)} failed (lexical verdict kept); {cj.get('reverted', 0)} put back to "
                  "the lexical verdict")  # fmt: skip
    if report.flagged:
        which = ", ".join(f"{name} {n}" for name, n in report.flagged.items())
        out.print(f"flagged for review (a flag does not reject): {which}")
    totals = ", ".join(f"{k} {v}" for k, v in report.status_counts.items())
    out.print(
        f"{report.n_pairs} pairs: {totals}. Verdicts computed {report.computed}, reused {report.reused}"
        f"{'' if report.written else '; nothing changed, nothing written'}."
    )

"""`goldset eval`, `goldset compare` and `goldset report`: thin wrappers over :mod:`goldset.evaluation`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from goldset.cli._common import ProgressDisplay, WorkspaceOption, console, err_console, money

if TYPE_CHECKING:
    from goldset.context import Context
    from goldset.evaluation.gate import GateResult
    from goldset.evaluation.judge.estimate import JudgeEstimate
    from goldset.evaluation.trend import Trend
    from goldset.schema import RunMeta, RunSummary

app = typer.Typer()

AllowDifferentSettings = Annotated[
    bool,
    typer.Option(
        "--allow-different-settings",
        help="Compare with a run scored with other eval settings anyway (the differing settings are shown).",
    ),
]


def _gate_table(gate: GateResult) -> None:
    from rich.table import Table

    from goldset.evaluation.report import fmt

    table = Table(title="thresholds", title_justify="left")
    for col in ("", "check", "scope", "metric", "value", "limit", "note"):
        table.add_column(col, justify="right" if col in ("value", "limit") else "left")
    for r in gate.rows:
        mark = "[green]ok[/]" if r.passed else "[red]FAIL[/]"
        op = "≥" if r.check == "min" else "≤" if r.check == "max" else "vs"
        table.add_row(
            mark, r.check, r.scope, r.metric, fmt(r.value, r.metric), f"{op} {fmt(r.limit, r.metric)}", r.note
        )
    console().print(table)


@app.command("eval")
def eval_(
    dataset: Annotated[
        str | None,
        typer.Option(
            "--dataset", "-d", help="Dataset folder (pairs.jsonl, chunks.jsonl, manifest.json); default data/."
        ),
    ] = None,
    run: Annotated[
        Path | None, typer.Option("--run", help="JSONL run file your system wrote (RunSample lines).")
    ] = None,
    target: Annotated[
        str | None, typer.Option("--target", help="Python callable package.module:function, sync or async.")
    ] = None,
    endpoint: Annotated[str | None, typer.Option("--endpoint", help="URL goldset POSTs each question to.")] = None,
    baseline: Annotated[
        str | None, typer.Option("--baseline", help="Built-in baseline to run instead of a system: bm25.")
    ] = None,
    kb: Annotated[
        Path | None,
        typer.Option("--kb", help="Documents the bm25 baseline searches (default: the workspace's ingested KB)."),
    ] = None,
    sample: Annotated[
        int | None, typer.Option("--sample", help="Evaluate a stratified subset of N questions (every type kept).")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the --sample subset.")] = 0,
    thresholds: Annotated[
        Path | None, typer.Option("--thresholds", help="YAML of limits; exit 1 with a table when one is not met.")
    ] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Run folder to write (default runs/<run-id>).")] = None,
    concurrency: Annotated[
        int | None, typer.Option("--concurrency", help="Questions in flight at once (targets, endpoints).")
    ] = None,
    timeout: Annotated[float | None, typer.Option("--timeout", help="Seconds per question before it fails.")] = None,
    html: Annotated[Path | None, typer.Option("--html", help="Also write the HTML report to this file.")] = None,
    judge: Annotated[
        bool | None,
        typer.Option(
            "--judge/--no-judge",
            help="Score answers with the LLM judge (faithfulness, completeness, hallucination, relevancy; at most 3 "
            "calls per question). Default: when a judge endpoint is configured (eval.judge.enabled).",
            show_default=False,
        ),
    ] = None,
    system_model: Annotated[
        str | None,
        typer.Option("--system-model", help="Model of the system under test (warns when the judge is the same)."),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Only estimate the judge's calls and cost; call nothing, write nothing.")
    ] = False,
    log: Annotated[
        Path | None,
        typer.Option(
            "--log",
            help="Score a production log instead (a JSONL file or folder: the run format without pair_id, with "
            "timestamp, feedback, topic): reference-free metrics only, no --dataset.",
        ),
    ] = None,
    export_queries: Annotated[
        Path | None,
        typer.Option(
            "--export-queries",
            help="With --log: only write the log's distinct questions to this CSV (question,count) for "
            "`goldset import --format queries`; score nothing.",
        ),
    ] = None,
    allow_different_settings: AllowDifferentSettings = False,
    workspace: WorkspaceOption = None,
) -> None:
    """Evaluate a RAG run against a dataset, write runs/<run-id>/ and check thresholds (exit 1 if not met).
    With --log, score a production log with the reference-free metrics (see `goldset trend`)."""
    from goldset.cli._common import context
    from goldset.errors import GateFailed, UsageError
    from goldset.evaluation.evaluator import check_source, evaluate
    from goldset.evaluation.report import summary_table
    from goldset.evaluation.scoring import overall_score_text

    ctx = context(workspace, optional=True)
    if export_queries is not None and log is None:
        raise UsageError("--export-queries writes the questions of a --log; give the log")
    if log is not None:
        _eval_log(ctx, log, sample=sample, seed=seed, out=out, html=html, judge=judge, dry_run=dry_run,
                  export_queries=export_queries, others={"--dataset": dataset, "--run": run, "--target": target,
                  "--endpoint": endpoint, "--baseline": baseline, "--thresholds": thresholds, "--kb": kb})  # fmt: skip
        return
    if dataset is None:
        if ctx.ws is None:
            raise UsageError("--dataset is required outside a workspace (give a dataset folder)")
        dataset = str(ctx.ws.data_dir)

    if dry_run:
        from goldset.evaluation.judge.estimate import estimate_judging

        check_source(run=run, target=target, endpoint=endpoint, baseline=baseline, kb=kb)
        estimate = estimate_judging(dataset, run=run, ws=ctx, sample=sample, seed=seed, judge=judge)
        _print_estimate(estimate)
        return
    with ProgressDisplay() as show:
        result = evaluate(
            dataset,
            run=run,
            target=target,
            endpoint=endpoint,
            baseline=baseline,
            ws=ctx,
            sample=sample,
            seed=seed,
            out_dir=out,
            thresholds=thresholds,
            allow_different_settings=allow_different_settings,
            concurrency=concurrency,
            timeout_s=timeout,
            kb=kb,
            judge=judge,
            system_model=system_model,
            progress=show,
        )
    for note in result.notes:
        err_console().print(f"note: {note}")
    out_console = console()
    out_console.print(summary_table(result.summary, width=out_console.width))
    overall = overall_score_text(result.summary)
    if overall is not None:
        out_console.print(overall)
    if result.meta.judge is not None:
        out_console.print(judge_line(result.meta, result.summary))
    out_console.print(f"run {result.run_id} written to {result.folder}")
    if html is not None:
        from goldset.evaluation.report import write_report
        from goldset.evaluation.runs import StoredRun

        stored = StoredRun(result.folder, result.meta, result.samples, result.scores, result.summary)
        write_report(html, stored, ws=workspace)  # what was just written, without reading it back
        out_console.print(f"report written to {html}")
    if result.gate is not None:
        _gate_table(result.gate)
        if not result.gate.passed:
            raise GateFailed(result.gate.summary_line())
        out_console.print(result.gate.summary_line())


def _eval_log(
    ctx: Context,
    log: Path,
    *,
    sample: int | None,
    seed: int,
    out: Path | None,
    html: Path | None,
    judge: bool | None,
    dry_run: bool,
    export_queries: Path | None,
    others: dict[str, object],
) -> None:
    from goldset.errors import UsageError
    from goldset.evaluation.logs import estimate_log, evaluate_log
    from goldset.evaluation.logs import export_queries as write_queries
    from goldset.evaluation.report import summary_table

    given = [k for k, v in others.items() if v is not None]
    if given:
        raise UsageError(f"--log scores a production log on its own: give it without {' and '.join(given)}")
    if export_queries is not None:
        n = write_queries(log, export_queries)
        console().print(f"{n} distinct question(s) written to {export_queries} (goldset import --format queries)")
        return
    if dry_run:
        _print_estimate(estimate_log(log, ws=ctx, sample=sample, seed=seed, judge=judge))
        return
    with ProgressDisplay() as show:
        result = evaluate_log(log, ws=ctx, sample=sample, seed=seed, out_dir=out, judge=judge, progress=show)
    for note in result.notes:
        err_console().print(f"note: {note}")
    out_console = console()
    out_console.print(summary_table(result.summary, width=out_console.width))
    if result.meta.judge is not None:
        out_console.print(judge_line(result.meta, result.summary))
    out_console.print(f"log run {result.run_id} (reference-free) written to {result.folder}")
    if html is not None:
        from goldset.evaluation.runs import StoredRun
        from goldset.evaluation.trend import trend_of_runs
        from goldset.evaluation.trend_page import write_trend_page

        stored = StoredRun(result.folder, result.meta, result.samples, result.scores, result.summary)
        write_trend_page(html, trend_of_runs([stored]), run=stored)
        out_console.print(f"report written to {html}")


def judge_line(meta: RunMeta, summary: RunSummary) -> str:
    """One line on the judge of a run: model, calls sent and answered by the journal, cost, failures."""
    from goldset.evaluation.report import judge_info

    failed = sum(summary.judge_failed.values())
    tail = f"; {failed} judge metric value(s) failed and were left out (see notes)" if failed else ""
    return f"judge: {judge_info(meta)}{tail}"


def _print_estimate(e: JudgeEstimate) -> None:
    out = console()
    if not e.enabled:
        out.print(f"dry run: the judge would not run ({e.reason}); 0 judge calls")
        return
    for note in e.notes:
        err_console().print(f"note: {note}")
    kinds = ", ".join(f"{k} {n}" for k, n in e.calls_by_kind.items())
    cost = money(e.cost_usd, e.model)
    out.print(
        f"dry run: judge {e.model} ({e.endpoint}): {e.n_judged} of {e.n_samples} question(s) to judge, "
        f"{e.calls} judge calls ({kinds}; at most {e.max_calls_per_sample} per question), {e.cached} already in the "
        f"journal, {e.to_send} to send"
    )
    out.print(
        f"estimated {e.prompt_tokens:,} prompt + {e.completion_tokens:,} completion tokens for the calls to send, "
        f"cost {cost}" + (f"; {e.embedding_texts} texts to embed" if e.embedding_texts else "")
    )


@app.command()
def compare(
    run_a: Annotated[str, typer.Argument(help="The reference run (folder or run id), e.g. the main branch.")],
    run_b: Annotated[str, typer.Argument(help="The run compared with it (folder or run id).")],
    resamples: Annotated[int, typer.Option("--resamples", help="Bootstrap and permutation resamples.", min=100)] = 2000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the resampling.")] = 0,
    worst: Annotated[int, typer.Option("--worst", help="Questions that got worse to list.")] = 10,
    allow_different_settings: AllowDifferentSettings = False,
    workspace: WorkspaceOption = None,
) -> None:
    """Per-metric differences B − A: paired-bootstrap 95% intervals, verdicts corrected for the number of metrics
    (Holm–Bonferroni), and the questions that got worse."""
    from rich.table import Table

    from goldset.evaluation.compare import compare_runs
    from goldset.evaluation.report import fmt
    from goldset.evaluation.runs import read_run
    from goldset.workspace import optional_workspace

    ws = optional_workspace(workspace)
    a, b = read_run(run_a, ws), read_run(run_b, ws)
    cmp = compare_runs(
        a, b, n_resamples=resamples, seed=seed, max_regressions=worst, allow_different_settings=allow_different_settings
    )
    out = console()
    if cmp.setting_differences:
        err_console().print(
            f"warning: the runs were scored with different settings: {'; '.join(cmp.setting_differences)}"
        )
    table = Table(title=f"{cmp.run_b} vs {cmp.run_a}", title_justify="left")
    for col in ("metric", "n", "A", "B", "B − A", f"{cmp.confidence:.0%} CI", "p (Holm)", "verdict"):
        table.add_column(col, justify="left" if col in ("metric", "verdict") else "right", no_wrap=True)
    for m in cmp.metrics:
        style = {"better": "green", "worse": "red"}.get(m.verdict, "dim")
        table.add_row(
            m.metric,
            str(m.n),
            fmt(m.mean_a, m.metric),
            fmt(m.mean_b, m.metric),
            f"{m.diff:+.3f}",
            f"[{m.ci_low:+.3f}, {m.ci_high:+.3f}]",
            f"{m.p_adjusted:.3g}",
            f"[{style}]{'n.s.' if m.verdict == 'no clear change' else m.verdict}[/]",
        )
    table.caption = f"n.s.: not significant after the correction. {cmp.method()}"
    out.print(table)
    if cmp.only_a or cmp.only_b:
        out.print(f"questions only in A: {len(cmp.only_a)}, only in B: {len(cmp.only_b)} (left out of the comparison)")
    out.print(f"{cmp.n_worse} question(s) got worse on at least one quality metric")
    if cmp.regressions:
        worse = Table(title="questions that got worse", title_justify="left")
        for col in ("pair", "type", "metric", "A", "B", "question"):
            worse.add_column(col)
        for r in cmp.regressions:
            worse.add_row(r.pair_id, r.question_type, r.metric, fmt(r.value_a), fmt(r.value_b), (r.question or "")[:80])
        out.print(worse)


@app.command()
def report(
    runs: Annotated[
        list[str],
        typer.Argument(
            help="Run folder or run id; several (oldest first): the trend page drawing each metric across them."
        ),
    ],
    baseline: Annotated[str | None, typer.Option("--baseline", help="Run to compare with (same dataset).")] = None,
    html: Annotated[Path | None, typer.Option("--html", help="Write a self-contained HTML report here.")] = None,
    coverage: Annotated[
        Path | None,
        typer.Option(
            "--coverage",
            help="Coverage record (`goldset coverage --out`) to show in the --html report; it must be of the run's "
            "dataset. Default: the workspace's coverage of that dataset, when there is one.",
        ),
    ] = None,
    no_coverage: Annotated[
        bool, typer.Option("--no-coverage", help="Leave the coverage of real traffic out of the --html report.")
    ] = False,
    allow_different_settings: AllowDifferentSettings = False,
    workspace: WorkspaceOption = None,
) -> None:
    """Show a run's metrics and likely causes; with --html, write a self-contained report with charts. Several
    runs, or a log run: the trend across them (runs not comparable on one line are refused)."""
    from goldset.evaluation.compare import check_comparable
    from goldset.evaluation.diagnose import diagnose
    from goldset.evaluation.report import summary_table, write_report
    from goldset.evaluation.runs import read_run
    from goldset.workspace import optional_workspace

    if coverage is not None and no_coverage:
        from goldset.errors import UsageError

        raise UsageError("--coverage FILE shows a coverage and --no-coverage leaves it out; give one of them")
    if coverage is not None and html is None:
        from goldset.errors import UsageError

        raise UsageError("--coverage FILE is shown in the HTML report; give --html FILE too")
    ws = optional_workspace(workspace)
    stored = [read_run(r, ws) for r in runs]
    if len(stored) > 1 or stored[0].meta.reference_free:
        from goldset.errors import UsageError
        from goldset.evaluation.trend import trend_of_runs

        if baseline is not None:
            raise UsageError("--baseline compares two runs; a report of several runs or of a log run is a trend")
        t = trend_of_runs(stored, allow_different_settings=allow_different_settings)
        if len(stored) == 1:
            for note in stored[0].summary.notes:
                err_console().print(f"note: {note}")
            console().print(summary_table(stored[0].summary, width=console().width))
        print_trend(t)
        if html is not None:
            from goldset.evaluation.trend_page import write_trend_page

            write_trend_page(html, t, run=stored[0] if len(stored) == 1 else None)
            console().print(f"report written to {html}")
        return
    current = stored[0]
    if coverage is not None:  # a coverage of other data is refused before anything is printed
        from goldset.evaluation.report import run_coverage

        run_coverage(current, ws, coverage_file=coverage)
    base = read_run(baseline, ws) if baseline else None
    if base is not None:
        differ = check_comparable(
            base.meta,
            current.meta,
            (str(base.folder), str(current.folder)),
            allow_different_settings=allow_different_settings,
        )
        if differ:
            err_console().print(f"warning: the runs were scored with different settings: {'; '.join(differ)}")
    out = console()
    for note in current.summary.notes:
        err_console().print(f"note: {note}")
    out.print(summary_table(current.summary, base.summary if base else None, width=out.width))
    out.print(judge_line(current.meta, current.summary))
    for d in diagnose(current.summary):
        colour = "red" if d.severity == "critical" else "yellow"
        out.print(f"[{colour}]likely cause:[/] {d.cause}\n  {d.finding}\n  try: {d.advice}")
    if html is not None:
        write_report(html, current, base, allow_different_settings=allow_different_settings, ws=ws,
                     coverage=not no_coverage, coverage_file=coverage)  # fmt: skip
        out.print(f"report written to {html}")


@app.command()
def trend(
    runs: Annotated[
        list[str] | None,
        typer.Argument(help="Runs to draw, oldest first (folders or run ids); default: every log run in runs/."),
    ] = None,
    by: Annotated[
        str | None, typer.Option("--by", help="day (log runs' default) or run (golden-set runs' only choice).")
    ] = None,
    last: Annotated[int | None, typer.Option("--last", help="Only the latest N log runs found in runs/.")] = None,
    show: Annotated[int, typer.Option("--show", help="Latest points shown per metric in the terminal.")] = 7,
    html: Annotated[Path | None, typer.Option("--html", help="Write the trend page (charts) here.")] = None,
    gate: Annotated[
        bool, typer.Option("--gate", help="Exit 1 when a metric of the whole traffic dropped at the latest step.")
    ] = False,
    allow_different_settings: AllowDifferentSettings = False,
    workspace: WorkspaceOption = None,
) -> None:
    """Each metric over time (per day of log runs, or per run) with its 95% interval, per language and topic;
    marks drops beyond the interval, and with --gate fails on one at the latest step (exit 1)."""
    from goldset.cli._common import context
    from goldset.errors import GateFailed, UsageError
    from goldset.evaluation.trend import trend as make_trend

    if by not in (None, "day", "run"):
        raise UsageError(f"--by {by}: give day or run")
    ctx = context(workspace, optional=True)
    t = make_trend(runs or None, ws=ctx, by=by, last=last,  # type: ignore[arg-type]
                   allow_different_settings=allow_different_settings)  # fmt: skip
    print_trend(t, show)
    if html is not None:
        from goldset.evaluation.trend_page import write_trend_page

        write_trend_page(html, t)
        console().print(f"trend page written to {html}")
    if gate:
        dropped = t.gated_drops()
        if dropped:
            raise GateFailed(f"trend gate failed: {len(dropped)} metric(s) dropped on {t.labels[-1]}: "
                             + ", ".join(d.metric for d in dropped))  # fmt: skip
        console().print(f"trend gate passed: no drop beyond the interval on {t.labels[-1]}")


def print_trend(t: Trend, show: int = 7) -> None:
    """The trend of the whole traffic as a table (the latest ``show`` points), then every drop, one per line."""
    from rich.table import Table

    from goldset.evaluation.report import fmt

    for note in t.notes:
        err_console().print(f"note: {note}")
    out = console()
    fits = max(1, (out.width - 20) // 15)  # columns of "0.123 ±0.045" the terminal holds
    labels = t.labels[-min(show, fits):]
    table = Table(title=f"trend per {t.by} ({len(t.labels)} point(s), {len(t.runs)} run(s))", title_justify="left")
    table.add_column("metric", no_wrap=True)
    for label in labels:
        table.add_column(label if t.by == "day" else label[:16], justify="right", no_wrap=True)
    dropped = {(d.metric, d.after) for d in t.drops if d.group == "all"}
    for s in t.of("all"):
        by_label = {p.label: p for p in s.points}
        cells = []
        for label in labels:
            p = by_label.get(label)
            if p is None:
                cells.append("–")
                continue
            text = fmt(p.value, s.metric)
            if p.low is not None and p.high is not None:
                text += f" ±{fmt((p.high - p.low) / 2, s.metric)}"
            cells.append(f"[red]▼ {text}[/]" if (s.metric, label) in dropped else text)
        table.add_row(s.metric, *cells)
    table.caption = t.method()
    out.print(table)
    groups = [g for g in t.groups() if g != "all"]
    if groups:
        from goldset.evaluation.trend import HEADLINE

        shown = [s.metric for s in t.of("all") if s.metric in HEADLINE][:6]
        per = Table(title=f"latest {t.by} ({t.labels[-1]}) per group", title_justify="left")
        per.add_column("group", no_wrap=True)
        for m in shown:
            per.add_column(m, justify="right")
        last = t.labels[-1]
        dropped_at = {(d.metric, d.group) for d in t.drops if d.after == last}
        for g in groups:
            latest = {s.metric: s.points[-1] for s in t.of(g) if s.points and s.points[-1].label == last}
            cells = []
            for m in shown:
                p = latest.get(m)
                text = "–" if p is None else f"{fmt(p.value, m)} (n {p.n})"
                cells.append(f"[red]▼ {text}[/]" if (m, g) in dropped_at else text)
            per.add_row(g, *cells)
        out.print(per)
    if t.drops:
        out.print(f"[red]{len(t.drops)} drop(s) beyond the interval:[/]")
        for d in t.drops:
            out.print(f"  ▼ {d.line()}")
    else:
        out.print("no drop beyond the interval")

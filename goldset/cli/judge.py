"""`goldset judge calibrate`: the groundedness judge against the experts' decisions (accuracy, kappa, variance);
`goldset judge duplicate-threshold`: the semantic-duplicate threshold of the embedding model, from labelled pairs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from goldset.cli._common import ProgressDisplay, WorkspaceOption, console

if TYPE_CHECKING:
    from goldset.review.calibration import CalibrationReport

app = typer.Typer()
group = typer.Typer(
    name="judge",
    help="The LLM judge: how far its verdicts agree with the experts'.",
    no_args_is_help=True,
)
app.add_typer(group)


@group.command()
def calibrate(
    judge_samples: Annotated[
        int,
        typer.Option(
            "--judge-samples",
            help="Judge every pair N times (repeats are distinct calls, cached like any other) to measure the judge's "
            "variance.",
        ),
    ] = 1,
    workspace: WorkspaceOption = None,
) -> None:
    """Judge the expert-reviewed pairs with the filters' groundedness judge and report its agreement with the
    experts (accuracy, Cohen's kappa, confusion matrix; per language and question type). Stored in the manifest,
    so the next release carries it."""
    from goldset.cli._common import context as find_ctx
    from goldset.errors import UsageError
    from goldset.review.calibration import calibrate as run_calibrate

    if judge_samples < 1:
        raise UsageError(f"--judge-samples must be 1 or more, got {judge_samples}")
    ws = find_ctx(workspace)
    with ProgressDisplay() as show:
        report = run_calibrate(ws, samples=judge_samples, progress=show)
    _print(report)


def _print(r: CalibrationReport) -> None:
    import statistics

    from rich.table import Table

    from goldset.review.calibration import LEFT_OUT, RULES
    from goldset.schema.manifest import calibration_summary, kappa_strength

    c = r.calibration
    out = console()
    temperature = "?" if c.temperature is None else f"{c.temperature:g}"
    out.print(f"judge         {c.check}: {c.model} (endpoint {c.endpoint}, prompt {c.prompt_id} {c.prompt_hash[:12]}, "
              f"temperature {temperature}), {c.samples} sample(s) per pair")  # fmt: skip
    out.print(f"expert labels {c.reviewed} reviewed pairs; {c.overall.pairs} in the figures")
    order = {key: i for i, key in enumerate([*RULES, *LEFT_OUT])}
    for key, n in sorted(c.rules.items(), key=lambda kv: order.get(kv[0], len(order))):
        out.print(f"  {n:>5}  {RULES.get(key, key)}")
    if c.left_out:
        out.print(f"left out      {sum(c.left_out.values())} pairs")
        for key, n in sorted(c.left_out.items(), key=lambda kv: order.get(kv[0], len(order))):
            out.print(f"  {n:>5}  {LEFT_OUT.get(key, key)}")
    if c.judged_pre_edit:
        out.print(f"edited pairs  {c.judged_pre_edit} judged on the text the expert was shown (before the edit)")

    table = Table(title="agreement (expert label x judge label; the first sample)", title_justify="left")
    for col in ("group", "pairs", "accuracy", "Cohen's kappa", "both grounded", "false alarms", "missed",
                "both not grounded"):  # fmt: skip
        table.add_column(col, justify="left" if col in ("group", "Cohen's kappa") else "right", no_wrap=True)
    summary = calibration_summary(c)
    for row in summary.rows if summary is not None else []:
        a = row.agreement
        acc = "-" if row.accuracy is None else f"{row.accuracy:.0%}"
        kappa = ("too few pairs" if row.too_few else "n/a: one expert label" if row.kappa is None
                 else f"{row.kappa:.2f} ({kappa_strength(row.kappa)})")  # fmt: skip
        table.add_row(row.group, str(row.pairs), acc, kappa, str(a.both_grounded), str(a.false_alarms),
                      str(a.missed), str(a.both_not_grounded))  # fmt: skip
    out.print(table)
    out.print("  false alarm: the expert found the answer grounded, the judge did not; missed: the other way round "
              "(an unsupported answer the filters would let pass)")  # fmt: skip
    out.print(f"  kappa is shown from review.calibration.min_pairs = {c.min_pairs} pairs on; with fewer it would "
              "look precise and mean little")  # fmt: skip

    v = c.variance
    if v is not None:
        accs = [a for a in v.accuracy if a is not None]
        kappas = [k for k in v.kappa if k is not None]
        acc_range = f"{min(accs):.0%}-{max(accs):.0%}" if accs else "-"
        kappa_range = f"{min(kappas):.2f}-{max(kappas):.2f}" if kappas else "undefined"
        if len(kappas) > 1:
            kappa_range += f" (sd {statistics.stdev(kappas):.2f})"
        out.print(f"variance      over {v.samples} samples: accuracy {acc_range}, kappa {kappa_range}")
        out.print(f"              {v.unstable_pairs} of {c.overall.pairs} pairs changed label between samples "
                  f"(mean flip rate {v.mean_flip_rate:.1%})")  # fmt: skip
        for pid, rate in list(v.flip_rates.items())[:5]:
            out.print(f"  {pid}: flip rate {rate:.0%}")
        if c.temperature == 0:
            out.print("              (temperature 0: the repeats show only the server's own nondeterminism)")
    if c.disagreements:
        shown = list(c.disagreements.items())[:5]
        more = f" (and {len(c.disagreements) - len(shown)} more in the manifest)" if len(c.disagreements) > 5 else ""
        out.print("disagreements " + ", ".join(f"{pid} {kind}" for pid, kind in shown) + more)
    for note in r.notes:
        from rich.markup import escape

        out.print(f"[yellow]warning: {escape(note)}[/]", soft_wrap=True)
    if r.judge_errors:
        out.print(f"[yellow]{len(r.judge_errors)} judge call(s) failed; those pairs are left out: re-run[/]")
        for line in r.judge_errors[:3]:
            out.print(f"  {line}")
    llm = r.llm
    out.print(f"llm           {llm.get('calls', 0)} calls, {llm.get('cache_hits', 0)} from the journal, "
              f"${llm.get('cost_usd', 0.0):.4f}")  # fmt: skip
    warning = c.warning()
    if warning is None:
        out.print(f"[green]agreement     kappa at or above review.calibration.min_kappa {c.min_kappa:.2f}[/]")
    else:
        from rich.markup import escape

        out.print(f"[yellow]{escape(warning)}[/]")
    out.print(f"written       {r.manifest_path} (the next release carries it)")


@group.command("duplicate-threshold")
def duplicate_threshold(
    labelled: Annotated[
        Path,
        typer.Argument(
            help="JSON Lines of labelled question pairs: {\"question_a\": …, \"question_b\": …, \"same\": true}.",
            exists=True,
            dir_okay=False,
        ),
    ],
    workspace: WorkspaceOption = None,
) -> None:
    """Pick the cosine threshold of semantic duplicates for the judge endpoint's embedding model from labelled
    pairs (best F1), show how the threshold in the settings does on them, and print the goldset.yaml lines."""
    from goldset.cli._common import context as find_ctx
    from goldset.filters.thresholds import calibrate_semantic_threshold

    r = calibrate_semantic_threshold(find_ctx(workspace), labelled)
    out = console()
    out.print(f"embedding model  {r.model}: {r.n_same} pair(s) labelled same, {r.n_different} different")
    for name, cut in (("picked", r.pick), ("current", r.current)):
        out.print(f"{name:<16} threshold {cut.threshold:.4f}: precision {cut.precision:.2f}, recall "
                  f"{cut.recall:.2f}, F1 {cut.f1:.2f}")  # fmt: skip
    out.print("set it in goldset.yaml:")
    out.print(r.yaml(), markup=False, highlight=False)

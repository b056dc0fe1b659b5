"""`goldset review sample|push|pull|status|export|import`: expert review of a sample in Label Studio."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from goldset.cli._common import ProgressDisplay, WorkspaceOption, console

if TYPE_CHECKING:
    from goldset.review.apply import ApplyReport
    from goldset.schema.manifest import AcceptanceEstimate, ReviewSampleStats

app = typer.Typer()
group = typer.Typer(
    name="review",
    help="Expert review in Label Studio: draw a sample, push it, pull the decisions, estimate the rest's quality.",
    no_args_is_help=True,
)
app.add_typer(group)

UrlOption = Annotated[
    str | None,
    typer.Option("--url", help="Label Studio address (default: review.label_studio.url, else $LABEL_STUDIO_URL)."),
]


@group.command()
def sample(
    fraction: Annotated[
        float | None, typer.Option("--fraction", help="Share of the passed pairs to draw (default review.fraction).")
    ] = None,
    size: Annotated[int | None, typer.Option("--size", help="Draw this many pairs instead of a fraction.")] = None,
    seed: Annotated[
        int | None, typer.Option("--seed", help="Seed (default review.seed): same seed, same sample.")
    ] = None,
    random_share: Annotated[
        float | None,
        typer.Option("--random-share", help="Share drawn uniformly at random: the estimate's (review.random_share)."),
    ] = None,
    redraw: Annotated[
        bool, typer.Option("--redraw", help="Discard the latest round (no decisions yet) and draw it again.")
    ] = False,
    workspace: WorkspaceOption = None,
) -> None:
    """Draw a stratified, risk-first sample with a random part from the passed pairs not yet reviewed."""
    from goldset.cli._common import context as find_ctx
    from goldset.review.sampling import sample as draw

    r = draw(find_ctx(workspace), fraction=fraction, size=size, seed=seed, random_share=random_share, redraw=redraw)
    out = console()
    if r.discarded:
        out.print(f"discarded the previous draw ({r.discarded} pairs)")
    if r.round is None:
        out.print("No passed pair that no earlier round held: nothing to sample (run `goldset filter` first?).")
        return
    from rich.table import Table

    table = Table(title=f"round {r.round} (seed {r.seed}): {r.sampled} of {r.population} pairs", title_justify="left")
    for col in ("stratum", "pairs", "risk", "random"):
        table.add_column(col, justify="left" if col == "stratum" else "right")
    for s, (n, risk, rnd) in r.per_stratum.items():
        table.add_row(s, str(n), str(risk), str(rnd))
    out.print(table)
    reasons = ", ".join(f"{k} {v}" for k, v in sorted(r.risk_reasons.items()))
    out.print(f"risk part {r.risk}{f' ({reasons})' if reasons else ''}; random part {r.random}, in {r.strata} strata")
    if r.risk_reasons.get("real"):
        out.print(f"real users' questions come first in the risk part ({r.risk_reasons['real']}, the most asked first)")
    configured = "|".join(r.configured_strata) or "all"
    used = "|".join(r.dimensions) or "all"
    if r.merged or used != configured:
        pooled = "; ".join(f"{s} <- {len(held)}" for s, held in list(r.merged.items())[:4])
        more = f" (+{len(r.merged) - 4} more)" if len(r.merged) > 4 else ""
        out.print(f"strata fitted to the random part (aiming at {r.min_random_per_stratum} draws each): the "
                  f"{r.fine_strata} strata of {configured} became {r.strata}"
                  + (f", by {used}" if used != configured else "")
                  + (f"; pooled: {pooled}{more}" if pooled else ""))  # fmt: skip
    out.print(f"the estimate speaks for {r.speaks_for} of the {r.remainder} pairs outside the risk part; with the "
              f"{r.risk} risk pairs (reviewed one by one), {r.covered_share:.0%} of the {r.population} passed pairs "
              "are covered")  # fmt: skip
    if r.uncovered:
        left = r.remainder - r.speaks_for
        out.print(f"[yellow]{len(r.uncovered)} strata ({left} pairs) have no random pair: the estimate says nothing "
                  f"of them[/] (e.g. {r.uncovered[0]}); raise --random-share (review.random_share)")  # fmt: skip
    out.print(f"recorded in {r.path} and the manifest. Next: goldset review push (or export FILE)")


@group.command()
def push(url: UrlOption = None, workspace: WorkspaceOption = None) -> None:
    """Create or reuse the Label Studio project and import the sampled pairs (idempotent)."""
    from goldset.cli._common import context as find_ctx
    from goldset.review.project import push as do_push

    with ProgressDisplay() as show:
        r = do_push(find_ctx(workspace), url=url, progress=show)
    out = console()
    made = "created" if r.created else "reused"
    changes = f" (updated: {', '.join(r.project_changes)})" if r.project_changes else ""
    out.print(f"project {r.project} {made} at {r.url}{changes}")
    out.print(f"{r.waiting} pairs wait for review: {r.imported} imported, {r.updated} updated, "
              f"{r.unchanged} already there")  # fmt: skip
    if r.duplicate_tasks:
        out.print(f"[yellow]{len(r.duplicate_tasks)} pairs have more than one task[/] (e.g. {r.duplicate_tasks[0]});"
                  " pull resolves their annotations together")  # fmt: skip
    out.print(f"review at {r.url}/projects/{r.project}/data, then: goldset review pull")


@group.command()
def pull(url: UrlOption = None, workspace: WorkspaceOption = None) -> None:
    """Apply the project's annotations: accepted, rejected, edited (re-checked); skips change nothing. Exit 2 when
    an annotation cannot be applied (each is listed by pair; the others are applied)."""
    from goldset.cli._common import context as find_ctx
    from goldset.review.project import pull as do_pull

    with ProgressDisplay() as show:
        r = do_pull(find_ctx(workspace), url=url, progress=show)
    _print_apply(r)
    r.check()


@group.command("import")
def import_(
    file: Annotated[Path, typer.Argument(help="A Label Studio JSON export (not JSON_MIN or CSV).")],
    config: Annotated[
        Path | None, typer.Option("--config", help="Labeling config the annotations were made with.")
    ] = None,
    workspace: WorkspaceOption = None,
) -> None:
    """Apply the annotations of a Label Studio JSON export file, as pull does."""
    from goldset.cli._common import context as find_ctx
    from goldset.review.offline import import_results

    r = import_results(file, find_ctx(workspace), config=config)
    _print_apply(r)
    r.check()


@group.command()
def export(
    file: Annotated[Path, typer.Argument(help="Label Studio import file to write (.json).")],
    workspace: WorkspaceOption = None,
) -> None:
    """Write the sampled pairs as a Label Studio import file, with the config and guidelines beside it."""
    from goldset.cli._common import context as find_ctx
    from goldset.review.offline import export as do_export

    r = do_export(file, find_ctx(workspace))
    out = console()
    out.print(f"{r.tasks} tasks -> {r.tasks_path}")
    out.print(f"labeling config -> {r.config_path}; instructions -> {r.instructions_path}")
    out.print("Create a project with that config, import the file, review, export the project as JSON, then: "
              "goldset review import EXPORT.json")  # fmt: skip


@group.command()
def status(
    gate: Annotated[
        float | None,
        typer.Option("--gate", help="Exit 1 when the acceptance rate's lower bound is below this (e.g. 0.9)."),
    ] = None,
    server: Annotated[
        bool | None,
        typer.Option("--server/--no-server", help="Ask Label Studio for its counts (default: when configured)."),
    ] = None,
    url: UrlOption = None,
    workspace: WorkspaceOption = None,
) -> None:
    """The sample, decisions per reviewer, the server's tasks, and the estimated quality of the rest."""
    from goldset.cli._common import context as find_ctx
    from goldset.review.project import status as get_status

    r = get_status(find_ctx(workspace), server=server, url=url)
    out = console()
    s = r.stats
    out.print(f"sample        {s.sampled} pairs in {len(s.rounds)} round(s); {s.reviewed} reviewed "
              f"(accepted {s.accepted}, edited {s.edited}, rejected {s.rejected}), {r.waiting} waiting")  # fmt: skip
    if r.decisions_per_reviewer:
        out.print("decisions     " + ", ".join(f"{k} {v}" for k, v in sorted(r.decisions_per_reviewer.items())))
    if r.server is not None:
        sv = r.server
        if sv.project is None:
            out.print(f"label studio  {sv.url}: no review project yet (goldset review push)")
        else:
            per = ", ".join(f"{k} {v}" for k, v in sorted(sv.per_reviewer.items())) or "none"
            out.print(f"label studio  {sv.url} project {sv.project}: {sv.tasks} tasks, {sv.annotated} annotated, "
                      f"{sv.skipped} skipped; annotations by reviewer: {per}")  # fmt: skip
    elif r.server_error:
        from rich.markup import escape

        out.print(f"label studio  [yellow]{escape(r.server_error)}[/]")
    _print_estimate(s)
    if gate is not None:
        r.gate(gate)
        out.print(f"gate          passed: lower bound {s.ci_low:.3f} >= {gate}")


def _fmt_est(e: AcceptanceEstimate | ReviewSampleStats, confidence: float) -> str:
    if e.acceptance_rate is None or e.ci_low is None or e.ci_high is None:
        return "no reviewed random pair yet"
    return f"{e.acceptance_rate:.1%} [{e.ci_low:.1%}, {e.ci_high:.1%}] ({confidence:.0%} Wilson)"


def _coverage(s: ReviewSampleStats) -> str:
    """What share of the golden pairs the estimate speaks for, and what it does not."""
    if not s.golden:
        return "no golden pair (accepted or passed) yet"
    line = f"speaks for {s.covered} of {s.golden} golden pairs ({s.covered / s.golden:.0%})"
    if s.outside:
        rest = s.outside - s.unsampled
        parts = [f"{s.unsampled} in no round yet (goldset review sample)"] if s.unsampled else []
        parts += [f"{rest} drawn for risk or in a stratum with no decided random pair"] if rest else []
        line += f"; {s.outside} outside it: " + ", ".join(parts)
    if s.retired_since:
        line += (f"; {s.retired_since} sampled-round pairs left the set since they were drawn "
                 f"({s.random_retired} random), no longer counted")  # fmt: skip
    return line


def _print_estimate(s: ReviewSampleStats) -> None:
    from rich.table import Table

    out = console()
    conf = s.confidence or 0.95
    lenient = "; edits count as accepted" if s.edits_count_as_accepted else ""
    out.print(f"estimate      acceptance of the unreviewed pairs: {_fmt_est(s, conf)}; rests on {s.random_reviewed} "
              f"reviewed of {s.random} random pairs (effective n {s.effective_n or 0:g}), stands for the "
              f"{s.population} pairs of the rounds' random remainders{lenient}")  # fmt: skip
    out.print(f"coverage      {_coverage(s)}", markup=False)
    if not s.random:
        return
    table = Table(title="estimate by group (random part only)", title_justify="left")
    for col in ("group", "pairs", "random", "reviewed", "accepted", "rate", "low", "high"):
        table.add_column(col, justify="left" if col == "group" else "right")
    for title, groups in (("type", s.by_question_type), ("language", s.by_language), ("stratum", s.strata)):
        for k, e in groups.items():
            rate = "-" if e.acceptance_rate is None else f"{e.acceptance_rate:.1%}"
            low = "-" if e.ci_low is None else f"{e.ci_low:.1%}"
            high = "-" if e.ci_high is None else f"{e.ci_high:.1%}"
            table.add_row(f"{title} {k}", str(e.population), str(e.random), str(e.reviewed), str(e.accepted), rate,
                          low, high)  # fmt: skip
    out.print(table)


def _print_apply(r: ApplyReport) -> None:
    out = console()
    out.print(f"{r.source}: {r.tasks} tasks, {r.annotations} annotations ({r.cancelled} skipped, changing nothing)")
    changed = ", ".join(f"{k} {v}" for k, v in sorted(r.changed.items())) or "none"
    out.print(f"new decisions {r.decisions_new} ({r.already_applied} already applied); pairs changed: {changed}")
    if r.per_reviewer:
        out.print("by reviewer: " + ", ".join(f"{k} {v}" for k, v in sorted(r.per_reviewer.items())))
    for note in r.notes[:10]:
        out.print(f"  note: {note}")
    if r.disagreements:
        out.print(f"[yellow]{len(r.disagreements)} disagreements[/], resolved by the rule: {r.rule}")
        for d in r.disagreements[:10]:
            out.print(f"  {d.pair_id}: {', '.join(d.votes)} -> {d.resolved}")
    if r.agreement is not None:
        a = r.agreement
        fk = "n/a" if a.fleiss is None else f"{a.fleiss:.3f}"
        out.print(f"agreement: Fleiss' kappa {fk} over {a.fleiss_items} tasks with {a.raters_per_item} annotators each")
        for (x, y), (k, n) in a.cohen.items():
            out.print(f"  Cohen's kappa {x} / {y}: {'n/a' if k is None else f'{k:.3f}'} over {n} tasks")
    for line in r.later_stands[:10]:
        out.print(f"  kept: {line}")
    if r.edits_failing:
        out.print(f"[yellow]{len(r.edits_failing)} edited pairs fail a check on their new text and are rejected:[/]")
        for pid, why in list(r.edits_failing.items())[:10]:
            out.print(f"  {pid}: {why}")
    if r.problems:
        out.print(f"[yellow]{len(r.problems)} annotations not applied, by pair:[/]")
        for p in r.problems:
            out.print(f"  {p}", markup=False)
    out.print("written: data/pairs.jsonl and the manifest" if r.written else "nothing changed, nothing written")

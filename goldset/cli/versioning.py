"""`goldset release`, `versions`, `show`, `diff` and `refresh`: versions of the golden set with DVC."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from goldset.cli._common import ProgressDisplay, WorkspaceOption, console, err_console, money

if TYPE_CHECKING:
    from goldset.versioning.refresh import RefreshReport
    from goldset.versioning.release import ReleaseReport

app = typer.Typer()

RepoOption = Annotated[
    str | None,
    typer.Option(
        "--repo",
        help="Repository holding the releases: a folder or a git URL (default: the workspace / current folder).",
        show_default=False,
    ),
]


@app.command()
def release(
    version: Annotated[str | None, typer.Argument(help="Version number, e.g. 1.2.0 (or its tag, v1.2.0).")] = None,
    message: Annotated[str, typer.Option("--message", "-m", help="What changed in this release.")] = "",
    bump: Annotated[
        str | None, typer.Option("--bump", help="Instead of VERSION: major, minor or patch of the last release.")
    ] = None,
    allow_empty: Annotated[
        bool, typer.Option("--allow-empty", help="Release even when nothing changed since the last release.")
    ] = False,
    workspace: WorkspaceOption = None,
) -> None:
    """Freeze data/ as an immutable version: tracked by DVC, pushed, committed and tagged in git."""
    from goldset.cli._common import context as find_ctx
    from goldset.errors import UsageError
    from goldset.versioning.release import release as run_release

    if bump is not None and bump not in ("major", "minor", "patch"):  # the library sees it only once it has read git
        raise UsageError(f"--bump {bump!r}: expected major, minor or patch")
    ws = find_ctx(workspace)
    with ProgressDisplay() as show:
        report = run_release(version, message=message, bump=bump, allow_empty=allow_empty, ws=ws,  # type: ignore[arg-type]
                             progress=show)  # fmt: skip
    _print_release(report)


def _print_release(r: ReleaseReport) -> None:
    out = console()
    m = r.manifest
    d = r.diff
    out.print(f"released {r.version} (commit {r.commit[:10]}, tag {r.version}) in {r.seconds:.1f} s")
    out.print(f"  golden pairs  {len(m.golden_ids)} ({len(m.unreviewed_ids)} unreviewed) of {m.n_pairs} pairs")
    out.print(f"  corpus        {m.n_documents} documents, {m.n_chunks} chunks ({m.kb_snapshot_id})")
    against = f"since {r.previous}" if r.previous else "first release"
    out.print(
        f"  changes       {len(d.added)} added, {len(d.retired)} retired, {len(d.edited)} edited, "
        f"{len(d.type_changes)} type changes ({against})"
    )
    from goldset.versioning.changelog import estimate_line

    estimate = estimate_line(d)
    if estimate is not None:
        out.print(f"  estimate      {estimate.removeprefix('Quality estimate: ')}", markup=False)
    out.print(f"  pushed        {r.pushed} object(s) to DVC remote {r.remote}")
    if r.notes:
        from rich.markup import escape

        for note in r.notes:
            out.print(f"  [yellow]note[/]          {escape(note)}")
    out.print(f'  use it        goldset.load("{r.version}") · goldset eval --dataset {r.version}')


@app.command()
def versions(repo: RepoOption = None, workspace: WorkspaceOption = None) -> None:
    """List the releases: date, golden pairs, message (found from tags and from the release commits)."""
    from rich.table import Table

    from goldset.versioning.load import versions as list_versions

    found = list_versions(repo, ws=workspace)
    out = console()
    if not found:
        out.print("No releases yet; make one with `goldset release VERSION -m MESSAGE`.")
        return
    table = Table(title_justify="left")
    for col in ("version", "date", "golden", "unreviewed", "pairs", "documents", "commit", "message"):
        table.add_column(col, justify="right" if col in ("golden", "unreviewed", "pairs", "documents") else "left")
    for v in reversed(found):
        rec = v.record
        table.add_row(
            v.name, rec.created_at.strftime("%Y-%m-%d %H:%M"), str(rec.n_golden), str(rec.n_unreviewed),
            str(rec.n_pairs), str(rec.n_documents), v.commit[:10] + ("" if v.tagged else " (no tag)"),
            rec.message.splitlines()[0] if rec.message else "",
        )  # fmt: skip
    out.print(table)


@app.command()
def show(
    version: Annotated[str, typer.Argument(help="Release name (v1.2.0) or number (1.2.0).")],
    repo: RepoOption = None,
    workspace: WorkspaceOption = None,
) -> None:
    """Show one release: its manifest, golden set, review figures and changelog entry."""
    from goldset.versioning.changelog import review_line
    from goldset.versioning.load import read_version

    v, ds = read_version(version, repo, ws=workspace)
    m = ds.manifest
    out = console()
    rec = v.record
    out.print(f"version       {v.name}  (commit {v.commit[:10]}{'' if v.tagged else ', no tag in this clone'})")
    out.print(f"date          {rec.created_at.isoformat()}")
    out.print(f"message       {rec.message}")
    if rec.previous:
        out.print(f"previous      {rec.previous}")
    if m is None:  # pragma: no cover - verified releases always have one
        return
    out.print(f"golden pairs  {len(m.golden_ids)} ({len(m.unreviewed_ids)} unreviewed; rule: {m.golden_rule})")
    out.print(f"  by type     {', '.join(f'{k} {n}' for k, n in m.golden_counts_by_type.items())}")
    out.print(f"  by language {', '.join(f'{k} {n}' for k, n in m.golden_counts_by_language.items())}")
    out.print(f"all pairs     {m.n_pairs}: {', '.join(f'{k} {n}' for k, n in m.counts_by_status.items())}")
    out.print(f"review        {review_line(m.review)}")
    from goldset.schema.manifest import calibration_summary

    judge = calibration_summary(m)
    if judge is not None:
        out.print(f"judge         {judge.headline}", markup=False)
        if judge.warning is not None:
            out.print(f"  note        {judge.warning}", markup=False)
    out.print(f"corpus        {m.n_documents} documents, {m.n_chunks} chunks, KB snapshot {m.kb_snapshot_id}")
    if m.prompt_hashes:
        out.print(f"prompts       {', '.join(f'{k} {h[:12]}' for k, h in m.prompt_hashes.items())}")
    out.print(f"files         {len(m.files) + 1} (sha256 of each in manifest.json, verified on load)")
    out.print(f"folder        {ds.path}")


@app.command()
def diff(
    old: Annotated[str, typer.Argument(help="The earlier release.")],
    new: Annotated[str, typer.Argument(help="The later release.")],
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Changelog file to write (default: changelog-OLD-NEW.md).")
    ] = None,
    repo: RepoOption = None,
    workspace: WorkspaceOption = None,
) -> None:
    """Print and write the changelog between two releases: added, retired, edited, type changes, figures."""
    from goldset.io import atomic_write_text
    from goldset.versioning.changelog import diff_datasets, to_markdown
    from goldset.versioning.load import read_version

    v_old, ds_old = read_version(old, repo, ws=workspace)
    v_new, ds_new = read_version(new, repo, ws=workspace)
    text = to_markdown(diff_datasets(ds_old, ds_new, v_old.name, v_new.name))
    target = out or Path(f"changelog-{v_old.name}-{v_new.name}.md")
    atomic_write_text(target, text)
    console().print(text, markup=False)
    err_console().print(f"changelog written to {target}")


@app.command()
def refresh(
    docs_dir: Annotated[Path, typer.Argument(help="The documents folder, as it is now.")],
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the plan and the calls it would take; change nothing.")
    ] = False,
    workspace: WorkspaceOption = None,
) -> None:
    """After a documentation update: retire pairs whose evidence is gone, re-check changed ones, add new pairs."""
    from goldset.cli._common import context as find_ctx
    from goldset.versioning.refresh import refresh as run_refresh

    ws = find_ctx(workspace)
    with ProgressDisplay(disable=dry_run) as show:
        report = run_refresh(docs_dir, ws, dry_run=dry_run, progress=show)
    _print_refresh(report)


def _print_refresh(r: RefreshReport) -> None:
    out = console()
    p = r.plan
    counts = p.diff.counts()
    out.print(f"KB            {p.old_snapshot_id} → {p.new_snapshot_id}")
    for kind in ("documents", "chunks"):
        c = counts[kind]
        out.print(f"  {kind:<11} {c['added']} added, {c['changed']} changed, {c['removed']} removed, "
                  f"{c['unchanged']} unchanged")  # fmt: skip
    if not p.has_changes:
        out.print("Nothing changed: no pair to retire or re-check, no chunk to ask about; no call made.")
        return
    if r.dry_run:
        out.print(
            f"plan          retire {len(p.retire)} pair(s), re-check {len(p.recheck)} pair(s) whose evidence changed"
        )
        est = p.estimate
        if est is not None:
            cost = money(est.cost_usd, est.model)
            out.print(
                f"generation    {est.chunks} new or changed chunk(s): {est.calls} call(s) to pay, {est.cache_hits} "
                f"from the journal, ~{est.tokens:,} tokens, {cost} ({est.model or 'no model configured'})"
            )
        else:
            out.print("generation    no new or changed chunk: no call")
        share = f"; ~{p.judge_share:.0%} of such pairs pass the cheap checks here" if p.judge_share < 1 else ""
        out.print(
            f"judges        at most {p.judge_calls} call(s) to re-check reviewed pairs; then the filters: at most "
            f"{p.filter_judge_calls} groundedness, {p.duplicate_judge_calls} duplicate-judge, "
            f"{p.closed_book_calls} closed_book and {p.copy_judge_calls} copy-judge call(s) on the new and "
            f"re-checked pairs (none on those a cheap check rejects{share})"
        )
        out.print("Nothing was changed (dry run).")
        return
    out.print(
        f"pairs         {len(r.retired)} retired (evidence gone), {len(r.kept)} re-checked and kept, "
        f"{len(r.replaced)} retired and regenerated, {len(r.to_review)} stale for review, {len(r.new_pairs)} new"
    )
    kinds = ", ".join(f"{n} {_KIND_LABELS.get(kind, kind)}" for kind, n in r.calls_by_kind.items())
    out.print(
        f"calls         {r.calls}" + (f": {kinds} ({r.judge_calls} of the groundedness judge's re-checking reviewed "
                                      f"pairs)" if kinds else "")
    )
    for line in r.judge_errors[:5]:
        err_console().print(f"warning: judge failed for {line}")
    out.print("Changed pairs are tagged refresh:* so the review sample can start with them; then `goldset release`.")


#: How the refresh summary names each kind of call (the reply schema's name; another kind is shown as it is).
_KIND_LABELS = {
    "qa_pairs": "generation",
    "groundedness": "groundedness judge",
    "duplicate_judge": "duplicate judge",
    "copy_judge": "copy judge",
    "closed_book_answer": "closed_book answer",
    "closed_book_agreement": "closed_book agreement",
    "paraphrase_repair": "repair",
}

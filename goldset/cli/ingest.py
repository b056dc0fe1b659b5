"""`goldset ingest`: read a documents folder into the workspace's KB snapshot and show what changed."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from goldset.cli._common import WorkspaceOption, console, err_console

app = typer.Typer()
_LIST_LIMIT = 10  # documents named per state under the diff table


@app.command()
def ingest(
    docs_dir: Annotated[
        Path | None,
        typer.Argument(help="Documents folder (default: kb.path from goldset.yaml).", show_default=False),
    ] = None,
    target_tokens: Annotated[
        int | None, typer.Option("--target-tokens", help="Aim for chunks of about this many tokens.")
    ] = None,
    max_tokens: Annotated[
        int | None, typer.Option("--max-tokens", help="Chunk size limit (a larger code block is kept whole).")
    ] = None,
    min_tokens: Annotated[
        int | None, typer.Option("--min-tokens", help="Smaller trailing sections join their neighbour.")
    ] = None,
    workspace: WorkspaceOption = None,
) -> None:
    """Split Markdown, text, HTML and reStructuredText files into chunks; write the KB snapshot to .goldset/kb/."""
    from goldset.cli._common import context as find_ctx
    from goldset.kb import NothingToIngest
    from goldset.kb import ingest as run_ingest
    from goldset.kb.settings import KBSettings

    # The sizes are checked by KBSettings, against each other and the configured ones: "option kb.max_tokens: …".
    ctx = find_ctx(workspace, kb={"target_tokens": target_tokens, "max_tokens": max_tokens, "min_tokens": min_tokens})
    folder = docs_dir if docs_dir is not None else ctx.workspace.root / ctx.section(KBSettings).path
    err = err_console()
    try:
        result = run_ingest(folder, ctx)
    except NothingToIngest as exc:
        for line in exc.warnings:
            err.print(f"warning: {line}", markup=False, soft_wrap=True)
        raise
    for line in result.warnings:
        err.print(f"warning: {line}", markup=False, soft_wrap=True)

    from rich.table import Table

    from goldset.schema.kb import page_label

    table = Table(title=None, show_edge=False, pad_edge=False)
    table.add_column("")
    for state in ("added", "changed", "removed", "unchanged"):
        table.add_column(state, justify="right")
    for kind, counts in result.diff.counts().items():
        table.add_row(kind, *(str(counts[s]) for s in ("added", "changed", "removed", "unchanged")))
    out = console()
    out.print(table)
    diff = result.diff
    for label, names in (
        ("added", diff.documents_added),
        ("changed", diff.documents_changed),
        ("removed", diff.documents_removed),
    ):
        shown = names[:_LIST_LIMIT]
        more = f" … and {len(names) - len(shown)} more" if len(names) > len(shown) else ""
        if shown:
            out.print(f"  {label:<8} {', '.join(shown)}{more}", markup=False, soft_wrap=True)
    snap = result.snapshot
    oversized = sum(1 for c in result.chunks if "oversized" in c.flags)
    note = f", {oversized} oversized (a code block or table over max_tokens)" if oversized else ""
    state = "unchanged" if not result.changed else ("new" if result.previous_snapshot_id is None else "updated")
    out.print(
        f"snapshot {snap.id} ({state}): {len(snap.documents)} documents, {snap.n_chunks} chunks{note}, "
        f"{len(snap.skipped)} skipped → {result.out_dir}",
        markup=False,
        soft_wrap=True,
    )
    big = [c for c in result.chunks if "oversized" in c.flags]
    for c in big[:_LIST_LIMIT]:
        where = " > ".join(c.heading_titles or c.heading_path) or page_label(c.doc_id, c.page)
        out.print(f"  oversized {c.doc_id}{f' ({where})' if where else ''}: {c.n_tokens} tokens, {c.id}",
                  markup=False, soft_wrap=True)  # fmt: skip
    if len(big) > _LIST_LIMIT:
        out.print(f"  … and {len(big) - _LIST_LIMIT} more oversized chunk(s)")

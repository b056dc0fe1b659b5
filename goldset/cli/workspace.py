"""`goldset init` and `goldset status`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from goldset.cli._common import WorkspaceOption, console

app = typer.Typer()


@app.command()
def init(
    path: Annotated[Path, typer.Argument(help="Folder to make a workspace (created if missing).")] = Path(),
    no_dvc: Annotated[bool, typer.Option("--no-dvc", help="Skip DVC initialisation.")] = False,
) -> None:
    """Make a folder a goldset workspace: goldset.yaml, prompts/, labeling/, git and DVC. Safe to re-run."""
    from goldset.scaffold import init_workspace

    report = init_workspace(path, dvc=not no_dvc)
    out = console()
    if not report.changed:
        out.print(f"{report.root} is already a goldset workspace; nothing changed.")
        return
    for action in report.actions:
        out.print(f"  {action}")
    out.print(f"Workspace ready at {report.root}. Next: goldset ingest DOCS_DIR")


@app.command()
def status(workspace: WorkspaceOption = None) -> None:
    """Show what the workspace holds (KB snapshot, pairs by status and type, last release) and check its settings
    (an unknown or bad setting: the error, exit 2)."""
    from goldset.scaffold import workspace_status

    st = workspace_status(workspace)
    out = console()
    out.print(f"workspace     {st.root}")
    if st.kb_snapshot_id:
        out.print(f"kb snapshot   {st.kb_snapshot_id} ({st.n_documents} documents, {st.n_chunks} chunks)")
    else:
        out.print("kb snapshot   none (run `goldset ingest DOCS_DIR`)")
    total = sum(st.pairs_by_status.values())
    if total:
        by_status = ", ".join(f"{k} {v}" for k, v in st.pairs_by_status.items())
        by_type = ", ".join(f"{k} {v}" for k, v in st.pairs_by_type.items())
        out.print(f"pairs         {total}: {by_status}")
        out.print(f"by type       {by_type}")
    else:
        out.print("pairs         none (run `goldset generate`)")
    out.print(f"last release  {st.last_release or 'none'}")
    from goldset.cli._common import context as find_ctx

    find_ctx(st.root)  # every section of goldset.yaml, .env and the environment: a bad or unknown setting exits 2
    out.print("settings      ok (goldset.yaml, .env and GOLDSET_* variables)")

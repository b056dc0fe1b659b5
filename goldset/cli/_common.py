"""Small helpers shared by the command modules: the console and the workspace option."""

from __future__ import annotations

import os
import sys
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TextIO

import typer

if TYPE_CHECKING:
    from rich.console import Console

    from goldset.workspace import Workspace

WorkspaceOption = Annotated[
    Path | None,
    typer.Option(
        "--workspace",
        "-w",
        help="Workspace folder (default: $GOLDSET_WORKSPACE or the current one).",
        show_default=False,
    ),
]


def _width(stream: TextIO) -> int | None:
    """Rich's 80 columns truncate metric tables in CI logs and pipes; use $COLUMNS or 120 there."""
    if stream.isatty():
        return None
    columns = os.environ.get("COLUMNS", "")
    return int(columns) if columns.isdigit() else 120


@cache
def console() -> Console:
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True, width=_width(sys.stdout))


@cache
def err_console() -> Console:
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True, width=_width(sys.stderr))


def workspace(path: Path | None) -> Workspace:
    from goldset.workspace import require_workspace

    return require_workspace(path)

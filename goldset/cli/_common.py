"""Small helpers shared by the command modules: the console and the workspace option."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from rich.console import Console

    from goldset.config import Workspace

WorkspaceOption = Annotated[
    Path | None,
    typer.Option(
        "--workspace",
        "-w",
        help="Workspace folder (default: $GOLDSET_WORKSPACE or the current one).",
        show_default=False,
    ),
]


@cache
def console() -> Console:
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True)


@cache
def err_console() -> Console:
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True)


def workspace(path: Path | None) -> Workspace:
    from goldset.config import require_workspace

    return require_workspace(path)

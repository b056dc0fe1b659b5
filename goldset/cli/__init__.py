"""The command line: thin. Each module holds one command group; it parses options, calls one library function
and prints. Errors are turned into a one-line message and an exit code here, in one place.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from goldset.cli import (
    build,
    evaluate,
    filter,
    generate,
    ingest,
    interop,
    judge,
    queries,
    review,
    versioning,
    workspace,
)
from goldset.errors import GoldsetError


class _GoldsetGroup(TyperGroup):
    """Turns a GoldsetError from any command into ``error: <message>`` on stderr and its exit code."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        _flags_as_flags(self, ctx)  # before --help, which is handled while parsing
        return super().parse_args(ctx, args)

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except GoldsetError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(exc.exit_code) from None


def _flags_as_flags(command: Any, ctx: Any) -> None:
    """Boolean flags shown as flags in --help (``--all``, not ``--all <bool>``, typer's type column for them)."""
    for param in [*command.params, command.get_help_option(ctx)]:
        if getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""
    for sub in getattr(command, "commands", {}).values():
        _flags_as_flags(sub, ctx)


app = typer.Typer(
    cls=_GoldsetGroup,
    name="goldset",
    help="Build, check, review, version and evaluate against golden QA datasets for RAG systems.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)
for _module in (workspace, ingest, generate, filter, evaluate, review, judge, versioning, interop, build, queries):
    app.add_typer(_module.app)


def _print_version(value: bool) -> None:
    if value:
        import goldset

        typer.echo(f"goldset {goldset.__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Print goldset's version and exit."),
    ] = False,
) -> None:
    """Build, check, review, version and evaluate against golden QA datasets for RAG systems."""


def main() -> None:
    app()

"""The command line: thin. Each module holds one command group; it parses options, calls one library function
and prints. Errors are turned into a one-line message and an exit code here, in one place.

Commands are built when looked up: ``goldset generate`` imports ``goldset.cli.generate`` and has typer build its one
command, not the other twenty-odd (~0.1 s of CPU per run); ``goldset --help`` looks every command up, so it lists
them all with their help, as before. :data:`COMMANDS` says which module defines each (a test holds it equal to
what the modules define).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from goldset.errors import GoldsetError

#: Every command → the module of ``goldset.cli`` that defines it, in the order ``goldset --help`` lists them.
COMMANDS: dict[str, str] = {
    "init": "workspace",
    "status": "workspace",
    "ingest": "ingest",
    "generate": "generate",
    "filter": "filter",
    "eval": "evaluate",
    "compare": "evaluate",
    "report": "evaluate",
    "trend": "evaluate",
    "review": "review",
    "judge": "judge",
    "release": "versioning",
    "versions": "versioning",
    "show": "versioning",
    "diff": "versioning",
    "refresh": "versioning",
    "export": "interop",
    "import": "interop",
    "build": "build",
    "coverage": "queries",
}


class _LazyCommands(MutableMapping[str, Any]):
    """The root group's commands by name: a name's module is imported and its commands built (``build(module)``)
    the first time one of them is looked up. Iterating gives the names without building anything (typer's
    "Did you mean …?" needs only them); commands added later are kept as given, after the others."""

    def __init__(self, where: Mapping[str, str], build: Callable[[str], Mapping[str, Any]]) -> None:
        self._where: dict[str, str | None] = dict(where)
        self._build = build
        self._built: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name not in self._built:
            module = self._where[name]  # KeyError: no such command
            if module is None:
                raise KeyError(name)
            self._built.update(self._build(module))
        return self._built[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self._where.setdefault(name, None)
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        del self._where[name]
        self._built.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)


class _GoldsetGroup(TyperGroup):
    """The root group: builds a command when it is looked up (:class:`_LazyCommands`), and turns a GoldsetError
    from any command into ``error: <message>`` on stderr and its exit code."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        lazy = _LazyCommands(COMMANDS, _build_module)
        for name, command in self.commands.items():
            lazy[name] = command
        self.commands = lazy

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            _flags_as_flags(command, ctx)  # before its --help, which is handled while parsing its arguments
        return command

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        _flags_as_flags(self, ctx, subcommands=False)  # before --help, which is handled while parsing
        return super().parse_args(ctx, args)

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except GoldsetError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(exc.exit_code) from None


def _flags_as_flags(command: Any, ctx: Any, *, subcommands: bool = True) -> None:
    """Boolean flags shown as flags in --help (``--all``, not ``--all <bool>``, typer's type column for them)."""
    for param in [*command.params, command.get_help_option(ctx)]:
        if getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""
    if subcommands:
        for sub in getattr(command, "commands", {}).values():
            _flags_as_flags(sub, ctx)


def _build_module(module: str) -> dict[str, Any]:
    """The click commands of ``goldset.cli.<module>``, built by typer as ``app.add_typer(<module>.app)`` would."""
    from typer.main import get_group_from_info
    from typer.models import TyperInfo

    holder = typer.Typer()
    holder.add_typer(importlib.import_module(f"goldset.cli.{module}").app)
    group = get_group_from_info(
        TyperInfo(holder),
        pretty_exceptions_short=app.pretty_exceptions_short,
        rich_markup_mode=app.rich_markup_mode,
        suggest_commands=app.suggest_commands,
    )
    return dict(group.commands)


app = typer.Typer(
    cls=_GoldsetGroup,
    name="goldset",
    help="Build, check, review, version and evaluate against golden QA datasets for RAG systems.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)


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
    """The ``goldset`` console script (and ``python -m goldset``)."""
    from goldset.collector import skip_final_collections

    try:
        app()
    finally:  # typer ends with SystemExit, whatever the outcome
        skip_final_collections()

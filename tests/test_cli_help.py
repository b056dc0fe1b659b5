"""Every command's --help shows boolean flags as flags: ``--all``, not ``--all <bool>`` (typer's type column)."""

from __future__ import annotations

from typing import Any

import typer
from typer.testing import CliRunner

from goldset.cli import app


def _command_paths(command: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    paths = [path]
    for name, sub in getattr(command, "commands", {}).items():
        paths += _command_paths(sub, (*path, name))
    return paths


def test_no_help_page_shows_a_flag_as_bool() -> None:
    runner = CliRunner()
    paths = _command_paths(typer.main.get_command(app))
    assert len(paths) > 20 and ("generate",) in paths
    flags_seen = 0
    for path in paths:
        result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "120"})
        assert result.exit_code == 0, (path, result.output)
        assert "<bool>" not in result.output, (path, result.output)
        flags_seen += "--help" in result.output
    assert flags_seen == len(paths)
    generate = runner.invoke(app, ["generate", "--help"], env={"COLUMNS": "120"}).output
    assert "--dry-run" in generate and "<int>" in generate  # options that take a value still show its type

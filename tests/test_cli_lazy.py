"""The command line builds only the command it runs; ``goldset --help`` still lists them all, and generate's
progress display reads the terminal width once, and again after a resize."""

from __future__ import annotations

import importlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import typer
import typer.main
from typer.testing import CliRunner

from goldset.cli import COMMANDS, app

ROOT = Path(__file__).resolve().parents[1]


def _eager_group() -> typer.Typer:
    """Every module's commands added up front, as the command line did before it built them lazily."""
    eager = typer.Typer(name="goldset", add_completion=False)
    for module in dict.fromkeys(COMMANDS.values()):
        eager.add_typer(importlib.import_module(f"goldset.cli.{module}").app)
    return eager


def test_the_command_map_names_every_command_of_every_module_in_order() -> None:
    eager = typer.main.get_group(_eager_group())
    assert list(eager.commands) == list(COMMANDS)
    lazy = typer.main.get_command(app)
    assert list(lazy.commands) == list(COMMANDS)  # type: ignore[attr-defined]
    for name, command in eager.commands.items():
        built = lazy.commands[name]  # type: ignore[attr-defined]
        assert type(built) is type(command) and built.help == command.help, name
        assert [p.opts for p in built.params] == [p.opts for p in command.params], name


def test_running_generate_builds_and_imports_no_other_command() -> None:
    probe = (
        "import sys; sys.argv = ['goldset', 'generate', '--help']\n"
        "from goldset.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('goldset.'))))"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="120")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=env).stdout
    loaded = set(out.splitlines()[-1].split())
    assert "goldset.cli.generate" in loaded and "--dry-run" in out
    assert not loaded & {f"goldset.cli.{m}" for m in COMMANDS.values() if m != "generate"}, loaded
    assert "goldset.schema.runs" not in loaded  # the schema package's names are lazy too


def test_help_lists_every_command_and_a_typo_gets_a_suggestion() -> None:
    runner = CliRunner()
    listing = runner.invoke(app, ["--help"], env={"COLUMNS": "120"}).output
    for name in COMMANDS:
        assert f" {name} " in listing, name
    typo = runner.invoke(app, ["generat"], env={"COLUMNS": "120"})
    assert typo.exit_code == 2 and "Did you mean 'generate'?" in typo.output
    unknown = runner.invoke(app, ["nosuch"], env={"COLUMNS": "120"})
    assert unknown.exit_code == 2 and "No such command 'nosuch'" in unknown.output


@pytest.mark.skipif(not hasattr(signal, "SIGWINCH"), reason="no SIGWINCH here")
def test_the_progress_display_reads_the_width_again_after_a_resize(monkeypatch: pytest.MonkeyPatch) -> None:
    from goldset.cli._common import ProgressDisplay, err_console
    from goldset.progress import Progress

    reads: list[int] = []
    console = err_console()
    monkeypatch.setattr(type(console), "width", property(lambda self: reads.append(1) or 100))
    monkeypatch.setattr(type(console), "is_terminal", property(lambda self: True))
    before = signal.getsignal(signal.SIGWINCH)
    with ProgressDisplay() as show:
        for i in range(5):
            show(Progress("generate", i, 10, {"pairs": i}))
        assert len(reads) == 1
        os.kill(os.getpid(), signal.SIGWINCH)
        show(Progress("generate", 5, 10, {"pairs": 5}))
        show(Progress("generate", 6, 10, {"pairs": 6}))
    assert len(reads) == 2
    assert signal.getsignal(signal.SIGWINCH) == before  # the handler is put back


def test_the_progress_display_draws_nothing_when_stderr_is_not_a_terminal() -> None:
    """A pipe or a CI log: no rich display is started (it would show nothing), the last updates are still kept."""
    from goldset.cli._common import ProgressDisplay, err_console
    from goldset.progress import Progress

    assert not err_console().is_terminal  # pytest captures stderr
    with ProgressDisplay() as show:
        show(Progress("generate", 1, 10, {"pairs": 3}))
        assert show._progress is None and show.last["generate"].done == 1

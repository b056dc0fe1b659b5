"""`goldset init` and `goldset status` through the CLI."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from goldset.cli import app

runner = CliRunner()


def test_init_twice_says_nothing_changed(tmp_path: Path) -> None:
    first = runner.invoke(app, ["init", str(tmp_path / "ws")])
    assert first.exit_code == 0, first.output
    assert "initialised DVC" in first.output and "Next: goldset ingest" in first.output
    second = runner.invoke(app, ["init", str(tmp_path / "ws")])
    assert second.exit_code == 0
    assert "nothing changed" in second.output


def test_status_outside_a_workspace_is_a_one_line_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["status", "--workspace", str(tmp_path)])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and "goldset init" in lines[0]


def test_status_reports_an_empty_workspace(tmp_path: Path) -> None:
    runner.invoke(app, ["init", str(tmp_path), "--no-dvc"])
    result = runner.invoke(app, ["status", "-w", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "kb snapshot   none" in result.output and "last release  none" in result.output
    assert "settings      ok" in result.output


def test_status_reports_an_unknown_setting_and_exits_2(tmp_path: Path) -> None:
    runner.invoke(app, ["init", str(tmp_path), "--no-dvc"])
    config = tmp_path / "goldset.yaml"
    config.write_text(config.read_text(encoding="utf-8") + "\nreview:\n  sample_sizee: 5\n", encoding="utf-8")
    result = runner.invoke(app, ["status", "-w", str(tmp_path)])
    assert result.exit_code == 2, result.output
    error = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(error) == 1 and "sample_sizee" in error[0] and "goldset.yaml" in error[0], result.output
    assert "kb snapshot   none" in result.output  # what status knows is still shown first

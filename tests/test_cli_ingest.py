"""`goldset ingest` through typer's CliRunner: the diff table, warnings, options and failures."""

from __future__ import annotations

import shutil
from pathlib import Path

from typer.testing import CliRunner

from goldset.cli import app
from goldset.kb import load_chunks, load_snapshot
from goldset.workspace import Workspace

FIXTURES = Path(__file__).parent / "fixtures" / "kb"
runner = CliRunner()


def _ws(tmp_path: Path) -> Path:
    result = runner.invoke(app, ["init", str(tmp_path / "ws"), "--no-dvc"])
    assert result.exit_code == 0, result.output
    return tmp_path / "ws"


def _row(output: str, name: str) -> list[str]:
    line = next(line for line in output.splitlines() if line.strip().startswith(name))
    return [cell for cell in line.replace("│", " ").split() if cell != name]


def test_ingest_prints_the_diff_table_and_writes_the_snapshot(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    result = runner.invoke(app, ["ingest", str(FIXTURES / "en"), "-w", str(ws)])
    assert result.exit_code == 0, result.output
    snap = load_snapshot(Workspace(ws))
    assert snap is not None and len(snap.documents) == 6
    assert _row(result.stdout, "documents") == ["6", "0", "0", "0"]
    assert _row(result.stdout, "chunks") == [str(snap.n_chunks), "0", "0", "0"]
    assert f"snapshot {snap.id} (new): 6 documents" in result.stdout
    assert "added    body.md, cookie-params.md, debugging.md, first-steps.md, metadata.md" in result.stdout
    again = runner.invoke(app, ["ingest", str(FIXTURES / "en"), "-w", str(ws)])
    assert again.exit_code == 0
    assert _row(again.stdout, "chunks") == ["0", "0", "0", str(snap.n_chunks)]
    assert "(unchanged)" in again.stdout


def test_ingest_defaults_to_kb_path_and_honours_size_options(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    shutil.copytree(FIXTURES / "zh", ws / "docs")
    default = runner.invoke(app, ["ingest", "-w", str(ws)])
    assert default.exit_code == 0, default.output
    n_default = load_snapshot(Workspace(ws)).n_chunks
    small = runner.invoke(app, ["ingest", "-w", str(ws), "--target-tokens", "60", "--max-tokens", "120"])
    assert small.exit_code == 0, small.output
    snap = load_snapshot(Workspace(ws))
    assert snap.chunking["target_tokens"] == 60 and snap.chunking["max_tokens"] == 120
    assert snap.n_chunks > n_default
    chunks = load_chunks(Workspace(ws))
    assert all(c.n_tokens <= 120 or "oversized" in c.flags for c in chunks)
    big = [c for c in chunks if "oversized" in c.flags]
    assert big, "the fixture has a code block over 120 tokens"
    named = [line for line in small.stdout.splitlines() if line.strip().startswith("oversized ")]
    assert len(named) == min(len(big), 10), small.stdout  # each named (the first ten), with its place and size
    first = big[0] if len(big) == 1 else next(c for c in big if c.id in named[0])
    assert first.doc_id in named[0] and f"{first.n_tokens} tokens" in named[0] and first.id in named[0]


def test_skipped_files_are_one_warning_line_each_on_stderr(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    docs = tmp_path / "docs"
    docs.mkdir()
    shutil.copy2(FIXTURES / "en" / "body.md", docs / "body.md")
    (docs / "empty.md").write_bytes(b"")
    (docs / "blob.txt").write_bytes(b"\x00\xff\x00")
    result = runner.invoke(app, ["ingest", str(docs), "-w", str(ws)])
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 2
    assert any("empty.md: empty file" in w for w in warnings)
    assert any("blob.txt: binary file" in w for w in warnings)
    assert "1 documents" in result.stdout and "2 skipped" in result.stdout


def test_nothing_to_ingest_exits_non_zero_and_keeps_the_snapshot(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    ok = runner.invoke(app, ["ingest", str(FIXTURES / "zh"), "-w", str(ws)])
    assert ok.exit_code == 0
    before = (Workspace(ws).kb_dir / "snapshot.json").read_bytes()
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "only.md").write_bytes(b"")
    result = runner.invoke(app, ["ingest", str(bad), "-w", str(ws)])
    assert result.exit_code == 2
    assert "warning:" in result.stderr and "only.md: empty file" in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "could be ingested" in errors[0]
    assert (Workspace(ws).kb_dir / "snapshot.json").read_bytes() == before
    missing = runner.invoke(app, ["ingest", str(tmp_path / "nope"), "-w", str(ws)])
    assert missing.exit_code == 2 and "folder not found" in missing.stderr
    (tmp_path / "no-docs").mkdir()
    none = runner.invoke(app, ["ingest", str(tmp_path / "no-docs"), "-w", str(ws)])
    assert none.exit_code == 2 and "no supported documents" in none.stderr


#: The one wording of chunk sizes that do not fit together (KBSettings), whoever gives them.
MAX_BELOW = "max_tokens ({m}) is below target_tokens ({t}); chunks aim at target_tokens and never exceed max_tokens"
MIN_ABOVE = "min_tokens ({m}) is above target_tokens ({t}); smaller trailing sections join their neighbour"


def test_bad_options_and_no_workspace_are_one_line_errors(tmp_path: Path) -> None:
    ws = _ws(tmp_path)  # goldset.yaml sets target 350, max 700, min 60
    for args, message in [
        # the option given is named, also when the size it clashes with comes from goldset.yaml
        (["--max-tokens", "100"], f"option kb.max_tokens: {MAX_BELOW.format(m=100, t=350)}"),
        (["--target-tokens", "800"], f"option kb.target_tokens: {MAX_BELOW.format(m=700, t=800)}"),
        (["--min-tokens", "400"], f"option kb.min_tokens: {MIN_ABOVE.format(m=400, t=350)}"),
        (["--target-tokens", "0"], "option kb.target_tokens: Input should be greater than 0"),
    ]:
        result = runner.invoke(app, ["ingest", str(FIXTURES / "en"), "-w", str(ws), *args])
        assert result.exit_code == 2, (args, result.output)
        assert result.stderr.startswith(f"error: {message}") and len(result.stderr.strip().splitlines()) == 1, args
    assert not (ws / ".goldset" / "kb").exists()
    both = runner.invoke(app, ["ingest", str(FIXTURES / "en"), "-w", str(ws), "--target-tokens", "800",
                               "--max-tokens", "1600"])  # fmt: skip
    assert both.exit_code == 0, both.output
    outside = tmp_path / "outside"
    outside.mkdir()
    no_ws = runner.invoke(app, ["ingest", str(FIXTURES / "en"), "-w", str(outside)])
    assert no_ws.exit_code == 2 and "goldset init" in no_ws.stderr
    assert not (outside / ".goldset").exists()


def test_changed_documents_are_named(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("cookie-params.md", "debugging.md"):
        shutil.copy2(FIXTURES / "en-0.120.0" / name, docs / name)
    assert runner.invoke(app, ["ingest", str(docs), "-w", str(ws)]).exit_code == 0
    for name in ("cookie-params.md", "debugging.md"):
        shutil.copy2(FIXTURES / "en" / name, docs / name)
    result = runner.invoke(app, ["ingest", str(docs), "-w", str(ws)])
    assert result.exit_code == 0, result.output
    assert _row(result.stdout, "documents") == ["0", "1", "0", "1"]
    assert "changed  debugging.md" in result.stdout and "cookie-params.md" not in result.stdout

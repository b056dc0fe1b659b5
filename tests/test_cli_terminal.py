"""`goldset generate` in a real terminal: its progress read from a tmux pane of 80 columns (done/total and the
counters readable, not cut to "gen… pairs 18 … budget l…"), and Ctrl-C (SIGINT) saying what was done and that a
re-run resumes, exit 130, with the re-run paying only for what was not done."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from goldset.kb import ingest, load_chunks
from goldset.scaffold import init_workspace
from goldset.workspace import Workspace
from tests.helpers.fake_openai import FakeOpenAI, start_subprocess

DOCS = Path(__file__).parent / "fixtures" / "generate" / "docs"
REPO = Path(__file__).resolve().parent.parent


def _server(latency_s: float) -> Iterator[str]:
    server, base_url = start_subprocess({"qa_pairs": "tests.helpers.responders:qa_responder"}, latency_s=latency_s)
    try:
        yield base_url
    finally:
        server.kill()
        server.wait(timeout=10)


@pytest.fixture
def slow_server() -> Iterator[str]:
    yield from _server(0.4)


def _ws(path: Path) -> Workspace:
    init_workspace(path, dvc=False)
    ws = Workspace(path.resolve())
    ingest(DOCS, ws)
    return ws


def _env(base_url: str) -> dict[str, str]:
    return {
        **os.environ,
        "OPENAI_BASE_URL": base_url,
        "OPENAI_API_KEY": FakeOpenAI.DEFAULT_KEY,
        "GOLDSET_MODEL": "fake-model",
        "GOLDSET_GENERATE__FLUSH_SECONDS": "0",
        "PYTHONPATH": str(REPO),
    }


def _generate(ws: Workspace) -> list[str]:
    return [sys.executable, "-m", "goldset", "generate", "-w", str(ws.root), "--concurrency", "1"]


def test_the_generate_progress_reads_done_and_total_in_80_columns(tmp_path: Path, slow_server: str) -> None:
    tmux = shutil.which("tmux")
    assert tmux, "the terminal test needs tmux (make browser installs it: apt-get install -y tmux)"
    ws = _ws(tmp_path / "ws")
    total = len(load_chunks(ws))
    socket = str(tmp_path / "tmux.sock")
    env = _env(slow_server)
    script = tmp_path / "run.sh"  # the pane runs it with the environment pointing at the fake server
    exports = "".join(
        f"export {k}={shlex.quote(v)}\n" for k, v in env.items() if k.startswith(("OPENAI_", "GOLDSET_", "PYTHON"))
    )
    script.write_text(f"{exports}{shlex.join(_generate(ws))}\nsleep 30\n", encoding="utf-8")
    started = subprocess.run(
        [tmux, "-S", socket, "new-session", "-d", "-x", "80", "-y", "20", f"bash {shlex.quote(str(script))}"],
        check=True,
        capture_output=True,
        text=True,
    )
    assert started.returncode == 0, started.stderr
    try:
        seen: list[str] = []
        panes: list[str] = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            shot = subprocess.run([tmux, "-S", socket, "capture-pane", "-p"], capture_output=True, text=True)
            if shot.returncode:
                break  # the pane closed
            panes.append(shot.stdout)
            lines = [line for line in shot.stdout.splitlines() if line.startswith("generate")]
            if lines and re.search(rf"\b[1-9]\d*/{total}\b", lines[0]):
                seen = lines
                break
            if "Next: goldset filter" in shot.stdout:
                break  # finished without showing done/total
            time.sleep(0.1)
        progress = sorted({x for p in panes for x in p.splitlines() if x.startswith("gen")})
        assert seen, f"no progress line with done/{total} in the 80-column pane; the progress lines: {progress}"
        line = seen[0]
        assert len(line) <= 80
        assert "…" not in line, line  # nothing cut mid-word
        assert re.search(r"\bpairs \d+", line) and re.search(r"\bcalls \d+", line), line
    finally:
        subprocess.run([tmux, "-S", socket, "kill-server"], check=False)


@pytest.fixture
def slower_server() -> Iterator[str]:
    """1 s a call: 9 chunks one at a time leave the test ~8 s to interrupt the run halfway, even on a busy machine."""
    yield from _server(1.0)


def test_ctrl_c_says_what_was_done_and_that_a_rerun_resumes(tmp_path: Path, slower_server: str) -> None:
    ws = _ws(tmp_path / "ws")
    total = len(load_chunks(ws))
    env = _env(slower_server)
    proc = subprocess.Popen(_generate(ws), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not (ws.pairs_path.exists() and ws.pairs_path.stat().st_size) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, (out, err)
    said = out + err
    match = re.search(rf"interrupted after (\d+) of {total} chunk", said)
    assert match, said
    assert 0 < int(match.group(1)) < total
    assert "goldset generate" in said and "resume" in said, said
    assert "Traceback" not in said, said

    again = subprocess.run(_generate(ws), env=env, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert f"chunks {total - int(match.group(1))}" in again.stdout or "cache hits" in again.stdout, again.stdout

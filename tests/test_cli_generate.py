"""`goldset generate` through the CLI: summary, dry run, re-runs, no endpoint, and kill -9 resume."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from typer.testing import CliRunner

from goldset.cli import app
from goldset.io import read_jsonl
from goldset.kb import ingest, load_chunks
from goldset.scaffold import init_workspace
from goldset.schema import QAPair
from goldset.workspace import Workspace
from tests.helpers.fake_openai import FakeOpenAI, Fault, start_subprocess
from tests.helpers.responders import qa_responder

DOCS = Path(__file__).parent / "fixtures" / "generate" / "docs"
REPO = Path(__file__).resolve().parent.parent
runner = CliRunner()


def make_ws(path: Path) -> Workspace:
    init_workspace(path, dvc=False)
    ws = Workspace(path.resolve())
    ingest(DOCS, ws)
    return ws


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return make_ws(tmp_path / "ws")


@pytest.fixture
def fake(fake_llm: FakeOpenAI) -> FakeOpenAI:
    fake_llm.add_responder("qa_pairs", qa_responder)
    return fake_llm


def test_generate_prints_a_summary_and_reruns_are_free(ws: Workspace, fake: FakeOpenAI) -> None:
    n_chunks = len(load_chunks(ws))
    first = runner.invoke(app, ["generate", "-w", str(ws.root)])
    assert first.exit_code == 0, first.output
    assert f"chunks {n_chunks}  calls {n_chunks}  cache hits 0" in first.output
    assert "Next: goldset filter" in first.output and fake.calls == n_chunks
    assert "cost no price for " in first.output and "set llm.prices" in first.output  # not a made-up $0
    assert not (ws.state_dir / "generation_failures.jsonl").exists()  # no failures, no report file
    pairs = read_jsonl(ws.pairs_path, QAPair)
    assert len(pairs) == 3 * n_chunks
    assert {p.language for p in pairs} == {"en", "zh"}
    assert all(p.provenance.kb_snapshot_id and p.provenance.kb_snapshot_id.startswith("kb-") for p in pairs)

    again = runner.invoke(app, ["generate", "-w", str(ws.root)])
    assert again.exit_code == 0 and "Nothing to generate" in again.output and fake.calls == n_chunks
    everything = runner.invoke(app, ["generate", "-w", str(ws.root), "--all"])
    assert everything.exit_code == 0, everything.output
    assert f"calls 0  cache hits {n_chunks}" in everything.output and fake.calls == n_chunks


def test_the_summary_shows_requests_retries_repairs_and_the_budget_left(ws: Workspace, fake: FakeOpenAI) -> None:
    n_chunks = len(load_chunks(ws))
    ws.config_path.write_text(
        ws.config_path.read_text(encoding="utf-8").replace(
            "llm:\n", "llm:\n  endpoints:\n    default: {backoff_base_s: 0.01, backoff_max_s: 0.02}\n", 1
        ),
        encoding="utf-8",
    )
    fake.inject(Fault("429", retry_after=0.01), "500", "500", "schema", "500")
    result = runner.invoke(app, ["generate", "-w", str(ws.root), "-j", "1"])
    assert result.exit_code == 0, result.output
    assert fake.calls == n_chunks + 5
    assert f"chunks {n_chunks}  calls {n_chunks}  cache hits 0  failed calls 0" in result.output
    assert f"requests {fake.calls} sent  retries 4  repairs 1  format fallbacks 0  retry budget left 16 of 20" in (
        result.output
    )


def test_dry_run_prints_the_calls_a_run_makes(ws: Workspace, fake: FakeOpenAI) -> None:
    dry = runner.invoke(app, ["generate", "-w", str(ws.root), "--dry-run", "--docs", "zh/*", "--pairs-per-chunk", "4"])
    assert dry.exit_code == 0, dry.output
    assert fake.calls == 0 and not ws.pairs_path.exists()
    n_zh = sum(1 for c in load_chunks(ws) if c.doc_id.startswith("zh/"))
    assert f"calls         {n_zh} to pay, 0 from the call journal" in dry.output
    assert f"pairs asked   {4 * n_zh}" in dry.output
    assert "$" not in dry.output and "no price for fake-model; set llm.prices" in dry.output  # no dollars it can't give
    real = runner.invoke(app, ["generate", "-w", str(ws.root), "--docs", "zh/*", "--pairs-per-chunk", "4"])
    assert real.exit_code == 0, real.output
    assert fake.calls == n_zh
    assert {p.language for p in read_jsonl(ws.pairs_path, QAPair)} == {"zh"}


@pytest.mark.usefixtures("no_llm_env")
def test_no_endpoint_is_one_line_saying_how_to_set_one(ws: Workspace) -> None:
    result = runner.invoke(app, ["generate", "-w", str(ws.root)])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert "OPENAI_API_KEY" in lines[0] and "OPENAI_BASE_URL" in lines[0]
    assert not ws.pairs_path.exists()


def test_a_run_in_which_nothing_worked_exits_3_and_writes_no_dataset(ws: Workspace, fake: FakeOpenAI) -> None:
    n_chunks = len(load_chunks(ws))
    ws.config_path.write_text(
        ws.config_path.read_text(encoding="utf-8").replace("llm:\n", "llm:\n  endpoints:\n    default: "
                                                          "{max_attempts: 1}\n", 1),
        encoding="utf-8",
    )
    fake.inject(*[Fault("400", message="context length exceeded")] * n_chunks)
    result = runner.invoke(app, ["generate", "-w", str(ws.root)])
    assert result.exit_code == 3, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "HTTP 400" in lines[0]
    assert "Next: goldset filter" not in result.output and not ws.pairs_path.exists()
    assert (ws.state_dir / "generation_failures.jsonl").exists() and fake.calls == n_chunks


@pytest.mark.usefixtures("no_llm_env")
def test_an_unreachable_base_url_is_one_line_and_exit_2(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("GOLDSET_MODEL", "m")
    result = runner.invoke(app, ["generate", "-w", str(ws.root)])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and f"connection refused to http://127.0.0.1:{port}/v1" in lines[0]
    assert not ws.pairs_path.exists()


def test_bad_generate_setting_is_a_config_error(ws: Workspace, fake: FakeOpenAI) -> None:
    text = ws.config_path.read_text(encoding="utf-8").replace("pairs_per_chunk: 3", "pairs_per_chunk: lots")
    ws.config_path.write_text(text, encoding="utf-8")
    result = runner.invoke(app, ["generate", "-w", str(ws.root)])
    assert result.exit_code == 2 and "generate.pairs_per_chunk" in result.output and fake.calls == 0


def test_out_of_range_options_are_the_settings_one_line_errors(ws: Workspace, fake: FakeOpenAI) -> None:
    """--pairs-per-chunk and --concurrency are settings: GenerationSettings holds their bounds, not the CLI."""
    for args, message in [
        (["--pairs-per-chunk", "30"], "option generate.pairs_per_chunk: Input should be less than or equal to 20"),
        (["-j", "0"], "option generate.concurrency: Input should be greater than or equal to 1"),
    ]:
        result = runner.invoke(app, ["generate", "-w", str(ws.root), *args])
        assert result.exit_code == 2 and result.output == f"error: {message}\n", result.output
    assert fake.calls == 0 and not ws.pairs_path.exists()


# -------------------------------------------------------------------------------------------- kill -9 resume


def _server_calls(base_url: str) -> int:
    with urllib.request.urlopen(base_url.removesuffix("/v1") + "/_fake/stats", timeout=5) as resp:
        return int(json.load(resp)["calls"])


def _journal_count(ws: Workspace) -> int:
    if not ws.cache_path.exists():
        return 0
    con = sqlite3.connect(ws.cache_path, timeout=5)
    try:
        return int(con.execute("SELECT COUNT(*) FROM calls").fetchone()[0])
    except sqlite3.OperationalError:  # table not created yet
        return 0
    finally:
        con.close()


def _generate_cmd(ws: Workspace) -> list[str]:
    return [sys.executable, "-m", "goldset", "generate", "-w", str(ws.root), "--concurrency", str(CONCURRENCY)]


def _comparable(pairs: list[QAPair]) -> list[dict]:
    """Pairs without the timestamps of when they were generated and checked."""
    out = []
    for p in pairs:
        d = p.model_dump(mode="json")
        d["provenance"].pop("generated_at")
        for check in d["checks"].values():
            check.pop("checked_at")
        out.append(d)
    return out


CONCURRENCY = 2


def test_a_run_killed_with_sigkill_resumes_to_the_same_candidates_without_paying_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "requests.log"
    monkeypatch.setenv("GOLDSET_TEST_REQUEST_LOG", str(log))
    server, base_url = start_subprocess({"qa_pairs": "tests.helpers.responders:logging_qa_responder"}, latency_s=0.3)
    try:
        env = {
            **os.environ,
            "OPENAI_BASE_URL": base_url,
            "OPENAI_API_KEY": FakeOpenAI.DEFAULT_KEY,
            "GOLDSET_MODEL": "fake-model",
            "GOLDSET_GENERATE__FLUSH_SECONDS": "0",  # rewrite the candidates file after every call
            "PYTHONPATH": str(REPO),
        }
        reference = make_ws(tmp_path / "reference")
        n = len(load_chunks(reference))
        done = subprocess.run(_generate_cmd(reference), env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert _server_calls(base_url) == n
        log.write_text("", encoding="utf-8")

        ws = make_ws(tmp_path / "killed")
        before = _server_calls(base_url)
        proc = subprocess.Popen(_generate_cmd(ws), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while _journal_count(ws) < 3 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        assert proc.returncode == -signal.SIGKILL
        paid_first = _server_calls(base_url) - before
        completed = _journal_count(ws)
        assert 3 <= completed < n, "the kill must land mid-run"
        if ws.pairs_path.exists():  # whatever was written is whole, valid JSONL
            read_jsonl(ws.pairs_path, QAPair)

        resumed = subprocess.run(_generate_cmd(ws), env=env, capture_output=True, text=True, timeout=120)
        assert resumed.returncode == 0, resumed.stderr
        paid_second = _server_calls(base_url) - before - paid_first
        # no completed call is paid again; only the calls in flight at the kill (≤ concurrency) are re-sent
        assert paid_second == n - completed
        assert paid_first - completed <= CONCURRENCY
        hashes = log.read_text(encoding="utf-8").split()
        repeated = len(hashes) - len(set(hashes))
        # (a request cut off by the kill may reach the server without a body, so it is counted but not logged)
        assert len(set(hashes)) == n and repeated <= paid_first + paid_second - n <= CONCURRENCY

        assert _comparable(read_jsonl(ws.pairs_path, QAPair)) == _comparable(read_jsonl(reference.pairs_path, QAPair))
    finally:
        server.kill()
        server.wait(timeout=10)


def test_a_selection_that_matches_nothing_says_so(ws: Workspace, fake: FakeOpenAI) -> None:
    result = runner.invoke(app, ["generate", "-w", str(ws.root), "--docs", "nope/*"])
    assert result.exit_code == 0 and "no chunk matches the selection" in result.output and fake.calls == 0
    runner.invoke(app, ["generate", "-w", str(ws.root), "--docs", "zh/*"])
    n_zh = fake.calls
    again = runner.invoke(app, ["generate", "-w", str(ws.root), "--docs", "zh/*"])
    assert f"the {n_zh} selected chunk(s) already have pairs" in again.output


def test_generate_before_ingest_says_to_ingest(tmp_path: Path, fake: FakeOpenAI) -> None:
    init_workspace(tmp_path / "empty", dvc=False)
    result = runner.invoke(app, ["generate", "-w", str(tmp_path / "empty")])
    assert result.exit_code == 2 and "goldset ingest" in result.output and fake.calls == 0

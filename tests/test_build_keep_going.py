"""`goldset build --keep-going` that goes on when the chunks that failed before fail again, and generate / build
runs that kept no pair: exit 3, not "Next: goldset filter" (the fake LLM server as a model that breaks)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from goldset.cli import app
from goldset.io import read_json
from goldset.schema.build import BuildState
from tests.helpers.build_data import BreaksAfter
from tests.helpers.duplicate_responders import no_duplicates
from tests.helpers.fake_openai import FakeOpenAI
from tests.helpers.judge_responders import groundedness_responder
from tests.helpers.responders import build_pairs, never_valid_responder, qa_responder

DOCS = Path(__file__).parent / "fixtures" / "generate" / "docs"
runner = CliRunner()


def invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


def line_of(output: str, stage: str) -> str:
    return next(line for line in output.splitlines() if line.startswith(f"{stage} "))


def rejected_only(body: dict[str, Any]) -> dict[str, Any]:
    """A model whose every pair cites a chunk that does not exist: generation rejects them all."""
    pairs = build_pairs(body)["pairs"]
    for p in pairs:
        p.update(question_type="factual", evidence=[{"chunk_id": "no-such-chunk", "quote": "Nothing."}])
    return {"pairs": pairs}


@pytest.fixture
def llm(fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> FakeOpenAI:
    fake_llm.add_responder("qa_pairs", qa_responder)
    fake_llm.add_responder("groundedness", groundedness_responder)
    fake_llm.add_responder("duplicate_judge", no_duplicates)
    monkeypatch.delenv("LABEL_STUDIO_URL", raising=False)
    return fake_llm


def test_keep_going_goes_on_when_the_failed_chunks_fail_again(tmp_path: Path, llm: FakeOpenAI) -> None:
    ws = tmp_path / "ws"
    assert invoke("init", str(ws))[0] == 0
    llm.add_responder("qa_pairs", BreaksAfter(4))
    code, out = invoke("build", str(DOCS), "-w", str(ws), "--export", "-j", "1")
    assert code == 3 and "pass --keep-going" in out, out

    llm.add_responder("qa_pairs", never_valid_responder)  # the model still fails on the chunks left
    code, out = invoke("build", "-w", str(ws), "--export", "-j", "1", "--keep-going")
    assert code == 0, out
    gen = line_of(out, "generate")
    assert gen.split()[1] == "incomplete" and "carried on with the" in gen and "(--keep-going)" in gen
    assert "failed chunks: " in out
    assert line_of(out, "filter").split()[1] == "done", "the stages after generation ran on what it had"
    state = read_json(ws / ".goldset" / "build.json", BuildState)
    assert state.stopped_at is None and state.stages[1].counts["chunks_failed"] > 0

    # without --keep-going the same rebuild stops, as before
    code, out = invoke("build", "-w", str(ws), "--export", "-j", "1")
    assert code == 3 and "generation calls failed" in out

    # the library's report keeps the failed calls' figures when it carries on
    from goldset.loop.runner import build

    report = build(ws, concurrency=1, keep_going=True, review="none")
    gen = report.generation
    assert gen is not None and gen.chunks_failed > 0 and gen.llm.calls == gen.chunks_failed, gen


def test_a_build_that_kept_no_pair_stops_with_exit_3(tmp_path: Path, llm: FakeOpenAI) -> None:
    ws = tmp_path / "ws"
    assert invoke("init", str(ws))[0] == 0
    llm.add_responder("qa_pairs", rejected_only)
    code, out = invoke("build", str(DOCS), "-w", str(ws), "--export")
    assert code == 3, out
    assert "generation kept 0 pairs" in out and "filter" not in line_of(out, "generate")
    assert "not run   filter, sample, review, release" in out


def test_generate_that_kept_no_pair_exits_3_without_next_filter(tmp_path: Path, llm: FakeOpenAI) -> None:
    ws = tmp_path / "ws"
    assert invoke("init", str(ws))[0] == 0
    assert invoke("ingest", str(DOCS), "-w", str(ws))[0] == 0
    llm.add_responder("qa_pairs", rejected_only)
    code, out = invoke("generate", "-w", str(ws), "--limit", "2")
    assert code == 3, out
    assert "error: generation kept 0 pairs of the 2 chunk(s) asked" in out
    assert "Next: goldset filter" not in out
    llm.add_responder("qa_pairs", qa_responder)
    code, out = invoke("generate", "-w", str(ws), "--limit", "2", "--docs", "*")
    assert code == 0 and "Next: goldset filter" in out, out

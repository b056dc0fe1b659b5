"""The closed_book check through the fake OpenAI server: the generation model is asked the bare question, the
judge compares its answer with the reference (tests/helpers/closed_book_responders.py: a fixed store of general
knowledge, no labels)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from goldset.cli import app
from goldset.errors import EndpointError
from goldset.filters import run_filters
from goldset.io import read_jsonl, write_jsonl
from goldset.schema import PairStatus, Provenance, QAPair
from tests.conftest import CLOSED_BOOK_OFF
from tests.helpers.closed_book_responders import closed_book_answer_responder, closed_book_judge_responder
from tests.helpers.fake_openai import FakeOpenAI
from tests.helpers.filter_data import make_workspace, pair

#: The groundedness judge, the copy check and the duplicate judge are off: these tests count closed_book's calls.
CFG = "filter:\n  checks:\n    groundedness: false\n    verbatim: false\n    duplicate: {judge: false}\n"
GENERAL_Q = "What does the HTTP status code 404 mean?"
GENERAL_A = "The server could not find the requested resource: Not Found."
DOCS_Q = "Does FastAPI support a request body on a GET request?"
DOCS_A = "Yes, FastAPI supports it, but only for very complex or extreme use cases."
ZH_Q = "JSON 是什么的缩写？"
ZH_A = "JSON 是 JavaScript Object Notation 的缩写。"


def _pairs() -> list[QAPair]:
    return [
        pair("qa-general", GENERAL_Q, GENERAL_A, chunks=("en-body-2",)),
        pair("qa-docs", DOCS_Q, DOCS_A, chunks=("en-body-2",)),
        pair("qa-zh", ZH_Q, ZH_A, chunks=("zh-body-1",)),
        pair("qa-real", "What does HTTP status 500 indicate?", "An internal server error: the server failed.",
             chunks=("en-body-2",), provenance=Provenance(source="real", count=3)),
    ]  # fmt: skip


def _load(ws) -> dict[str, QAPair]:
    return {p.id: p for p in read_jsonl(ws.pairs_path, QAPair)}


def _fake(fake: FakeOpenAI) -> FakeOpenAI:
    os.environ.pop(CLOSED_BOOK_OFF, None)  # conftest turns the check off for the other tests (restored after)
    fake.add_responder("closed_book_answer", closed_book_answer_responder)
    fake.add_responder("closed_book_agreement", closed_book_judge_responder)
    return fake


def _questions_sent(fake: FakeOpenAI) -> str:
    return json.dumps([r for r in fake.requests], default=str, ensure_ascii=False)


def test_flags_general_knowledge_passes_document_specific(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    _fake(fake_llm)
    ws = make_workspace(tmp_path / "ws", _pairs(), config=CFG)
    report = run_filters(ws)
    got = _load(ws)
    cb = {pid: p.checks["closed_book"] for pid, p in got.items()}
    assert not cb["qa-general"].passed and "general knowledge" in cb["qa-general"].reason
    assert not cb["qa-zh"].passed and not cb["qa-real"].passed  # real user questions are checked too
    assert cb["qa-docs"].passed and "cannot answer" in cb["qa-docs"].reason
    # Flag, not reject: the pair passes and review sees the flag.
    assert cb["qa-general"].severity == "flag"
    assert got["qa-general"].status == PairStatus.passed and "closed_book" in got["qa-general"].flags
    assert got["qa-docs"].status == PairStatus.passed and "closed_book" not in got["qa-docs"].flags
    # 4 closed-book calls, an agreement call for each of the 3 the model answered.
    assert fake_llm.calls == 7 and report.llm is not None and report.llm["calls"] == 7
    # The closed-book call carries the question alone: not the reference answer, not the evidence.
    answer_calls = [r for r in fake_llm.requests if "closed_book_answer" in json.dumps(r, default=str)]
    assert answer_calls and all(GENERAL_A not in json.dumps(r, default=str) for r in answer_calls)

    again = run_filters(ws)
    assert fake_llm.calls == 7 and again.per_check["closed_book"].reused == 4 and not again.written

    # A changed reference answer makes the verdict stale, but the closed-book answer read only the question:
    # the journal answers it, nothing is paid again (the model did not know it: no agreement call either).
    ps = _load(ws)
    ps["qa-docs"] = ps["qa-docs"].model_copy(update={"answer": DOCS_A + " The specifications leave it undefined."})
    write_jsonl(ws.pairs_path, ps.values())
    third = run_filters(ws)
    assert fake_llm.calls == 7 and third.per_check["closed_book"].reused == 3


def test_severity_reject_rejects(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    _fake(fake_llm)
    cfg = CFG + "    closed_book: {severity: reject}\n"
    ws = make_workspace(tmp_path / "ws", _pairs()[:2], config=cfg)
    run_filters(ws)
    got = _load(ws)
    assert got["qa-general"].status == PairStatus.rejected and got["qa-docs"].status == PairStatus.passed


def test_no_call_for_a_pair_rejected_earlier(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    _fake(fake_llm)
    gone = pair("qa-gone", "What does HTTP status 200 mean?", "OK: the request succeeded.", chunks=("no-such-chunk",))
    ws = make_workspace(tmp_path / "ws", [gone, _pairs()[0]], config=CFG)
    report = run_filters(ws)
    got = _load(ws)
    assert got["qa-gone"].status == PairStatus.rejected and "closed_book" not in got["qa-gone"].checks
    assert "status 200" not in _questions_sent(fake_llm)
    assert report.not_judged["closed_book"] == 1 and fake_llm.calls == 2


def test_contradictory_verdict_is_a_failed_judgement(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    _fake(fake_llm)
    fake_llm.add_responder("closed_book_agreement", lambda b: {"agrees": True, "reason": "The answers differ."})
    ws = make_workspace(tmp_path / "ws", _pairs()[:1], config=CFG)
    report = run_filters(ws)
    got = _load(ws)["qa-general"]
    assert "closed_book" not in got.checks and got.status == PairStatus.candidate
    assert report.judge_errors and "failed judgement" in report.judge_errors[0]


def test_setting_turns_it_off(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    _fake(fake_llm)
    ws = make_workspace(tmp_path / "ws", _pairs(), config=CFG + "    closed_book: false\n")
    assert os.environ.get(CLOSED_BOOK_OFF) is None
    report = run_filters(ws)
    assert fake_llm.calls == 0 and "closed_book" not in report.checks
    assert all("closed_book" not in p.checks and p.status == PairStatus.passed for p in _load(ws).values())


def test_no_endpoint_says_so(tmp_path: Path, no_llm_env: None) -> None:
    ws = make_workspace(tmp_path / "ws", _pairs(), config=CFG)
    report = run_filters(ws)
    assert report.skipped_checks["closed_book"] == "skipped: no generation endpoint configured"
    assert _load(ws)["qa-general"].status == PairStatus.passed
    required = make_workspace(tmp_path / "ws2", _pairs(), config=CFG + "    closed_book: {enabled: true}\n")
    with pytest.raises(EndpointError):
        run_filters(required)
    out = CliRunner().invoke(app, ["filter", "--dry-run", "--workspace", str(ws.root)])
    assert out.exit_code == 0 and "closed_book check would not run (no generation endpoint configured)" in out.output


def test_dry_run_counts_its_calls(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    _fake(fake_llm)
    ws = make_workspace(tmp_path / "ws", _pairs(), config=CFG)
    runner = CliRunner()
    before = runner.invoke(app, ["filter", "--dry-run", "--workspace", str(ws.root)])
    assert before.exit_code == 0, before.output
    assert "4 pair(s) to ask" in before.output and "at most 8 to send" in before.output
    assert fake_llm.calls == 0
    run_filters(ws)
    ps = _load(ws)  # both verdicts made stale by their answers; the journal holds every call they need
    for pid in ("qa-docs", "qa-general"):
        ps[pid] = ps[pid].model_copy(update={"answer": ps[pid].answer + " Indeed."})
    write_jsonl(ws.pairs_path, ps.values())
    after = runner.invoke(app, ["filter", "--dry-run", "--workspace", str(ws.root)])
    # qa-docs: answer journaled (the model did not know). qa-general: answer journaled, agreement on a new reference.
    assert "2 pair(s) to ask, 2 verdict(s) current" in after.output, after.output
    assert "2 from the journal, and up to 1 agreement call(s), 0 from the journal: at most 1 to send" in after.output

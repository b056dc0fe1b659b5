"""The whole loop through the CLI, as a user runs it: init → ingest → generate → filter → status → eval → report.

Each stage has its own tests; this one catches the seams: that what one command writes is what the next reads.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from goldset.cli import app
from goldset.io import read_jsonl
from goldset.schema import PairStatus, QAPair
from tests.helpers.fake_openai import FakeOpenAI
from tests.helpers.judge_responders import groundedness_responder
from tests.helpers.responders import qa_responder

DOCS = Path(__file__).parent / "fixtures" / "generate" / "docs"
runner = CliRunner()


def run(*args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, f"goldset {' '.join(args)} failed:\n{result.output}"
    return result.output


def test_the_whole_loop(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    fake_llm.add_responder("qa_pairs", qa_responder)
    fake_llm.add_responder("groundedness", groundedness_responder)
    ws = tmp_path / "ws"
    run("init", str(ws))
    run("ingest", str(DOCS), "-w", str(ws))

    estimate = run("generate", "-w", str(ws), "--dry-run")
    planned = int(estimate.split("calls")[1].split()[0])
    run("generate", "-w", str(ws))
    assert fake_llm.calls == planned, "the dry run predicts the calls a run makes"

    run("filter", "-w", str(ws), "--no-llm")
    pairs = read_jsonl(ws / "data" / "pairs.jsonl", QAPair)
    statuses = {p.status for p in pairs}
    assert statuses <= {PairStatus.passed, PairStatus.rejected} and PairStatus.passed in statuses
    assert all("verbatim" in p.checks and "duplicate" in p.checks for p in pairs)
    assert all(p.provenance.model == "fake-model" and p.provenance.prompt_hash for p in pairs)

    status = run("status", "-w", str(ws))
    assert f"pairs         {len(pairs)}:" in status

    calls_before_eval = fake_llm.calls
    run("eval", "-w", str(ws), "--baseline", "bm25", "--no-judge", "--out", str(tmp_path / "run"),
        "--html", str(tmp_path / "r.html"))  # fmt: skip
    assert fake_llm.calls == calls_before_eval, "the BM25 baseline without the judge needs no LLM"
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    passed = [p for p in pairs if p.status is PairStatus.passed]
    assert summary["n_samples"] == len(passed), "only passed pairs are evaluated"
    assert 0.0 < summary["overall"]["recall@5"] <= 1.0
    assert f"{summary['overall']['recall@5']:.3f}" in (tmp_path / "r.html").read_text(encoding="utf-8")

    # the LLM judge on top: every pair the cheap checks let through gets a groundedness verdict, from real calls
    # to the endpoint; the pairs they rejected cost no call
    run("filter", "-w", str(ws))
    assert fake_llm.calls > calls_before_eval
    judged = read_jsonl(ws / "data" / "pairs.jsonl", QAPair)
    cheap = {p.id for p in pairs if p.status is PairStatus.rejected}
    assert cheap and all("groundedness" not in p.checks for p in judged if p.id in cheap)
    assert all("groundedness" in p.checks for p in judged if p.id not in cheap)
    assert "sk-test" not in "".join(p.read_text(errors="replace") for p in ws.rglob("*") if p.is_file()
                                    and ".git" not in p.parts and p.suffix != ".sqlite")

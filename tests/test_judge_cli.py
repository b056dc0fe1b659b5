"""`goldset eval --judge/--no-judge/--dry-run` and the judge in `goldset report`, through the CLI and the fake
OpenAI-compatible server."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from goldset.cli import app
from goldset.schema import RunSample
from tests.helpers.eval_data import evaluated_pairs, make_dataset, perfect_sample, write_run_file
from tests.helpers.fake_openai import FakeOpenAI
from tests.helpers.judge_responders import add_eval_judge_responders

runner = CliRunner()


def run(*args: str, code: int = 0) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == code, f"goldset {' '.join(args)} exited {result.exit_code}:\n{result.output}"
    return result.output


@pytest.fixture
def setup(fake_llm: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[FakeOpenAI, Path, Path]:
    add_eval_judge_responders(fake_llm)
    monkeypatch.chdir(tmp_path)
    data = make_dataset(tmp_path / "data")
    samples = [perfect_sample(p) for p in evaluated_pairs()]
    samples[0] = RunSample(pair_id=samples[0].pair_id, answer="BROKEN-claims", contexts=samples[0].contexts)
    return fake_llm, data, write_run_file(tmp_path / "run.jsonl", samples)


def _number(pattern: str, text: str) -> int:
    m = re.search(pattern, text)
    assert m, f"{pattern!r} not in:\n{text}"
    return int(m.group(1).replace(",", ""))


def test_dry_run_predicts_the_calls_then_sees_them_in_the_journal(setup: tuple[FakeOpenAI, Path, Path]) -> None:
    fake, data, run_file = setup
    out = run("eval", "--dataset", str(data), "--run", str(run_file), "--dry-run")
    planned = _number(r"(\d+) judge calls", out)
    assert "at most 3 per question" in out and "0 already in the journal" in out
    assert fake.calls == 0 and not Path("runs").exists(), "a dry run calls nothing and writes nothing"

    out = run("eval", "--dataset", str(data), "--run", str(run_file), "--out", "runs/a")
    assert fake.calls == planned + 1, "the dry run predicts the calls (the broken reply's repair is the +1)"
    assert re.search(r"judge: fake-judge \(endpoint default\): \d+ calls sent, 0 from the journal", out)
    assert "left out" in out  # the broken claims reply

    again = run("eval", "--dataset", str(data), "--run", str(run_file), "--dry-run")
    cached = _number(r"(\d+) already in the journal", again)
    assert cached == planned - 1, "every call but the failed one is in the journal (failures are never served)"
    assert "1 to send" in again

    target = run("eval", "--dataset", str(data), "--baseline", "bm25", "--dry-run")
    assert "has not run yet" in target and _number(r"(\d+) judge calls", target) == planned


def test_no_judge_and_report(setup: tuple[FakeOpenAI, Path, Path]) -> None:
    fake, data, run_file = setup
    out = run("eval", "--dataset", str(data), "--run", str(run_file), "--no-judge", "--out", "runs/plain")
    assert fake.calls == 0 and "judge:" not in out
    run("eval", "--dataset", str(data), "--run", str(run_file), "--out", "runs/judged")
    report = run("report", "runs/judged", "--html", "r.html")
    assert "judge: fake-judge" in report
    html = Path("r.html").read_text(encoding="utf-8")
    assert "fake-judge" in html and "Samples the judge failed on (1)" in html
    assert "still invalid after one repair attempt" in html and "judge failure(s) left out" in html
    plain = run("report", "runs/plain")
    assert "judge: none" in plain
    # a judged and an unjudged run were scored differently: compare says so instead of mixing them
    refused = run("compare", "runs/plain", "runs/judged", code=2)
    assert "different settings: judge" in refused


def test_a_required_judge_without_endpoint_is_a_usage_error(tmp_path: Path, no_llm_env: None) -> None:
    data = make_dataset(tmp_path / "data")
    run_file = write_run_file(tmp_path / "run.jsonl", [perfect_sample(p) for p in evaluated_pairs()])
    out = run("eval", "--dataset", str(data), "--run", str(run_file), "--judge", "--out", str(tmp_path / "r"), code=2)
    assert "no LLM endpoint configured for judge" in out
    dry = run("eval", "--dataset", str(data), "--run", str(run_file), "--dry-run")
    assert "the judge would not run (no judge endpoint is configured" in dry

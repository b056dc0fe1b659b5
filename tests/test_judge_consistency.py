"""Judge self-consistency of the evaluation judge, against the fake OpenAI-compatible server answering as a bad
judge: supported claims whose quotes are found nowhere, key points that are the system answer's own claims, reverse
questions that are empty or junk. Each is caught, counted per run (``RunSummary.judge_consistency``) and shown in
the report's "Judge self-consistency" section; none scores what the bad judge said."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from goldset import evaluate
from goldset.evaluation.evaluator import EvalResult
from goldset.evaluation.report import write_report
from goldset.evaluation.runs import read_run
from tests.helpers.eval_data import CHUNK_TEXTS, make_dataset, write_run_file
from tests.helpers.fake_openai import FakeOpenAI
from tests.helpers.judge_responders import add_eval_judge_responders, claims_responder, relevance_responder

CONFIG = CHUNK_TEXTS["c-config"][1]
CACHE = CHUNK_TEXTS["c-cache"][1]
NOWHERE = "This sentence is found in no context at all."


@pytest.fixture
def fake(fake_llm: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeOpenAI:
    add_eval_judge_responders(fake_llm)
    monkeypatch.chdir(tmp_path)
    return fake_llm


def _user(body: dict[str, Any]) -> str:
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


def _answer(body: dict[str, Any]) -> str:
    m = re.search(r"<answer>\n(.*?)\n</answer>", _user(body), re.DOTALL)
    return m.group(1) if m else ""


def run_eval(tmp_path: Path, samples: list[dict[str, Any]], **kw: Any) -> EvalResult:
    make_dataset(tmp_path / "data")
    run_file = write_run_file(tmp_path / "run.jsonl", samples)
    return evaluate(tmp_path / "data", run=run_file, out_dir=tmp_path / "runs" / "run", **kw)


def sample(pid: str, answer: str, *contexts: str) -> dict[str, Any]:
    return {"pair_id": pid, "answer": answer, "contexts": [{"text": t} for t in contexts]}


def test_supported_claims_whose_quotes_are_found_nowhere_count_as_not_found(fake: FakeOpenAI, tmp_path: Path) -> None:
    def quotes_nowhere(body: dict[str, Any]) -> Any:
        reply = claims_responder(body)
        for c in reply["claims"]:
            c.update(verdict="supported", context=1, quote=NOWHERE)
        return reply

    fake.add_responder("judge_claims", quotes_nowhere)
    # with the honest judge qa-port's one claim is supported (tests/test_judge_eval.py: faithfulness 1.0)
    r = run_eval(tmp_path, [sample("qa-port", "The port setting defaults to 8080.", CONFIG),
                            sample("qa-clear", "Clear it with quokka cache clear.", CACHE)])  # fmt: skip
    scores = {s.pair_id: s for s in r.scores}
    for pid in ("qa-port", "qa-clear"):
        m = scores[pid].metrics
        assert m["faithfulness"] == 0.0 and m["hallucination"] == 1.0, pid
        assert m["context_utilization"] == 0.0, "a quote found nowhere shows no context was used"
        claim = scores[pid].judge.claims[0]
        assert claim.verdict == "not_found" and claim.downgraded and claim.quote == NOWHERE
        assert claim.quote_verified is False
    check = r.summary.judge_consistency["supported_quotes"]
    assert (check.checked, check.caught, check.rate) == (2, 2, 1.0)
    assert any("judge self-consistency: 2 of 2 claims the judge marked supported" in n for n in r.summary.notes)
    # the run folder keeps it, and the report shows it
    stored = read_run(tmp_path / "runs" / "run")
    assert stored.summary.judge_consistency["supported_quotes"].caught == 2
    html = tmp_path / "report.html"
    write_report(html, stored)
    text = html.read_text()
    assert "Judge self-consistency" in text and "supported_quotes" in text and "100.0%" in text


def test_an_honest_judge_has_nothing_caught_and_the_report_says_so(fake: FakeOpenAI, tmp_path: Path) -> None:
    r = run_eval(tmp_path, [sample("qa-port", "The port setting defaults to 8080.", CONFIG)])
    assert r.scores and {s.pair_id: s for s in r.scores}["qa-port"].metrics["faithfulness"] == 1.0
    check = r.summary.judge_consistency["supported_quotes"]
    assert (check.checked, check.caught, check.rate) == (1, 0, 0.0)
    assert r.summary.judge_consistency["key_points"].caught == 0
    assert not any("self-consistency" in n for n in r.summary.notes)


def test_a_non_answer_does_not_score_completeness_from_key_points_not_in_the_reference(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    def answer_as_reference(body: dict[str, Any]) -> Any:
        """The judge writes the system answer's own claims as the reference's key points, and marks them covered."""
        return {"points": [{"point": _answer(body), "covered": True}], "readings_acknowledged": None}

    fake.add_responder("judge_coverage", answer_as_reference)
    r = run_eval(tmp_path, [sample("qa-python", "The answer is 3.", CONFIG),
                            sample("qa-clear", "Run quokka cache clear.", CACHE)])  # fmt: skip
    scores = {s.pair_id: s for s in r.scores}
    non_answer = scores["qa-python"]  # the truth: "Python 3.11 or newer."
    assert non_answer.metrics["completeness"] is None, "not 1.0: the judge's key point is not the reference's"
    assert "not in the reference" not in non_answer.judge.failed.get("coverage", "")
    assert "is in the reference" in non_answer.judge.failed["key_points"]
    assert non_answer.judge.points is not None and non_answer.judge.points[0].in_reference is False
    # the answer that is the reference: its "key point" is found there and counts
    assert scores["qa-clear"].metrics["completeness"] == 1.0
    assert r.summary.judge_failed["completeness"] == 1
    check = r.summary.judge_consistency["key_points"]
    assert (check.checked, check.caught) == (2, 1)
    assert "completeness" not in r.summary.overall or r.summary.overall["completeness"] < 1.0


def test_empty_or_junk_reverse_questions_fail_the_embedding_relevancy(
    fake: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOLDSET_EMBEDDING_MODEL", "fake-embed")

    def sloppy(body: dict[str, Any]) -> Any:
        reply = relevance_responder(body)
        answer = _answer(body)
        if "log_level" in answer:
            reply["relevance"]["reverse_questions"] = []
        elif "8080" in answer:
            reply["relevance"]["reverse_questions"] = ["2"]
        return reply

    fake.add_responder("judge_relevance", sloppy)
    r = run_eval(tmp_path, [sample("qa-debug", "Set log_level to debug in quokka.toml.", CONFIG),
                            sample("qa-port", "The port setting defaults to 8080.", CONFIG),
                            sample("qa-clear", "Run quokka cache clear.", CACHE)])  # fmt: skip
    scores = {s.pair_id: s for s in r.scores}
    for pid in ("qa-debug", "qa-port"):
        s = scores[pid]
        assert s.metrics["answer_relevancy_embedding"] is None, pid
        assert "no usable reverse question" in s.judge.failed["reverse_questions"], pid
        assert s.metrics["answer_relevancy"] is not None, "the rating of the same reply stands"
    assert "'2'" in scores["qa-port"].judge.failed["reverse_questions"]
    assert scores["qa-clear"].metrics["answer_relevancy_embedding"] is not None
    assert r.summary.judge_failed["answer_relevancy_embedding"] == 2
    check = r.summary.judge_consistency["reverse_questions"]
    assert (check.checked, check.caught) == (3, 2)

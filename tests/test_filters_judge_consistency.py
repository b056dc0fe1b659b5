"""The filters' judges against the fake OpenAI server answering as a bad judge: a groundedness verdict that
contradicts itself (supported, with unsupported claims listed or a reason saying it is not) and a duplicate
verdict "same" with no reason are failed judgements, not a pass or a duplicate; the rate is in the report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from goldset.cli import app
from goldset.filters import run_filters
from goldset.filters.groundedness import says_not_supported
from goldset.io import read_jsonl
from goldset.schema import PairStatus, QAPair
from tests.helpers.fake_openai import FakeOpenAI
from tests.helpers.filter_data import make_workspace, pair
from tests.helpers.judge_responders import groundedness_responder

SUPPORTED = "The client sends a request body to your API; your API sends a response body to the client."
#: Planted ungrounded answers: nothing in the KB says when or where.
CHICAGO = "The client sends a request body to your API on Fridays at 9 am Chicago time."
TOKYO = "Every response body is stored for a week in a data centre in Tokyo."
NO_COPY_CHECK = "filter:\n  checks:\n    verbatim: false\n    duplicate: {judge: false}\n"


def contradicting_judge(body: dict[str, Any]) -> dict[str, Any]:
    """Honest on every answer but the planted ones, where it says supported and then contradicts itself."""
    reply = groundedness_responder(body)
    if "Chicago" in str(body["messages"]):
        reply.update(supported=True)  # its unsupported_claims still list the Chicago sentence
    elif "Tokyo" in str(body["messages"]):
        reply.update(supported=True, unsupported_claims=[], reason="This is not supported by the sources.")
    return reply


def _pairs() -> list[QAPair]:
    return [
        pair("qa-ok", "Who sends the request body and who sends the response body?", SUPPORTED),
        pair("qa-chicago", "When does the client send a request body?", CHICAGO),
        pair("qa-tokyo", "Where are response bodies kept?", TOKYO),
    ]


def test_a_groundedness_verdict_that_contradicts_itself_does_not_pass_the_pair(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    fake_llm.add_responder("groundedness", contradicting_judge)
    ws = make_workspace(tmp_path / "ws", _pairs(), config=NO_COPY_CHECK)
    report = run_filters(ws)
    got = {p.id: p for p in read_jsonl(ws.pairs_path, QAPair)}
    assert got["qa-ok"].status == PairStatus.passed and got["qa-ok"].checks["groundedness"].passed
    for pid in ("qa-chicago", "qa-tokyo"):
        assert got[pid].status != PairStatus.passed, pid
        assert "groundedness" not in got[pid].checks, "left unjudged: no verdict recorded"
    errors = " | ".join(report.judge_errors)
    assert "qa-chicago: the judge said supported but listed unsupported claims" in errors and "Chicago" in errors
    assert "qa-tokyo: the judge said supported but its reason says otherwise" in errors
    assert report.judge_consistency["groundedness"] == (3, 2)
    assert any("groundedness: 2 of 3 verdict(s) contradicted themselves (67%)" in s for s in report.consistency_lines())
    # the CLI says it too
    res = CliRunner().invoke(app, ["filter", "--workspace", str(ws.root)])
    assert res.exit_code == 0, res.output
    assert "contradicted themselves" in res.output


def test_reasons_that_say_not_supported_and_those_that_do_not() -> None:
    said_not = ["This is not supported", "The claim about Chicago time is not in the sources.",
                "The answer is unsupported", "Unsupported claims: the time.", "答案没有依据"]  # fmt: skip
    said_yes = ["Every claim is supported; no claim is unsupported.", "every claim is in the sources",
                "The docs say HTTP/3 is not supported, as the answer says.", ""]  # fmt: skip
    assert all(says_not_supported(t) for t in said_not)
    assert not any(says_not_supported(t) for t in said_yes)


DUP_CONFIG = "filter:\n  checks:\n    verbatim: false\n    groundedness: false\n    question_overlap: false\n"


def test_a_duplicate_verdict_same_without_a_reason_is_a_failed_judgement(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    from tests.helpers.duplicate_responders import parse_pairs

    def lazy_judge(body: dict[str, Any]) -> dict[str, Any]:
        """Says every pair is the same; the reason is a placeholder for all but the pair about status codes."""
        verdicts = []
        for n, a, b in parse_pairs(body):
            placeholder = "..." if n % 2 else ""
            reason = "both ask which status code FastAPI returns" if "status" in a and "status" in b else placeholder
            verdicts.append({"pair": n, "same": True, "reason": reason})
        return {"verdicts": verdicts}

    fake_llm.add_responder("duplicate_judge", lazy_judge)
    ps = [
        pair("qa-body", "How do I declare a request body in FastAPI?", "Declare a Pydantic model parameter."),
        pair("qa-header", "How do I read a header parameter in FastAPI?", "Declare a parameter with Header()."),
        pair("qa-status-1", "Which status code does FastAPI return for a missing parameter?", "422."),
        pair("qa-status-2", "What status code comes back when a required parameter is missing?", "It is 422."),
    ]
    ws = make_workspace(tmp_path / "ws", ps, config=DUP_CONFIG)
    report = run_filters(ws)
    got = {p.id: p.checks["duplicate"] for p in read_jsonl(ws.pairs_path, QAPair)}
    # unrelated questions "the same" with no reason: not duplicates, and the report says why
    assert got["qa-body"].passed and got["qa-header"].passed
    assert got["qa-header"].duplicate_of is None and got["qa-body"].duplicate_of is None
    # a "same" with its reason stands
    assert not got["qa-status-2"].passed or not got["qa-status-1"].passed
    n, bad = report.judge_consistency["duplicate"]
    assert bad >= 1 and n > bad
    assert any("the judge said same but gave no reason" in e for e in report.judge_errors)


def test_a_judge_of_the_generators_model_is_warned_about(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    fake_llm.add_responder("groundedness", groundedness_responder)
    ps = _pairs()[:1]
    for p in ps:
        p.provenance.model = "fake-judge"  # the model the judge endpoint also serves
    ws = make_workspace(tmp_path / "ws", ps, config=NO_COPY_CHECK)
    report = run_filters(ws)
    assert any("judge model fake-judge also generated 1 of the 1 pairs" in w for w in report.warnings)
    res = CliRunner().invoke(app, ["filter", "--workspace", str(ws.root)])
    assert res.exit_code == 0 and "also generated 1 of the 1 pairs" in res.stderr
    assert "warning: the judge model fake-judge" in res.stderr and "warning: warning" not in res.stderr
    # another generator: no warning
    other = make_workspace(tmp_path / "other", _pairs()[:1], config=NO_COPY_CHECK)
    assert run_filters(other).warnings == []


def test_the_pair_kept_of_a_duplicate_group_does_not_depend_on_an_earlier_runs_verdicts(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    """The judge rejects the pair kept by the first run; the second run (same settings) keeps the same pair, as a
    fresh run does: the judge's verdicts are an earlier run's leftovers when the duplicates are settled."""
    fake_llm.add_responder("groundedness", groundedness_responder)
    a = pair("qa-a", "How do I declare a request body in FastAPI?", CHICAGO)  # the judge: not supported
    b = pair("qa-b", "How can I declare a request body in FastAPI?", SUPPORTED)
    ws = make_workspace(tmp_path / "ws", [a, b], config=NO_COPY_CHECK)

    def dup() -> dict[str, tuple[bool, str | None]]:
        return {p.id: (p.checks["duplicate"].passed, p.checks["duplicate"].duplicate_of)
                for p in read_jsonl(ws.pairs_path, QAPair)}  # fmt: skip

    run_filters(ws)
    first = dup()
    assert first == {"qa-a": (True, None), "qa-b": (False, "qa-a")}
    assert not {p.id: p for p in read_jsonl(ws.pairs_path, QAPair)}["qa-a"].checks["groundedness"].passed
    run_filters(ws)
    assert dup() == first
    fresh = make_workspace(tmp_path / "fresh", [a, b], config=NO_COPY_CHECK)
    run_filters(fresh)
    assert {p.id: p.checks["duplicate"].duplicate_of for p in read_jsonl(fresh.pairs_path, QAPair)} == {
        "qa-a": None,
        "qa-b": "qa-a",
    }

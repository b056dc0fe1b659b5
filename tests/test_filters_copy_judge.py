"""The copy judge deciding the verbatim check's borderline band, through the fake OpenAI server (real client)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from goldset.cli import app
from goldset.errors import ConfigError
from goldset.filters import copy_judge, run_filters, verbatim
from goldset.filters.settings import FilterSettings
from goldset.io import read_jsonl
from goldset.schema import PairStatus, QAPair
from tests.helpers.copy_responders import copy_judge_responder, make_copy_judge_responder
from tests.helpers.fake_openai import FakeOpenAI, schema_name_of
from tests.helpers.filter_data import COPY, PARAPHRASE, SWAPPED, fixture_chunks, make_workspace, pair

#: Light edit of chunk en-body-2 the verbatim check rejects just over a threshold (in the band); the fake judge
#: finds most of its words in the passage's order: a copy.
EDIT = SWAPPED
#: Reworded and restructured, though most content words stay: the verbatim check rejects it at its overlap
#: threshold (in the band); the fake judge finds only a quarter of its words in the passage's order: its own words.
OWN = (
    "FastAPI supports it, yet just for extreme and complex cases: in the specifications a GET request sending a "
    "body has no defined behavior."
)
#: Passes the verbatim check just under a threshold (in the band); the fake judge calls it a near copy.
NEAR = (
    "The specifications leave a body on a GET request undefined, yet FastAPI supports it, though only for very "
    "complex or extreme use cases."
)
#: The groundedness judge is measured elsewhere; the duplicate judge too: the calls counted here are the copy judge's.
CONFIG = "filter:\n  checks:\n    groundedness: false\n    duplicate: {judge: false}\n"


def _pairs() -> list[QAPair]:
    body = ("en-body-2",)
    return [
        pair("qa-edit", "Can you send a body with a GET request?", EDIT, chunks=body),
        pair("qa-own", "Does FastAPI accept a body on a GET request?", OWN, chunks=body),
        pair("qa-near", "Is sending a GET body defined by the specs?", NEAR, chunks=body),
        pair("qa-copy", "What behaviour does a GET body have?", COPY, chunks=body),
        pair("qa-para", "Can a GET request carry a body in FastAPI?", PARAPHRASE, chunks=body),
        # In the band too, but the evidence check (cheaper) rejects it: its quote is not in the chunk.
        pair("qa-badquote", "When may a GET request send a body?", EDIT, chunks=body, quote="no such words in it"),
    ]


def _load(ws) -> dict[str, QAPair]:
    return {p.id: p for p in read_jsonl(ws.pairs_path, QAPair)}


def _answers_asked(fake: FakeOpenAI) -> list[str]:
    out = []
    for r in fake.chat_requests():
        assert schema_name_of(r.body, r.headers) == copy_judge.SCHEMA_NAME
        user = next(m["content"] for m in r.body["messages"] if m["role"] == "user")
        out.append(user.split("<answer>\n", 1)[1].split("\n</answer>", 1)[0])
    return sorted(out)


def test_the_band_is_what_the_fixtures_say() -> None:
    """The pairs below are where the tests say they are (else the tests would test nothing)."""
    chunks, st = fixture_chunks(), verbatim.Settings()
    margins = {p.id: copy_judge.margin(p, chunks, st) for p in _pairs()}
    band = FilterSettings().copy_judge.borderline
    assert {pid for pid, m in margins.items() if copy_judge.in_band(m, band)} == {"qa-edit", "qa-own", "qa-near",
                                                                                "qa-badquote"}  # fmt: skip
    assert margins["qa-own"] is not None and margins["qa-own"] >= 0  # lexically a copy
    assert margins["qa-near"] is not None and margins["qa-near"] < 0  # lexically not


def test_band_pairs_are_judged_others_are_not(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    fake_llm.add_responder(copy_judge.SCHEMA_NAME, copy_judge_responder)
    ws = make_workspace(tmp_path / "ws", _pairs(), config=CONFIG)
    report = run_filters(ws)
    got = _load(ws)
    v = {pid: p.checks["verbatim"] for pid, p in got.items()}
    # Only the three band pairs no cheaper check rejects cost a call: not the copy, the paraphrase, the bad quote.
    assert fake_llm.calls == 3 and _answers_asked(fake_llm) == sorted([EDIT, OWN, NEAR])
    assert report.copy_judge is not None and report.copy_judge["band"] == 3
    assert report.not_judged[copy_judge.NAME] == 1
    # A band pair the judge calls a copy is rejected with a judged reason, whatever the lexical verdict was.
    assert not v["qa-edit"].passed and v["qa-edit"].reason.startswith("copy (judged): ")
    assert not v["qa-near"].passed and v["qa-near"].reason.startswith("copy (judged): ")
    assert got["qa-edit"].status == got["qa-near"].status == PairStatus.rejected
    # A band pair it calls a paraphrase passes, though the lexical check rejected it (its reason is kept after).
    assert v["qa-own"].passed and v["qa-own"].reason.startswith("not a copy (judged): ")
    assert "(lexical: answer copies the evidence" in v["qa-own"].reason and got["qa-own"].status == PairStatus.passed
    # Outside the band the lexical verdict decides, worded as before.
    assert not v["qa-copy"].passed and v["qa-copy"].reason.startswith("answer copies the evidence")
    assert v["qa-para"].passed and "(judged)" not in v["qa-para"].reason
    assert "(judged)" not in v["qa-badquote"].reason
    assert report.llm is not None and report.llm["calls"] == 3

    # A re-run asks the journal, not the endpoint, and writes nothing.
    again = run_filters(ws)
    assert fake_llm.calls == 3 and not again.written
    assert again.copy_judge is not None and again.copy_judge["cached"] == 3

    # Without the LLM this run (a release built on a machine with no endpoint) the judged verdicts stand.
    offline = run_filters(ws, use_llm=False)
    assert fake_llm.calls == 3 and copy_judge.SKIP_KEY in offline.skipped_checks and not offline.written
    own = _load(ws)["qa-own"]
    assert own.status == PairStatus.passed and copy_judge.is_judged(own.checks["verbatim"])

    # Turned off, the band is decided lexically: the judged verdicts are put back, nothing is called.
    (ws.root / "goldset.yaml").write_text(CONFIG + "  copy_judge: {enabled: false}\n", encoding="utf-8")
    off = run_filters(ws)
    lexical = _load(ws)
    assert fake_llm.calls == 3 and off.copy_judge is not None and off.copy_judge["reverted"] == 3
    assert lexical["qa-own"].status == PairStatus.rejected and lexical["qa-near"].status == PairStatus.passed
    assert not any(copy_judge.is_judged(p.checks["verbatim"]) for p in lexical.values())
    # The judge back: its verdicts come from the journal, no call.
    (ws.root / "goldset.yaml").write_text(CONFIG, encoding="utf-8")
    run_filters(ws)
    assert fake_llm.calls == 3 and _load(ws)["qa-own"].status == PairStatus.passed


def test_a_contradictory_verdict_leaves_the_lexical_one(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    fake_llm.add_responder(copy_judge.SCHEMA_NAME, make_copy_judge_responder(contradict={"no defined behavior"}))
    ws = make_workspace(tmp_path / "ws", _pairs()[:2], config=CONFIG)
    report = run_filters(ws)
    got = _load(ws)
    own = got["qa-own"].checks["verbatim"]
    assert fake_llm.calls == 2
    # near_copy and own_words both true: a failed judgement. The lexical verdict (a copy) stands, its note says so.
    assert not own.passed and own.reason.startswith("answer copies the evidence")
    assert "contradicted" not in own.reason and "near_copy and own_words both true" in own.reason
    assert own.reason.endswith("; the lexical verdict stands)") and got["qa-own"].status == PairStatus.rejected
    assert any("qa-own" in e and "failed judgement" in e for e in report.judge_errors)
    assert report.judge_consistency[copy_judge.NAME] == (2, 1)
    assert got["qa-edit"].checks["verbatim"].reason.startswith("copy (judged): ")


def test_a_failed_call_keeps_the_lexical_verdict(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    """A reply without the verdict's fields (``{}``): no verdict; the lexical one stays, the pair is asked again."""
    fake_llm.add_responder(copy_judge.SCHEMA_NAME, lambda body: {})
    ws = make_workspace(tmp_path / "ws", _pairs()[1:2], config=CONFIG)
    report = run_filters(ws)
    own = _load(ws)["qa-own"].checks["verbatim"]
    assert not own.passed and own.reason.startswith("answer copies the evidence")
    assert report.copy_judge is not None and report.copy_judge["failed"] == 1
    assert any("copy judge" in e and "lexical verdict stands" in e for e in report.judge_errors)


def test_dry_run_counts_band_calls(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    fake_llm.add_responder(copy_judge.SCHEMA_NAME, copy_judge_responder)
    ws = make_workspace(tmp_path / "ws", _pairs(), config=CONFIG)
    runner = CliRunner()
    dry = runner.invoke(app, ["filter", "--dry-run", "-w", str(ws.root)])
    assert dry.exit_code == 0, dry.output
    # No verdict in the file yet: the evidence check has not rejected the bad quote, so it is counted too.
    assert "copy judge fake-judge: 4 pair(s) in the verbatim check's borderline band" in dry.output
    assert "0 from the journal, 4 to send" in dry.output and fake_llm.calls == 0
    run_filters(ws)
    dry = runner.invoke(app, ["filter", "--dry-run", "-w", str(ws.root)])
    assert "3 pair(s) in the verbatim check's borderline band" in dry.output
    assert "3 from the journal, 0 to send; 1 not asked" in dry.output and fake_llm.calls == 3
    offline = runner.invoke(app, ["filter", "--dry-run", "--no-llm", "-w", str(ws.root)])
    assert "the copy judge would not run (skipped: --no-llm" in offline.output


def test_settings_and_required_endpoint(tmp_path: Path, no_llm_env: None) -> None:
    ws = make_workspace(tmp_path / "ws", _pairs()[:1], config=CONFIG)
    report = run_filters(ws)  # no endpoint: lexical, said so
    assert "no judge endpoint configured" in report.skipped_checks[copy_judge.SKIP_KEY]
    (ws.root / "goldset.yaml").write_text(CONFIG + "  copy_judge: {borderline: 0.9}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="borderline"):
        run_filters(ws)
    (ws.root / "goldset.yaml").write_text(CONFIG + "  copy_judge: {enabled: true}\n", encoding="utf-8")
    from goldset.errors import EndpointError

    with pytest.raises(EndpointError):
        run_filters(ws)

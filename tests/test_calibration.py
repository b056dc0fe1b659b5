"""Judge calibration (`goldset judge calibrate`) through the fake OpenAI server: expert decisions applied with
goldset's own import of a Label Studio export, the filters' groundedness judge answered by a marker judge the test
controls (tests/helpers/judge_responders.py), kappa against hand computations, repeats really sent, re-runs free."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from goldset.cli import app
from goldset.data import read_chunk_sources, write_dataset
from goldset.errors import ConfigError, EndpointError, InputError
from goldset.io import read_json, read_jsonl
from goldset.review.calibration import agreement_of, calibrate, deciding_decision, expert_label, variance_of
from goldset.review.settings import CalibrationSettings
from goldset.schema import Manifest, PairStatus, QAPair, Review, ReviewDecision
from goldset.schema.manifest import GROUNDED, NOT_GROUNDED, calibration_summary
from goldset.workspace import Workspace
from tests.helpers.calibration_data import ALL, Decision, review
from tests.helpers.fake_openai import FakeOpenAI
from tests.helpers.judge_responders import marker_judge
from tests.helpers.review_data import make_workspace

runner = CliRunner()
G, N = GROUNDED, NOT_GROUNDED


# ------------------------------------------------------------------------------------------------ pure parts


def test_kappa_and_table_against_a_hand_computation() -> None:
    # 12 pairs: both grounded 7, false alarm 1, missed 1, both not grounded 3.
    expert = [G] * 7 + [G] + [N] + [N] * 3
    judge = [G] * 7 + [N] + [G] + [N] * 3
    a = agreement_of(expert, judge)
    assert (a.pairs, a.both_grounded, a.false_alarms, a.missed, a.both_not_grounded) == (12, 7, 1, 1, 3)
    # p_o = 10/12; expert 8 G / 4 N, judge 8 G / 4 N: p_e = (8*8 + 4*4) / 144 = 80/144; kappa = (120-80)/(144-80)
    assert a.accuracy == pytest.approx(10 / 12)
    assert a.kappa == pytest.approx(40 / 64)
    # The experts gave one label only: kappa cannot measure anything, whatever the accuracy.
    one = agreement_of([G] * 10, [G] * 9 + [N])
    assert one.accuracy == pytest.approx(0.9) and one.expert_labels == {G}


def test_variance_flip_rates_by_hand() -> None:
    ids = ["a", "b", "c", "d"]
    expert = [G, G, N, N]
    repeats = [[G, G, N, N], [G, N, N, N], [G, G, N, G], [G, N, N, N]]
    v = variance_of(ids, expert, repeats)
    assert v.samples == 4 and v.accuracy == [1.0, 0.75, 0.75, 0.75]
    assert v.flip_rates == {"b": 0.5, "d": 0.25} and v.unstable_pairs == 2
    assert v.mean_flip_rate == pytest.approx((0.5 + 0.25) / 4)


def _decided(qtype: str, *decisions: ReviewDecision, status: PairStatus = PairStatus.accepted) -> QAPair:
    outcome = {"accept": "accepted", "reject": "rejected", "edit": "edited"}[decisions[-1].verdict]
    return QAPair(id="qa-1", question="What is X?", answer="X is a thing.", question_type=qtype, status=status,
                  review=Review(decisions=list(decisions), outcome=outcome))  # fmt: skip


def _d(
    verdict: str, criteria: tuple[str, ...] = (), who: str = "a", minute: int = 0, source: str = ""
) -> ReviewDecision:
    return ReviewDecision(
        reviewer=who, at=datetime(2026, 1, 1, 0, minute, tzinfo=UTC), verdict=verdict, criteria=list(criteria),
        source=source or f"label-studio:project 1 task 1 annotation {minute}",
    )  # fmt: skip


@pytest.mark.parametrize(
    ("qtype", "verdict", "criteria", "label", "rule"),
    [
        ("factual", "accept", ALL, G, "ticked"),
        ("factual", "reject", ("question_clear", "answer_supported"), G, "ticked"),
        ("factual", "reject", ("question_clear", "type_right"), N, "unticked"),
        ("factual", "edit", ("question_clear",), N, "unticked"),
        ("factual", "accept", (), G, "accepted"),
        ("factual", "accept", ("question_clear",), None, "accepted_unticked"),
        ("factual", "reject", (), None, "rejected_no_criteria"),
        ("factual", "edit", (), None, "edited_no_criteria"),
        # unanswerable pairs: the criterion is type_right ("an unanswerable pair the documents do answer" fails it)
        ("unanswerable", "reject", ("question_clear", "answer_supported"), N, "unticked"),
        ("unanswerable", "reject", ("question_clear", "type_right"), G, "ticked"),
    ],
)
def test_expert_label_rules(qtype: str, verdict: str, criteria: tuple[str, ...], label: str | None, rule: str) -> None:
    got = expert_label(_decided(qtype, _d(verdict, criteria)), CalibrationSettings())
    assert (got.label, got.rule) == (label, rule)


def test_the_deciding_decision_is_the_resolved_one_and_stale_pairs_are_left_out() -> None:
    # Two annotators: reject (supported unticked) and accept; a tie goes to reject: the label is "not grounded".
    pair = _decided("factual", _d("accept", ALL, "a", 1), _d("reject", ("question_clear",), "b", 2))
    assert deciding_decision(pair) is not None and deciding_decision(pair).reviewer == "b"  # type: ignore[union-attr]
    assert expert_label(pair, CalibrationSettings()).label == N
    # A later decision from elsewhere stands, as in `review pull`.
    later = _d("accept", ALL, "lead", 9, source="goldset:manual")
    assert expert_label(_decided("factual", *pair.review.decisions, later), CalibrationSettings()).label == G
    stale = _decided("factual", _d("accept", ALL), status=PairStatus.stale)
    assert expert_label(stale, CalibrationSettings()).rule == "stale"


def test_an_old_manifest_without_calibration_still_loads_and_has_no_summary(tmp_path: Path) -> None:
    old = {"schema_version": 1, "n_pairs": 2, "counts_by_status": {"passed": 2}, "files": {}}
    (tmp_path / "manifest.json").write_text(json.dumps(old), encoding="utf-8")
    m = read_json(tmp_path / "manifest.json", Manifest)
    assert m.calibration is None and calibration_summary(m) is None


# ------------------------------------------------------------------------------------------------ end to end

ORIGINAL = {}  # pair id -> the answer before the test marked it (filled by _scenario)


def _mark(ws: Workspace, answers: dict[str, str], questions: dict[str, str]) -> None:
    pairs = {p.id: p for p in read_jsonl(ws.pairs_path, QAPair)}
    for pid, extra in answers.items():
        pairs[pid] = pairs[pid].model_copy(update={"answer": pairs[pid].answer + extra})
    for pid, extra in questions.items():
        pairs[pid] = pairs[pid].model_copy(update={"question": pairs[pid].question.rstrip("?？") + extra})
    write_dataset(ws.data_dir, pairs.values(), read_chunk_sources(ws).kept.values())


def _scenario(tmp_path: Path) -> Workspace:
    """40 pairs (every fourth one Chinese); 21 reviewed. Expert label x judge label of the 18 that get one:
    English 14 (both grounded 7, false alarm 1, missed 2, both not grounded 4), Chinese 4 (2, 1, 0, 1); left out:
    a reject and an edit without criteria, an accept with 'supported' unticked."""
    ws = make_workspace(tmp_path / "ws", 40)
    _mark(
        ws,
        answers={"qa-0002": " It reportedly needs a restart.", "qa-0004": " Reportedly it is reportedly so.",
                 "qa-0005": " This is reportedly required.", "qa-0009": " It reportedly needs a restart.",
                 "qa-0007": "据说还需要重启。", "qa-0015": "据说还需要重启。", "qa-0011": "通常如此。"},
        questions={"qa-0020": " in practice?"},
    )  # fmt: skip
    pairs = {p.id: p for p in read_jsonl(ws.pairs_path, QAPair)}
    ORIGINAL["qa-0009"] = pairs["qa-0009"].answer
    clean = pairs["qa-0009"].answer.replace(" It reportedly needs a restart.", "")
    qc, qt = "question_clear", "type_right"
    decisions = {
        "qa-0000": Decision("accept", ALL),  # ticked: G; judge G
        "qa-0001": Decision("accept"),  # accepted: G; judge G
        "qa-0002": Decision("accept"),  # accepted: G; judge N (marker): false alarm
        "qa-0004": Decision("reject", (qc, qt)),  # unticked: N; judge N
        "qa-0005": Decision("reject", (qc,)),  # unticked: N; judge N
        "qa-0006": Decision("reject", (qc, "answer_supported", qt)),  # ticked (rejected for copying): G; judge G
        "qa-0008": Decision("reject", (qc,)),  # unticked: N; judge G: missed
        "qa-0009": Decision("edit", (qc, qt), answer=clean),  # unticked: N; judged before the edit: N
        "qa-0010": Decision("edit", ALL, question="Under rule 10, how is a model used in a parameter?"),  # G; G
        "qa-0012": Decision("reject"),  # left out: rejected without criteria
        "qa-0013": Decision("accept", (qc,)),  # left out: accepted with 'supported' unticked
        "qa-0014": Decision("edit", answer="Declare the model, then annotate the parameter."),  # left out
        "qa-0016": Decision("accept", ALL),  # G; G
        "qa-0017": Decision("accept"),  # G; G
        "qa-0018": Decision("reject", (qc, qt)),  # N; judge G: missed
        "qa-0020": Decision("reject", (qc, "answer_supported")),  # unanswerable, type_right unticked: N; KB answers: N
        "qa-0021": Decision("accept", ALL),  # unanswerable: G; judge: not answerable: G
        "qa-0003": Decision("accept", ALL),  # zh: G; G
        "qa-0007": Decision("reject", (qc,)),  # zh: N; N
        "qa-0011": Decision("accept"),  # zh: G; G (the judge wavers on odd seeds)
        "qa-0015": Decision("accept", ALL),  # zh: G; N: false alarm
    }
    review(ws, decisions, tmp_path)
    return ws


def test_calibration_figures_rules_and_a_free_rerun(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    fake_llm.add_responder("groundedness", marker_judge)
    ws = _scenario(tmp_path)
    r = calibrate(ws)
    c = r.calibration
    assert fake_llm.calls == 18 and r.llm["calls"] == 18, "one judge call per labelled pair"
    assert (c.reviewed, c.labelled, c.overall.pairs) == (21, 18, 18)
    assert c.rules == {"accepted": 4, "ticked": 7, "unticked": 7}
    assert c.left_out == {"accepted_unticked": 1, "edited_no_criteria": 1, "rejected_no_criteria": 1}
    o = c.overall
    assert (o.both_grounded, o.false_alarms, o.missed, o.both_not_grounded) == (9, 2, 2, 5)
    # p_o = 14/18; expert 11 G / 7 N, judge 11 G / 7 N: p_e = 170/324; kappa = (252-170)/(324-170)
    assert o.accuracy == pytest.approx(14 / 18) and o.kappa == pytest.approx(82 / 154)
    en, zh = c.by_language["en"], c.by_language["zh"]
    assert (en.pairs, en.both_grounded, en.false_alarms, en.missed, en.both_not_grounded) == (14, 7, 1, 2, 4)
    assert en.kappa == pytest.approx(52 / 94)  # p_o = 11/14; expert 8/6, judge 9/5: p_e = 102/196
    assert (zh.pairs, zh.both_grounded, zh.false_alarms, zh.missed, zh.both_not_grounded) == (4, 2, 1, 0, 1)
    assert c.by_question_type["unanswerable"].pairs == 2 and c.by_question_type["unanswerable"].accuracy == 1.0
    assert c.disagreements == {"qa-0002": "false alarm", "qa-0015": "false alarm", "qa-0008": "missed",
                               "qa-0018": "missed"}  # fmt: skip
    assert (c.model, c.prompt_id, c.samples, c.variance) == ("fake-judge", "judge_groundedness", 1, None)
    assert c.prompt_hash and c.review_fingerprint

    # The edited pair was judged on the text the expert saw, not on the corrected one.
    assert c.judged_pre_edit == 2
    now = {p.id: p for p in read_jsonl(ws.pairs_path, QAPair)}
    assert "reportedly" not in now["qa-0009"].answer
    sent = [m["content"] for req in fake_llm.chat_requests() for m in req.body["messages"] if m["role"] == "user"]
    about_9 = [s for s in sent if f"<question>\n{now['qa-0009'].question}\n</question>" in s]
    assert len(about_9) == 1 and f"<answer>\n{ORIGINAL['qa-0009']}\n</answer>" in about_9[0]

    # Below min_kappa (0.53 < 0.6): said; the Chinese group is too small for a kappa.
    assert c.status() == "below" and "0.53" in (r.warning or "") and "< 0.60" in (r.warning or "")
    summary = calibration_summary(read_json(ws.data_dir / "manifest.json", Manifest))
    assert summary is not None and summary.status == "below" and summary.warning == r.warning
    rows = {row.group: row for row in summary.rows}
    assert rows["all"].kappa == pytest.approx(82 / 154) and not rows["all"].too_few
    assert rows["language zh"].too_few and rows["language zh"].kappa is None and rows["language zh"].pairs == 4

    # Re-running costs nothing: every verdict comes from the journal.
    again = calibrate(ws)
    assert fake_llm.calls == 18 and again.llm["calls"] == 0 and again.llm["cache_hits"] == 18
    assert again.calibration.overall == c.overall

    # Stored in the manifest, and kept when a later stage rewrites the dataset folder.
    pairs = read_jsonl(ws.pairs_path, QAPair)
    write_dataset(ws.data_dir, pairs, read_chunk_sources(ws).kept.values())
    kept = read_json(ws.data_dir / "manifest.json", Manifest).calibration
    assert kept is not None and kept.overall == c.overall

    # A run evaluated against the dataset carries the calibration, and its report shows it with the warning.
    from goldset import evaluate
    from goldset.evaluation.report import render_html
    from goldset.evaluation.runs import read_run

    result = evaluate(ws.data_dir, target="bm25", ws=ws, judge=False)
    assert result.meta.calibration is not None and result.meta.calibration.overall == c.overall
    page = render_html(read_run(result.folder, ws))
    section = page.split("<h2>Judge calibration</h2>", 1)[1].split("<h2>", 1)[0]
    assert "fake-judge" in section and "Cohen&#x27;s kappa" in section and "0.53" in section
    assert "judge agreement below review.calibration.min_kappa" in section and "too few pairs" in section


def test_repeats_are_real_requests_with_their_own_seed_and_report_the_judges_variance(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    fake_llm.add_responder("groundedness", marker_judge)
    ws = _scenario(tmp_path)
    r = calibrate(ws, samples=3)
    assert fake_llm.calls == 54 and r.llm["calls"] == 54, "18 pairs x 3 samples, each a request"
    seeds = sorted({str(req.body.get("seed")) for req in fake_llm.chat_requests()})
    assert seeds == ["1", "2", "None"], "sample 1 is the filters' own call (no seed); samples 2 and 3 send 1 and 2"
    v = r.calibration.variance
    assert v is not None and v.samples == 3
    # qa-0011 wavers on odd seeds: sample 2 calls it not grounded (a false alarm more).
    assert v.accuracy == pytest.approx([14 / 18, 13 / 18, 14 / 18])
    assert v.kappa[1] == pytest.approx(68 / 158)  # expert 11/7, judge 10/8: p_e = 166/324, p_o = 234/324
    assert v.kappa[0] == v.kappa[2] == pytest.approx(82 / 154)
    assert v.flip_rates == {"qa-0011": pytest.approx(1 / 3)} and v.unstable_pairs == 1
    assert v.mean_flip_rate == pytest.approx(1 / 3 / 18)
    assert r.calibration.overall.kappa == pytest.approx(82 / 154), "the headline figures are the first sample's"

    again = calibrate(ws, samples=3)
    assert fake_llm.calls == 54 and again.llm["calls"] == 0
    more = calibrate(ws, samples=4)
    assert fake_llm.calls == 72 and more.llm["calls"] == 18, "only the new sample is sent"


def test_cli_prints_the_table_the_rules_and_the_warning(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    fake_llm.add_responder("groundedness", marker_judge)
    ws = _scenario(tmp_path)
    res = runner.invoke(app, ["judge", "calibrate", "--judge-samples", "2", "-w", str(ws.root)])
    assert res.exit_code == 0, res.output
    out = res.output
    assert "fake-judge" in out and "2 sample(s) per pair" in out
    assert "21 reviewed pairs; 18 in the figures" in out
    assert "rejected without ticking any criterion" in out and "accepted with no criterion ticked" in out
    zh_row = next(line for line in out.splitlines() if "language zh" in line)
    assert "too few pairs" in zh_row and "0." not in zh_row.split("%")[1], "the Chinese row shows no kappa"
    assert "0.53 (moderate)" in out
    assert "below review.calibration.min_kappa" in out
    assert "1 of 18 pairs changed label" in out
    assert "36 calls, 0 from the journal" in out
    assert "qa-0008 missed" in out


def test_a_judge_of_the_model_that_wrote_the_pairs_is_warned_about(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    from goldset.io import write_jsonl

    fake_llm.add_responder("groundedness", marker_judge)
    ws = _scenario(tmp_path)
    assert calibrate(ws).notes == []
    pairs = read_jsonl(ws.pairs_path, QAPair)
    for p in pairs:
        p.provenance.model = "fake-judge"
    write_jsonl(ws.pairs_path, pairs)
    r = calibrate(ws)
    assert any("judge model fake-judge also generated 21 of the 21 pairs" in n for n in r.notes)
    res = runner.invoke(app, ["judge", "calibrate", "-w", str(ws.root)])
    assert res.exit_code == 0 and "also generated 21 of the 21 pairs" in res.output
    assert "warning: the judge model fake-judge" in res.output and "warning: warning" not in res.output


def test_a_failed_judge_call_is_left_out_counted_and_retried_next_run(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    fake_llm.add_responder("groundedness", marker_judge)
    ws = _scenario(tmp_path)
    ws.config_path.write_text(ws.config_path.read_text() + "llm:\n  endpoints:\n    judge:\n      concurrency: 1\n")
    fake_llm.inject("schema", "schema")  # the first call's reply and its repair both miss the schema
    r = calibrate(ws)
    assert r.calibration.left_out.get("judge_failed") == 1 and r.calibration.overall.pairs == 17
    assert len(r.judge_errors) == 1
    again = calibrate(ws)
    assert again.llm["calls"] == 1 and again.calibration.overall.pairs == 18 and "judge_failed" not in (
        again.calibration.left_out
    )


def test_chinese_only_reviews_are_judged_and_too_few_is_said_plainly(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    fake_llm.add_responder("groundedness", marker_judge)
    ws = make_workspace(tmp_path / "ws", 40)
    _mark(ws, answers={"qa-0007": "据说还需要重启。"}, questions={})
    review(ws, {"qa-0003": Decision("accept", ALL), "qa-0007": Decision("reject", ("question_clear",)),
                "qa-0011": Decision("accept")}, tmp_path)  # fmt: skip
    r = calibrate(ws)
    c = r.calibration
    assert list(c.by_language) == ["zh"] and c.overall.accuracy == 1.0 and c.overall.kappa == pytest.approx(1.0)
    assert c.status() == "too_few" and "rests on 3 expert-labelled pairs (fewer than 10)" in (r.warning or "")
    assert "kappa" not in c.headline(), "no kappa printed as if it meant something"
    sent = [m["content"] for req in fake_llm.chat_requests() for m in req.body["messages"] if m["role"] == "user"]
    assert any("据说还需要重启" in s for s in sent)


def test_bad_input_is_one_line_each_and_makes_no_call(
    tmp_path: Path, fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_llm.add_responder("groundedness", marker_judge)
    ws = make_workspace(tmp_path / "ws", 12)
    with pytest.raises(InputError, match="no pair has an expert decision yet"):
        calibrate(ws)
    res = runner.invoke(app, ["judge", "calibrate", "-w", str(ws.root)])
    assert res.exit_code == 2 and res.output.count("\n") == 1 and res.output.startswith("error: ")

    review(ws, {"qa-0000": Decision("reject"), "qa-0001": Decision("edit", answer="Declare it first.")}, tmp_path)
    with pytest.raises(InputError, match=r"2 reviewed pairs, but no decision says .*rejected_no_criteria 1"):
        calibrate(ws)

    review(ws, {"qa-0002": Decision("accept", ALL)}, tmp_path)
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "GOLDSET_MODEL", "GOLDSET_JUDGE_MODEL"):
        monkeypatch.delenv(name)
    with pytest.raises(EndpointError, match="no LLM endpoint configured for judge"):
        calibrate(ws)
    res = runner.invoke(app, ["judge", "calibrate", "-w", str(ws.root)])
    assert res.exit_code == 2 and res.output.count("\n") == 1 and "no LLM endpoint configured" in res.output
    res = runner.invoke(app, ["judge", "calibrate", "--judge-samples", "0", "-w", str(ws.root)])
    assert res.exit_code == 2 and "--judge-samples must be 1 or more" in res.output
    assert fake_llm.calls == 0
    assert read_json(ws.data_dir / "manifest.json", Manifest).calibration is None, "nothing written"

    ws.config_path.write_text(ws.config_path.read_text() + "  calibration:\n    criterion: supported\n")
    with pytest.raises(ConfigError, match=r"review.calibration.criterion: 'supported' is not a value"):
        calibrate(ws)


def test_the_manifest_is_read_before_any_call_and_built_when_missing(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    fake_llm.add_responder("groundedness", marker_judge)
    ws = make_workspace(tmp_path / "ws", 12)
    review(ws, {"qa-0000": Decision("accept", ALL), "qa-0001": Decision("reject", ("question_clear",))}, tmp_path)
    manifest = ws.data_dir / "manifest.json"
    manifest.write_text("{not json", encoding="utf-8")
    with pytest.raises(InputError, match=r"manifest\.json"):
        calibrate(ws)
    assert fake_llm.calls == 0, "a manifest that cannot be read stops the run before the judge is paid"
    manifest.unlink()
    calibrate(ws)
    m = read_json(manifest, Manifest)
    assert m.calibration is not None and m.calibration.overall.pairs == 2 and m.n_pairs == 12
    assert set(m.files) == {"pairs.jsonl", "chunks.jsonl"}

"""Thresholds: loading (with clear errors), absolute / per-type / relative checks, and evaluate()'s gate."""

from __future__ import annotations

from pathlib import Path

import pytest

from goldset.errors import ConfigError, InputError
from goldset.evaluation.evaluator import evaluate
from goldset.evaluation.gate import Thresholds, check_gate, load_thresholds
from goldset.schema import RunSummary
from tests.helpers.eval_data import evaluated_pairs, make_dataset, perfect_sample, poor_sample, write_run_file

SUMMARY = RunSummary(
    run_id="r1",
    overall={"recall@5": 0.7, "mrr": 0.4},
    by_type={"factual": {"recall@5": 0.9}, "procedural": {"recall@5": 0.5}},
    system={"latency_p95_ms": 1800.0},
)


def test_min_max_and_by_type() -> None:
    t = Thresholds.model_validate(
        {
            "min": {"recall@5": 0.6, "mrr": 0.5},
            "max": {"latency_p95_ms": 2000},
            "by_type": {"factual": {"recall@5": 0.8}, "procedural": {"recall@5": 0.8}},
        }
    )
    gate = check_gate(SUMMARY, t)
    failed = {(r.metric, r.scope) for r in gate.failures}
    assert failed == {("mrr", "overall"), ("recall@5", "type:procedural")}
    assert not gate.passed
    assert "2 of 5 thresholds not met" in gate.summary_line()


def test_a_threshold_on_an_unmeasured_metric_fails() -> None:
    gate = check_gate(SUMMARY, Thresholds.model_validate({"min": {"faithfulness": 0.5}, "by_type": {"x": {"mrr": 1}}}))
    notes = {r.metric: r.note for r in gate.failures}
    assert "not measured" in notes["faithfulness"]
    assert "no x questions" in notes["mrr"]


def test_relative_limits_follow_the_metric_direction() -> None:
    base = RunSummary(run_id="base", overall={"recall@5": 0.7, "mrr": 0.5}, system={"latency_p95_ms": 1000.0})
    t = Thresholds.model_validate(
        {"relative": {"baseline": "runs/base", "metrics": {"recall@5": 0.95, "mrr": 0.95, "latency_p95_ms": 1.5}}}
    )
    rows = {r.metric: r for r in check_gate(SUMMARY, t, base).rows}
    assert rows["recall@5"].passed and rows["recall@5"].limit == pytest.approx(0.665)
    assert not rows["mrr"].passed  # 0.4 < 0.95 × 0.5
    assert not rows["latency_p95_ms"].passed  # 1800 > 1.5 × 1000


def test_load_thresholds_errors_name_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "t.yaml"
    bad.write_text("min: {recall@5: 0.6}\nmaximum: {x: 1}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"t\.yaml: maximum: unknown key"):
        load_thresholds(bad)
    bad.write_text("min: [unclosed\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"t\.yaml:\d+: not valid YAML"):
        load_thresholds(bad)
    bad.write_text("min: {recall@5: high}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"min\.recall@5"):
        load_thresholds(bad)
    with pytest.raises(InputError, match="not found"):
        load_thresholds(tmp_path / "none.yaml")


def test_evaluate_checks_the_gate_against_a_baseline_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    data = make_dataset(tmp_path / "data")
    pairs = evaluated_pairs()
    good = write_run_file(tmp_path / "good.jsonl", [perfect_sample(p) for p in pairs])
    poor = write_run_file(tmp_path / "poor.jsonl", [poor_sample(p) for p in pairs])
    base = evaluate(data, run=good, out_dir=tmp_path / "runs" / "base")
    thresholds = tmp_path / "gate.yaml"
    thresholds.write_text(
        "min: {recall@5: 0.5}\nrelative:\n  baseline: runs/base\n  metrics: {mrr: 0.95}\n", encoding="utf-8"
    )
    ok = evaluate(data, run=good, thresholds=thresholds, out_dir=tmp_path / "runs" / "ok")
    assert ok.gate is not None and ok.gate.passed and ok.passed
    bad = evaluate(data, run=poor, thresholds=thresholds, out_dir=tmp_path / "runs" / "bad")
    assert bad.gate is not None and not bad.passed
    assert {r.metric for r in bad.gate.failures} == {"recall@5", "mrr"}
    assert (tmp_path / "runs" / "bad" / "summary.json").is_file()  # the run is kept even when the gate fails
    assert base.summary.overall["mrr"] == pytest.approx(1.0)


def test_a_bad_thresholds_file_fails_before_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    data = make_dataset(tmp_path / "data")
    thresholds = tmp_path / "gate.yaml"
    thresholds.write_text("mins: {recall@5: 0.5}\n", encoding="utf-8")
    calls: list[str] = []

    def system(question: str) -> str:
        calls.append(question)
        return "x"

    with pytest.raises(ConfigError, match="mins: unknown key"):
        evaluate(data, target=system, thresholds=thresholds, out_dir=tmp_path / "out")
    assert calls == [] and not (tmp_path / "out").exists()


def test_running_and_scoring_keys_share_the_eval_section(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from goldset.config import load_settings
    from goldset.workspace import Workspace

    (tmp_path / "goldset.yaml").write_text(
        "eval:\n  ks: [2, 4]\n  concurrency: 3\n  endpoint: {answer_field: out.text}\n", encoding="utf-8"
    )
    monkeypatch.setenv("GOLDSET_EVAL__TIMEOUT_S", "7")
    monkeypatch.setenv("GOLDSET_EVAL__MATCHER", "doc_id")
    ws = Workspace(tmp_path)
    s = load_settings(ws, eval={"concurrency": None}).eval
    assert s.ks == [2, 4] and s.matcher == "doc_id"
    assert s.concurrency == 3 and s.timeout_s == 7 and s.endpoint.answer_field == "out.text"
    assert load_settings(ws, eval={"concurrency": 12}).eval.concurrency == 12  # option > file
    assert "concurrency" not in s.scoring() and s.scoring()["ks"] == [2, 4]  # running keys do not change scores
    (tmp_path / "goldset.yaml").write_text("eval:\n  kss: [1]\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"unknown setting 'eval\.kss'"):
        load_settings(ws)
    (tmp_path / "goldset.yaml").write_text("eval:\n  endpoint: {answer: x}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"unknown setting 'eval\.endpoint\.answer'"):
        load_settings(ws)


def test_thresholds_that_cannot_gate_are_errors(tmp_path: Path) -> None:
    t = tmp_path / "t.yaml"
    for text, message in (
        ("", "no thresholds are set"),
        ("min: {}\nmax: {}\n", "no thresholds are set"),
        ("min: {mrr: 0.5}\nrelative: {baseline: runs/x}\n", "relative.metrics is empty"),
        (
            "relative: {baseline: runs/x, metrics: {tokens_in_total: 1.1}}\n",
            "tokens_in_total: goldset knows no direction",
        ),
        ("relative: {baseline: runs/x, metrics: {recal@5: 0.9}}\n", "recal@5: goldset knows no direction"),
    ):
        t.write_text(text, encoding="utf-8")
        with pytest.raises(ConfigError, match=message):
            load_thresholds(t)
    with pytest.raises(ConfigError, match="no thresholds are set"):
        check_gate(SUMMARY, Thresholds())


def test_a_relative_gate_refuses_a_baseline_scored_with_other_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from goldset.errors import UsageError
    from goldset.evaluation.settings import EvalSettings

    monkeypatch.chdir(tmp_path)
    data = make_dataset(tmp_path / "data")
    good = write_run_file(tmp_path / "good.jsonl", [perfect_sample(p) for p in evaluated_pairs()])
    evaluate(data, run=good, out_dir=tmp_path / "runs" / "base", settings=EvalSettings(matcher="chunk_id"))
    gate = tmp_path / "gate.yaml"
    gate.write_text("relative:\n  baseline: runs/base\n  metrics: {mrr: 0.95}\n", encoding="utf-8")
    calls: list[str] = []

    def system(question: str) -> str:
        calls.append(question)
        return "x"

    with pytest.raises(UsageError, match=r'matcher \("chunk_id" vs "auto"\)'):
        evaluate(data, target=system, thresholds=gate, out_dir=tmp_path / "runs" / "new")
    assert calls == [] and not (tmp_path / "runs" / "new").exists()
    allowed = evaluate(
        data, run=good, thresholds=gate, out_dir=tmp_path / "runs" / "new", allow_different_settings=True
    )
    assert allowed.gate is not None and allowed.gate.passed
    assert any("different settings: matcher" in n for n in allowed.summary.notes)

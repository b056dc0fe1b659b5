"""`goldset eval`, `goldset compare` and `goldset report` through the CLI: outputs, files, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from goldset.cli import app
from tests.helpers.eval_data import evaluated_pairs, make_dataset, perfect_sample, poor_sample, write_run_file

runner = CliRunner()
#: The library's wording of a wrong choice of source (tests/test_eval_sources.py), printed as it is.
ONE_SOURCE = "give exactly one of run (a run file), target (module:function), endpoint (a URL) or baseline (bm25)"


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A minimal workspace (goldset.yaml) with the tiny dataset in data/ and two run files."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "goldset.yaml").write_text("eval:\n  ks: [1, 5]\n", encoding="utf-8")
    make_dataset(tmp_path / "data")
    pairs = evaluated_pairs()
    write_run_file(tmp_path / "good.jsonl", [perfect_sample(p) for p in pairs])
    write_run_file(tmp_path / "poor.jsonl", [poor_sample(p) for p in pairs])
    return tmp_path


def run_ids(ws: Path) -> list[str]:
    return sorted(p.name for p in (ws / "runs").iterdir()) if (ws / "runs").exists() else []


def test_eval_writes_a_run_folder_and_prints_the_table(ws: Path) -> None:
    result = runner.invoke(app, ["eval", "--run", "good.jsonl"])
    assert result.exit_code == 0, result.output
    ids = run_ids(ws)
    assert len(ids) == 1 and "-good-" in ids[0]
    assert "recall@5" in result.output and "1.000" in result.output
    assert f"run {ids[0]} written" in result.output
    meta = json.loads((ws / "runs" / ids[0] / "meta.json").read_text(encoding="utf-8"))
    assert meta["metric_config"]["ks"] == [1, 5]  # settings from goldset.yaml
    assert "recall@10" not in result.output


def test_eval_gate_exit_codes(ws: Path) -> None:
    (ws / "gate.yaml").write_text("min: {recall@5: 0.8, mrr: 0.5}\nmax: {error_rate: 0.1}\n", encoding="utf-8")
    ok = runner.invoke(app, ["eval", "--run", "good.jsonl", "--thresholds", "gate.yaml"])
    assert ok.exit_code == 0, ok.output
    assert "gate passed: 3 thresholds met" in ok.output
    bad = runner.invoke(app, ["eval", "--run", "poor.jsonl", "--thresholds", "gate.yaml"])
    assert bad.exit_code == 1
    assert "FAIL" in bad.output and "thresholds" in bad.output
    assert "error: gate failed: 2 of 3 thresholds not met: mrr (overall), recall@5 (overall)" in bad.output
    assert len(run_ids(ws)) == 2  # the failing run is still written, for the report


def test_eval_bad_run_file_is_one_error_line(ws: Path) -> None:
    (ws / "broken.jsonl").write_text('{"pair_id": "qa-port", "answer": "x"}\n{oops\n', encoding="utf-8")
    result = runner.invoke(app, ["eval", "--run", "broken.jsonl"])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines == [lines[0]] and lines[0].startswith("error: broken.jsonl:2: not valid JSON")
    assert run_ids(ws) == []


def test_eval_usage_errors(ws: Path) -> None:
    both = runner.invoke(app, ["eval", "--run", "good.jsonl", "--baseline", "bm25"])
    assert both.exit_code == 2 and both.output == f"error: {ONE_SOURCE} (got run and baseline)\n"
    none = runner.invoke(app, ["eval"])
    assert none.exit_code == 2 and none.output == f"error: {ONE_SOURCE} (got none)\n"
    dry = runner.invoke(app, ["eval", "--dry-run", "--run", "good.jsonl", "--target", "m:f"])
    assert dry.exit_code == 2 and dry.output == f"error: {ONE_SOURCE} (got run and target)\n"
    bad_target = runner.invoke(app, ["eval", "--target", "no_colon"])
    assert (
        bad_target.exit_code == 2 and "error: target 'no_colon': expected package.module:function" in bad_target.output
    )
    kb = runner.invoke(app, ["eval", "--run", "good.jsonl", "--kb", "docs"])
    assert kb.exit_code == 2 and "kb is the corpus of the bm25 baseline" in kb.output
    other = runner.invoke(app, ["eval", "--baseline", "dense"])
    assert other.exit_code == 2 and "the built-in baseline is bm25" in other.output
    version = runner.invoke(app, ["eval", "--dataset", "v9", "--run", "good.jsonl"])
    assert version.exit_code == 2 and "goldset release" in version.output
    small = runner.invoke(app, ["eval", "--run", "good.jsonl", "--sample", "2"])
    assert small.exit_code == 2 and "error: sample 2 is smaller than the number of question types" in small.output


def test_eval_sample_baseline_and_html(ws: Path) -> None:
    n_types = len({p.question_type for p in evaluated_pairs()})
    result = runner.invoke(
        app, ["eval", "--baseline", "bm25", "--sample", str(n_types), "--seed", "1", "--html", "r.html"]
    )
    assert result.exit_code == 0, result.output
    meta = json.loads((ws / "runs" / run_ids(ws)[0] / "meta.json").read_text(encoding="utf-8"))
    assert meta["sample"] == {"n": n_types, "seed": 1} and meta["n_samples"] == n_types
    scores = (ws / "runs" / run_ids(ws)[0] / "scores.jsonl").read_text(encoding="utf-8").splitlines()
    assert len({json.loads(line)["question_type"] for line in scores}) == n_types
    assert "<svg" in (ws / "r.html").read_text(encoding="utf-8")


def test_compare_and_report_commands(ws: Path) -> None:
    assert runner.invoke(app, ["eval", "--run", "good.jsonl", "--out", "runs/a"]).exit_code == 0
    assert runner.invoke(app, ["eval", "--run", "poor.jsonl", "--out", "runs/b"]).exit_code == 0
    cmp = runner.invoke(app, ["compare", "a", "b", "--resamples", "300"])  # run ids under runs/
    assert cmp.exit_code == 0, cmp.output
    assert "recall@5" in cmp.output and "worse" in cmp.output and "95% CI" in cmp.output
    assert "questions that got worse" in cmp.output
    rep = runner.invoke(app, ["report", "runs/b", "--baseline", "runs/a", "--html", "out/report.html"])
    assert rep.exit_code == 0, rep.output
    assert "likely cause" in rep.output
    html = (ws / "out" / "report.html").read_text(encoding="utf-8")
    assert "Compared with the baseline" in html


def test_compare_refuses_runs_of_different_datasets(ws: Path) -> None:
    make_dataset(ws / "data2", statuses={"qa-port": "rejected"})
    assert runner.invoke(app, ["eval", "--run", "good.jsonl", "--out", "runs/a"]).exit_code == 0
    other = runner.invoke(app, ["eval", "--dataset", "data2", "--run", "good.jsonl", "--out", "runs/b"])
    assert other.exit_code == 0, other.output
    result = runner.invoke(app, ["compare", "runs/a", "runs/b"])
    assert result.exit_code == 2 and "scored against different datasets" in result.output
    missing = runner.invoke(app, ["report", "runs/nope"])
    assert missing.exit_code == 2 and "no such run" in missing.output


def test_runs_dir_from_config_and_existing_out_is_kept(ws: Path) -> None:
    (ws / "goldset.yaml").write_text("eval:\n  runs_dir: results/runs\n", encoding="utf-8")
    assert runner.invoke(app, ["eval", "--run", "good.jsonl"]).exit_code == 0
    written = list((ws / "results" / "runs").iterdir())
    assert len(written) == 1 and (written[0] / "summary.json").is_file()
    before = (written[0] / "summary.json").read_bytes()
    again = runner.invoke(app, ["eval", "--run", "poor.jsonl", "--out", str(written[0])])
    assert again.exit_code == 2 and "already exists" in again.output
    assert (written[0] / "summary.json").read_bytes() == before  # nothing overwritten


def test_a_dataset_edited_behind_its_manifest_is_refused_and_never_compared(ws: Path) -> None:
    """The trust issue: evidence repointed by hand, manifest left as it was; compare called the runs comparable."""
    import json

    assert runner.invoke(app, ["eval", "--run", "good.jsonl", "--out", "runs/a"]).exit_code == 0
    lines = (ws / "data" / "pairs.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    for r in records:
        for ev in r["evidence"]:
            ev["chunk_id"] = "c-auth"
    (ws / "data" / "pairs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    stale = runner.invoke(app, ["eval", "--run", "good.jsonl", "--out", "runs/b"])
    assert stale.exit_code == 2, stale.output
    assert "data/manifest.json" in stale.output and "pairs.jsonl" in stale.output
    assert not (ws / "runs" / "b").exists()
    (ws / "data" / "manifest.json").unlink()
    noted = runner.invoke(app, ["eval", "--run", "good.jsonl", "--out", "runs/b"])
    assert noted.exit_code == 0, noted.output
    assert "no manifest.json" in noted.output
    refused = runner.invoke(app, ["compare", "runs/a", "runs/b"])
    assert refused.exit_code == 2 and "different datasets" in refused.output


def test_runs_scored_with_other_settings_are_refused_unless_allowed(ws: Path) -> None:
    assert runner.invoke(app, ["eval", "--run", "good.jsonl", "--out", "runs/a"]).exit_code == 0
    (ws / "goldset.yaml").write_text("eval:\n  ks: [1, 5]\n  matcher: text\n", encoding="utf-8")
    assert runner.invoke(app, ["eval", "--run", "good.jsonl", "--out", "runs/b"]).exit_code == 0
    refused = runner.invoke(app, ["compare", "runs/a", "runs/b"])
    assert refused.exit_code == 2
    assert 'matcher ("auto" vs "text")' in refused.output and "anyway with allow_different_settings" in refused.output
    report = runner.invoke(app, ["report", "runs/b", "--baseline", "runs/a"])
    assert report.exit_code == 2 and "different settings" in report.output
    allowed = runner.invoke(app, ["compare", "runs/a", "runs/b", "--allow-different-settings", "--resamples", "200"])
    assert allowed.exit_code == 0, allowed.output
    assert "warning: the runs were scored with different settings" in allowed.output
    assert "Holm–Bonferroni" in allowed.output  # the output says how verdicts are corrected


def test_gate_exit_codes_empty_and_bad_thresholds(ws: Path) -> None:
    (ws / "empty.yaml").write_text("", encoding="utf-8")
    empty = runner.invoke(app, ["eval", "--run", "good.jsonl", "--thresholds", "empty.yaml"])
    assert empty.exit_code == 2 and "empty.yaml: no thresholds are set" in empty.output
    assert run_ids(ws) == []  # refused before the run
    (ws / "blank.yaml").write_text("min: {}\nby_type: {factual: {}}\n", encoding="utf-8")
    assert runner.invoke(app, ["eval", "--run", "good.jsonl", "--thresholds", "blank.yaml"]).exit_code == 2
    missing = runner.invoke(app, ["eval", "--run", "good.jsonl", "--thresholds", "nope.yaml"])
    assert missing.exit_code == 2 and "thresholds file not found" in missing.output
    (ws / "gate.yaml").write_text("min: {mrr: 0.99}\n", encoding="utf-8")
    failed = runner.invoke(app, ["eval", "--run", "poor.jsonl", "--thresholds", "gate.yaml"])
    assert failed.exit_code == 1 and "gate failed" in failed.output


def test_report_shows_the_run_notes(ws: Path) -> None:
    pairs = evaluated_pairs()
    write_run_file(ws / "partial.jsonl", [perfect_sample(p) for p in pairs[2:]])
    assert runner.invoke(app, ["eval", "--run", "partial.jsonl", "--out", "runs/p"]).exit_code == 0
    summary = json.loads((ws / "runs" / "p" / "summary.json").read_text(encoding="utf-8"))
    assert any("2 pair(s) missing from the run file" in n for n in summary["notes"])
    rep = runner.invoke(app, ["report", "runs/p", "--html", "p.html"])
    assert rep.exit_code == 0 and "note: 2 pair(s) missing" in rep.output
    assert "2 pair(s) missing from the run file" in (ws / "p.html").read_text(encoding="utf-8")


def test_an_overall_score_without_the_judge_says_what_it_rests_on(ws: Path, no_llm_env: None) -> None:
    """No judge ran: faithfulness, completeness and hallucination carry weight but were not computed, so the score
    was renormalised over the rest; the line says so, with the weights it used (the summary's own)."""
    result = runner.invoke(app, ["eval", "--run", "good.jsonl", "--html", "r.html"])
    assert result.exit_code == 0, result.output
    summary = json.loads((ws / "runs" / run_ids(ws)[0] / "summary.json").read_text(encoding="utf-8"))
    assert {"faithfulness", "completeness", "hallucination"} <= set(summary["left_out"])
    line = next(x for x in result.output.splitlines() if x.startswith("overall score"))
    assert line.startswith(f"overall score {summary['overall_score']:.3f} (renormalised over ")
    assert line.endswith(f"not computed in this run: {', '.join(summary['left_out'])})")
    for metric, weight in summary["weights_used"].items():
        assert f"{metric} {weight:.2f}" in line
    assert "not computed in this run: " in (ws / "r.html").read_text(encoding="utf-8")

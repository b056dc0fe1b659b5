"""The HTML report (self-contained, holding the numbers) and the diagnosis rules."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from goldset.data import read_dataset
from goldset.evaluation.diagnose import diagnose, list_rules, skipped_rules
from goldset.evaluation.evaluator import evaluate
from goldset.evaluation.report import render_html, summary_table, svg_bars, svg_histogram, write_report
from goldset.evaluation.runs import read_run
from goldset.schema import RunSummary
from tests.helpers.eval_data import evaluated_pairs, make_dataset, perfect_sample, poor_sample, write_run_file


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    monkeypatch.chdir(tmp_path)
    data = make_dataset(tmp_path / "data")
    pairs = evaluated_pairs()
    good = [perfect_sample(p) for p in pairs]
    for s in good:
        s.latency.total_ms = 100.0 + len(s.pair_id) * 10
    poor = [poor_sample(p) for p in pairs[1:]]  # one pair missing
    evaluate(data, run=write_run_file(tmp_path / "good.jsonl", good), out_dir=tmp_path / "good")
    evaluate(data, run=write_run_file(tmp_path / "poor.jsonl", poor), out_dir=tmp_path / "poor")
    return tmp_path / "good", tmp_path / "poor"


def test_html_report_is_self_contained_and_holds_the_numbers(runs: tuple[Path, Path], tmp_path: Path) -> None:
    good, poor = read_run(runs[0]), read_run(runs[1])
    out = write_report(tmp_path / "report.html", poor, baseline=good, n_resamples=300)
    html = out.read_text(encoding="utf-8")
    assert html.startswith("<!doctype html>") and html.rstrip().endswith("</html>")
    assert "<svg" in html  # charts inline
    assert not re.search(r"<script|<link|src=\"http|href=\"http|@import", html)  # no CDN, nothing fetched
    s = poor.summary
    for metric in ("recall@5", "mrr", "token_f1"):
        assert f"{s.overall[metric]:.3f}" in html  # the run's value
        assert f"{good.summary.overall[metric]:.3f}" in html  # the baseline's value
    assert poor.run_id in html and good.run_id in html
    assert "Compared with the baseline" in html and "Questions that got worse" in html
    assert "missing from the run" in html  # the failed pair is shown among the worst questions
    assert "chunking or retrieval" in html  # low recall → the retrieval diagnosis
    for qtype in {p.question_type.value for p in evaluated_pairs()}:
        assert qtype in html


def test_report_without_baseline_draws_latency(runs: tuple[Path, Path], tmp_path: Path) -> None:
    good = read_run(runs[0])
    html = render_html(good)
    assert "total latency over" in html and "p95" in html
    assert "Compared with the baseline" not in html


def test_svg_helpers_escape_and_scale() -> None:
    svg = svg_bars("recall <@5>", [("factual", 0.5), ("a&b", 1.0)], marks={"factual": 0.25})
    assert "recall &lt;@5&gt;" in svg and "a&amp;b" in svg and "0.500" in svg and "baseline 0.250" in svg
    assert svg_histogram("t", []) == ""
    hist = svg_histogram("lat", [10.0, 20.0, 30.0, 40.0, 1000.0])
    assert "p50 30 ms" in hist and "1000 ms" in hist
    tail = svg_histogram("lat", [100.0 + i for i in range(200)] + [60000.0])  # one timeout among fast answers
    assert "(max 60000)" in tail and "p50 200 ms" in tail


def test_rules_fire_only_on_measured_inputs() -> None:
    every = {name for r in list_rules() for group in r.inputs for name in group}
    assert "faithfulness" in every
    low_recall = RunSummary(run_id="r", overall={"recall@5": 0.2, "token_f1": 0.9})
    fired = {d.rule for d in diagnose(low_recall)}
    assert "retrieval-recall" in fired
    assert "generation-prompt" not in fired and "unfaithful-answers" not in fired  # faithfulness not measured
    assert any(s.startswith("unfaithful-answers: needs faithfulness") for s in skipped_rules(low_recall))
    prompt = RunSummary(run_id="r", overall={"faithfulness": 0.95, "completeness": 0.3, "recall@5": 0.9})
    found = diagnose(prompt)
    assert [d.rule for d in found] == ["generation-prompt"]
    assert "generation prompt" in found[0].cause and found[0].inputs == {"faithfulness": 0.95, "completeness": 0.3}
    everything = RunSummary(run_id="r", overall={"recall@5": 0.1, "context_precision": 0.1, "token_f1": 0.1})
    assert diagnose(everything)[0].severity == "critical"
    assert "everything-low" in {d.rule for d in diagnose(everything)}
    healthy = RunSummary(run_id="r", overall={"recall@5": 0.9, "context_precision": 0.8, "token_f1": 0.7})
    assert diagnose(healthy) == []


def test_terminal_table_lists_metrics_and_types(runs: tuple[Path, Path]) -> None:
    from rich.console import Console

    good, poor = read_run(runs[0]), read_run(runs[1])
    console = Console(record=True, width=200)
    console.print(summary_table(poor.summary, good.summary))
    text = console.export_text()
    assert "recall@5" in text and "factual" in text and "baseline" in text
    assert f"{poor.summary.overall['mrr']:.3f}" in text


def test_multi_passage_rule_reads_the_per_type_values() -> None:
    s = RunSummary(
        run_id="r",
        overall={"recall@5": 0.8},
        by_type={"factual": {"recall@5": 0.95}, "multi_hop": {"recall@5": 0.4}, "comparison": {"recall@5": 0.75}},
    )
    found = {d.rule: d for d in diagnose(s)}
    assert "multi_hop 0.40" in found["multi-passage-retrieval"].finding
    assert "comparison" not in found["multi-passage-retrieval"].finding  # 0.75 is within 0.2 of 0.8
    s.by_type["multi_hop"]["recall@5"] = 0.7
    assert "multi-passage-retrieval" not in {d.rule for d in diagnose(s)}


def test_terminal_table_fits_a_narrow_terminal(runs: tuple[Path, Path]) -> None:
    from rich.console import Console

    good = read_run(runs[0])
    for width, expect in ((200, "procedural"), (70, "proc."), (50, "per question")):
        console = Console(record=True, width=width)
        console.print(summary_table(good.summary, width=width))
        text = console.export_text()
        assert expect in text
        assert "…" not in text  # numbers and names are never cut
        assert max(len(line) for line in text.splitlines()) <= width


def test_failures_are_not_refusals_and_do_not_drive_the_diagnosis(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The trust issue: a target that never refused got false_refusal 0.30 because questions failed, and the
    report blamed "a refusal policy that is too strict"."""
    monkeypatch.chdir(tmp_path)
    data = make_dataset(tmp_path / "data")
    by_question = {p.question: p for p in evaluated_pairs()}
    failing = {"qa-port", "qa-debug", "qa-clear", "qa-slow"}  # answerable ones

    def system(question: str) -> dict[str, object]:
        pair = by_question[question]
        if pair.id in failing:
            raise TimeoutError("upstream LLM timed out")
        return perfect_sample(pair).model_dump(include={"answer", "contexts"})

    result = evaluate(data, target=system, out_dir=tmp_path / "out")
    s = result.summary
    assert s.n_failed == len(failing) and s.system["error_rate"] == pytest.approx(len(failing) / len(by_question))
    assert s.overall["false_refusal"] == 0.0  # it never refused; the failures are in error_rate
    assert s.overall["recall@5"] < 0.6  # failures still score 0 where retrieval's definition says so
    assert s.answered["recall@5"] == 1.0  # what the system did when it answered
    fired = {d.rule for d in diagnose(s)}
    assert "system-errors" in fired
    assert "over-refusal" not in fired and "retrieval-recall" not in fired
    html = render_html(read_run(tmp_path / "out"))
    assert "refusal policy that is too strict" not in html and "chunking or retrieval" not in html


def test_quality_rules_need_answered_questions() -> None:
    every_failed = RunSummary(
        run_id="r", n_samples=4, n_failed=4, overall={"recall@5": 0.0}, system={"error_rate": 1.0}
    )
    assert {d.rule for d in diagnose(every_failed)} == {"system-errors"}
    assert any("over answered questions: none" in s for s in skipped_rules(every_failed))


def test_the_report_says_whose_agreement_the_calibration_measured(runs: tuple[Path, Path]) -> None:
    from goldset.schema.manifest import JudgeAgreement, JudgeCalibration
    from goldset.schema.runs import JudgeInfo

    run = read_run(runs[0])
    assert "<h2>Judge calibration</h2>" not in render_html(run), "no judge and no calibration: nothing to say"
    run.meta.judge = JudgeInfo(model="judge-b", endpoint="judge")
    assert "carries no judge calibration" in render_html(run)
    agreement = JudgeAgreement(pairs=20, accuracy=0.9, kappa=0.8, both_grounded=12, false_alarms=1, missed=1,
                               both_not_grounded=6)  # fmt: skip
    run.meta.calibration = JudgeCalibration(model="judge-a", overall=agreement)
    page = render_html(run)
    section = page.split("<h2>Judge calibration</h2>", 1)[1].split("<h2>", 1)[0]
    assert "judge-a" in section and "0.80" in section and "90%" in section
    assert "This run was judged by judge-b; the calibration measured judge-a" in section
    assert "class='bad'" not in section, "kappa 0.8 over 20 pairs is above the default 0.6: no warning"
    run.meta.judge = JudgeInfo(model="judge-a", endpoint="judge")
    assert "This run was judged by" not in render_html(run)


def test_the_worst_questions_name_the_page_a_context_is_on_when_the_system_gives_it(tmp_path: Path) -> None:
    data = make_dataset(tmp_path / "data")
    pairs = evaluated_pairs()
    samples = [poor_sample(p) for p in pairs]
    samples[0].contexts[0].doc_id, samples[0].contexts[0].page = "handbook.pdf", 12
    samples[1].contexts[0].doc_id, samples[1].contexts[0].page = "deck.pptx", 3
    evaluate(data, run=write_run_file(tmp_path / "run.jsonl", samples), out_dir=tmp_path / "run")
    html = render_html(read_run(tmp_path / "run"))
    first = r"<b>#1</b> (?:<span class=\"tag[^\"]*\">[^<]*</span>)?<span class=\"muted\">"
    assert re.search(first + r"handbook\.pdf, p\. 12 ", html) and re.search(first + r"deck\.pptx, slide 3 ", html)
    assert re.search(first + r"[\w/.-]+\.md c", html), "a context without a page shows its document alone"


def test_the_report_is_organised_in_layers_and_lists_only_questions_that_fall_short(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    good, poor = read_run(runs[0]), read_run(runs[1])
    page = write_report(tmp_path / "poor.html", poor, dataset=read_dataset(tmp_path / "data")).read_text("utf-8")
    for layer in ("retrieval", "generation", "system"):
        assert f'id="layer-{layer}"' in page
    layers = page.split("<div class='layers'>", 1)[1].split("<h2>", 1)[0]
    assert "recall@5" in layers and "[" in layers  # a headline metric with its interval
    first_screen = re.sub(r"<details>.*?</details>", "", layers, flags=re.DOTALL)
    assert "precision@10" not in first_screen and "precision@10" in layers  # one click away
    overall = page.split("<h2>Overall score</h2>", 1)[1].split("<h2>", 1)[0]
    weights = poor.summary.weights_used
    assert "weighted mean below (eval.weights)" in overall and f"{weights['recall@5']:.2f}" in overall
    assert "Ranked by each question&#x27;s own overall score" in page  # the rule, stated
    assert page.count('<article class="question"') == len(poor.scores)  # every poor question falls short
    assert "Why listed: failed: missing from the run" in page
    assert "<h4>Reference</h4>" in page and "Evidence the reference cites" in page  # the dataset was given
    assert "Noto Sans CJK SC" in page and "Microsoft YaHei" in page and "PingFang SC" in page

    perfect = render_html(good)
    assert '<article class="question"' not in perfect  # perfect scores are never "worst"
    assert "No question falls short" in perfect
    assert "References not shown" not in write_report(tmp_path / "g.html", good).read_text("utf-8")  # read again


def test_the_page_helper_is_self_contained() -> None:
    from goldset.evaluation.report import CSS, page

    html = page("trend <a>", "<p>x</p>", lang="zh")
    assert html.startswith("<!doctype html>") and "<title>trend &lt;a&gt;</title>" in html and CSS in html
    assert "lang='zh'" in html and "<script" not in html

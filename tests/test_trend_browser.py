"""The trend page as headless Chromium draws it at 1,280 px: the report of a log run (three days of English and
Chinese traffic, a judge, more hallucinations on the last day) and `goldset report RUN1 RUN2 RUN3` over three
golden-set runs. Each: no horizontal overflow, no console error, every chart with data, the line charts drawn
(one point per day or run, the drop marked), the numbers in the text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from goldset import evaluate
from goldset.cli import app
from tests.helpers import chromium
from tests.helpers.eval_data import evaluated_pairs, make_dataset, perfect_sample, write_run_file
from tests.helpers.fake_openai import FakeOpenAI
from tests.helpers.judge_responders import add_eval_judge_responders

WIDTH = 1280

_LINES_JS = """
return [...document.querySelectorAll('svg')].map(svg => ({
  label: svg.getAttribute('aria-label'),
  lines: svg.querySelectorAll('polyline').length,
  points: svg.querySelectorAll('circle').length,
  drops: svg.querySelectorAll('circle[stroke="#b03030"]').length,
}));
"""


@pytest.fixture(scope="module")
def driver() -> Any:
    if not chromium.available():
        pytest.fail(f"the trend page browser test needs headless Chromium: {chromium.HOW_TO}", pytrace=False)
    d = chromium.browser(WIDTH, 900)
    yield d
    d.quit()


def _open(driver: Any, page: Path) -> list[dict[str, Any]]:
    chromium.console_errors(driver)
    driver.get(page.as_uri())
    assert driver.execute_script("return document.readyState") == "complete"
    assert chromium.console_errors(driver) == []
    assert chromium.chart_problems(driver) == []
    overflow = driver.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"the page is {overflow} px wider than the {WIDTH} px window"
    return list(driver.execute_script(_LINES_JS))


def _log(path: Path) -> Path:
    rows = []
    for d, n_bad in (("2026-03-01", 4), ("2026-03-02", 4), ("2026-03-03", 24)):
        for i in range(40):
            zh = i % 2 == 1
            q = "快袋鼠的默认端口是什么？" if zh else "What is the default port of quokka?"  # repeats: from the journal
            ctx = "它的默认端口是八零八零。" if zh else "The default port of quokka is 8080."
            good = ctx
            bad = "它使用Cobol编写。" if zh else "Quokka was written in Cobol."
            rows.append({"question": q, "answer": bad if i < n_bad else good, "contexts": [{"text": ctx}],
                         "latency": {"total_ms": 200 + i}, "timestamp": f"{d}T12:00:00+08:00",
                         "topic": "ports" if i % 3 else "install"})  # fmt: skip
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_the_report_of_a_log_run_draws_its_trend_at_1280_px(
    driver: Any, fake_llm: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_eval_judge_responders(fake_llm)
    monkeypatch.chdir(tmp_path)
    run = evaluate(log=_log(tmp_path / "traffic.jsonl"), out_dir=tmp_path / "runs" / "traffic")
    page = tmp_path / "report.html"
    result = CliRunner().invoke(app, ["report", str(run.folder), "--html", str(page)])
    assert result.exit_code == 0, result.output
    drawn = _open(driver, page)
    hall = next(c for c in drawn if c["label"] == "hallucination")
    assert hall["lines"] == 1 and hall["points"] == 3 and hall["drops"] == 1, hall  # three days, the last dropped
    per_language = next(c for c in drawn if c["label"] == "hallucination per language")
    assert per_language["lines"] == 2 and per_language["points"] == 6, per_language
    assert any(c["label"] == "faithfulness per topic" for c in drawn)
    text = driver.find_element("tag name", "body").text
    assert "hallucination (all): 0.100 on 2026-03-02 → 0.600 on 2026-03-03" in text
    assert "log runs (reference-free" in text
    assert "Samples to look at" in text and "32 of 120 sample(s) meet a rule" in text
    assert "claims the retrieved contexts do not support (hallucination > 0)" in text
    assert "not_found: Quokka was written in Cobol." in text


def test_report_over_three_golden_set_runs_draws_the_trend(
    driver: Any, no_llm_env: None, tmp_path: Path
) -> None:
    data = make_dataset(tmp_path / "data")
    pairs = evaluated_pairs()
    folders = []
    for k in range(3):  # each run answers one more question with nothing retrieved
        samples = [perfect_sample(p) for p in pairs]
        for s in samples[:k]:
            s.contexts = []
            s.answer = "I do not know."
        folders.append(str(evaluate(data, run=write_run_file(tmp_path / f"r{k}.jsonl", samples),
                                    out_dir=tmp_path / "runs" / f"r{k}").folder))  # fmt: skip
    page = tmp_path / "trend.html"
    result = CliRunner().invoke(app, ["report", *folders, "--html", str(page)])
    assert result.exit_code == 0, result.output
    drawn = _open(driver, page)
    recall = next(c for c in drawn if c["label"] == "recall@5")
    assert recall["lines"] == 1 and recall["points"] == 3, recall
    assert any(c["label"].endswith("per type") for c in drawn)
    text = driver.find_element("tag name", "body").text
    assert "golden-set runs" in text and all(Path(f).name in text for f in folders)

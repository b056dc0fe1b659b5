"""The HTML report as a browser draws it (headless Chromium): a real report (the example run against the example
golden set, compared with the BM25 baseline) logs no console error and none of its charts is empty; and the two
checks do catch a broken page."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from goldset.evaluation.evaluator import evaluate
from goldset.evaluation.report import write_report
from goldset.evaluation.runs import read_run
from tests.helpers import chromium

ROOT = Path(__file__).resolve().parents[1]
GOLDEN, RUN, KB = ROOT / "examples" / "golden", ROOT / "examples" / "run.jsonl", ROOT / "examples" / "kb" / "docs"


@pytest.fixture(scope="module")
def driver() -> Any:
    if not chromium.available():
        pytest.fail(f"the report browser test needs headless Chromium: {chromium.HOW_TO}", pytrace=False)
    d = chromium.browser(1200, 900)
    yield d
    d.quit()


def _open(driver: Any, page: Path) -> None:
    chromium.console_errors(driver)  # drain what an earlier page logged
    driver.get(page.as_uri())
    assert driver.execute_script("return document.readyState") == "complete"


def test_the_example_report_draws_without_console_errors_or_empty_charts(driver: Any, tmp_path: Path) -> None:
    base = evaluate(GOLDEN, target="bm25", kb=KB, out_dir=tmp_path / "bm25")
    run = evaluate(GOLDEN, run=RUN, out_dir=tmp_path / "run")
    page = write_report(tmp_path / "report.html", read_run(run.folder), baseline=read_run(base.folder))
    _open(driver, page)
    assert chromium.console_errors(driver) == []
    assert chromium.chart_problems(driver) == []
    drawn = chromium.charts(driver)
    labels = [c["label"] for c in drawn]
    assert any(label.startswith("total latency over") for label in labels), labels  # the histogram is drawn
    assert sum(c["sized"] for c in drawn) >= len(drawn), drawn  # about a bar per chart at least
    text = driver.find_element("tag name", "body").text
    s = run.summary
    for metric in ("recall@5", "mrr", "token_f1"):
        assert f"{s.overall[metric]:.3f}" in text, metric  # the numbers are rendered, not only in the source
    assert "Compared with the baseline" in text


def test_the_checks_catch_a_console_error_and_an_empty_chart(driver: Any, tmp_path: Path) -> None:
    broken = tmp_path / "broken.html"
    broken.write_text(
        "<!doctype html><html><body>"
        '<svg width="300" height="60" aria-label="negative bar"><rect x="0" y="0" width="-5" height="10"/>'
        '<text x="0" y="40">0.5</text></svg>'
        '<svg width="300" height="60" aria-label="no bars"><text x="0" y="14">recall@5</text></svg>'
        "</body></html>",
        encoding="utf-8",
    )
    _open(driver, broken)
    errors = chromium.console_errors(driver)
    assert any("negative value" in e.lower() for e in errors), errors
    problems = chromium.chart_problems(driver)
    assert any(p.startswith("no bars: empty") for p in problems), problems
    assert any("every chart is blank" in p for p in problems), problems

    blank = tmp_path / "blank.html"
    blank.write_text("<!doctype html><html><body><p>No metric was computed.</p></body></html>", encoding="utf-8")
    _open(driver, blank)
    assert chromium.chart_problems(driver) == ["the page has no chart"]

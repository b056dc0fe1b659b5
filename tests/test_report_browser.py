"""The HTML report as a browser draws it (headless Chromium): a real report (the example run against the example
golden set, compared with the BM25 baseline) logs no console error and none of its charts is empty; and the two
checks do catch a broken page. A judged report of Chinese and English questions fits a 1,280 px window without
horizontal scrolling, draws its Chinese with a CJK font (the font Chromium reports), shows the three layers with
only their headline metrics on the first screen and the judge's verdicts per claim among the worst questions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from goldset.evaluation.evaluator import evaluate
from goldset.evaluation.report import write_report
from goldset.evaluation.runs import read_run
from tests.helpers import chromium
from tests.helpers.fake_openai import FakeOpenAI
from tests.helpers.judge_responders import add_eval_judge_responders

ROOT = Path(__file__).resolve().parents[1]
GOLDEN, RUN, KB = ROOT / "examples" / "golden", ROOT / "examples" / "run.jsonl", ROOT / "examples" / "kb" / "docs"


@pytest.fixture(scope="module")
def driver() -> Any:
    if not chromium.available():
        pytest.fail(f"the report browser test needs headless Chromium: {chromium.HOW_TO}", pytrace=False)
    d = chromium.browser(1280, 900)
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


#: Fonts that draw Chinese (what Debian's fonts-noto-cjk, macOS and Windows bring).
CJK_FONT = ("CJK", "Source Han", "PingFang", "Hiragino", "YaHei", "WenQuanYi", "Droid Sans Fallback", "SimHei")


def _fonts_of(driver: Any, selector: str) -> list[str]:
    """The fonts Chromium drew the text of the first element ``selector`` matches with (DevTools protocol)."""
    driver.execute_cdp_cmd("DOM.enable", {})
    driver.execute_cdp_cmd("CSS.enable", {})
    root = driver.execute_cdp_cmd("DOM.getDocument", {"depth": -1})["root"]["nodeId"]
    node = driver.execute_cdp_cmd("DOM.querySelector", {"nodeId": root, "selector": selector})["nodeId"]
    assert node, f"no element {selector}"
    fonts = driver.execute_cdp_cmd("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
    return [f["familyName"] for f in fonts]


def test_a_judged_report_of_chinese_and_english_fits_1280_px_and_draws_chinese(
    driver: Any, tmp_path: Path, fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_eval_judge_responders(fake_llm)
    monkeypatch.chdir(tmp_path)
    base = evaluate(GOLDEN, target="bm25", kb=KB, out_dir=tmp_path / "bm25", judge=False)
    run = evaluate(GOLDEN, run=RUN, out_dir=tmp_path / "run", judge=True)
    stored = read_run(run.folder)
    assert {s.language for s in stored.scores} == {"en", "zh"} and stored.meta.judge is not None
    page = write_report(tmp_path / "report.html", stored, baseline=read_run(base.folder), allow_different_settings=True)
    _open(driver, page)
    assert chromium.console_errors(driver) == []
    assert chromium.chart_problems(driver) == []
    width = driver.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1] == 1280, f"the page is {width[0]} px wide in a {width[1]} px window"

    # Chinese is drawn with a CJK font, not as boxes: the font Chromium used, and the width of the text.
    fonts = _fonts_of(driver, "article.question[lang=zh] .text")
    assert any(any(name in f for name in CJK_FONT) for f in fonts), fonts
    han, tofu = driver.execute_script(
        "const c = document.createElement('canvas').getContext('2d');"
        "c.font = '16px ' + getComputedStyle(document.body).fontFamily;"
        "return [c.measureText('数据库连接池').width, c.measureText('\\u{10FFFD}'.repeat(6)).width];"
    )
    assert han > 0 and abs(han - tofu) > 1, (han, tofu)

    # The first screen: the overall score and the three layers with their headline metrics; the rest a click away.
    text = driver.find_element("tag name", "body").text
    for layer in ("Retrieval", "Generation", "System"):
        assert driver.find_element("id", f"layer-{layer.lower()}").is_displayed(), layer
    assert "overall score" in text and "faithfulness" in text and "latency_p95_ms" in text
    assert "ndcg@10" not in driver.find_element("id", "layer-retrieval").text  # only behind "all … figures"
    summary = driver.find_element("css selector", "#layer-retrieval details summary")
    summary.click()
    assert "ndcg@10" in driver.find_element("id", "layer-retrieval").text

    # Per question: the rule, why each is listed, and behind one click the contexts and the judge's verdicts.
    assert "Ranked by each question's own overall score" in text
    first = driver.find_elements("css selector", "article.question")
    assert first and all("Why listed:" in q.text for q in first)
    judged = next(q for q in first if "claim verdict" in q.text)
    judged.find_element("css selector", "summary").click()
    shown = judged.text
    assert "Reference" in shown and "Contexts, in rank order" in shown and "The judge, claim by claim" in shown
    assert "#1" in shown
    assert any(w in shown for w in ("✓ supported", "✗ contradicted", "? not found")), shown
    assert driver.execute_script("return document.documentElement.scrollWidth") <= 1280  # opened, still fits
    assert driver.find_elements("css selector", ".tag.hit"), "no context is marked as matching the evidence"

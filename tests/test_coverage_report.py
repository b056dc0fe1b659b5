"""Coverage of real traffic in the run report: `goldset coverage` keeps its result as a record of the dataset content
it was computed against, and the report of a run of that content shows it ("Coverage of real traffic": overall and
weighted by count, method and threshold, uncovered topics with examples, nearest golden questions); a coverage of
other data is never shown as the run's (labelled in the workspace's case, refused when given as a file). Personal
data redacted at intake stays out of the record and the pages. The page is checked in headless Chromium: it fits a
1,280 px window, logs no console error and draws its Chinese with a CJK font."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from goldset.data import WorkspaceData, read_coverage
from goldset.errors import InputError, RecordError
from goldset.evaluation.evaluator import evaluate
from goldset.evaluation.report import render_html, run_coverage, write_coverage_page, write_report
from goldset.evaluation.runs import read_run
from goldset.queries.coverage import coverage
from goldset.schema import PairStatus
from goldset.workspace import Workspace
from tests.helpers import chromium
from tests.helpers.fake_openai import FakeOpenAI

ROOT = Path(__file__).resolve().parents[1]
GOLDEN, RUN = ROOT / "examples" / "golden", ROOT / "examples" / "run.jsonl"
PERSONAL = ("ops@example.com", "alice@example.org", "415 555 0100")
LONG = "https://status.example.net/" + "incident-timeline-" * 8
TRAFFIC = (
    "How do I configure CORS for my FastAPI application?\n"  # rephrases a golden question: covered
    "How do I configure CORS for my FastAPI application?\n"
    "Which command runs a FastAPI app?\n"  # a golden question itself
    "在 FastAPI 中怎样把一个参数设为可选？\n"  # the Chinese golden question
    "How do I rotate the database password? mail ops@example.com\n"  # topics absent from the golden set
    "How do I rotate the database password?\n"
    "Can I get an invoice copy? call +1 415 555 0100\n"
    "我的账户 alice@example.org 怎么注销？\n"
    "我的账户 alice@example.org 怎么注销？\n"
    f"Why is {LONG} not loading?\n"
)
CJK_FONT = ("CJK", "Source Han", "PingFang", "Hiragino", "YaHei", "WenQuanYi", "Droid Sans Fallback", "SimHei")


@pytest.fixture
def ws(tmp_path: Path, no_llm_env: None) -> Workspace:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "goldset.yaml").write_text("{}\n", encoding="utf-8")
    shutil.copytree(GOLDEN, root / "data")
    return Workspace(root)


@pytest.fixture
def traffic(tmp_path: Path) -> Path:
    path = tmp_path / "traffic.txt"
    path.write_text(TRAFFIC, encoding="utf-8")
    return path


def _all_text(root: Path) -> str:
    return "\n".join(p.read_bytes().decode("utf-8", "replace") for p in root.rglob("*") if p.is_file())


def _change_dataset(ws: Workspace) -> None:
    """Another version of the data: one golden pair rejected (its content, so its hash, differs)."""
    data = WorkspaceData(ws)
    pairs = data.pairs()
    pairs[0] = pairs[0].model_copy(update={"status": PairStatus.rejected})
    data.write(pairs, data.cited_chunks())


def test_coverage_is_kept_for_its_dataset_and_shown_in_that_runs_report(
    ws: Workspace, traffic: Path, tmp_path: Path
) -> None:
    rep = coverage(traffic, ws)
    assert rep.method == "lexical" and rep.threshold == 0.5 and rep.golden == 46
    assert (rep.questions, rep.covered, rep.asked, rep.asked_covered) == (8, 3, 10, 4)
    assert rep.stored == ws.state_dir / "coverage" / f"{rep.manifest_hash}.json"
    kept = WorkspaceData(ws).coverage(rep.manifest_hash)
    assert kept is not None and kept.dataset_version == "example" and kept.share == 3 / 8
    assert kept.weighted_share == 4 / 10 and sum(c.asked for c in kept.clusters) == kept.asked - kept.asked_covered
    # "[email]" is no topic word; a Chinese topic is words (账户 注销), not characters (户 注 账)
    assert {c.topic for c in kept.clusters} >= {"rotate database password", "账户 注销"}

    run = evaluate(ws.data_dir, run=RUN, ws=ws)
    assert run.meta.manifest_hash == rep.manifest_hash  # the same content: the run's coverage
    page = write_report(tmp_path / "report.html", read_run(run.folder), ws=ws).read_text(encoding="utf-8")
    section = page[page.index("<h2>Coverage of real traffic</h2>") : page.index("<h2>By question type</h2>")]
    assert "38%" in section and "3 of 8" in section and "40%" in section and "4 of 10" in section
    assert "similarity ≥ 0.5" in section and "lexical similarity" in section
    assert "the same dataset content this run evaluated" in section
    assert f"hash {rep.manifest_hash}" in section and "version example" in section
    assert "rotate database password" in section and "How do I rotate the database password?" in section
    assert "我的账户 [email] 怎么注销？" in section and "lang='zh'" in section
    # the nearest golden question of the most asked uncovered question, with its similarity
    top = max((m for m in kept.matches if not m.covered), key=lambda m: m.count)
    assert top.nearest and top.nearest in section and f"{top.similarity:.2f}" in section
    assert "email × 3" in section and "phone × 1" in section
    for value in PERSONAL:
        assert value not in page and value not in _all_text(ws.root)

    # a sampled run of the same content: the coverage is of the whole golden set, and says so
    sampled = evaluate(ws.data_dir, run=RUN, ws=ws, sample=12, out_dir=tmp_path / "sampled")
    text = write_report(tmp_path / "s.html", read_run(sampled.folder), ws=ws).read_text(encoding="utf-8")
    assert "a sample of 12 question(s); the coverage is of the version&#x27;s whole golden set" in text
    assert "3 of 8" in text
    # no coverage asked for: no section
    bare = write_report(tmp_path / "bare.html", read_run(run.folder), ws=ws, coverage=False).read_text("utf-8")
    assert "Coverage of real traffic" not in bare


def test_a_coverage_of_another_version_is_not_shown_as_this_runs(
    ws: Workspace, traffic: Path, tmp_path: Path
) -> None:
    old = coverage(traffic, ws)
    old_run = read_run(evaluate(ws.data_dir, run=RUN, ws=ws).folder)
    _change_dataset(ws)
    new_run = read_run(evaluate(ws.data_dir, run=RUN, ws=ws).folder)
    assert new_run.meta.manifest_hash != old.manifest_hash

    record, note = run_coverage(new_run, ws)
    assert record is None and note is not None
    assert note.startswith("Coverage not shown") and old.manifest_hash in note and "--dataset" in note
    page = write_report(tmp_path / "new.html", new_run, ws=ws).read_text(encoding="utf-8")
    assert "Coverage not shown" in page and "id='coverage'" not in page and "3 of 8" not in page
    # a record of other data handed in directly is refused, never drawn
    with pytest.raises(InputError, match="not of the dataset run"):
        render_html(new_run, coverage=old.record())
    rec = tmp_path / "old-coverage.json"
    from goldset.data import write_coverage

    write_coverage(rec, old.record())
    with pytest.raises(InputError, match=r"coverage computed for .* but run"):
        write_report(tmp_path / "x.html", new_run, ws=ws, coverage_file=rec)
    # the old run still has its own coverage; the new version gets its own once computed
    assert run_coverage(old_run, ws)[0] == WorkspaceData(ws).coverage(old.manifest_hash)
    new = coverage(traffic, ws)
    assert new.golden == 45 and run_coverage(new_run, ws)[0] == new.record().model_copy(
        update={"computed_at": WorkspaceData(ws).coverage(new.manifest_hash).computed_at}  # type: ignore[union-attr]
    )
    assert len(WorkspaceData(ws).coverages()) == 2


def test_a_record_whose_figures_do_not_add_up_is_refused(ws: Workspace, traffic: Path) -> None:
    rep = coverage(traffic, ws)
    assert rep.stored is not None
    raw = json.loads(rep.stored.read_text(encoding="utf-8"))
    raw["covered"] += 1  # a hand edit
    rep.stored.write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(RecordError, match="do not add up"):
        read_coverage(rep.stored)
    with pytest.raises(InputError, match="no such coverage file"):
        read_coverage(rep.stored.with_name("missing.json"))


def test_coverage_by_embeddings_states_the_model_in_the_report(
    ws: Workspace, traffic: Path, tmp_path: Path, fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOLDSET_EMBEDDING_MODEL", "fake-embed")
    rep = coverage(traffic, ws)
    assert rep.method == "embedding" and rep.threshold == 0.8 and rep.embedding_model == "fake-embed"
    run = evaluate(ws.data_dir, run=RUN, ws=ws, judge=False)
    page = write_report(tmp_path / "r.html", read_run(run.folder), ws=ws).read_text(encoding="utf-8")
    assert "embedding cosine (fake-embed)" in page and "similarity ≥ 0.8" in page
    sent = json.dumps([r.body for r in fake_llm.requests], ensure_ascii=False)
    assert fake_llm.embedding_calls > 0 and not any(value in sent for value in PERSONAL)


def test_cli_coverage_pages_and_report_flags(ws: Workspace, traffic: Path, tmp_path: Path) -> None:
    from goldset.cli import app

    cli, where = CliRunner(), ["--workspace", str(ws.root)]
    standalone, rec = tmp_path / "coverage.html", tmp_path / "coverage.json"
    got = cli.invoke(app, ["coverage", "--queries", str(traffic), "--html", str(standalone), "--out", str(rec), *where])
    assert got.exit_code == 0, got.output
    assert "3 of 8 questions (38%)" in got.output and "kept as the coverage of" in got.output
    page = standalone.read_text(encoding="utf-8")
    assert "<h1>Coverage of real traffic" in page and "3 of 8" in page and "similarity ≥ 0.5" in page
    assert read_coverage(rec).manifest_hash == WorkspaceData(ws).coverages()[0].manifest_hash

    got = cli.invoke(app, ["eval", "--run", str(RUN), "--html", str(tmp_path / "eval.html"), *where])
    assert got.exit_code == 0, got.output
    assert "<h2>Coverage of real traffic</h2>" in (tmp_path / "eval.html").read_text(encoding="utf-8")
    run1 = next((ws.root / "runs").iterdir())
    got = cli.invoke(app, ["report", str(run1), "--html", str(tmp_path / "no.html"), "--no-coverage", *where])
    assert got.exit_code == 0 and "Coverage of real traffic" not in (tmp_path / "no.html").read_text("utf-8")

    _change_dataset(ws)
    got = cli.invoke(app, ["eval", "--run", str(RUN), *where])
    assert got.exit_code == 0, got.output
    run2 = next(p for p in (ws.root / "runs").iterdir() if p != run1)
    got = cli.invoke(app, ["report", str(run2), "--html", str(tmp_path / "r2.html"), *where])
    assert got.exit_code == 0, got.output
    assert "Coverage not shown" in (tmp_path / "r2.html").read_text(encoding="utf-8")
    got = cli.invoke(app, ["report", str(run2), "--html", str(tmp_path / "r3.html"), "--coverage", str(rec), *where])
    assert got.exit_code == 2 and got.output.strip().count("\n") == 0 and "coverage computed for" in got.output
    assert not (tmp_path / "r3.html").exists()
    got = cli.invoke(app, ["report", str(run1), "--html", str(tmp_path / "r4.html"), "--coverage", str(rec), *where])
    assert got.exit_code == 0 and "3 of 8" in (tmp_path / "r4.html").read_text(encoding="utf-8")
    got = cli.invoke(app, ["report", str(run1), "--coverage", str(rec), *where])
    assert got.exit_code == 2 and "give --html FILE too" in got.output


# ------------------------------------------------------------------------------------------------ in the browser


@pytest.fixture(scope="module")
def driver() -> Any:
    if not chromium.available():
        pytest.fail(f"the coverage browser test needs headless Chromium: {chromium.HOW_TO}", pytrace=False)
    d = chromium.browser(1280, 900)
    yield d
    d.quit()


def _fonts_of(driver: Any, selector: str) -> list[str]:
    driver.execute_cdp_cmd("DOM.enable", {})
    driver.execute_cdp_cmd("CSS.enable", {})
    root = driver.execute_cdp_cmd("DOM.getDocument", {"depth": -1})["root"]["nodeId"]
    node = driver.execute_cdp_cmd("DOM.querySelector", {"nodeId": root, "selector": selector})["nodeId"]
    assert node, f"no element {selector}"
    return [f["familyName"] for f in driver.execute_cdp_cmd("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]]


def test_the_coverage_section_draws_in_chromium_at_1280_px(
    driver: Any, ws: Workspace, traffic: Path, tmp_path: Path
) -> None:
    rep = coverage(traffic, ws)
    run = evaluate(ws.data_dir, run=RUN, ws=ws)
    report = write_report(tmp_path / "report.html", read_run(run.folder), ws=ws)
    standalone = write_coverage_page(tmp_path / "coverage.html", rep.record())
    for page in (report, standalone):
        chromium.console_errors(driver)
        driver.get(page.as_uri())
        assert driver.execute_script("return document.readyState") == "complete"
        assert chromium.console_errors(driver) == [], page.name
        width = driver.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1] == 1280, f"{page.name} is {width[0]} px wide in a {width[1]} px window"
        section = driver.find_element("id", "coverage")
        text = section.text
        assert "38%" in text and "3 of 8" in text and "similarity ≥ 0.5" in text, page.name
        assert "How do I rotate the database password?" in text and LONG in text.replace("\n", "")
        right = driver.execute_script(
            "return Math.max(...[...document.querySelectorAll('#coverage *')].map(e => e.getBoundingClientRect()"
            ".right))"
        )
        assert right <= 1280, f"{page.name}: an element of the section ends at {right:.0f} px"
        bars = [c for c in chromium.charts(driver) if c["label"] == "covered share of real traffic"]
        assert bars and bars[0]["sized"] == 2, bars
        fonts = _fonts_of(driver, "#coverage .nearest td [lang=zh]")
        assert any(any(name in f for name in CJK_FONT) for f in fonts), fonts
        han, tofu = driver.execute_script(
            "const c = document.createElement('canvas').getContext('2d');"
            "c.font = '16px ' + getComputedStyle(document.body).fontFamily;"
            "return [c.measureText('怎么注销账户').width, c.measureText('\\u{10FFFD}'.repeat(6)).width];"
        )
        assert han > 0 and abs(han - tofu) > 1, (han, tofu)

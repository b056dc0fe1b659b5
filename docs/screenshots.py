"""The README's pictures, taken by headless Chromium from real output (`make screenshots`).

    python docs/screenshots.py [--out docs/images] [--only report|review]

- ``report.png`` and ``report-charts.png``: the HTML report of the example run (``examples/run.jsonl``) against the
  example golden set (``examples/golden``), compared with the BM25 baseline over the example KB: the top of the
  report (run, notes, likely causes) and its charts (metrics per question type, latency).
- ``review-task.png``: a review task in Label Studio. A workspace gets the example KB and the example pairs (as
  filters output: status passed), ``goldset filter --no-llm`` records its verdicts, ``goldset review sample`` and
  ``goldset review push`` create the project, and Chromium logs in and opens one task. The server is the one
  ``LABEL_STUDIO_URL`` / ``LABEL_STUDIO_API_KEY`` name (the UI login: ``LABEL_STUDIO_USER`` /
  ``LABEL_STUDIO_PASSWORD``, default the test launcher's user), else one started from ``.ls-venv`` for the run.

Each picture must come out under 300 KB (PNGs are reduced to a palette); the script fails otherwise, and when the
browser logs an error on the report or one of its charts is empty.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # goldset from this checkout, and the test helpers' browser and Label Studio launcher

from tests.helpers import chromium  # noqa: E402

GOLDEN, RUN, KB = ROOT / "examples" / "golden", ROOT / "examples" / "run.jsonl", ROOT / "examples" / "kb" / "docs"
MAX_BYTES = 300_000
WIDTH = 1100


def save_png(png: bytes, path: Path, crop: tuple[int, int] | None = None) -> Path:
    """``png`` cut to the rows ``crop`` (top, bottom), reduced to a 128-colour palette, written to ``path``."""
    from PIL import Image

    img = Image.open(io.BytesIO(png)).convert("RGB")
    if crop is not None:
        img = img.crop((0, crop[0], img.width, min(crop[1], img.height)))
    buf = io.BytesIO()
    img.quantize(colors=128, method=Image.Quantize.MEDIANCUT).save(buf, "PNG", optimize=True)
    if buf.tell() > MAX_BYTES:
        raise SystemExit(f"screenshots: {path.name} would be {buf.tell():,} bytes (limit {MAX_BYTES:,}); crop it")
    path.write_bytes(buf.getvalue())
    print(f"screenshots: {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path} ({buf.tell():,} bytes)")
    return path


# -------------------------------------------------------------------------------------------------- the report
def report(out: Path) -> None:
    from goldset.evaluation.evaluator import evaluate
    from goldset.evaluation.report import write_report
    from goldset.evaluation.runs import read_run

    os.chdir(ROOT)  # the report names the dataset and run file as given: relative, as a reader would type them
    with tempfile.TemporaryDirectory(prefix="goldset-shots-") as tmp:
        rel = {p: str(p.relative_to(ROOT)) for p in (GOLDEN, RUN, KB)}
        base = evaluate(rel[GOLDEN], target="bm25", kb=rel[KB], out_dir=Path(tmp) / "bm25")
        run = evaluate(rel[GOLDEN], run=rel[RUN], out_dir=Path(tmp) / "run")
        page = write_report(Path(tmp) / "report.html", read_run(run.folder), baseline=read_run(base.folder))
        d = chromium.browser(WIDTH, 900)
        try:
            d.get(page.as_uri())
            errors, problems = chromium.console_errors(d), chromium.chart_problems(d)
            if errors or problems:
                raise SystemExit(f"screenshots: the report does not draw cleanly: {errors + problems}")
            height = int(d.execute_script("return document.documentElement.scrollHeight"))
            d.set_window_size(WIDTH, height + 200)  # the whole page in one picture, cut below
            # Where each section starts: the pictures are cut at headings, whatever the numbers make them measure.
            heads = dict(d.execute_script(
                "return [...document.querySelectorAll('h2')].map(h => [h.textContent, "
                "Math.round(h.getBoundingClientRect().top + window.scrollY)])"
            ))  # fmt: skip
            png = d.get_screenshot_as_png()
        finally:
            d.quit()
    top_end = heads.get("Likely causes") or heads.get("Compared with the baseline")  # the score and the layers
    charts, after = heads.get("By question type"), heads.get("By language")
    if top_end is None or charts is None:
        raise SystemExit(f"screenshots: the report's sections changed ({list(heads)}); update docs/screenshots.py")
    save_png(png, out / "report.png", (0, top_end - 8))
    # The charts and the latency histogram: up to the system figures' table under it.
    latency = heads.get("Latency", charts)
    save_png(png, out / "report-charts.png", (charts - 8, min(after or latency + 260, latency + 260)))


# -------------------------------------------------------------------------------------------- the review task
@contextlib.contextmanager
def label_studio() -> Iterator[tuple[str, str, str, str]]:
    """(url, api key, login, password) of the server the environment names, else of one started for the run."""
    url, key = os.environ.get("LABEL_STUDIO_URL"), os.environ.get("LABEL_STUDIO_API_KEY")
    from tests.helpers import labelstudio

    user = os.environ.get("LABEL_STUDIO_USER", labelstudio.USER)
    password = os.environ.get("LABEL_STUDIO_PASSWORD", labelstudio.PASSWORD)
    if url and key:
        yield url.rstrip("/"), key, user, password
        return
    ls_bin = Path(os.environ.get("LABEL_STUDIO_BIN") or labelstudio.DEFAULT_BIN)
    print(f"screenshots: starting Label Studio from {ls_bin} (a first start takes about a minute)")
    with labelstudio.started(ls_bin) as (server, _):
        yield server.url, server.api_key, server.user, server.password


def example_workspace(root: Path, title: str) -> Any:
    """A workspace holding the example KB and the example pairs as the filters left them (passed), filtered."""
    import shutil

    from goldset.data import read_dataset, write_dataset
    from goldset.filters.pipeline import run_filters
    from goldset.kb import ingest
    from goldset.schema import PairStatus, Review
    from goldset.workspace import Workspace

    root.mkdir(parents=True)
    (root / "goldset.yaml").write_text(f"review:\n  label_studio:\n    project_title: {json.dumps(title)}\n")
    shutil.copytree(ROOT / "labeling", root / "labeling")
    shutil.copytree(ROOT / "prompts", root / "prompts")
    ws = Workspace(root)
    ingest(KB, ws)
    golden = read_dataset(GOLDEN)
    pairs = [p.model_copy(update={"status": PairStatus.passed, "review": Review()}) for p in golden.pairs]
    write_dataset(ws.data_dir, pairs, golden.chunks.values())
    run_filters(ws, use_llm=False)
    return ws


def review(out: Path) -> None:
    from label_studio_sdk import LabelStudio

    from goldset.data import read_dataset
    from goldset.io import read_jsonl
    from goldset.review import push, sample
    from goldset.schema import QAPair

    title = "goldset example review (screenshots)"
    with label_studio() as (url, key, user, password), tempfile.TemporaryDirectory(prefix="goldset-shots-") as tmp:
        os.environ["LABEL_STUDIO_URL"], os.environ["LABEL_STUDIO_API_KEY"] = url, key
        ls = LabelStudio(base_url=url, api_key=key)
        for old in ls.projects.list(title=title):  # this script's own project of an earlier run: start afresh
            if old.title == title:
                ls.projects.delete(id=old.id)
        ws = example_workspace(Path(tmp) / "ws", title)
        sample(ws, fraction=1.0, seed=0)
        pushed = push(ws)
        pairs = {p.id: p for p in read_jsonl(ws.pairs_path, QAPair)}
        chunks = read_dataset(ws.data_dir).chunks
        # A Chinese pair (`make screenshots` installs a CJK font: the picture shows Chinese drawn, not boxes) with
        # one quote of a sentence or so, in a short chunk, so the verdict and the criteria fit under the evidence.
        wanted = sorted(
            (p for p in pairs.values() if p.language == "zh" and p.status.value == "passed" and len(p.evidence) == 1
             and len(p.evidence[0].quote) >= 15 and p.evidence[0].chunk_id in chunks),
            key=lambda p: (len(chunks[p.evidence[0].chunk_id].text), p.id),
        )  # fmt: skip
        if not wanted:
            raise SystemExit("screenshots: no Chinese pair with one quote passed the filters; see examples/golden")
        pair = wanted[0]
        task_id = next(t.id for t in ls.tasks.list(project=pushed.project, fields="all", page_size=1000)
                       if t.data.get("pair_id") == pair.id)  # fmt: skip
        d = chromium.browser(1400, 1350)
        try:
            shot = _open_task(d, url, user, password, pushed.project, task_id)
        finally:
            d.quit()
    save_png(shot, out / "review-task.png")


def _open_task(d: Any, url: str, user: str, password: str, project: int, task_id: int) -> bytes:
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    d.get(f"{url}/user/login/")
    d.find_element(By.NAME, "email").send_keys(user)
    d.find_element(By.NAME, "password").send_keys(password)
    d.find_element(By.CSS_SELECTOR, "button[type=submit], input[type=submit]").click()
    WebDriverWait(d, 30).until(lambda drv: "/user/login" not in drv.current_url)
    d.get(f"{url}/projects/{project}/data?task={task_id}")

    def rendered(drv: Any) -> bool:
        """The task is drawn (quote highlighted, answer box filled) and so is the task list beside it (a fresh
        project first shows its empty-project page there, under a loading overlay)."""
        region = drv.find_element(By.CSS_SELECTOR, "span.htx-highlight")
        answer = drv.find_element(By.CSS_SELECTOR, '[name^="edited_answer:"]')
        body = drv.find_element(By.TAG_NAME, "body").text
        listed = "Import data to get your project started" not in body and body.count("type: ") >= 3
        return bool(listed and region.is_displayed() and answer.is_displayed() and region.text and answer.text)

    wait = WebDriverWait(d, 90, ignored_exceptions=(NoSuchElementException, StaleElementReferenceException))
    wait.until(rendered)
    time.sleep(2)  # overlays fade out
    wait.until(rendered)
    return bytes(d.get_screenshot_as_png())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images", help="folder of the PNGs")
    parser.add_argument("--only", choices=("report", "review"), help="take only these pictures")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if not chromium.available():
        raise SystemExit(f"screenshots: {chromium.HOW_TO}")
    if args.only in (None, "report"):
        report(args.out)
    if args.only in (None, "review"):
        review(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

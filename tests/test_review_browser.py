"""A pushed task in Label Studio's own web UI (headless Chromium): the question, the highlighted quote and the
pre-filled answer are there, document text shows as text (not HTML). Saves a screenshot; with
GOLDSET_SCREENSHOT_DIR set it is copied there (the README's picture comes from `make screenshots`,
docs/screenshots.py)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from goldset.io import read_jsonl
from goldset.review import push, sample
from goldset.schema import QAPair
from tests.helpers.labelstudio import Server, project_id, require_server, tasks_by_pair
from tests.helpers.review_data import make_workspace

CHROMIUM, DRIVER = shutil.which("chromium") or "/usr/bin/chromium", shutil.which("chromedriver")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--window-size=1400,1250")  # fmt: skip


def browser() -> Any:
    if not Path(CHROMIUM).exists() or not DRIVER:
        pytest.fail("the browser test needs Debian's chromium and chromium-driver: apt-get install -y chromium "
                    "chromium-driver (make test does it when run as root)", pytrace=False)  # fmt: skip
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in (*FLAGS, f"--user-data-dir={tempfile.mkdtemp(prefix='goldset-chromium-')}"):
        opts.add_argument(flag)
    return webdriver.Chrome(service=Service(DRIVER), options=opts)  # our driver: selenium downloads nothing


def test_a_pushed_task_shows_question_highlighted_quote_and_prefilled_answer(tmp_path: Path) -> None:
    server: Server = require_server()
    ws = make_workspace(tmp_path / "ws", 24)
    sample(ws, fraction=1.0, seed=5)
    push(ws)
    ls = server.client()
    pid = project_id(ls, ws.config_path.read_text().split("project_title: ")[1].split()[0])
    pair = next(p for p in read_jsonl(ws.pairs_path, QAPair) if p.id == "qa-0000")
    task_id = tasks_by_pair(ls, pid)[pair.id][0].id

    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    d = browser()
    try:
        d.get(f"{server.url}/user/login/")
        d.find_element(By.NAME, "email").send_keys(server.user)
        d.find_element(By.NAME, "password").send_keys(server.password)
        d.find_element(By.CSS_SELECTOR, "button[type=submit], input[type=submit]").click()
        WebDriverWait(d, 30).until(lambda drv: "/user/login" not in drv.current_url)
        d.get(f"{server.url}/projects/{pid}/data?task={task_id}")
        def rendered(drv: Any) -> tuple[str, str, str] | None:
            """The highlighted region's text, the answer box's text and the page text, once both are shown (the
            labeling UI re-renders while it loads, so elements are found afresh on every try)."""
            region = drv.find_element(By.CSS_SELECTOR, "span.htx-highlight")
            answer = drv.find_element(By.CSS_SELECTOR, '[name^="edited_answer:"]')
            if not (region.is_displayed() and answer.is_displayed() and region.text and answer.text):
                return None
            return region.text, answer.text, drv.find_element(By.TAG_NAME, "body").text

        wait = WebDriverWait(d, 90, ignored_exceptions=(NoSuchElementException, StaleElementReferenceException))
        region_text, answer_text, body = wait.until(rendered)
        shot = tmp_path / "review-task.png"
        d.save_screenshot(str(shot))
        assert region_text == pair.evidence[0].quote, "the quote is the highlighted region, character for character"
        assert pair.question in body and "Filter flags" in body
        assert answer_text == pair.answer, "the answer box is pre-filled with the reference answer"
        assert "A <b>bold</b> claim & an ampersand stay plain text." in body, "document text is text, not HTML"
        assert shot.stat().st_size > 20_000
        target = os.environ.get("GOLDSET_SCREENSHOT_DIR")
        if target:
            Path(target).mkdir(parents=True, exist_ok=True)
            shutil.copy(shot, Path(target) / "review-task.png")
    finally:
        d.quit()

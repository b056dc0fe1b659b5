"""Headless Chromium for the page tests and `make screenshots` (no tests here): Debian's ``chromium`` and
``chromium-driver`` driven by selenium, which then downloads nothing.

- :func:`browser` starts one (a fresh profile; the browser console is kept for :func:`console_errors`);
- :func:`console_errors` is what the page logged at level SEVERE: script errors, and the errors Chromium reports
  for SVG it cannot draw (``<rect> attribute width: A negative value is not valid``, ``Expected length, "nan"``);
- :func:`chart_problems` lists the inline SVG charts that show nothing.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

CHROMIUM, DRIVER = shutil.which("chromium") or "/usr/bin/chromium", shutil.which("chromedriver")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars")  # fmt: skip
HOW_TO = "install Debian's chromium and chromium-driver: apt-get install -y chromium chromium-driver (make browser)"


def available() -> bool:
    return Path(CHROMIUM).exists() and DRIVER is not None


def browser(width: int = 1400, height: int = 1250) -> Any:
    """A headless Chromium of this window size; the caller quits it. RuntimeError when it is not installed."""
    if not available():
        raise RuntimeError(f"headless Chromium is missing: {HOW_TO}")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="goldset-chromium-")
    for flag in (*FLAGS, f"--window-size={width},{height}", f"--user-data-dir={profile}"):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(DRIVER), options=opts)


def console_errors(driver: Any) -> list[str]:
    """The console messages at level SEVERE since the last call (the log is drained by reading it)."""
    return [str(e.get("message")) for e in driver.get_log("browser") if e.get("level") == "SEVERE"]


#: For every <svg> of the page: its label, its drawn size, how many data marks (rect/line/path/circle) it has and
#: how many of them have a size, and the numbers its text shows.
_CHARTS_JS = """
return [...document.querySelectorAll('svg')].map((svg, i) => {
  const box = svg.getBoundingClientRect();
  const marks = [...svg.querySelectorAll('rect, path, circle, polyline')];
  const sized = marks.filter(m => { const b = m.getBBox(); return b.width > 0.5 && b.height > 0.5; });
  const numbers = [...svg.querySelectorAll('text')].map(t => t.textContent).filter(t => /\\d/.test(t));
  return {label: svg.getAttribute('aria-label') || ('chart ' + (i + 1)), width: box.width, height: box.height,
          marks: marks.length, sized: sized.length, numbers: numbers.length};
});
"""


def charts(driver: Any) -> list[dict[str, Any]]:
    """What each inline SVG chart of the loaded page draws (see ``_CHARTS_JS``)."""
    return list(driver.execute_script(_CHARTS_JS))


def chart_problems(driver: Any) -> list[str]:
    """Charts that show nothing: none on the page, one drawn at no size, one without data marks or numbers, or a
    page whose charts all have only zero-size marks (a bar of value 0 is data: its number is shown)."""
    found = charts(driver)
    if not found:
        return ["the page has no chart"]
    problems = []
    for c in found:
        if c["width"] < 10 or c["height"] < 10:
            problems.append(f"{c['label']}: drawn at {c['width']:.0f}x{c['height']:.0f} px")
        elif c["marks"] == 0 or c["numbers"] == 0:
            problems.append(f"{c['label']}: empty ({c['marks']} marks, {c['numbers']} numbers)")
    if not any(c["sized"] for c in found):
        problems.append("no chart draws a mark with a size: every chart is blank")
    return problems

"""What every benchmark shares: the machine line and writing its own section of RESULTS.md."""

from __future__ import annotations

import os
import platform
import re
from datetime import UTC, datetime
from pathlib import Path

from goldset.io import atomic_write_text

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def machine() -> str:
    """'2 CPUs (nproc), <CPU model>, Python 3.11.7; 2026-11-29 21:00 UTC'."""
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return f"{os.cpu_count()} CPUs (nproc), {cpu_model()}, Python {platform.python_version()}; {now}"


def write_section(text: str) -> None:
    """Replace (or append) the section that ``text`` starts with (its ``## heading`` line), leaving the others.

    The file is re-read just before writing: benchmarks run one after another and each touches only its own part.
    """
    heading = text.splitlines()[0]
    current = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else "# Benchmark results\n"
    pattern = re.compile(rf"^{re.escape(heading)}\n.*?(?=^## |\Z)", re.S | re.M)
    block = text.rstrip() + "\n\n"
    if pattern.search(current):
        new = pattern.sub(lambda _: block, current, count=1)
    else:
        new = current.rstrip() + "\n\n" + block
    atomic_write_text(RESULTS, new.rstrip("\n") + "\n")

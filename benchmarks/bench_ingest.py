"""Benchmark: ingest the FastAPI tutorial docs (English and Chinese, 0.141.1) and time `goldset --help`.

Figures: documents, chunks, wall time and chunks/s per KB (median of several runs, cold snapshot folder), the
unchanged re-ingest (diff against the previous snapshot included), chunk-size distribution, and the wall time
of `goldset --help` in a fresh process (target: under 0.3 s).

Run: ``.venv/bin/python benchmarks/bench_ingest.py`` (writes the ``## kb: ingest`` section of RESULTS.md).
"""

from __future__ import annotations

import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from _results import cpu_model, write_section

from goldset.kb import KBSettings, ingest

HERE = Path(__file__).resolve().parent
KB = HERE.parent.parent / "shared" / "kb"
RESULTS = HERE / "RESULTS.md"
SECTION = "## kb: ingest"
FOLDERS = ("fastapi-en-0.141.1", "fastapi-zh-0.141.1")
RUNS = 5


def bench_folder(name: str, settings: KBSettings) -> dict[str, float | int | str]:
    docs = KB / name
    times = []
    result = None
    for _ in range(RUNS):
        out = Path(tempfile.mkdtemp(prefix="bench-ingest-"))
        try:
            t0 = time.perf_counter()
            result = ingest(docs, settings=settings, out_dir=out)
            times.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            again = ingest(docs, settings=settings, out_dir=out)
            reingest = time.perf_counter() - t0
            if again.diff.has_changes or again.snapshot.id != result.snapshot.id:
                sys.exit(f"{name}: re-ingest changed the snapshot")
        finally:
            shutil.rmtree(out)
    assert result is not None
    sizes = sorted(c.n_tokens for c in result.chunks)
    median = statistics.median(times)
    return {
        "name": name,
        "docs": len(result.snapshot.documents),
        "chunks": len(result.chunks),
        "bytes": sum(d.n_bytes for d in result.snapshot.documents),
        "seconds": median,
        "chunks_per_s": len(result.chunks) / median,
        "reingest_s": reingest,
        "tok_median": int(statistics.median(sizes)),
        "tok_p95": sizes[int(0.95 * (len(sizes) - 1))],
        "tok_max": sizes[-1],
        "oversized": sum(1 for c in result.chunks if "oversized" in c.flags),
        "below_min": sum(1 for s in sizes if s < settings.min_tokens),
    }


def bench_help() -> tuple[float, float]:
    exe = Path(sys.executable).with_name("goldset")
    cmd = [str(exe), "--help"] if exe.exists() else [sys.executable, "-m", "goldset", "--help"]
    subprocess.run(cmd, capture_output=True, check=True)  # warm the file cache
    times = []
    for _ in range(9):
        t0 = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), min(times)


def main() -> None:
    import os

    if not KB.is_dir():
        sys.exit(f"{KB}: the shared FastAPI docs are not there")
    settings = KBSettings()
    rows = [bench_folder(name, settings) for name in FOLDERS]
    help_median, help_min = bench_help()
    total_chunks = sum(int(r["chunks"]) for r in rows)
    total_s = sum(float(r["seconds"]) for r in rows)
    lines = [
        SECTION,
        f"Machine: {os.cpu_count()} CPUs (nproc), {cpu_model()}, Python {platform.python_version()}; "
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC; load average {os.getloadavg()[0]:.2f} (the machine is shared: "
        "figures vary with load). Script: `benchmarks/bench_ingest.py`.",
        "",
        f"Settings: target {settings.target_tokens}, max {settings.max_tokens}, min {settings.min_tokens} tokens "
        f"(goldset.text.count_tokens). Wall time is the median of {RUNS} cold ingests into an empty folder (read, "
        "parse, chunk, hash, write chunks.jsonl + snapshot.json); re-ingest = the same KB again, diff included.",
        "",
        "| KB | docs | KiB | chunks | ingest | chunks/s | re-ingest | tokens median / p95 / max | oversized | < min |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['name']} | {r['docs']} | {int(r['bytes']) // 1024} | {r['chunks']} | {float(r['seconds']):.3f} s "
            f"| {float(r['chunks_per_s']):,.0f} | {float(r['reingest_s']):.3f} s | {r['tok_median']} / {r['tok_p95']} "
            f"/ {r['tok_max']} | {r['oversized']} | {r['below_min']} |"
        )
    lines += [
        "",
        f"Both KBs: {total_chunks} chunks in {total_s:.3f} s = {total_chunks / total_s:,.0f} chunks/s.",
        "",
        f"`goldset --help` (fresh process, median of 9): {help_median:.3f} s (best {help_min:.3f} s); "
        f"target < 0.3 s: {'met' if help_median < 0.3 else 'NOT met'}.",
    ]
    text = "\n".join(lines)
    print(text)
    write_section(text)


if __name__ == "__main__":
    main()

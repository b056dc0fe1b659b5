"""Benchmark: scoring a production log of 10,000 samples (`goldset eval --log`) against a 10,000-sample
`goldset eval --run` of the same answers and contexts, side by side in the same session.

The data is bench_eval's big run (10,000 questions × 10 contexts from the real FastAPI docs, ../shared/kb, English
and Chinese; ~190 MB): the golden-set run scores it against its 10,000-pair dataset; the log is the same lines
without ``pair_id``, with the question, a timestamp spread over 7 days, a topic and user feedback on a third of
them. Each command is a fresh ``python -m goldset`` process (bench_eval.run_process: wall, CPU, peak RSS),
alternated (eval, log, log, eval) so the machine's load moves both:

- **eval --run**: the reference, without the judge (``--no-judge``);
- **eval --log**: every line read, redacted, scored (lexical refusals, feedback, system figures), summarised per
  day / language / topic and written, without the judge;
- **eval --log --sample 1000** with the judge (fake OpenAI-compatible server in its own process, no latency,
  deterministic judge responders): the 1,000 lines drawn by day are judged, every call journaled; then the same
  command again: re-scoring must make 0 calls (counted at the server);
- **trend** over the 10,000-sample log run (7 days × every metric × language and topic, intervals, drops).

Run: ``.venv/bin/python benchmarks/bench_logs.py [--no-write]`` (writes the ``## evaluate: production logs``
section of RESULTS.md unless ``--no-write``).
"""

from __future__ import annotations

import json
import os
import random
import statistics
import sys
import tempfile
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from _results import machine, write_section  # noqa: E402
from bench_eval import big_run, run_process  # noqa: E402

from goldset.io import read_jsonl  # noqa: E402
from goldset.schema import QAPair  # noqa: E402
from tests.helpers.fake_openai import FakeOpenAI, start_subprocess  # noqa: E402

SECTION = "## evaluate: production logs"
CODE = HERE.parent
RESPONDERS = {
    "judge_claims": "tests.helpers.judge_responders:claims_responder",
    "judge_coverage": "tests.helpers.judge_responders:coverage_responder",
    "judge_relevance": "tests.helpers.judge_responders:relevance_responder",
}


def make_log(data: Path, run: Path, out: Path) -> int:
    """The run's lines as a production log: question added, pair_id dropped, 7 days, topics, some feedback."""
    rng = random.Random(7)
    questions = {p.id: p.question for p in read_jsonl(data / "pairs.jsonl", QAPair)}
    n = 0
    with run.open(encoding="utf-8") as src, out.open("w", encoding="utf-8") as dst:
        for raw in src:
            row = json.loads(raw)
            pid = row.pop("pair_id")
            row["question"] = questions[pid] + (" mail me at someone@example.com" if n % 50 == 0 else "")
            row["timestamp"] = f"2026-03-{1 + n % 7:02d}T{rng.randrange(24):02d}:{rng.randrange(60):02d}:00Z"
            row["topic"] = ("install", "routing", "security", "testing")[n % 4]
            if n % 3 == 0:
                row["feedback"] = "up" if rng.random() < 0.8 else "down"
            dst.write(json.dumps(row) + "\n")
            n += 1
    return n


def server_calls(base_url: str) -> int:
    with urllib.request.urlopen(base_url.removesuffix("/v1") + "/_fake/stats", timeout=10) as r:
        return int(json.load(r)["calls"])


def main() -> None:
    write = "--no-write" not in sys.argv
    lines = []
    with tempfile.TemporaryDirectory(prefix="goldset-bench-logs-") as tmp_name:
        tmp = Path(tmp_name)
        data, run = big_run(tmp, random.Random(3))
        log = tmp / "traffic.jsonl"
        n = make_log(data, run, log)
        size = log.stat().st_size / 1e6
        rows: dict[str, list[tuple[float, float, float, float]]] = {"eval": [], "log": []}
        for k, kind in enumerate(("eval", "log", "log", "eval")):
            if kind == "eval":
                args = ["eval", "--dataset", str(data), "--run", str(run), "--no-judge", "--out", str(tmp / f"e{k}")]
            else:
                args = ["eval", "--log", str(log), "--no-judge", "--out", str(tmp / f"l{k}")]
            wall, cpu, rss, _pss, load = run_process(CODE, args, tmp)
            rows[kind].append((wall, cpu, rss, load))
            print(kind, f"{wall:.2f} s", f"{rss:.0f} MB", flush=True)

        proc, base_url = start_subprocess(RESPONDERS)
        try:
            os.environ.update(OPENAI_BASE_URL=base_url, OPENAI_API_KEY=FakeOpenAI.DEFAULT_KEY,
                              GOLDSET_MODEL="fake-model", GOLDSET_JUDGE_MODEL="fake-judge")  # fmt: skip
            judged = []
            for k in range(2):
                args = ["eval", "--log", str(log), "--sample", "1000", "--judge", "--out", str(tmp / f"j{k}")]
                before = server_calls(base_url)
                wall, cpu, rss, _pss, load = run_process(CODE, args, tmp)
                judged.append((wall, cpu, rss, load, server_calls(base_url) - before))
                print("judged", judged[-1], flush=True)
        finally:
            proc.terminate()
            proc.wait(10)
        t_wall, t_cpu, t_rss, _pss, t_load = run_process(CODE, ["trend", str(tmp / "l1")], tmp)

    def med(kind: str, i: int) -> float:
        return statistics.median(r[i] for r in rows[kind])

    lines.append(SECTION)
    lines.append(
        f"Machine: {machine()}; load average {os.getloadavg()[0]:.2f} at the end (2 CPUs shared with other "
        "engineers' work). Script: `benchmarks/bench_logs.py`."
    )
    lines.append("")
    lines.append(
        f"bench_eval's big run: {n:,} questions × 10 FastAPI-doc contexts; the log is the same lines without pair_id, "
        f"with question, timestamp (7 days), topic and feedback on a third ({size:.0f} MB). Fresh `python -m goldset` "
        "processes, alternated eval, log, log, eval; wall, CPU (user + sys) and peak RSS (VmHWM) of each."
    )
    lines.append("")
    lines.append("| command | wall | CPU | peak RSS | load (1 min) at its start |")
    lines.append("|---|---|---|---|---|")
    for kind, label in (("eval", "`eval --run` (10,000, --no-judge), the reference"),
                        ("log", "`eval --log` (10,000, --no-judge)")):  # fmt: skip
        for wall, cpu, rss, load in rows[kind]:
            lines.append(f"| {label} | {wall:.2f} s | {cpu:.2f} s | {rss:.0f} MB | {load:.2f} |")
    for k, (wall, cpu, rss, load, calls) in enumerate(judged):
        what = "first" if k == 0 else "again (re-scoring)"
        lines.append(
            f"| `eval --log --sample 1000 --judge`, {what}: {calls:,} calls at the server | {wall:.2f} s | "
            f"{cpu:.2f} s | {rss:.0f} MB | {load:.2f} |"
        )
    lines.append(f"| `trend` over the 10,000-sample log run (7 days) | {t_wall:.2f} s | {t_cpu:.2f} s | "
                 f"{t_rss:.0f} MB | {t_load:.2f} |")  # fmt: skip
    lines.append("")
    lines.append(
        f"- **log / eval** (medians): wall {med('log', 0) / med('eval', 0):.2f}, "
        f"CPU {med('log', 1) / med('eval', 1):.2f}, "
        f"peak RSS {med('log', 2) / med('eval', 2):.2f} (target ≤ 1: within the time and memory of a 10,000-sample "
        "`goldset eval`)."
    )
    lines.append(
        f"- **Judge**: {judged[0][4]:,} calls for 1,000 sampled lines (claims + relevance, no coverage call without a "
        f"reference); re-scoring: {judged[1][4]} calls (every one answered by the journal)."
    )
    text = "\n".join(lines)
    print(text)
    if write:
        write_section(text)


if __name__ == "__main__":
    main()

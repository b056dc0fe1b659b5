"""Benchmark: running and reporting evaluations on the real FastAPI docs (../shared/kb, English + Chinese).

A synthetic golden set is built from goldset's own chunks of the docs (question = words drawn from one sentence of
a chunk, answer and evidence quote = that sentence; 10% unanswerable questions of words from nowhere), then:

- the BM25 baseline: index build, and ``evaluate(target="bm25")`` end to end (ask, score, summarize, write);
- the runner's own overhead: a sync and an async target that return at once, and a local HTTP endpoint;
- ``compare_runs`` (paired bootstrap, 2,000 resamples) over 10,000 samples × 26 metrics;
- the HTML report of a 2,000-question run;
- the whole ``goldset eval --run FILE`` process on a run file of 10,000 questions × 10 contexts (~190 MB): wall
  time and peak RSS of a fresh process (its own ``python -m goldset``), side by side with a reference checkout of
  goldset when one is given (``--reference DIR``: a folder holding an older ``goldset`` package), so the ratio
  holds on a shared machine whose load moves the absolute figures.

  Both must write the same scores, summary and samples (checked); one more run of each is broken down by phase.

Run: ``.venv/bin/python benchmarks/bench_eval.py [--reference DIR] [--only-process] [--boost]`` (writes the
``## evaluate: runs, compare, report`` and ``## evaluate: the whole goldset eval process`` sections).
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import random
import re
import statistics
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from _results import cpu_model, machine, write_section

from goldset.baselines.bm25 import BM25Index, Passage
from goldset.data import write_dataset
from goldset.evaluation.compare import compare_runs
from goldset.evaluation.evaluator import evaluate
from goldset.evaluation.report import write_report
from goldset.evaluation.runs import read_run, write_run
from goldset.kb.chunker import chunk_document
from goldset.schema import Evidence, QAPair, RunMeta, RunSample, RunSummary, SampleScores
from goldset.text import tokenize

HERE = Path(__file__).resolve().parent
KB = HERE.parent.parent / "shared" / "kb"
RESULTS = HERE / "RESULTS.md"
SECTION = "## evaluate: runs, compare, report"
PROCESS_SECTION = "## evaluate: the whole goldset eval process"
BIG_QUESTIONS = 10_000
BIG_CONTEXTS = 10
N_QUESTIONS = 2000
TYPES = ("factual", "reasoning", "procedural", "comparison", "multi_hop")
_SENT = re.compile(r"(?<=[.!?。！？])\s*")


def chunks_of_kb() -> list[Any]:
    chunks = []
    for sub in ("fastapi-en-0.141.1", "fastapi-zh-0.141.1"):
        root = KB / sub
        for path in sorted(root.rglob("*.md")):
            chunks += chunk_document(path.read_text(encoding="utf-8"), f"{sub}/{path.relative_to(root).as_posix()}")
    if not chunks:
        sys.exit(f"no documents under {KB}")
    return chunks


def build_pairs(rng: random.Random, chunks: list[Any], n: int) -> list[QAPair]:
    pairs: list[QAPair] = []
    while len(pairs) < n:
        i = len(pairs)
        if i % 10 == 9:
            words = rng.sample(["quantum", "llama", "ferry", "opera", "glacier", "sonnet", "cobalt", "meadow"], 4)
            pairs.append(
                QAPair(
                    id=f"qa-{i:05d}",
                    question=" ".join(words) + "?",
                    answer="The documentation does not say.",
                    question_type="unanswerable",
                    status="passed",
                )
            )
            continue
        c = rng.choice(chunks)
        sentences = [s.strip() for s in _SENT.split(" ".join(c.text.split())) if len(tokenize(s)) >= 6]
        if not sentences:
            continue
        sentence = rng.choice(sentences)[:300]
        toks = tokenize(sentence)
        q_tokens = rng.sample(toks, min(len(toks), 8))
        joiner = "" if c.language == "zh" else " "
        pairs.append(
            QAPair(
                id=f"qa-{i:05d}",
                question=joiner.join(q_tokens) + "?",
                answer=sentence,
                question_type=TYPES[i % len(TYPES)],
                language=c.language,
                evidence=[Evidence(chunk_id=c.id, doc_id=c.doc_id, quote=sentence)],
                status="passed",
            )
        )
    return pairs


class _Echo(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        raw = json.dumps({"answer": body["question"], "contexts": [body["question"]]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args: Any) -> None:
        pass


class Seconds(float):
    """A timing that remembers the 1-minute load average when its measurement started (the machine is shared)."""

    load: float = 0.0


def timed(fn: Any, repeat: int = 1) -> tuple[Seconds, Any]:
    """(median seconds, with the load average at the start; the last result) of ``fn``."""
    times, out = [], None
    load = os.getloadavg()[0]
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    median = Seconds(statistics.median(times))
    median.load = load
    return median, out


def load_of(figure: float) -> str:
    return f"load {figure.load:.2f}" if isinstance(figure, Seconds) else ""


def synthetic_runs(folder: Path, rng: random.Random, n: int = 10_000, n_metrics: int = 26) -> tuple[Any, Any]:
    names = [f"m{i}" for i in range(n_metrics)]
    runs = []
    for label, shift in (("a", 0.0), ("b", 0.01)):
        scores = [
            SampleScores(
                pair_id=f"q{i:05d}",
                question_type=TYPES[i % 5],
                language="en",
                metrics={m: min(1.0, max(0.0, rng.random() + shift)) for m in names},
            )
            for i in range(n)
        ]
        meta = RunMeta(run_id=label, dataset="synthetic", manifest_hash="h")
        write_run(
            folder / label,
            meta,
            [RunSample(pair_id=s.pair_id) for s in scores],
            scores,
            RunSummary(run_id=label, n_samples=n),
        )
        runs.append(read_run(folder / label))
    return runs[0], runs[1]


def system_windows(text: str, size: int = 1200, offset: int = 350) -> list[tuple[int, str]]:
    """The system under test chunks the documents its own way: ``size``-character windows from ``offset``."""
    starts = [0, *range(offset, len(text), size)]
    return [(a, text[a:b]) for a, b in zip(starts, [*starts[1:], len(text)], strict=True) if b > a]


def big_run(folder: Path, rng: random.Random) -> tuple[Path, Path]:
    """A dataset of 10,000 pairs over the FastAPI docs and a run file answering them with 10 contexts each.

    Quotes are 60-260 characters (20-80 in Chinese) of a goldset chunk, 1-3 per pair, 10% of pairs unanswerable.
    The system's contexts are its own windows of the documents (so they recur, as with any index), with the windows
    overlapping a quote placed at random ranks for 80% of the answerable pairs; every context carries its doc id,
    its own chunk id (not goldset's) and a score.
    """
    docs: dict[str, str] = {}
    chunks = []
    for sub in ("fastapi-en-0.141.1", "fastapi-zh-0.141.1"):
        for path in sorted((KB / sub).rglob("*.md")):
            doc_id = f"{sub}/{path.relative_to(KB / sub).as_posix()}"
            docs[doc_id] = path.read_text(encoding="utf-8")
            chunks += chunk_document(docs[doc_id], doc_id)
    windows = {d: system_windows(t) for d, t in docs.items()}

    def context(doc_id: str, start: int, text: str) -> dict[str, Any]:
        return {"text": text, "doc_id": doc_id, "chunk_id": f"{doc_id}@{start}", "score": round(rng.random(), 4)}

    pool = [(d, a, w) for d, ws in windows.items() for a, w in ws]
    pairs, lines = [], []
    for n in range(BIG_QUESTIONS):
        pid = f"qa-{n:05d}"
        contexts = [context(*rng.choice(pool)) for _ in range(BIG_CONTEXTS)]
        if n % 10 == 9:
            pairs.append(QAPair(id=pid, question=f"question {n}?", answer="The docs do not say.",
                                question_type="unanswerable", status="passed"))  # fmt: skip
            answer = "I don't know." if rng.random() < 0.7 else "It is probably 42."
        else:
            c = rng.choice([c for c in rng.sample(chunks, 20) if len(c.text) > 300] or chunks)
            zh = c.language == "zh"
            evidence, spans = [], []
            for _ in range(rng.randint(1, 3)):
                length = rng.randint(20, 80) if zh else rng.randint(60, 260)
                start = rng.randrange(0, max(1, len(c.text) - length))
                quote = c.text[start : start + length].strip() or c.text[:80]
                evidence.append(Evidence(chunk_id=c.id, doc_id=c.doc_id, quote=quote))
                at = docs[c.doc_id].find(quote)
                if at >= 0:
                    spans.append((at, at + len(quote)))
            pairs.append(QAPair(id=pid, question=f"question {n}?", answer=evidence[0].quote,
                                question_type=TYPES[n % len(TYPES)], language=c.language, evidence=evidence,
                                status="passed"))  # fmt: skip
            answer = evidence[0].quote if rng.random() < 0.5 else evidence[0].quote[:40] + " and more words"
            if rng.random() < 0.8:
                for a, w in windows[c.doc_id]:
                    if any(a < e and s < a + len(w) for s, e in spans):
                        contexts[rng.randrange(BIG_CONTEXTS)] = context(c.doc_id, a, w)
        # Written as most Python systems write JSON (json.dumps: non-ASCII escaped), checked against the schema.
        sample = {"pair_id": pid, "answer": answer, "contexts": contexts,
                  "latency": {"total_ms": rng.lognormvariate(6, 0.5), "ttft_ms": rng.lognormvariate(4, 0.3)},
                  "tokens_in": rng.randint(500, 4000), "tokens_out": rng.randint(20, 400)}  # fmt: skip
        lines.append(json.dumps(RunSample.model_validate(sample).model_dump(mode="json", exclude_none=True)))
    write_dataset(folder / "data", pairs, chunks)
    run = folder / "run.jsonl"
    run.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder / "data", run


def _status_kb(pid: int, key: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _tree_pss_kb(pid: int) -> int:
    """Proportional set size of a process and its children, summed (pages shared after a fork count once)."""
    pids = [pid]
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            pids.append(int(stat.parent.name))
    total = 0
    for p in pids:
        try:
            for line in Path(f"/proc/{p}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total


def _boost() -> None:
    """In the child before exec: its own session, whose autogroup gets nice -15 (Linux, root). With autogroups each
    session gets an equal share of the CPU whatever its number of processes, so on a machine shared with other
    sessions' test suites (load 5-7 on 2 cores) a measured process would get a fraction of a core; boosted, it gets
    the cores as on an idle machine, while the others still run."""
    os.setsid()
    with contextlib.suppress(OSError):
        Path("/proc/self/autogroup").write_text("-15")


def run_process(
    code: Path, args: list[str], cwd: Path, boost: bool = False, memory: bool = True
) -> tuple[float, float, float, float, float]:
    """One fresh ``python -m goldset`` process: (wall s, CPU s (user + sys), peak RSS MB of the goldset process
    (VmHWM, which starts at exec: wait4's ru_maxrss would count the benchmark's own memory, forked before exec),
    peak memory MB of the process and its children together (summed PSS, sampled every 50 ms), load average).
    ``memory`` False: no sampling (it takes CPU and the memory map's lock from the measured process; 0 MB)."""
    import subprocess

    load = os.getloadavg()[0]
    env = {**os.environ, "PYTHONPATH": str(code)}
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "goldset", *args], cwd=cwd, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            preexec_fn=_boost if boost else None)  # fmt: skip
    peak = [0, 0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.05):
            peak[0] = max(peak[0], _tree_pss_kb(proc.pid))
            peak[1] = max(peak[1], _status_kb(proc.pid, "VmHWM"))

    sampler = threading.Thread(target=sample, daemon=True)
    if memory:
        sampler.start()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    done.set()
    if memory:
        sampler.join()
    err = proc.stderr.read().decode() if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"goldset {' '.join(args)} failed with {code}: {err[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, peak[1] / 1024, peak[0] / 1024, load


#: What each function timed by ``bench_eval_phases.py`` does (it times them in this order).
PHASE_NAMES = {
    "resolve_dataset": "read the dataset (pairs, chunks, manifest)",
    "_from_file": "read and check the run file (samples handed to the store)",
    "score_run": "score every sample (matcher, 26 metrics)",
    "summarize": "summary (means by group, system figures)",
    "write_run": "write the run folder (end the compressed samples, scores, summary)",
}


def phase_breakdown(code: Path, args: list[str], cwd: Path, boost: bool) -> dict[str, float]:
    """Seconds of each phase of one ``goldset eval`` process (wall clock, from the process's start): ``start``
    (interpreter, imports, settings until the dataset is read), each of :data:`PHASE_NAMES`, ``between`` (what runs
    between them: dataset hash, pair selection, meta) and ``after`` (tables printed, exit)."""
    import subprocess

    out = cwd / "phases.json"
    env = {**os.environ, "PYTHONPATH": str(code)}
    start = time.perf_counter()
    subprocess.run([sys.executable, str(HERE / "bench_eval_phases.py"), str(out), *args], cwd=cwd, env=env,
                   check=True, stdout=subprocess.DEVNULL, preexec_fn=_boost if boost else None)  # fmt: skip
    wall = time.perf_counter() - start
    marks = json.loads(out.read_text(encoding="utf-8"))
    out.unlink()
    first = marks["resolve_dataset"][0]
    last_start, last_len = marks["write_run"]
    phases = {"start": first - start}
    phases.update({name: marks[name][1] for name in PHASE_NAMES})
    phases["between"] = (last_start + last_len - first) - sum(marks[name][1] for name in PHASE_NAMES)
    phases["after"] = start + wall - (last_start + last_len)
    phases["total"] = wall
    return phases


def _samples_text(folder: Path) -> bytes:
    """The run folder's samples, decompressed (zstd, gzip or plain: whichever the code that wrote it uses)."""
    import gzip

    from goldset.evaluation.run_files import zstd

    for name, read in (("samples.jsonl.zst", zstd().decompress), ("samples.jsonl.gz", gzip.decompress),
                       ("samples.jsonl", bytes)):  # fmt: skip
        if (folder / name).is_file():
            return read((folder / name).read_bytes())
    sys.exit(f"{folder}: no samples file")


def same_results(a: Path, b: Path) -> list[str]:
    """What differs between two run folders of the same run file: scores.jsonl (bytes), summary.json (all but the
    run id), the stored samples (decompressed bytes), meta.json's scoring settings. Empty when nothing does."""
    differ = []
    if (a / "scores.jsonl").read_bytes() != (b / "scores.jsonl").read_bytes():
        differ.append("scores.jsonl")
    summaries = [json.loads((f / "summary.json").read_text(encoding="utf-8")) for f in (a, b)]
    for s in summaries:
        s.pop("run_id")
    if summaries[0] != summaries[1]:
        differ.append("summary.json")
    if _samples_text(a) != _samples_text(b):
        differ.append("stored samples")
    metas = [json.loads((f / "meta.json").read_text(encoding="utf-8"))["metric_config"] for f in (a, b)]
    if metas[0] != metas[1]:
        differ.append("meta.json metric_config")
    return differ


def process_benchmark(tmp: Path, reference: Path | None, label: str = "reference", repeat: int = 3,
                      boost: bool = False) -> str:  # fmt: skip
    """Time the whole ``goldset eval --run`` process, alternating with the reference code when given; check both
    write the same scores, summary and samples; break one run of each down by phase."""
    import shutil

    data, run = big_run(tmp / "big", random.Random(7))
    size_mb = run.stat().st_size / 1e6
    codes = [("this checkout", HERE.parent)] + ([(label, reference)] if reference else [])
    rows: dict[str, list[tuple[float, float, float, float, float]]] = {name: [] for name, _ in codes}
    stored: dict[str, float] = {}
    folder_mb: dict[str, float] = {}
    kept: dict[str, Path] = {}
    for i in range(repeat):  # timed runs, alternating; memory is not sampled in these
        for name, code in codes:
            out = tmp / "big" / f"out-{name.replace(' ', '-')}-{i}"
            args = ["eval", "--dataset", str(data), "--run", str(run), "--out", str(out)]
            rows[name].append(run_process(code, args, tmp, boost, memory=False))
            wall, cpu, _, _, load = rows[name][-1]
            print(f"{name} run {i + 1}: {wall:.2f} s, cpu {cpu:.2f} s, {load=:.2f}")
            shutil.rmtree(out)
    memory: dict[str, tuple[float, float]] = {}
    for name, code in codes:  # one more run each, memory sampled; its folder is kept for the comparison
        out = kept[name] = tmp / "big" / f"out-{name.replace(' ', '-')}"
        args = ["eval", "--dataset", str(data), "--run", str(run), "--out", str(out)]
        _, _, rss, tree, _ = run_process(code, args, tmp, boost, memory=True)
        memory[name] = (rss, tree)
        stored[name] = sum(f.stat().st_size for f in out.iterdir() if f.name.startswith("samples")) / 1e6
        folder_mb[name] = sum(f.stat().st_size for f in out.iterdir()) / 1e6
        print(f"{name}: peak RSS {rss:.0f} MB, all {tree:.0f} MB")
    phases: dict[str, dict[str, float]] = {}
    for name, code in codes:
        out = tmp / "big" / f"phases-{name.replace(' ', '-')}"
        phases[name] = phase_breakdown(code, ["eval", "--dataset", str(data), "--run", str(run), "--out", str(out)],
                                       tmp, boost)  # fmt: skip
        shutil.rmtree(out)
        print(name, {k: round(v, 3) for k, v in phases[name].items()})
    lines = []
    for name, _ in codes:
        walls = [r[0] for r in rows[name]]
        cpus = [r[1] for r in rows[name]]
        rss, tree = memory[name]
        loads = ", ".join(f"{r[4]:.2f}" for r in rows[name])
        lines.append(f"| {name} | {statistics.median(walls):.2f} s ({min(walls):.2f}–{max(walls):.2f}) | "
                     f"{statistics.median(cpus):.2f} s | {rss:.0f} MB | {tree:.0f} MB | {stored[name]:.1f} MB | "
                     f"{folder_mb[name]:.1f} MB | {loads} |")  # fmt: skip
    names = [name for name, _ in codes]
    phase_rows = [("start", "interpreter, imports, CLI, settings, until the dataset is read")]
    phase_rows += list(PHASE_NAMES.items())
    phase_rows += [
        ("between", "between those: dataset hash, pair selection, run meta, collector"),
        ("after", "after the folder is written: tables printed, exit"),
        ("total", "the whole process"),
    ]
    phase_table = "\n".join(
        f"| {fn} | {what} | " + " | ".join(f"{phases[n][fn]:.2f} s" for n in names) + " |" for fn, what in phase_rows
    )
    ratio = check = ""
    if reference:
        pairs = list(zip((r[0] for r in rows["this checkout"]), (r[0] for r in rows[label]), strict=True))
        ratio = (f"\nWall-time ratio this checkout / {label}, run by run (alternating, same load): "
                 f"{', '.join(f'{a / b:.2f}' for a, b in pairs)}.")  # fmt: skip
        differ = same_results(kept["this checkout"], kept[label])
        check = ("\nSame results: " + ("**no**, these differ: " + ", ".join(differ) if differ else
                 "yes: scores.jsonl byte for byte, summary.json (all but the run id), the stored samples "
                 "(decompressed) and the scoring settings in meta.json are identical.") + "\n")  # fmt: skip
        if differ:
            print(check, file=sys.stderr)
    for out in kept.values():
        shutil.rmtree(out)
    boosted = (" Each measured process ran in its own session at autogroup nice -15 (`--boost`: the machine's 2 "
               "cores were shared with other sessions, which then wait while it runs)." if boost else "")  # fmt: skip
    return f"""{PROCESS_SECTION}
Machine: {machine()}. Script: `benchmarks/bench_eval.py` (`process_benchmark`).

`goldset eval --dataset data --run run.jsonl --out DIR` in a fresh process (`python -m goldset`, imports
included), matcher `auto`, default settings: {BIG_QUESTIONS:,} questions × {BIG_CONTEXTS} contexts (the system's own
1,200-character windows of the FastAPI docs, en + zh, with doc ids), run file {size_mb:.0f} MB. {repeat} runs each,
alternating. CPU: user + sys of the process and its children (`wait4`). Memory, from one more run each (not
sampled in the timed ones): peak RSS of the goldset process (`VmHWM`); peak memory of the process and its forked
scorers together, summed PSS (shared pages counted once), sampled every 50 ms. Load: the 1-minute load average
read before each timed run.{boosted} "stored samples": the run
folder's copy of the samples; "run folder": all its files.

| code | wall (median, range) | CPU (median) | peak RSS | peak memory, all | stored samples | run folder | load |
|---|---|---|---|---|---|---|---|
{chr(10).join(lines)}
{ratio}
{check}
Where the time goes (one more run of each, wall clock, the functions timed from outside):

| phase | what | {" | ".join(names)} |
|---|---|{"---|" * len(names)}
{phase_table}
"""


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", type=Path, help="folder holding a reference `goldset` package to compare")
    parser.add_argument("--reference-label", default="reference", help="what the reference is, for the table")
    parser.add_argument("--only-process", action="store_true", help="run only the whole-process benchmark")
    parser.add_argument(
        "--boost",
        action="store_true",
        help="run the measured goldset processes in their own session at autogroup nice -15 (Linux, root): on a "
        "machine shared with other sessions they get the cores as on an idle one",
    )
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each code (whole-process benchmark)")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="goldset-bench-eval-"))
    text = process_benchmark(tmp, args.reference, args.reference_label, repeat=args.repeat, boost=args.boost)
    write_section(text)
    print(text)
    if args.only_process:
        return
    rng = random.Random(20261129)
    chunks = chunks_of_kb()
    pairs = build_pairs(rng, chunks, N_QUESTIONS)
    data = tmp / "data"
    # the dataset's chunks.jsonl keeps only cited chunks; the BM25 index must hold the whole KB to be a fair floor
    write_dataset(data, pairs, chunks)
    (tmp / "kb").mkdir()
    from goldset.io import write_jsonl

    write_jsonl(tmp / "kb" / "chunks.jsonl", chunks)
    os.chdir(tmp)

    t_index, _ = timed(lambda: BM25Index(Passage(c.text, c.doc_id, c.id) for c in chunks), repeat=3)
    t_bm25, bm25_run = timed(lambda: evaluate(data, target="bm25", kb=tmp / "kb", out_dir=tmp / "runs" / "bm25"))
    s = bm25_run.summary
    print(f"bm25: index {t_index:.3f} s, evaluate {t_bm25:.2f} s, recall@5 {s.overall['recall@5']:.3f}")

    def noop(question: str) -> dict[str, Any]:
        return {"answer": question, "contexts": [question]}

    async def anoop(question: str) -> dict[str, Any]:
        return {"answer": question, "contexts": [question]}

    t_sync, _ = timed(lambda: evaluate(data, target=noop, out_dir=tmp / "runs" / "noop"))
    t_async, _ = timed(lambda: evaluate(data, target=anoop, out_dir=tmp / "runs" / "anoop"))
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/ask"
    t_http, http_run = timed(lambda: evaluate(data, endpoint=url, out_dir=tmp / "runs" / "http", concurrency=8))
    server.shutdown()
    print(f"sync {t_sync:.2f} s, async {t_async:.2f} s, http {t_http:.2f} s (failed {http_run.summary.n_failed})")

    # the runner alone: score_run + summarize timed separately so the ask overhead can be read off
    from goldset.evaluation.scoring import score_run, summarize
    from goldset.evaluation.settings import EvalSettings

    stored = read_run(tmp / "runs" / "noop")
    evaluated = [p for p in pairs if p.id in stored.samples]
    t_score, _ = timed(
        lambda: summarize("x", score_run(evaluated, stored.samples, EvalSettings()), stored.samples, EvalSettings())
    )

    a, b = synthetic_runs(tmp / "synthetic", random.Random(5))
    t_cmp, _ = timed(lambda: compare_runs(a, b, n_resamples=2000, seed=0))
    t_cmp_real, _ = timed(lambda: compare_runs(read_run(tmp / "runs" / "noop"), read_run(tmp / "runs" / "bm25")))
    t_report, path = timed(
        lambda: write_report(tmp / "report.html", read_run(tmp / "runs" / "bm25"), read_run(tmp / "runs" / "noop"))
    )
    size_kib = path.stat().st_size / 1024
    print(f"compare 10k×26 {t_cmp:.2f} s, report {t_report:.2f} s ({size_kib:.0f} KiB)")

    n = len(evaluated)
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    machine = f"{os.cpu_count()} CPUs (nproc), {cpu_model()}, Python {platform.python_version()}; {now}"
    quality = f"index build {t_index * 1000:.0f} ms; recall@5 {s.overall['recall@5']:.3f}, mrr {s.overall['mrr']:.3f}"
    rows = [
        ("`--baseline bm25` over the whole KB", t_bm25, quality),
        ("sync callable, returns at once", t_sync, "one daemon thread per question"),
        ("async callable, returns at once", t_async, ""),
        ("HTTP endpoint on 127.0.0.1 (httpx)", t_http, f"{http_run.summary.n_failed} failed; stdlib server"),
    ]
    table = "\n".join(
        f"| {label} | {t:.2f} s ({load_of(t)}) | {n / t:,.0f} | {t_score:.2f} s | {note} |" for label, t, note in rows
    )
    text = f"""{SECTION}
Machine: {machine}. Script: `benchmarks/bench_eval.py`.

Synthetic golden set from goldset's chunks of the FastAPI docs (en + zh, {len(chunks)} chunks): {n} questions of
8 words drawn from one sentence of a chunk (10% unanswerable). Each `evaluate()` is end to end: ask every question
(concurrency 8), score (all per-sample metrics, k = 1, 3, 5, 10), summarize, write `runs/<id>/`. Single runs; the
1-minute load average when each measurement started is given beside it (the machine is shared).

| run source | evaluate() | questions/s | of which scoring | notes |
|---|---|---|---|---|
{table}

`compare_runs` (paired bootstrap, 2,000 resamples; paired permutation tests, 5,200 sign flips, Holm–Bonferroni):
10,000 samples × 26 metrics in {t_cmp:.2f} s ({load_of(t_cmp)}); the two real {n}-question runs above in
{t_cmp_real:.2f} s ({load_of(t_cmp_real)}). HTML report of the bm25 run with the other as baseline (comparison
included): {t_report:.2f} s ({load_of(t_report)}), {size_kib:.0f} KiB, self-contained.
"""
    write_section(text)
    print(text)


if __name__ == "__main__":
    main()

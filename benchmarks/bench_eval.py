"""Benchmark: running and reporting evaluations on the real FastAPI docs (../shared/kb, English + Chinese).

A synthetic golden set is built from goldset's own chunks of the docs (question = words drawn from one sentence of
a chunk, answer and evidence quote = that sentence; 10% unanswerable questions of words from nowhere), then:

- the BM25 baseline: index build, and ``evaluate(target="bm25")`` end to end (ask, score, summarize, write);
- the runner's own overhead: a sync and an async target that return at once, and a local HTTP endpoint;
- ``compare_runs`` (paired bootstrap, 2,000 resamples) over 10,000 samples × 26 metrics;
- the HTML report of a 2,000-question run.

Run: ``.venv/bin/python benchmarks/bench_eval.py`` (writes the ``## evaluate: runs, compare, report`` section).
"""

from __future__ import annotations

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

from _results import cpu_model, write_section

from goldset.baselines.bm25 import BM25Index, Passage
from goldset.dataset import write_dataset
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
    pairs = []
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


def timed(fn: Any, repeat: int = 1) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


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


def main() -> None:
    rng = random.Random(20261129)
    chunks = chunks_of_kb()
    pairs = build_pairs(rng, chunks, N_QUESTIONS)
    tmp = Path(tempfile.mkdtemp(prefix="goldset-bench-eval-"))
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
    table = "\n".join(f"| {label} | {t:.2f} s | {n / t:,.0f} | {t_score:.2f} s | {note} |" for label, t, note in rows)
    text = f"""{SECTION}
Machine: {machine}. Script: `benchmarks/bench_eval.py`.

Synthetic golden set from goldset's chunks of the FastAPI docs (en + zh, {len(chunks)} chunks): {n} questions of
8 words drawn from one sentence of a chunk (10% unanswerable). Each `evaluate()` is end to end: ask every question
(concurrency 8), score (all per-sample metrics, k = 1, 3, 5, 10), summarize, write `runs/<id>/`. Single runs.

| run source | evaluate() | questions/s | of which scoring | notes |
|---|---|---|---|---|
{table}

`compare_runs`, paired bootstrap with 2,000 resamples: 10,000 samples × 26 metrics in {t_cmp:.2f} s; the two real
{n}-question runs above in {t_cmp_real:.2f} s. HTML report of the bm25 run with the other as baseline (bootstrap
included): {t_report:.2f} s, {size_kib:.0f} KiB, self-contained.
"""
    write_section(text)
    print(text)


if __name__ == "__main__":
    main()

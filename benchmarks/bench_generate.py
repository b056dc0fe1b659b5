"""Generation throughput: every chunk of the FastAPI docs against the fake server (200 ms per call, 16 in flight).

Figures: calls/s against the ideal (concurrency / latency = 80 calls/s; target ≥ 90%), LLM calls per candidate
pair (target ≤ 0.5 with 3 pairs per call), peak memory, and the wall time of an unchanged re-run (all cache
hits). The fake server runs in its own process, as a real endpoint would, so its threads do not compete with
the client for the GIL. Results go to the ``## generate`` section of benchmarks/RESULTS.md.

    .venv/bin/python benchmarks/bench_generate.py [--kb PATH] [--latency 0.2] [--concurrency 16]

``--whole-process N`` (issue #18) times whole processes instead, in turn, A B A B: ``goldset generate --all
--limit N --no-cache`` (a fresh journal and pairs file each run) against a bare ``openai`` SDK loop that sends the
same N request bodies (recorded from goldset once) at the same concurrency to the same fake server (its own
process), and prints each one's CPU ms per call (user + sys of the process, from ``wait4``) and wall, and the
wall ratio pair by pair. Results go to the ``## generate: whole process against a bare SDK loop`` section.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path


def sdk_loop(bodies_path: Path, concurrency: int) -> int:
    """The bare openai SDK: the recorded request bodies, ``concurrency`` in flight, each reply's JSON parsed."""
    import asyncio

    from openai import AsyncOpenAI

    bodies = [json.loads(line) for line in bodies_path.read_text(encoding="utf-8").splitlines() if line]

    async def run() -> None:
        client = AsyncOpenAI(max_retries=3)
        sem = asyncio.Semaphore(concurrency)

        async def one(body: dict) -> None:
            async with sem:
                reply = await client.chat.completions.create(**body)
                json.loads(reply.choices[0].message.content or "{}")

        await asyncio.gather(*(one(b) for b in bodies))
        await client.close()

    asyncio.run(run())
    return 0


if __name__ == "__main__" and len(sys.argv) >= 3 and sys.argv[1] == "--sdk-loop":
    # The bare reference imports only the SDK: goldset's own imports would count against it.
    sys.exit(sdk_loop(Path(sys.argv[2]), int(sys.argv[4]) if len(sys.argv) > 4 else 16))

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _results import machine, write_section  # noqa: E402 (benchmarks/ is on sys.path when run)

from goldset.generation.runner import generate  # noqa: E402
from goldset.kb import ingest  # noqa: E402
from goldset.scaffold import init_workspace  # noqa: E402
from goldset.workspace import Workspace  # noqa: E402
from tests.helpers.fake_openai import FakeOpenAI  # noqa: E402

KB = ROOT.parent / "shared" / "kb" / "fastapi-en-0.141.1"
RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
SECTION = "## generate"
WHOLE_SECTION = "## generate: whole process against a bare SDK loop"


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: kilobytes


def start_server(latency: float) -> tuple[subprocess.Popen[str], str]:
    """The fake server in its own process, with a listen backlog of 128 instead of socketserver's 5.

    With 5, the first 16 simultaneous connections overflow the accept queue and some SYNs are retried by the
    kernel a second later, which costs ~1 s of a 4 s run and measures the fake, not goldset (real servers:
    uvicorn 2048, nginx 511).
    """
    code = (
        "import socketserver, sys; socketserver.TCPServer.request_queue_size = 128; "
        "from tests.helpers.fake_openai import main; main(sys.argv[1:])"
    )
    cmd = [sys.executable, "-c", code, "--port", "0", "--latency", str(latency)]
    cmd += ["--responder", "qa_pairs=tests.helpers.responders:qa_responder"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline() if proc.stdout is not None else ""
    if not line.startswith("READY "):
        proc.kill()
        raise RuntimeError("the fake OpenAI server did not start")
    return proc, line.split(" ", 1)[1].strip()


def server_stats(base_url: str) -> dict:
    with urllib.request.urlopen(base_url.removesuffix("/v1") + "/_fake/stats", timeout=10) as resp:
        return json.load(resp)


def steady_rate(arrivals: list[float]) -> float:
    """Calls/s between the 10th and 90th percentile of arrival times: the rate once every worker is busy."""
    arrivals = sorted(arrivals)
    lo, hi = int(0.1 * len(arrivals)), int(0.9 * len(arrivals))
    span = arrivals[hi] - arrivals[lo]
    return (hi - lo) / span if span > 0 else 0.0


def raw_sdk_ceiling(base_url: str, n: int, concurrency: int) -> tuple[float, float]:
    """The bare openai SDK against the same server: (calls/s, slowest round trip). What no client can beat here."""
    import asyncio

    from openai import AsyncOpenAI

    async def run() -> tuple[float, float]:
        client = AsyncOpenAI(api_key=FakeOpenAI.DEFAULT_KEY, base_url=base_url, max_retries=3)
        sem = asyncio.Semaphore(concurrency)
        slowest = 0.0

        async def one(i: int) -> None:
            nonlocal slowest
            async with sem:
                t = time.perf_counter()
                await client.chat.completions.create(model="m", messages=[{"role": "user", "content": f"ping {i}"}])
                slowest = max(slowest, time.perf_counter() - t)

        t0 = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(n)))
        rate = n / (time.perf_counter() - t0)
        await client.close()
        return rate, slowest

    return asyncio.run(run())


def measure(kb_dir: Path, base_url: str, concurrency: int) -> dict:
    """One full measurement in a fresh workspace (ingest, generate, re-runs, bare-SDK reference)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        init_workspace(root, dvc=False)
        ws = Workspace(root.resolve())
        t0 = time.perf_counter()
        kb = ingest(kb_dir, ws)
        ingest_s = time.perf_counter() - t0
        rss_before = peak_rss_mb()

        t0 = time.monotonic()  # the same clock as the server's arrival times (system-wide on Linux)
        cpu0 = time.process_time()
        first = generate(ws, concurrency=concurrency)
        t_end = time.monotonic()
        cpu = time.process_time() - cpu0  # this process only: the server runs in its own
        rss_after = peak_rss_mb()
        arrivals = sorted(a for a in server_stats(base_url)["arrivals"] if a >= t0)

        t1 = time.perf_counter()
        rerun = generate(ws, concurrency=concurrency, all_chunks=True)
        rerun_s = time.perf_counter() - t1
        t1 = time.perf_counter()
        noop = generate(ws, concurrency=concurrency)
        noop_s = time.perf_counter() - t1
    sdk_rate, sdk_slowest = raw_sdk_ceiling(base_url, first.llm.calls, concurrency)
    wall = t_end - t0
    return {
        "n_chunks": len(kb.chunks),
        "ingest_s": ingest_s,
        "report": first,
        "wall": wall,
        "whole": first.llm.calls / wall,
        "to_first_call": arrivals[0] - t0,
        "calls_phase": first.llm.calls / (t_end - arrivals[0]),
        "steady": steady_rate(arrivals),
        "sdk": sdk_rate,
        "sdk_slowest": sdk_slowest,
        "cpu_per_call_ms": 1000 * cpu / max(1, first.llm.calls),
        "rss_before": rss_before,
        "rss_after": rss_after,
        "rerun": rerun,
        "rerun_s": rerun_s,
        "noop": noop,
        "noop_s": noop_s,
    }


def record_bodies(ws_root: Path, n: int, concurrency: int, out: Path) -> None:
    """Run goldset once against an in-process fake and keep the chat request bodies it sent."""
    with FakeOpenAI() as fake:
        from tests.helpers.responders import qa_responder

        fake.add_responder("qa_pairs", qa_responder)
        env = dict(os.environ, OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY=fake.api_key, GOLDSET_MODEL="fake-model")
        cmd = [sys.executable, "-m", "goldset", "generate", "--all", "--limit", str(n), "--no-cache",
               "-j", str(concurrency), "-w", str(ws_root)]
        subprocess.run(cmd, cwd=ROOT, env=dict(env, PYTHONPATH=str(ROOT)), check=True, capture_output=True)
        bodies = [r.body for r in fake.chat_requests()]
    out.write_text("".join(json.dumps(b) + "\n" for b in bodies), encoding="utf-8")


def timed(cmd: list[str], env: dict[str, str], base_url: str | None = None) -> tuple[float, float, float, float]:
    """(wall s, CPU s = user + sys, s to the first request, s from the last request to the exit) of one whole
    process, from the kernel's accounting and, with ``base_url``, the fake server's arrival times (its
    ``time.monotonic``, the same clock as ours): where a process spends what the other does not."""
    seen = len(server_stats(base_url)["arrivals"]) if base_url else 0
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    t1 = time.monotonic()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise RuntimeError(f"{' '.join(cmd)} exited with {proc.returncode}")
    arrivals = server_stats(base_url)["arrivals"][seen:] if base_url else []
    start, tail = (arrivals[0] - t0, t1 - arrivals[-1]) if arrivals else (float("nan"), float("nan"))
    return t1 - t0, usage.ru_utime + usage.ru_stime, start, tail


def whole_process(args: argparse.Namespace) -> int:
    """goldset generate against the bare SDK loop, whole processes in turn, N calls each."""
    n, runs = args.whole_process, max(1, args.repeat)
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        init_workspace(root, dvc=False)
        ingest(args.kb, Workspace(root.resolve()))
        bodies = Path(tmp) / "bodies.jsonl"
        record_bodies(root, n, args.concurrency, bodies)
        server, base_url = start_server(args.latency)
        env = dict(os.environ, OPENAI_BASE_URL=base_url, OPENAI_API_KEY=FakeOpenAI.DEFAULT_KEY,
                   GOLDSET_MODEL="fake-model", PYTHONPATH=str(ROOT))
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # byte-compiled, as installed: else goldset compiles every run
        gs = [sys.executable, "-m", "goldset", "generate", "--all", "--limit", str(n), "--no-cache",
              "-j", str(args.concurrency), "-w", str(root)]
        sdk = [sys.executable, str(Path(__file__).resolve()), "--sdk-loop", str(bodies),
               "--concurrency", str(args.concurrency)]
        rows: list[tuple[float, ...]] = []
        try:
            for i in range(runs + 1):  # the first pair warms the page cache and is not counted
                for stale in (root / ".goldset" / "calls.sqlite", root / "data" / "pairs.jsonl"):
                    stale.unlink(missing_ok=True)
                a_wall, a_cpu, a_start, a_tail = timed(gs, env, base_url)
                b_wall, b_cpu, b_start, b_tail = timed(sdk, env, base_url)
                if i:
                    rows.append((a_wall, a_cpu, b_wall, b_cpu, a_start, b_start, a_tail, b_tail))
        finally:
            server.kill()
            server.wait(timeout=10)

    def med(col: int) -> float:
        return statistics.median(r[col] for r in rows)

    ratios = sorted(r[2] / r[0] for r in rows)  # SDK wall / goldset wall: goldset's throughput against the SDK's
    lines = [
        f"Machine: {machine()}; load average {load:.2f} at the start. Script: `benchmarks/bench_generate.py "
        f"--whole-process {n}`.",
        "",
        f"{n} calls, fake server in its own process, {args.latency * 1000:.0f} ms per call, concurrency "
        f"{args.concurrency}; whole processes in turn, A B A B, {len(rows)} pairs after one warm-up pair; medians.",
        "",
        "| figure | goldset generate | bare openai SDK loop |",
        "|---|---|---|",
        f"| wall | {med(0):.2f} s | {med(2):.2f} s |",
        f"| CPU per call (user + sys of the process / {n}) | {1000 * med(1) / n:.2f} ms | {1000 * med(3) / n:.2f} ms |",
        f"| from the start of the process to the first request (imports, settings, KB, plans) | {med(4):.2f} s | "
        f"{med(5):.2f} s |",
        f"| from the last request to the end of the process (its {args.latency * 1000:.0f} ms, the writes, the "
        f"summary, the interpreter's shutdown) | {med(6):.2f} s | {med(7):.2f} s |",
        f"| throughput against the SDK loop (SDK wall / goldset wall, pair by pair) | {statistics.median(ratios):.2f} "
        f"({ratios[0]:.2f}–{ratios[-1]:.2f}) | 1 |",
    ]
    body = "\n".join(lines)
    print(body)
    if not args.no_write:
        write_section(f"{WHOLE_SECTION}\n{body}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb", type=Path, default=KB)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=3, help="Runs to take the median of (the machine is shared).")
    parser.add_argument("--no-write", action="store_true", help="Print only; leave RESULTS.md alone.")
    parser.add_argument("--whole-process", type=int, metavar="N", help="goldset generate vs a bare SDK loop, N calls.")
    parser.add_argument("--sdk-loop", type=Path, metavar="BODIES", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.sdk_loop:
        return sdk_loop(args.sdk_loop, args.concurrency)
    if not args.kb.is_dir():
        print(f"{args.kb}: knowledge base not found", file=sys.stderr)
        return 1
    if args.whole_process:
        return whole_process(args)

    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    import openai  # noqa: F401  (once per process, cold; measured apart so every run below is comparable)

    openai_import_s = time.perf_counter() - t0
    server, base_url = start_server(args.latency)
    try:
        os.environ.update(OPENAI_BASE_URL=base_url, OPENAI_API_KEY=FakeOpenAI.DEFAULT_KEY, GOLDSET_MODEL="fake-model")
        runs = [measure(args.kb, base_url, args.concurrency) for _ in range(max(1, args.repeat))]
    finally:
        server.kill()
        server.wait(timeout=10)

    ideal = args.concurrency / args.latency

    def med(key: str) -> float:
        return statistics.median(r[key] for r in runs)

    def rate(key: str) -> str:
        lo, hi = min(r[key] for r in runs), max(r[key] for r in runs)
        return f"{med(key):.1f} ({med(key) / ideal:.0%}; runs {lo:.1f}–{hi:.1f})"

    first = runs[0]["report"]
    pairs = first.pairs_kept + first.pairs_rejected
    calls_per_pair = first.llm.calls / first.pairs_kept if first.pairs_kept else float("inf")
    lines = [
        f"Machine: {machine()}; load average {load:.2f} at the start (the machine is shared: figures vary with "
        "load). Script: `benchmarks/bench_generate.py`.",
        "",
        f"KB `{args.kb.name}`: {runs[0]['n_chunks']} chunks (ingest {runs[0]['ingest_s']:.1f} s), {first.chunks} "
        f"asked about ({first.skipped_small} under generate.min_tokens); fake server in its own process (listen "
        f"backlog 128), {args.latency * 1000:.0f} ms per call, concurrency {args.concurrency}, 3 pairs per call. "
        f"Median of {len(runs)} runs, each in a fresh workspace with an empty call journal; ideal = "
        f"concurrency / latency = {ideal:.0f} calls/s.",
        "",
        "| figure | value | target |",
        "|---|---|---|",
        f"| calls/s, whole run (incl. {med('to_first_call'):.2f} s to the first call: settings, KB, journal, "
        "SDK client; chunks are planned as the run reaches them) "
        f"| {rate('whole')} | ≥ 90% |",
        f"| calls/s, first call sent → run returned (incl. validation and writes) | {rate('calls_phase')} | ≥ 90% |",
        f"| calls/s, steady state (10th–90th percentile of server arrivals) | {rate('steady')} | |",
        f"| reference: bare openai SDK, same server, calls and concurrency | {rate('sdk')} | |",
        f"| calls per run (wall {med('wall'):.2f} s) | {first.llm.calls} ({first.llm.requests} requests, "
        f"{first.llm.failures} failed) | |",
        f"| CPU time of the process per call (LLM client + SDK + generation's own work, whole run incl. start) "
        f"| {med('cpu_per_call_ms'):.2f} ms | |",
        f"| pairs | {pairs} ({first.pairs_kept} kept, {first.pairs_rejected} rejected) | |",
        f"| LLM calls per kept candidate pair | {calls_per_pair:.2f} | ≤ 0.5 |",
        f"| peak RSS of the process (after ingest → after generation, first run) | {runs[0]['rss_before']:.0f} MB → "
        f"{runs[0]['rss_after']:.0f} MB | |",
        f"| unchanged re-run, `--all` ({runs[0]['rerun'].llm.cache_hits} cache hits, "
        f"{runs[0]['rerun'].llm.calls} calls) "
        f"| {med('rerun_s'):.2f} s | |",
        f"| unchanged re-run, default selection ({runs[0]['noop'].chunks} chunks to do) | {med('noop_s'):.2f} s | |",
        f"| not in the figures above: `import openai`, once per process (cold) | {openai_import_s:.2f} s | |",
    ]
    body = "\n".join(lines)
    print(body)
    if not args.no_write:
        write_section(f"{SECTION}\n{body}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: the LLM judge of `goldset eval` on 1,000 samples: calls per sample, and throughput against a bare
``openai`` SDK loop sending the same requests to the same server in the same run.

The fake OpenAI-compatible server (tests/helpers/fake_openai.py) runs in its own process with 200 ms latency per
request and the deterministic judge responders (tests/helpers/judge_responders.py), which read the question,
answer, reference and contexts from each prompt as a model would. Samples are built from the real FastAPI docs
(../shared/kb, falling back to synthetic text of the same size): each question retrieved 5 chunks (its own first),
the answer restates two sentences of its chunk (a quarter of them add a claim no context holds); 10% of the pairs are
unanswerable.

Two clients, both at concurrency 16, alternate (bare, goldset, goldset, bare) so the machine's load moves both:

- **goldset**: :func:`goldset.evaluation.judge.runner.judge_run` (LLMClient, a fresh SQLite call journal, pydantic
  validation of every reply, tallies and metrics): the judge stage of ``goldset eval`` as it runs;
- **bare**: ``AsyncOpenAI().chat.completions.create(**body)`` under an ``asyncio.Semaphore(16)`` with the very
  request bodies goldset sends (same messages, same json_schema response format), ``json.loads`` of each reply.

Then the same judging again on the filled journal (re-scoring: no request may reach the server). Calls per sample
are counted at the server (its ``/_fake/stats``) and per sample by the judge.

Run: ``.venv/bin/python benchmarks/bench_judge.py [--samples N] [--no-write]`` (writes the ``## evaluate: LLM
judge`` section of RESULTS.md unless ``--no-write``).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from _results import machine, write_section  # noqa: E402

from goldset.evaluation.judge.calls import PROMPT_IDS, SCHEMAS, calls_for, make_item, render  # noqa: E402
from goldset.evaluation.judge.runner import JudgePlan, judge_run  # noqa: E402
from goldset.evaluation.judge.settings import JudgeSettings  # noqa: E402
from goldset.llm import resolve_endpoint  # noqa: E402
from goldset.llm.transport import chat_body  # noqa: E402
from goldset.prompts import load_prompt  # noqa: E402
from goldset.schema import QAPair, QuestionType, RetrievedContext, RunSample, SampleScores  # noqa: E402
from tests.helpers.fake_openai import FakeOpenAI, start_subprocess  # noqa: E402

KB = HERE.parent.parent / "shared" / "kb" / "fastapi-en-0.141.1"
SECTION = "## evaluate: LLM judge"
LATENCY_S = 0.2
CONCURRENCY = 16
K = 5
RESPONDERS = {
    "judge_claims": "tests.helpers.judge_responders:claims_responder",
    "judge_coverage": "tests.helpers.judge_responders:coverage_responder",
    "judge_relevance": "tests.helpers.judge_responders:relevance_responder",
}


def load_chunks(n: int) -> list[str]:
    texts: list[str] = []
    for path in sorted(KB.rglob("*.md")) if KB.is_dir() else []:
        body = path.read_text(encoding="utf-8")
        texts.extend(body[i : i + 1200] for i in range(0, len(body), 1200) if len(body[i : i + 1200]) > 400)
    if not texts:  # no shared KB here: synthetic text of the same size
        rng = random.Random(0)
        words = ["path", "operation", "dependency", "request", "response", "model", "schema", "query", "header"]
        texts = [". ".join(" ".join(rng.choice(words) for _ in range(12)) for _ in range(14)) for _ in range(n)]
    return [texts[i % len(texts)] for i in range(n)]


def build(n: int) -> tuple[list[QAPair], dict[str, RunSample], list[SampleScores]]:
    rng = random.Random(12)
    chunks = load_chunks(n)
    pairs, samples, scores = [], {}, []
    for i in range(n):
        sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", chunks[i]) if len(s.strip()) > 30] or [chunks[i]]
        unanswerable = i % 10 == 9
        qtype = QuestionType.unanswerable if unanswerable else QuestionType.factual
        words = sentences[0].split()[:10]
        question = f"What does the documentation say about {' '.join(words)}? (#{i})"
        reference = "" if unanswerable else " ".join(sentences[:2])
        answer = "The documentation does not say." if unanswerable else " ".join(sentences[:2][::-1])
        if i % 4 == 0 and not unanswerable:  # a quarter of the answers add a claim no context holds
            answer += " It also needs the quokka plugin, version 9."
        others = rng.sample(range(n), K - 1)
        contexts = [chunks[i], *(chunks[j] for j in others)]
        pid = f"qa-{i:05d}"
        pairs.append(QAPair.model_construct(id=pid, question=question, answer=reference, question_type=qtype))
        samples[pid] = RunSample(pair_id=pid, answer=answer, contexts=[RetrievedContext(text=t) for t in contexts])
        scores.append(SampleScores(pair_id=pid, question_type=qtype.value, language="en"))
    return pairs, samples, scores


def server_calls(base_url: str) -> int:
    with urllib.request.urlopen(base_url.removesuffix("/v1") + "/_fake/stats", timeout=10) as r:
        return int(json.load(r)["calls"])


def run_goldset(plan: JudgePlan, pairs: list[QAPair], samples: dict[str, RunSample]) -> dict[str, Any]:
    scores = [SampleScores(pair_id=p.id, question_type=p.question_type.value, language="en") for p in pairs]
    t = time.perf_counter()
    cpu = time.process_time()
    outcome = judge_run(plan, pairs, samples, scores)
    wall = time.perf_counter() - t
    per_sample = [s.judge.calls for s in scores if s.judge is not None]
    return {
        "wall": wall,
        "cpu_ms_per_call": 1000 * (time.process_time() - cpu) / max(1, outcome.info.calls["calls"]),
        "calls": outcome.info.calls,
        "per_sample": per_sample,
        "failed": outcome.failed,
        "faithfulness": statistics.fmean(v for s in scores if (v := s.metrics.get("faithfulness")) is not None),
    }


def bodies_for(plan: JudgePlan, pairs: list[QAPair], samples: dict[str, RunSample]) -> list[dict[str, Any]]:
    """The request bodies goldset sends for these samples (json_schema mode)."""
    params = plan.call_params()
    out = []
    for p in pairs:
        item = make_item(p, samples[p.id], plan.settings)
        for kind in calls_for(item, plan.settings.calls):
            schema, name = SCHEMAS[kind]
            messages = render(kind, item, plan.prompts[kind], plan.settings, plan.n_questions)
            out.append(chat_body(plan.endpoint.model, messages, "json_schema", schema, name, params))
    return out


def run_bare(bodies: list[dict[str, Any]], base_url: str, api_key: str) -> dict[str, Any]:
    async def go() -> int:
        from openai import AsyncOpenAI

        client = AsyncOpenAI(base_url=base_url, api_key=api_key, max_retries=0)
        sem = asyncio.Semaphore(CONCURRENCY)
        ok = 0

        async def one(body: dict[str, Any]) -> None:
            nonlocal ok
            async with sem:
                reply = await client.chat.completions.create(**body)
                json.loads(reply.choices[0].message.content or "null")
                ok += 1

        try:
            await asyncio.gather(*(one(b) for b in bodies))
        finally:
            await client.close()
        return ok

    t = time.perf_counter()
    cpu = time.process_time()
    ok = asyncio.run(go())
    wall = time.perf_counter() - t
    return {"wall": wall, "ok": ok, "cpu_ms_per_call": 1000 * (time.process_time() - cpu) / max(1, len(bodies))}


def main() -> None:
    args = sys.argv[1:]
    n = int(args[args.index("--samples") + 1]) if "--samples" in args else 1000
    write = "--no-write" not in args
    pairs, samples, _ = build(n)
    load_start = os.getloadavg()
    proc, base_url = start_subprocess(RESPONDERS, latency_s=LATENCY_S)
    rows: list[dict[str, Any]] = []
    try:
        os.environ.update(
            OPENAI_BASE_URL=base_url, OPENAI_API_KEY=FakeOpenAI.DEFAULT_KEY, GOLDSET_MODEL="fake-model",
            GOLDSET_JUDGE_MODEL="fake-judge",
        )  # fmt: skip
        os.environ.pop("GOLDSET_EMBEDDING_MODEL", None)
        endpoint = resolve_endpoint(None, "judge", overrides={"concurrency": CONCURRENCY})
        settings = JudgeSettings()
        prompts = {call: load_prompt(PROMPT_IDS[call]) for call in settings.calls}
        with tempfile.TemporaryDirectory() as tmp:

            def plan(name: str) -> JudgePlan:
                return JudgePlan(settings, endpoint, prompts, False, Path(tmp) / f"{name}.sqlite")

            bodies = bodies_for(plan("x"), pairs, samples)
            # warm-up: imports, connection pools, the server's threads
            run_goldset(plan("warm"), pairs[:40], samples)
            run_bare(bodies[:40], base_url, FakeOpenAI.DEFAULT_KEY)
            for i, which in enumerate(("bare", "goldset", "goldset", "bare")):
                before = server_calls(base_url)
                load = os.getloadavg()[0]
                if which == "bare":
                    res = run_bare(bodies, base_url, FakeOpenAI.DEFAULT_KEY)
                else:
                    res = run_goldset(plan(f"run{i}"), pairs, samples)
                res.update(which=which, server=server_calls(base_url) - before, load=load)
                rows.append(res)
                print(f"{which}: {res['wall']:.1f} s, {res['server']} requests, load {load:.2f}", flush=True)
            before = server_calls(base_url)
            rescore = run_goldset(plan("run1"), pairs, samples)  # the journal of the first goldset run
            rescore["server"] = server_calls(base_url) - before
    finally:
        proc.kill()
        proc.wait()
    load_end = os.getloadavg()

    ours = [r for r in rows if r["which"] == "goldset"]
    bare = [r for r in rows if r["which"] == "bare"]
    n_calls = ours[0]["server"]
    ideal = n_calls * LATENCY_S / CONCURRENCY
    ratio = statistics.fmean(r["wall"] for r in bare) / statistics.fmean(r["wall"] for r in ours)
    per_sample = ours[0]["per_sample"]
    answerable = [c for p, c in zip(pairs, per_sample, strict=True) if p.question_type != QuestionType.unanswerable]
    unans = [c for p, c in zip(pairs, per_sample, strict=True) if p.question_type == QuestionType.unanswerable]
    print(f"throughput goldset / bare = {ratio:.3f}; calls per sample {n_calls / n:.2f}", flush=True)

    lines = [
        SECTION,
        f"Machine: {machine()}; load average {load_start[0]:.2f} / {load_start[1]:.2f} / {load_start[2]:.2f} at the "
        f"start, {load_end[0]:.2f} at the end (2 CPUs shared with other engineers' work). Script: "
        "`benchmarks/bench_judge.py`.",
        "",
        f"{n:,} samples ({len(answerable)} answerable, {len(unans)} unanswerable), {K} retrieved FastAPI-doc contexts "
        f"each (~1,200 characters), judged with the default settings (calls claims, coverage, relevance). Fake "
        f"OpenAI-compatible server in its own process, {LATENCY_S * 1000:.0f} ms per request, deterministic judge "
        f"responders; both clients at concurrency {CONCURRENCY}, run alternately (bare, goldset, goldset, bare); the "
        "bare loop sends the very request bodies goldset sends. Ideal wall time at this latency and concurrency: "
        f"{n_calls:,} × {LATENCY_S} s / {CONCURRENCY} = {ideal:.1f} s.",
        "",
        "| run | wall | requests at the server | throughput | client CPU per call | load (1 min) at its start |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        name = "goldset judge_run (LLMClient, journal, validation, metrics)" if r["which"] == "goldset" else (
            "bare `openai` SDK loop (create + json.loads)"
        )
        lines.append(
            f"| {name} | {r['wall']:.1f} s | {r['server']:,} | {r['server'] / r['wall']:.1f} calls/s = "
            f"{n / r['wall']:.1f} samples/s | {r['cpu_ms_per_call']:.2f} ms | {r['load']:.2f} |"
        )
    lines += [
        f"| re-scoring (the first goldset run's journal) | {rescore['wall']:.2f} s | {rescore['server']} | "
        f"{n / rescore['wall']:,.0f} samples/s (all journal hits) | – | – |",
        "",
        f"- **Calls per sample**: {n_calls / n:.2f} on average, counted at the server ({n_calls:,} requests for {n:,} "
        f"samples; every request a first attempt: {ours[0]['calls']['retries']} retries, "
        f"{ours[0]['calls']['repairs']} repairs); per sample, as the judge counts them: answerable "
        f"{min(answerable)}–{max(answerable)}, unanswerable {min(unans)}–{max(unans)}; at most "
        f"{max(per_sample)} (target ≤ 3).",
        f"- **Throughput**: goldset / bare = {ratio:.3f} (mean wall of the two bare runs over the mean of the two "
        "goldset runs; target ≥ 0.90). Both are bound by the server's latency; goldset's extra work per call "
        "(journal commit, validation, tallies) runs while other calls wait.",
        f"- Judge failures: {sum(ours[0]['failed'].values())}; mean faithfulness {ours[0]['faithfulness']:.3f} "
        "(the responders' rule on these answers, a sanity check that the replies were read).",
        "",
        "**Calls per sample against the documented designs of other RAG evaluation tools** (their LLM calls for the "
        f"metrics closest to goldset's set, at k = {K} retrieved contexts, read from their documentation; embeddings "
        "not counted):",
        "",
        "| tool | metrics | LLM calls per sample |",
        "|---|---|---|",
        "| goldset | faithfulness, hallucination, contradiction, context_utilization, reference_contradiction; "
        "completeness (key points, ambiguity); answer_relevancy; context_relevance per context; judged refusals "
        "| 3 (2 for unanswerable pairs) |",
        "| RAGAS | Faithfulness (1 call breaks the response into statements, 1 judges them against the context); "
        "Response Relevancy (an LLM generates 3 artificial questions from the response by default, `strictness`); "
        "LLM Context Precision (the LLM judges each retrieved context: k calls); LLM Context Recall (the reference "
        "broken into claims, each attributed to the contexts: 1) | 2 + 1–3 + 5 + 1 = 9–11 |",
        "| DeepEval | Faithfulness (claims from the output, truths from the retrieval context, verdicts; + a reason "
        "call with `include_reason`, on by default); Answer Relevancy (statements, verdicts, + reason); "
        "Contextual Precision (verdicts per node, + reason); Contextual Recall (statements of the expected output, "
        "attribution verdicts, + reason) | 3–4 + 2–3 + 1–2 + 2–3 = 8–12 |",
        "",
        "Sources: RAGAS docs, docs.ragas.io/en/stable/concepts/metrics/available_metrics/ (`faithfulness/`, "
        "`answer_relevance/`, `context_precision/`, `context_recall/`); DeepEval docs, "
        "deepeval.com/docs/metrics-faithfulness, /metrics-answer-relevancy, /metrics-contextual-precision, "
        "/metrics-contextual-recall (\"How Is It Calculated?\"), with the reason call and the truths extraction "
        "of faithfulness read from deepeval/metrics/faithfulness/faithfulness.py. Where a documented step may be "
        "batched differently in a given release, the range says so. goldset asks for claims and their verdicts in "
        "one reply, and for answer relevancy, each context's relevance and the refusal stance in another.",
    ]
    text = "\n".join(lines)
    print(text)
    if write:
        write_section(text)


if __name__ == "__main__":
    main()

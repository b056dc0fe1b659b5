"""Versioning: refresh after a real documentation update, release of a large golden set, loading a version.

1. **Refresh** from the FastAPI tutorial at 0.120.0 to 0.141.1 (``../shared/kb``; 47 pages changed, 3 added): a
   workspace generates and filters pairs for every chunk of 0.120.0 against the fake LLM server (a lenient judge:
   calls are measured, not judging), a reviewer accepts every pair with evidence, then ``goldset refresh`` runs on
   0.141.1: pairs whose quotes are gone are retired and regenerated, the others re-judged and kept. Figures:
   generation calls of the refresh as a share of a full regeneration of 0.141.1 (target: the share of new and
   changed chunks, which is what the refresh asks about), judge calls, pairs retired / re-checked / new, wall time;
   then an unchanged refresh (target: 0 calls).
2. **Release** of 5,000 pairs over the full KB (English and Chinese tutorial, 0.141.1): ``goldset release`` as a
   user runs it (a fresh process: imports, dvc add, push to a local remote, commit, tag), target ≤ 5 s; then a
   second release after 50 pairs changed.
3. **Load** ``goldset.load(version)`` in a fresh process, target ≤ 1.5 s: from the workspace (objects in the local
   DVC cache), from a ``git clone`` with an empty cache (objects from the local remote folder), and the same clone
   through ``dvc.api`` (what S3/ssh/http remotes take; reported, no target). Median of 3 runs each.

Run: ``.venv/bin/python benchmarks/bench_versioning.py [--write]`` (``--write`` replaces the ``## versioning``
section of RESULTS.md). Load average is recorded beside the timings (2 cores shared with other work).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _results import machine, write_section  # noqa: E402

from goldset.filters import run_filters  # noqa: E402
from goldset.generation.runner import generate  # noqa: E402
from goldset.io import read_jsonl, write_jsonl  # noqa: E402
from goldset.kb import ingest, load_chunks  # noqa: E402
from goldset.scaffold import init_workspace  # noqa: E402
from goldset.schema import Evidence, PairStatus, Provenance, QAPair, QuestionType, pair_id  # noqa: E402
from goldset.versioning.refresh import refresh  # noqa: E402
from goldset.workspace import Workspace  # noqa: E402
from tests.helpers.duplicate_responders import make_duplicate_responder  # noqa: E402
from tests.helpers.fake_openai import FakeOpenAI, schema_name_of  # noqa: E402
from tests.helpers.responders import qa_responder, sentences  # noqa: E402

SHARED = ROOT.parent / "shared" / "kb"
OLD, NEW, ZH = SHARED / "fastapi-en-0.120.0", SHARED / "fastapi-en-0.141.1", SHARED / "fastapi-zh-0.141.1"
SECTION = "## versioning"
GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@goldset.invalid",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@goldset.invalid"}  # fmt: skip


def load_avg() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def env() -> dict[str, str]:
    return {**os.environ, **GIT_ENV, "PYTHONPATH": str(ROOT)}


def run(cmd: list[str], cwd: Path, extra: dict[str, str] | None = None) -> tuple[float, str]:
    t = time.perf_counter()
    res = subprocess.run(cmd, cwd=cwd, env={**env(), **(extra or {})}, capture_output=True, text=True, check=False)
    took = time.perf_counter() - t
    if res.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {res.stderr.strip()[-500:]}")
    return took, res.stdout


# ------------------------------------------------------------------------------------------------ 1. refresh


def lenient_judge(body: dict) -> dict:
    """A judge that finds every answer supported: the benchmark counts calls; whether a pair survives a documentation
    change then depends on its quotes alone (the fake model's template answers would fail a strict judge)."""
    return {"supported": True, "answerable": False, "unsupported_claims": [], "reason": "supported"}


def bench_refresh(tmp: Path) -> dict:
    os.environ.update(GIT_ENV)
    with FakeOpenAI() as fake:
        os.environ.update({"OPENAI_BASE_URL": fake.base_url, "OPENAI_API_KEY": fake.api_key,
                           "GOLDSET_MODEL": "fake-model", "GOLDSET_JUDGE_MODEL": "fake-judge"})  # fmt: skip
        fake.add_responder("qa_pairs", qa_responder)
        fake.add_responder("groundedness", lenient_judge)
        fake.add_responder("duplicate_judge", make_duplicate_responder(lambda a, b: False))  # counted with the judge
        docs = tmp / "docs"
        shutil.copytree(OLD, docs)
        root = tmp / "refresh-ws"
        init_workspace(root, dvc=False)
        ws = Workspace(root)
        ingest(docs, ws)
        first = generate(ws)
        run_filters(ws)
        full_v1 = {"generation": first.llm.calls, "judge": fake.calls - first.llm.calls}
        pairs = read_jsonl(ws.pairs_path, QAPair)
        write_jsonl(ws.pairs_path, [p.model_copy(update={"status": PairStatus.accepted}) if p.evidence else p
                                    for p in pairs])  # fmt: skip
        shutil.rmtree(docs)
        shutil.copytree(NEW, docs)
        dry = refresh(docs, ws, dry_run=True)
        calls_before = fake.calls
        requests_before = len(fake.chat_requests())
        t = time.perf_counter()
        report = refresh(docs, ws)
        refresh_s = time.perf_counter() - t
        sent = fake.chat_requests()[requests_before:]
        # a full regeneration of 0.141.1: every chunk the generator would ask about (no journal)
        full_v2 = generate(ws, all_chunks=True, no_cache=True, dry_run=True).estimate
        assert full_v2 is not None
        plan = report.plan
        counts = plan.diff.counts()["chunks"]
        eligible_changed = dry.plan.estimate.chunks if dry.plan.estimate else 0
        t = time.perf_counter()
        again = refresh(docs, ws)
        again_s = time.perf_counter() - t
        return {
            "chunks_new_kb": sum(counts[k] for k in ("added", "changed", "unchanged")),
            "chunks": counts,
            "docs": plan.diff.counts()["documents"],
            "eligible_full": full_v2.chunks,
            "eligible_changed": eligible_changed,
            "generation_calls": report.generation_calls,
            "estimated_calls": dry.plan.estimate.calls if dry.plan.estimate else 0,
            "full_generation_calls": full_v2.calls,
            "judge_refresh": report.judge_calls,
            "judge_filters": report.filter_calls,
            "full_v1": full_v1,
            "sent": len(sent),
            "sent_generation": sum(1 for r in sent if schema_name_of(r.body) == "qa_pairs"),
            "calls_total": fake.calls - calls_before,
            "retired": len(report.retired),
            "kept": len(report.kept),
            "replaced": len(report.replaced),
            "new_pairs": len(report.new_pairs),
            "pairs_before": len(pairs),
            "accepted_before": sum(1 for p in pairs if p.evidence),
            "refresh_s": refresh_s,
            "again_calls": again.calls,
            "again_s": again_s,
            "load": load_avg(),
        }


# ------------------------------------------------------------------------------------------------ 2. release


def synthetic_pairs(chunks, n: int, seed: int = 0) -> list[QAPair]:
    rng = random.Random(seed)
    usable = [c for c in chunks if any(len(s) > 30 for s in sentences(c.text))]
    out: list[QAPair] = []
    for i in range(n):
        c = usable[i % len(usable)]
        quote = rng.choice([s for s in sentences(c.text) if len(s) > 30])
        question = f"Question {i} about {c.doc_title}: what does it say about {quote[:30]}?"
        status = PairStatus.accepted if i % 3 else PairStatus.passed
        out.append(QAPair(
            id=pair_id([c.id], "factual", question), question=question, answer=f"It says: {quote}",
            question_type=QuestionType.factual, language=c.language,
            evidence=[Evidence(chunk_id=c.id, doc_id=c.doc_id, quote=quote)],
            provenance=Provenance(source="import", chunk_hashes={c.id: c.content_hash}), status=status,
        ))  # fmt: skip
    return out


def bench_release_and_load(tmp: Path, n_pairs: int) -> dict:
    root = tmp / "release-ws"
    init_workspace(root)
    subprocess.run([sys.executable, "-m", "dvc", "remote", "add", "-f", "-d", "shared", str(tmp / "remote")],
                   cwd=root, check=True, capture_output=True)  # fmt: skip
    docs = tmp / "full-kb"
    shutil.copytree(NEW, docs / "en")
    shutil.copytree(ZH, docs / "zh")
    ws = Workspace(root)
    ingest(docs, ws)
    chunks = load_chunks(ws)
    pairs = synthetic_pairs(chunks, n_pairs)
    write_jsonl(ws.pairs_path, pairs)
    goldset = [sys.executable, "-m", "goldset"]
    first_s, _ = run([*goldset, "release", "1.0.0", "-m", "bench", "-w", str(root)], root)
    changed = [p.model_copy(update={"answer": p.answer + " (edited)"}) if i < 50 else p for i, p in enumerate(pairs)]
    write_jsonl(ws.pairs_path, changed)
    second_s, _ = run([*goldset, "release", "--bump", "minor", "-m", "bench 2", "-w", str(root)], root)

    code = ("import sys, time; t = time.perf_counter(); import goldset; "
            "df = goldset.load(sys.argv[1], repo=sys.argv[2]); print(len(df), time.perf_counter() - t)")  # fmt: skip
    code_dvc = ("import sys, time; t = time.perf_counter(); import goldset, pandas; "
                "from goldset.versioning import resolve_dataset_version as r; from goldset.io import read_jsonl; "
                "from goldset.schema import QAPair; f = r(sys.argv[1], repo=sys.argv[2], use_dvc=True); "
                "df = pandas.DataFrame([p.model_dump() for p in read_jsonl(f / 'pairs.jsonl', QAPair)]); "
                "print(len(df), time.perf_counter() - t)")  # fmt: skip

    def timed(snippet: str, repo: Path, fresh_cache: bool) -> tuple[float, float, int]:
        walls, inner = [], []
        rows = 0
        for i in range(3):
            cache = tmp / f"cache-{time.monotonic_ns()}-{i}" if fresh_cache else tmp / "cache-shared"
            cmd = [sys.executable, "-c", snippet, "v1.0.0", str(repo)]
            wall, out = run(cmd, tmp, {"GOLDSET_CACHE_DIR": str(cache)})
            rows = int(out.split()[0])
            walls.append(wall)
            inner.append(float(out.split()[1]))
        return statistics.median(walls), statistics.median(inner), rows

    local_first = timed(code, root, fresh_cache=True)
    local_again = timed(code, root, fresh_cache=False)
    clone = tmp / "clone"
    subprocess.run(["git", "clone", "-q", "--no-tags", str(root), str(clone)], check=True, capture_output=True)
    clone_fast = timed(code, clone, fresh_cache=True)
    clone_dvc = timed(code_dvc, clone, fresh_cache=True)
    return {
        "n_pairs": n_pairs,
        "n_chunks": len(chunks),
        "n_docs": len({c.doc_id for c in chunks}),
        "release_s": first_s,
        "release2_s": second_s,
        "local_first": local_first,
        "local_again": local_again,
        "clone_fast": clone_fast,
        "clone_dvc": clone_dvc,
        "load": load_avg(),
    }


# ------------------------------------------------------------------------------------------------ report


def pct(a: float, b: float) -> str:
    return f"{a / b:.1%}" if b else "–"


def section(r: dict, rl: dict) -> str:
    c = r["chunks"]
    gen_share = r["generation_calls"] / r["full_generation_calls"] if r["full_generation_calls"] else 0.0
    changed_share = r["eligible_changed"] / r["eligible_full"] if r["eligible_full"] else 0.0
    ok_share = "met" if r["generation_calls"] <= r["eligible_changed"] else "NOT met"
    lines = [
        SECTION,
        "",
        f"Machine: {machine()}. `benchmarks/bench_versioning.py`; fake LLM server in-process (no latency).",
        "",
        "**Refresh** FastAPI tutorial 0.120.0 → 0.141.1 (`../shared/kb`), load average "
        f"{r['load']} (1/5/15 min):",
        "",
        "| | value |",
        "|---|---|",
        f"| documents added / changed / removed / unchanged | {r['docs']['added']} / {r['docs']['changed']} / "
        f"{r['docs']['removed']} / {r['docs']['unchanged']} |",
        f"| chunks added / changed / removed / unchanged | {c['added']} / {c['changed']} / {c['removed']} / "
        f"{c['unchanged']} |",
        f"| generation calls: refresh / full regeneration of 0.141.1 | {r['generation_calls']} / "
        f"{r['full_generation_calls']} = **{gen_share:.1%}** |",
        f"| share of new and changed chunks (of those large enough to ask about) | {r['eligible_changed']} / "
        f"{r['eligible_full']} = **{changed_share:.1%}** (target: calls = this share: {ok_share}) |",
        f"| dry-run estimate of the generation calls | {r['estimated_calls']} |",
        f"| judge calls: refresh's re-checks + the filters' | {r['judge_refresh']} + {r['judge_filters']} "
        f"(full run on 0.120.0: {r['full_v1']['judge']}) |",
        f"| pairs before: {r['pairs_before']} ({r['accepted_before']} accepted) → retired / re-checked and kept / "
        "retired and regenerated / new | "
        f"{r['retired']} / {r['kept']} / {r['replaced']} / {r['new_pairs']} |",
        f"| refresh wall time | {r['refresh_s']:.1f} s |",
        f"| unchanged refresh (same documents again) | **{r['again_calls']} calls**, {r['again_s']:.1f} s |",
        "",
        f"**Release and load** {rl['n_pairs']:,} pairs over the full KB (English + Chinese tutorial 0.141.1: "
        f"{rl['n_docs']} documents, {rl['n_chunks']:,} chunks), local DVC remote, load average {rl['load']}:",
        "",
        "| | wall time | target |",
        "|---|---|---|",
        f"| `goldset release` (fresh process: imports, write, dvc add, push, commit, tag) | "
        f"**{rl['release_s']:.2f} s** | ≤ 5 s |",
        f"| second release, 50 pairs edited (`--bump minor`) | {rl['release2_s']:.2f} s | |",
    ]
    for label, key, target in (
        ("`goldset.load` fresh process, workspace (local DVC cache), first load", "local_first", "≤ 1.5 s"),
        ("`goldset.load` fresh process, workspace, already materialised", "local_again", "≤ 1.5 s"),
        ("`goldset.load` fresh process, `git clone --no-tags`, empty cache (local remote)", "clone_fast", "≤ 1.5 s"),
        ("same clone through `dvc.api` (the path of S3/ssh/http remotes)", "clone_dvc", "(reported)"),
    ):
        wall, inner, rows = rl[key]
        lines.append(f"| {label}: {rows:,} rows | **{wall:.2f} s** (in-process {inner:.2f} s) | {target} |")
    lines += [
        "",
        "Release, load and refresh are measured with the load average shown; the machine's 2 cores were shared with "
        "other work, so wall times carry that noise.",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5000)
    parser.add_argument("--write", action="store_true", help="replace the ## versioning section of RESULTS.md")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        os.environ["GOLDSET_CACHE_DIR"] = str(tmp / "cache")
        r = bench_refresh(tmp)
        rl = bench_release_and_load(tmp, args.pairs)
    text = section(r, rl)
    print(text)
    if args.write:
        write_section(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The second turn of the loop: what a refresh after a real documentation update costs, call by call.

FastAPI tutorial 0.120.0 → 0.141.1 (``../shared/kb``). Against the fake LLM server (in-process, no latency; the
generation model of the tests, which quotes its chunk, so the copy check rejects many of its answers as a real
weak model's would; a groundedness judge that finds a claim supported when its words are in the sources; a
duplicate judge that calls nothing the same), as the server counts the requests, per kind of call:

1. **full build on the new docs**: ``ingest`` 0.141.1, ``generate``, ``filter`` in a fresh workspace: the
   reference a refresh is compared with;
2. **first turn, then refresh**: ``ingest`` 0.120.0, ``generate``, ``filter``, every passed pair accepted by a
   reviewer, then ``goldset refresh`` with 0.141.1; then the same refresh again (target: 0 calls).

Target (issue #16): the refresh's calls of every kind are at most 0.6 of the full build's.

Run: ``.venv/bin/python benchmarks/bench_refresh.py [--write]`` (``--write`` replaces the ``## versioning:
refresh, call by call`` section of RESULTS.md).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _results import machine, write_section  # noqa: E402

from goldset.filters import run_filters  # noqa: E402
from goldset.generation.runner import generate  # noqa: E402
from goldset.io import read_jsonl, write_jsonl  # noqa: E402
from goldset.kb import ingest  # noqa: E402
from goldset.scaffold import init_workspace  # noqa: E402
from goldset.schema import PairStatus, QAPair  # noqa: E402
from goldset.versioning.refresh import refresh  # noqa: E402
from goldset.workspace import Workspace  # noqa: E402
from tests.helpers.closed_book_responders import closed_book_answer_responder, closed_book_judge_responder  # noqa: E402
from tests.helpers.duplicate_responders import make_duplicate_responder  # noqa: E402
from tests.helpers.fake_openai import FakeOpenAI, schema_name_of  # noqa: E402
from tests.helpers.judge_responders import groundedness_responder  # noqa: E402
from tests.helpers.responders import qa_responder  # noqa: E402

SHARED = ROOT.parent / "shared" / "kb"
OLD, NEW = SHARED / "fastapi-en-0.120.0", SHARED / "fastapi-en-0.141.1"
SECTION = "## versioning: refresh, call by call"
KINDS = ("qa_pairs", "duplicate_judge", "groundedness")  # always shown; any other kind the server saw, after them


def kinds(fake: FakeOpenAI, since: int) -> Counter[str]:
    return Counter(schema_name_of(r.body) or "?" for r in fake.chat_requests()[since:])


def build(fake: FakeOpenAI, root: Path, docs: Path) -> Workspace:
    init_workspace(root, dvc=False)
    ws = Workspace(root)
    ingest(docs, ws)
    generate(ws)
    run_filters(ws)
    return ws


def accept_passed(ws: Workspace) -> int:
    pairs = read_jsonl(ws.pairs_path, QAPair)
    out = [p.model_copy(update={"status": PairStatus.accepted}) if p.status is PairStatus.passed else p for p in pairs]
    write_jsonl(ws.pairs_path, out)
    return sum(1 for p in out if p.status is PairStatus.accepted)


def statuses(ws: Workspace) -> Counter[str]:
    return Counter(p.status.value for p in read_jsonl(ws.pairs_path, QAPair))


def main() -> dict:
    with tempfile.TemporaryDirectory(prefix="goldset-bench-refresh-") as tmp_name, FakeOpenAI() as fake:
        tmp = Path(tmp_name)
        os.environ.update({"OPENAI_BASE_URL": fake.base_url, "OPENAI_API_KEY": fake.api_key,
                           "GOLDSET_MODEL": "fake-model", "GOLDSET_JUDGE_MODEL": "fake-judge"})  # fmt: skip
        fake.add_responder("qa_pairs", qa_responder)
        fake.add_responder("groundedness", groundedness_responder)
        fake.add_responder("duplicate_judge", make_duplicate_responder(lambda a, b: False))
        fake.add_responder("closed_book_answer", closed_book_answer_responder)
        fake.add_responder("closed_book_agreement", closed_book_judge_responder)

        start = len(fake.chat_requests())
        full_ws = build(fake, tmp / "full", NEW)
        full = kinds(fake, start)
        full_status = statuses(full_ws)

        start = len(fake.chat_requests())
        docs = tmp / "docs"
        shutil.copytree(OLD, docs)
        ws = build(fake, tmp / "turn", docs)
        first = kinds(fake, start)
        accepted = accept_passed(ws)
        shutil.rmtree(docs)
        shutil.copytree(NEW, docs)
        dry = refresh(docs, ws, dry_run=True)
        start = len(fake.chat_requests())
        t = time.perf_counter()
        report = refresh(docs, ws)
        took = time.perf_counter() - t
        turn = kinds(fake, start)
        start = len(fake.chat_requests())
        again = refresh(docs, ws)
        second = kinds(fake, start)
        return {
            "full": full, "full_status": full_status, "first": first, "accepted": accepted, "refresh": turn,
            "again": second, "again_report": again.calls, "seconds": took, "after": statuses(ws),
            "dry": dry, "report": report, "load": " / ".join(f"{x:.2f}" for x in os.getloadavg()),
        }  # fmt: skip


def section(r: dict) -> str:
    lines = [
        SECTION,
        "",
        f"Machine: {machine()}; load average {r['load']}. `benchmarks/bench_refresh.py`; fake LLM server in-process, "
        "requests counted by the server per kind (schema name).",
        "",
        "FastAPI tutorial 0.120.0 → 0.141.1. *Full build*: ingest + generate + filter on 0.141.1 in a fresh "
        "workspace. *Refresh*: the first turn on 0.120.0 (generate + filter, every passed pair accepted), then "
        "`goldset refresh` with 0.141.1. Target: refresh ≤ 0.6 × full build for every kind.",
        "",
        "| calls | full build (0.141.1) | first turn (0.120.0) | refresh | refresh / full | refresh again |",
        "|---|---|---|---|---|---|",
    ]
    seen = sorted({k for part in ("full", "first", "refresh", "again") for k in r[part]} - set(KINDS))
    for k in (*KINDS, *seen, "all"):
        full = sum(r["full"].values()) if k == "all" else r["full"][k]
        turn = sum(r["refresh"].values()) if k == "all" else r["refresh"][k]
        first = sum(r["first"].values()) if k == "all" else r["first"][k]
        again = sum(r["again"].values()) if k == "all" else r["again"][k]
        ratio = f"**{turn / full:.2f}**" if full else "–"
        lines.append(f"| {k} | {full} | {first} | {turn} | {ratio} | {again} |")
    est = r["dry"].plan
    lines += [
        "",
        f"Pairs after the full build: {dict(sorted(r['full_status'].items()))}; after the refresh: "
        f"{dict(sorted(r['after'].items()))} ({r['accepted']} accepted before it). Refresh wall time "
        f"{r['seconds']:.1f} s.",
        f"`refresh --dry-run` said: {est.estimate.calls if est.estimate else 0} generation calls; at most "
        f"{est.judge_calls} re-check, {est.filter_judge_calls} filter groundedness, "
        f"{est.duplicate_judge_calls} duplicate-judge, {est.closed_book_calls} closed_book and "
        f"{est.copy_judge_calls} copy-judge calls, {est.judge_share:.0%} of pairs passing the cheap checks "
        "(expected: that share of the bounds). "
        f"The refresh's own summary: {r['report'].calls} calls ("
        + ", ".join(f"{n} {k}" for k, n in r["report"].calls_by_kind.items())
        + "); the server counts requests, so a retry or a repair shows there and not here.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="replace this benchmark's section of RESULTS.md")
    args = parser.parse_args()
    text = section(main())
    print(text)
    if args.write:
        write_section(text)

"""The full loop as a team runs it, against the fake LLM server and the REAL Label Studio server: an empty
workspace → `goldset build` (pushes the review sample) → expert annotations made through the Label Studio API →
`goldset review pull` → `goldset build --release` → `goldset eval --dataset` of that release (BM25 baseline).
"""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from goldset.cli import app
from goldset.io import read_json, read_jsonl
from goldset.schema import Manifest, PairStatus, QAPair
from tests.helpers.build_data import generation_prompts
from tests.helpers.duplicate_responders import no_duplicates
from tests.helpers.fake_openai import FakeOpenAI
from tests.helpers.judge_responders import marker_judge
from tests.helpers.labelstudio import annotate, choices, make_user, project_id, require_server, tasks_by_pair, textarea
from tests.helpers.responders import qa_responder

DOCS = Path(__file__).parent / "fixtures" / "generate" / "docs"
runner = CliRunner()


def run(*args: str) -> str:
    result = runner.invoke(app, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    assert result.exit_code == 0, f"goldset {' '.join(args)} failed:\n{result.output}"
    return result.output


def line_of(output: str, stage: str) -> str:
    return next(line for line in output.splitlines() if line.startswith(f"{stage} "))


def pairs_of(ws: Path) -> dict[str, QAPair]:
    return {p.id: p for p in read_jsonl(ws / "data" / "pairs.jsonl", QAPair)}


def test_from_an_empty_workspace_to_an_evaluated_release(
    tmp_path: Path, fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = require_server()  # LABEL_STUDIO_URL / LABEL_STUDIO_API_KEY point at it: build pushes there
    ls: Any = server.client()
    title = f"build loop {uuid.uuid4().hex[:10]}"
    monkeypatch.setenv("GOLDSET_REVIEW__LABEL_STUDIO__PROJECT_TITLE", title)
    fake_llm.add_responder("qa_pairs", qa_responder)
    fake_llm.add_responder("groundedness", marker_judge)  # supports every answer: some pairs pass
    fake_llm.add_responder("duplicate_judge", no_duplicates)
    ws = tmp_path / "ws"
    run("init", str(ws))

    # 1. the build: every stage, the sample pushed to a new review project
    out = run("build", str(DOCS), "-w", str(ws), "--sample-fraction", "1")
    pid = project_id(ls, title)
    url = f"{server.url}/projects/{pid}/data"
    assert url in out and f"Label Studio project {pid} (created)" in line_of(out, "review")
    pairs = pairs_of(ws)
    passed = sorted(p.id for p in pairs.values() if p.status is PairStatus.passed)
    assert len(passed) >= 3, "the loop needs a few passed pairs to review"
    assert all(pairs[pid_].review.sampled for pid_ in passed), "--sample-fraction 1 samples every passed pair"
    tasks = {k: v[0] for k, v in tasks_by_pair(ls, pid).items()}
    assert sorted(tasks) == passed and f"{len(passed)} imported" in line_of(out, "review")
    assert fake_llm.calls > len(generation_prompts(fake_llm)), "the filters' judge was asked too"

    # 2. a rerun changes nothing: no call, no new task
    calls = fake_llm.calls
    again = run("build", "-w", str(ws))
    assert fake_llm.calls == calls and f"0 imported, 0 updated, {len(passed)} already there" in again
    assert sum(len(v) for v in tasks_by_pair(ls, pid).values()) == len(passed)

    # 3. the experts review in Label Studio (annotations through its API, as the reviewers' browser posts them)
    expert = make_user(ls, "build-expert")
    edited = next(p for p in passed if pairs[p].evidence and pairs[p].language == "en")
    rejected = next(p for p in passed if p != edited)
    accepted = [p for p in passed if p not in (edited, rejected)]
    for pair_id in accepted:
        annotate(ls, tasks[pair_id].id, [choices("verdict", "accept")], user=expert)
    comment = textarea("comment", "the answer adds a claim", "question")
    annotate(ls, tasks[rejected].id, [choices("verdict", "reject"), comment], user=expert)
    new_answer = f"In short: {pairs[edited].answer}"  # the expert's wording; it passes the checks again
    annotate(ls, tasks[edited].id, [choices("verdict", "edit"), textarea("edited_answer", new_answer, "answer")],
             user=expert)  # fmt: skip
    pulled = run("review", "pull", "-w", str(ws))
    assert f"new decisions {len(passed)}" in pulled, pulled
    reviewed = pairs_of(ws)
    assert [reviewed[p].status for p in accepted] == [PairStatus.accepted] * len(accepted)
    assert reviewed[rejected].status is PairStatus.rejected
    assert reviewed[edited].status is PairStatus.accepted and reviewed[edited].answer == new_answer

    # 4. the release build, on a machine with no LLM endpoint: nothing to generate, filter or sample again (no
    #    endpoint needed for that), and the version is made
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "GOLDSET_MODEL", "GOLDSET_JUDGE_MODEL"):
        monkeypatch.delenv(name)
    out = run("build", "-w", str(ws), "--release", "1.0.0", "-m", "first reviewed release")
    assert fake_llm.calls == calls, "the release build makes no LLM call"
    assert "nothing to ask" in line_of(out, "generate") and line_of(out, "filter").split()[1] == "unchanged"
    assert line_of(out, "sample").split()[1] == "unchanged" and line_of(out, "review").split()[1] == "unchanged"
    golden = sorted([*accepted, edited])
    release = line_of(out, "release")
    assert release.split()[1] == "done" and f"{len(golden)} golden pairs (0 unreviewed)" in release
    assert "release tag            v1.0.0" in out and "goldset eval --dataset v1.0.0" in out
    tags = subprocess.run(["git", "tag", "-l"], cwd=ws, capture_output=True, text=True, check=True).stdout.split()
    assert tags == ["v1.0.0"]
    manifest = read_json(ws / "data" / "manifest.json", Manifest)
    assert manifest.version == "v1.0.0" and sorted(manifest.golden_ids) == golden
    assert rejected not in manifest.golden_ids

    # 5. the release is evaluated (the BM25 baseline: no system needed, no LLM)
    run("eval", "-w", str(ws), "--dataset", "v1.0.0", "--baseline", "bm25", "--no-judge", "--out",
        str(tmp_path / "run"))  # fmt: skip
    summary = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
    assert summary["n_samples"] == len(golden) and 0.0 < summary["overall"]["recall@5"] <= 1.0
    assert fake_llm.calls == calls

    # 6. the same version again: one line, exit 2, before any stage runs
    state = (ws / ".goldset" / "build.json").read_bytes()
    result = runner.invoke(app, ["build", "-w", str(ws), "--release", "1.0.0", "-m", "again"])
    lines = result.output.strip().splitlines()
    assert result.exit_code == 2 and lines == ["error: v1.0.0: already released (releases are immutable); choose a "
                                               "new version"], result.output  # fmt: skip
    assert (ws / ".goldset" / "build.json").read_bytes() == state

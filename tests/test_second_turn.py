"""The loop as it turns for a team, twice, on real git, DVC and Label Studio with the fake LLM server:

v1.0.0 (generate, filter, review in Label Studio, release) → the documents change (FastAPI 0.120.0 → 0.141.1
pages) → `goldset refresh` → review (the sample starts with what changed) → `release --bump minor` (v1.1.0) → the
documents change again (a page edited by hand, a page removed) → `goldset refresh` → `release --bump minor`
(v1.2.0). After any refresh, a refresh of the same documents makes no call; each release carries figures about its
own pairs.
"""

from __future__ import annotations

import json
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from goldset.cli import app
from goldset.io import read_json, read_jsonl
from goldset.schema import Manifest, PairStatus, QAPair
from goldset.versioning.load import load
from tests.helpers.duplicate_responders import no_duplicates
from tests.helpers.fake_openai import FakeOpenAI, schema_name_of
from tests.helpers.judge_responders import marker_judge
from tests.helpers.labelstudio import annotate, choices, make_user, project_id, require_server, tasks_by_pair
from tests.helpers.responders import qa_responder
from tests.helpers.versioning_data import KB, copy_docs, make_workspace, release_env

V1 = {"query-params.md": KB / "en-0.120.0" / "query-params.md",
      "cookie-params.md": KB / "en-0.120.0" / "cookie-params.md",
      "debugging.md": KB / "en-0.120.0" / "debugging.md",
      "zh/query-params.md": KB / "zh" / "query-params.md"}  # fmt: skip
V2 = {"query-params.md": KB / "en" / "query-params.md", "cookie-params.md": KB / "en" / "cookie-params.md",
      "body.md": KB / "en" / "body.md", "zh/query-params.md": KB / "zh" / "query-params.md",
      "zh/body.md": KB / "zh" / "body.md"}  # fmt: skip
runner = CliRunner()


def run(*args: str) -> str:
    result = runner.invoke(app, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    assert result.exit_code == 0, f"goldset {' '.join(args)} failed:\n{result.output}"
    return result.output


def pairs_of(ws: Path) -> dict[str, QAPair]:
    return {p.id: p for p in read_jsonl(ws / "data" / "pairs.jsonl", QAPair)}


def kinds(fake: FakeOpenAI, since: int) -> Counter[str]:
    return Counter(schema_name_of(r.body) or "?" for r in fake.chat_requests()[since:])


def review_round(ls: Any, title: str, ws: Path, expert: int, reject: int = 1) -> list[str]:
    """Push the waiting sample, the expert decides every task in Label Studio (the first ``reject`` rejected, the
    rest accepted), pull; the pair ids decided."""
    run("review", "push", "-w", str(ws))
    pid = project_id(ls, title)
    waiting = sorted(p.id for p in pairs_of(ws).values()
                     if p.review.sampled and p.review.outcome is None and p.status is PairStatus.passed)  # fmt: skip
    tasks = {k: v[0] for k, v in tasks_by_pair(ls, pid).items()}
    for n, pair_id in enumerate(waiting):
        annotate(ls, tasks[pair_id].id, [choices("verdict", "reject" if n < reject else "accept")], user=expert)
    out = run("review", "pull", "-w", str(ws))
    assert f"new decisions {len(waiting)}" in out, out
    return waiting


def test_the_loop_turns_twice(tmp_path: Path, fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    server = require_server()
    ls: Any = server.client()
    title = f"second turn {uuid.uuid4().hex[:10]}"
    monkeypatch.setenv("GOLDSET_REVIEW__LABEL_STUDIO__PROJECT_TITLE", title)
    release_env(tmp_path, monkeypatch)
    fake_llm.add_responder("qa_pairs", qa_responder)
    fake_llm.add_responder("groundedness", marker_judge)  # supports every answer: the copy check decides
    fake_llm.add_responder("duplicate_judge", no_duplicates)
    docs = copy_docs(tmp_path / "docs", V1)
    ws = make_workspace(tmp_path / "ws", docs, tmp_path / "remote").root
    expert = make_user(ls, "second-turn-expert")

    # turn 1: build, review a sample, release v1.0.0
    run("generate", "-w", str(ws))
    run("filter", "-w", str(ws))
    run("review", "sample", "-w", str(ws), "--fraction", "0.3")
    review_round(ls, title, ws, expert)
    run("release", "1.0.0", "-m", "first golden set", "-w", str(ws))
    v1 = read_json(ws / "data" / "manifest.json", Manifest)
    assert v1.review is not None and v1.review.reviewed > 0

    # turn 2: the documents change; refresh pays for what changed, and only once
    copy_docs(docs, V2)
    dry = run("refresh", str(docs), "--dry-run", "-w", str(ws))
    assert "groundedness" in dry and "duplicate-judge" in dry
    start = len(fake_llm.chat_requests())
    out = run("refresh", str(docs), "-w", str(ws))
    paid = kinds(fake_llm, start)
    assert paid["qa_pairs"] > 0 and "generation" in out
    start = len(fake_llm.chat_requests())
    again = run("refresh", str(docs), "-w", str(ws))
    assert "no call made" in again and len(fake_llm.chat_requests()) == start

    after = pairs_of(ws)
    changed = {p.id for p in after.values() if {"refresh:new", "refresh:rechecked"} & set(p.tags)
               and p.status is PairStatus.passed and p.review.round is None}  # fmt: skip
    assert changed, "the refresh added or re-checked passed pairs"
    sample = run("review", "sample", "-w", str(ws), "--fraction", "0.3")
    drawn = pairs_of(ws)
    risk = [p for p in drawn.values() if p.review.sampled and not p.review.random and p.review.round == 2]
    assert risk and all(p.id in changed for p in risk), sample  # what changed comes first
    review_round(ls, title, ws, expert)
    out = run("release", "--bump", "minor", "-m", "docs 0.141.1", "-w", str(ws))
    assert "v1.1.0" in out
    v11 = read_json(ws / "data" / "manifest.json", Manifest)
    assert v11.review is not None and v11.review.rounds and len(v11.review.rounds) == 2
    golden = set(v11.golden_ids)
    assert not golden & {p.id for p in drawn.values() if p.status is PairStatus.retired}

    # turn 3: a page edited by hand, a page removed; refresh, then a release without another review round
    query = docs / "query-params.md"
    text = query.read_text(encoding="utf-8")
    first = next(line for line in text.splitlines() if len(line) > 80 and not line.startswith(("#", "`", "{")))
    query.write_text(text.replace(first, first + " This sentence was added by the documentation team."),
                     encoding="utf-8")  # fmt: skip
    (docs / "cookie-params.md").unlink()
    start = len(fake_llm.chat_requests())
    run("refresh", str(docs), "-w", str(ws))
    assert kinds(fake_llm, start)["qa_pairs"] > 0
    start = len(fake_llm.chat_requests())
    run("refresh", str(docs), "-w", str(ws))
    assert len(fake_llm.chat_requests()) == start
    # and an engineer fixes one accepted answer by hand in data/pairs.jsonl
    current = pairs_of(ws)
    fixed = next(p for p in current.values() if p.status is PairStatus.accepted)
    lines = (ws / "data" / "pairs.jsonl").read_text(encoding="utf-8").splitlines()
    edited = fixed.model_copy(update={"answer": fixed.answer + " (as of the new release)"})
    lines = [edited.model_dump_json() if json.loads(line)["id"] == fixed.id else line for line in lines]
    (ws / "data" / "pairs.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = run("release", "--bump", "minor", "-m", "docs edited", "-w", str(ws))
    v12 = read_json(ws / "data" / "manifest.json", Manifest)
    assert v12.version == "v1.2.0" and v12.previous_version == "v1.1.0"
    gone = {p.id for p in pairs_of(ws).values() if any(e.doc_id == "cookie-params.md" for e in p.evidence)}
    assert gone and not gone & set(v12.golden_ids)
    # the release's estimate speaks for its own pairs: the new ones nobody reviewed are outside it, and it says so
    assert v12.review is not None and v12.review.golden == len(v12.golden_ids) and v12.review.outside > 0
    changelog = (ws / "data" / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"speaks for {v12.review.covered} of {v12.review.golden} golden pairs" in changelog
    assert "The estimate is older than these pairs" in changelog
    for version in ("v1.0.0", "v1.1.0", "v1.2.0"):  # every release loads from the repository
        assert len(load(version, repo=ws)) > 0
    diff = run("diff", "v1.1.0", "v1.2.0", "-w", str(ws), "--out", str(tmp_path / "changes.md"))
    assert "retired" in diff and fixed.id in diff  # the hand edit is an edit
    edits = (tmp_path / "changes.md").read_text(encoding="utf-8").split("### Edited (1)", 1)[1].split("###", 1)[0]
    assert fixed.id in edits and "(as of the new release)" in edits

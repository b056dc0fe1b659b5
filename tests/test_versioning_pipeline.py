"""`goldset init` writes a dvc.yaml (ingest → generate → filter) that `dvc repro` runs; `goldset status` shows the
last release."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from goldset.io import read_jsonl
from goldset.scaffold import init_workspace, workspace_status
from goldset.schema import PairStatus, QAPair
from goldset.versioning.release import release
from goldset.workspace import Workspace
from tests.helpers.fake_openai import FakeOpenAI
from tests.helpers.judge_responders import groundedness_responder
from tests.helpers.responders import qa_responder
from tests.helpers.versioning_data import KB, copy_docs, dvc, git, hand_pairs, kb_chunks, release_env, write_pairs


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    release_env(tmp_path, monkeypatch)


def _goldset_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`goldset` on PATH runs this interpreter's goldset (the one under test), as the dvc.yaml commands expect."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "goldset"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m goldset "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    here = str(Path(__file__).resolve().parents[1])
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH")) if p))


def test_init_writes_a_pipeline_once(tmp_path: Path) -> None:
    report = init_workspace(tmp_path / "ws")
    pipeline = yaml.safe_load((tmp_path / "ws" / "dvc.yaml").read_text())
    assert list(pipeline["stages"]) == ["ingest", "generate", "filter"]
    assert pipeline["stages"]["ingest"]["deps"] == ["docs"]  # kb.path
    assert any("dvc.yaml" in a for a in report.actions)
    (tmp_path / "ws" / "dvc.yaml").write_text("stages: {}\n")  # the team's own edits are kept
    assert not init_workspace(tmp_path / "ws").changed
    assert (tmp_path / "ws" / "dvc.yaml").read_text() == "stages: {}\n"
    assert not (tmp_path / "plain" / "dvc.yaml").exists()
    init_workspace(tmp_path / "plain", dvc=False)
    assert not (tmp_path / "plain" / "dvc.yaml").exists()


def test_dvc_repro_runs_ingest_generate_filter_then_skips_them(
    tmp_path: Path, fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_llm.add_responder("qa_pairs", qa_responder)
    fake_llm.add_responder("groundedness", groundedness_responder)
    _goldset_on_path(tmp_path, monkeypatch)
    root = tmp_path / "ws"
    init_workspace(root)
    copy_docs(root / "docs", {"cookie-params.md": KB / "en" / "cookie-params.md"})
    out = dvc(root, "repro")
    assert "Running stage 'ingest'" in out and "Running stage 'filter'" in out
    assert out.index("'ingest'") < out.index("'generate'") < out.index("'filter'")
    pairs = read_jsonl(root / "data" / "pairs.jsonl", QAPair)
    assert pairs and all(p.status in (PairStatus.passed, PairStatus.rejected) for p in pairs)
    calls = fake_llm.calls
    again = dvc(root, "repro")
    assert "didn't change, skipping" in again and "Running stage" not in again
    assert fake_llm.calls == calls
    # DVC is content with the pipeline beside a workspace (no overlapping outputs)
    res = subprocess.run([sys.executable, "-m", "dvc", "status"], cwd=root, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


def test_status_shows_the_last_release(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    init_workspace(root)
    dvc(root, "remote", "add", "-f", "-d", "shared", str(tmp_path / "remote"))
    ws = Workspace(root)
    from goldset.kb import ingest

    ingest(KB / "en", ws)
    assert workspace_status(root).last_release is None
    write_pairs(ws, hand_pairs(kb_chunks(ws), 3))
    release("0.3.0", message="three", ws=ws)
    git(root, "commit", "-q", "--allow-empty", "-m", "later work")
    git(root, "tag", "not-a-release")
    last = workspace_status(root).last_release
    assert last is not None and last.startswith("v0.3.0 (") and "3 golden pairs" in last

"""The repository's own example releases: `goldset.load("v0.2.0")` (the release the top-level data.dvc tracks) works
on a clone of this repository made the way CI makes one (`git clone --no-tags`, an empty DVC cache, offline), its
dataset is examples/golden and scores the BM25 baseline, and v0.1.0 still loads as it was released."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from goldset.data import read_dataset
from goldset.evaluation.evaluator import evaluate
from goldset.schema import QuestionType
from goldset.versioning.load import load, load_dataset, resolve_dataset_version, versions
from goldset.versioning.record import parse_record
from tests.helpers.versioning_data import REPO_ROOT, clone_like_ci, git

VERSION = "v0.2.0"
FIRST = "v0.1.0"


@pytest.fixture(scope="module")
def ci_clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This repository at the commit under test, cloned without tags into a temp folder."""
    dest = clone_like_ci(tmp_path_factory.mktemp("ci") / "goldset")
    assert git(dest, "tag", "-l") == ""
    assert not (dest / ".dvc" / "cache").exists() and not (dest / "data").exists()
    return dest


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOLDSET_CACHE_DIR", str(tmp_path / "goldset-cache"))


def test_the_example_release_is_found_without_tags(ci_clone: Path) -> None:
    found = {v.name: v for v in versions(ci_clone)}
    assert VERSION in found and not found[VERSION].tagged
    assert found[VERSION].record.n_golden >= 40 and found[VERSION].record.previous == FIRST
    record = parse_record((ci_clone / "data.dvc").read_bytes())
    assert record is not None and record.version == VERSION, "data.dvc tracks the latest release"


def test_load_the_example_release_on_a_clone_without_tags(ci_clone: Path) -> None:
    frame = load(VERSION, repo=ci_clone)
    ds = load_dataset(VERSION, repo=ci_clone)
    assert ds.manifest is not None and ds.manifest.version == VERSION
    assert len(frame) == len(ds.manifest.golden_ids) >= 40
    assert set(frame["language"]) == {"en", "zh"} and set(frame["question_type"]) == set(QuestionType)
    assert len(ds.chunks) == ds.manifest.n_chunks > len({c for p in ds.pairs for c in p.chunk_ids})
    assert all(cid in ds.chunks for p in ds.pairs for cid in p.chunk_ids), "every quote's chunk is in the corpus"


def test_load_in_a_fresh_process_from_the_clone_folder(ci_clone: Path, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "GOLDSET_CACHE_DIR": str(tmp_path / "fresh")}
    code = f"import goldset; df = goldset.load({VERSION!r}); print(len(df), sorted(set(df['question_type'])))"
    res = subprocess.run([sys.executable, "-c", code], cwd=ci_clone, env=env, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert "unanswerable" in res.stdout and int(res.stdout.split()[0]) >= 40


def test_the_bm25_baseline_scores_against_the_released_corpus(ci_clone: Path, tmp_path: Path) -> None:
    folder = resolve_dataset_version(VERSION, repo=ci_clone)
    result = evaluate(folder, target="bm25", out_dir=tmp_path / "run")
    assert result.summary.n_samples >= 40 and 0 < result.summary.overall["recall@5"] <= 1


def test_eval_dataset_by_version_name_on_the_clone(ci_clone: Path, tmp_path: Path) -> None:
    """`goldset eval --dataset v0.2.0 --baseline bm25`, as the README promises on a fresh clone."""
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "GOLDSET_CACHE_DIR": str(tmp_path / "cli")}
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "goldset", "eval", "--dataset", VERSION, "--baseline", "bm25", "--out", str(out)]
    res = subprocess.run(cmd, cwd=ci_clone, env=env, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert "recall@5" in res.stdout and "only the" not in res.stderr, "the release's own corpus is searched"
    meta = (out / "meta.json").read_text(encoding="utf-8")
    assert json.loads(meta)["dataset_version"] == VERSION


def test_the_release_is_the_example_golden_set(ci_clone: Path) -> None:
    released = load_dataset(VERSION, repo=ci_clone)
    example = read_dataset(REPO_ROOT / "examples" / "golden")
    assert [p.model_dump() for p in released.pairs] == [p.model_dump() for p in example.pairs]
    assert released.manifest is not None and set(released.manifest.golden_ids) == {p.id for p in example.pairs}


def test_the_first_release_still_loads_as_released(ci_clone: Path) -> None:
    """v0.2.0 did not rewrite v0.1.0: its record, files and pairs are the ones released then."""
    first = {v.name: v for v in versions(ci_clone)}[FIRST]
    frame = load(FIRST, repo=ci_clone)
    ds = load_dataset(FIRST, repo=ci_clone)
    assert ds.manifest is not None and ds.manifest.version == FIRST and first.record.previous is None
    assert len(frame) == first.record.n_golden == len(ds.manifest.golden_ids)
    assert set(frame["version"]) == {FIRST}
    later = {p.id for p in load_dataset(VERSION, repo=ci_clone).pairs}
    assert later - set(frame["id"]), "the later release added pairs"

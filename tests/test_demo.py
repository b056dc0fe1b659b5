"""`make demo` without an LLM endpoint: the real examples/demo.sh, run on a clone of this repository made the way CI
makes one (no tags, no DVC cache, offline), with the environment's OPENAI_* variables removed. It must say in one
line that there is no endpoint, load the release data.dvc tracks, evaluate BM25 against it, write the report and
print where everything went with the headline numbers."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from goldset.versioning.record import parse_record
from tests.helpers.fake_openai import FakeOpenAI
from tests.helpers.versioning_data import REPO_ROOT, clone_like_ci, git


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """This repository at HEAD cloned without tags, with the working tree's demo.sh, after one `demo.sh` run."""
    clone = clone_like_ci(tmp_path_factory.mktemp("demo") / "goldset")
    shutil.copyfile(REPO_ROOT / "examples" / "demo.sh", clone / "examples" / "demo.sh")  # the script under test
    assert git(clone, "tag", "-l") == "" and not (clone / "data").exists()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "GOLDSET_", "DEMO_"))}
    env.update(PYTHONPATH=str(REPO_ROOT), DEMO_PYTHON=sys.executable, HOME=str(clone.parent / "home"))
    res = subprocess.run(["bash", "examples/demo.sh"], cwd=clone, env=env, capture_output=True, text=True)
    return clone, res


def test_the_demo_runs_without_an_endpoint(demo: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    clone, res = demo
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    assert "Traceback" not in res.stderr and "error:" not in res.stderr
    said = [line for line in res.stdout.splitlines() if "endpoint" in line.lower()]
    assert len(said) == 1 and said[0].startswith("No LLM endpoint"), said
    assert "OPENAI_API_KEY" in said[0] and "OPENAI_BASE_URL" in said[0]
    assert (clone / "demo-workspace" / ".goldset" / "kb" / "snapshot.json").is_file(), "the example KB was ingested"
    assert not (clone / "demo-workspace" / "data" / "pairs.jsonl").exists(), "nothing was generated"


def test_the_demo_loads_the_release_data_dvc_tracks(demo: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    clone, res = demo
    record = parse_record((clone / "data.dvc").read_bytes())
    assert record is not None
    loaded = re.search(r"^loaded (\S+): (\d+) golden pairs \(en (\d+), zh (\d+)\)$", res.stdout, re.M)
    assert loaded, res.stdout
    assert loaded[1] == record.version and int(loaded[2]) == record.n_golden
    assert int(loaded[3]) + int(loaded[4]) == record.n_golden
    folder = clone / "demo-workspace" / ".goldset" / "cache" / "versions"
    assert [p.name for p in folder.iterdir()] == [f"{record.version}-{record.manifest_sha256[:12]}"]
    assert not (clone / "data").exists(), "the release is read from the DVC remote, not checked out into data/"


def test_the_demo_writes_the_run_and_the_report(demo: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    clone, res = demo
    record = parse_record((clone / "data.dvc").read_bytes())
    assert record is not None
    ws = clone / "demo-workspace"
    run = ws / "runs" / f"bm25-{record.version}"
    meta = json.loads((run / "meta.json").read_text(encoding="utf-8"))
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    assert meta["dataset_version"] == record.version and "bm25" in meta["target"]
    assert summary["n_samples"] == record.n_golden and summary["n_failed"] == 0
    report = (ws / "report.html").read_text(encoding="utf-8")
    assert report.lstrip().lower().startswith("<!doctype html") and record.version in report
    # The headline numbers printed are the run's, and every place named exists.
    line = re.search(r"^BM25 on (\S+): recall@5 ([\d.]+)  mrr ([\d.]+)  ndcg@10 ([\d.]+)", res.stdout, re.M)
    assert line, res.stdout
    assert line[1] == record.version
    for i, metric in ((2, "recall@5"), (3, "mrr"), (4, "ndcg@10")):
        assert float(line[i]) == pytest.approx(summary["overall"][metric], abs=5e-4)
        assert 0 < float(line[i]) <= 1
    assert f"overall score {summary['overall_score']:.3f}" in res.stdout
    summary_text = res.stdout.split("== 4. summary", 1)[1]
    for label in ("report", "run", "workspace"):
        named = re.search(rf"^{label} +(\S+)", summary_text, re.M)
        assert named and (clone / named[1]).exists(), label
    files = re.search(r"^run +\S+ \((.*)\)$", summary_text, re.M)
    assert files and {"meta.json", "scores.jsonl", "summary.json"} <= set(files[1].split(", "))
    assert all((run / name).is_file() for name in files[1].split(", ")), "the files named are the run's"


def test_the_demo_runs_again_in_the_same_workspace(demo: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    clone, first = demo
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "GOLDSET_", "DEMO_"))}
    env.update(PYTHONPATH=str(REPO_ROOT), DEMO_PYTHON=sys.executable, HOME=str(clone.parent / "home"))
    again = subprocess.run(["bash", "examples/demo.sh"], cwd=clone, env=env, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr[-2000:]
    headline = [line for line in first.stdout.splitlines() if line.startswith("BM25 on ")]
    assert headline and headline == [line for line in again.stdout.splitlines() if line.startswith("BM25 on ")]


def test_with_an_endpoint_the_demo_builds_a_golden_set_of_its_own_first(
    demo: tuple[Path, subprocess.CompletedProcess[str]], fake_llm: FakeOpenAI, tmp_path: Path
) -> None:
    """OPENAI_BASE_URL set (here: the fake server): `goldset build` runs the loop on the example KB, then the demo
    goes on to the release and the BM25 run as without one."""
    from goldset.io import read_jsonl
    from goldset.schema import QAPair
    from tests.helpers.duplicate_responders import no_duplicates
    from tests.helpers.judge_responders import groundedness_responder
    from tests.helpers.responders import qa_responder

    clone, _ = demo
    fake_llm.add_responder("qa_pairs", qa_responder)
    fake_llm.add_responder("groundedness", groundedness_responder)
    fake_llm.add_responder("duplicate_judge", no_duplicates)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GOLDSET_", "DEMO_", "LABEL_STUDIO_"))}
    env.update(PYTHONPATH=str(REPO_ROOT), DEMO_PYTHON=sys.executable, HOME=str(clone.parent / "home"),
               GOLDSET_MODEL="fake-model", GOLDSET_JUDGE_MODEL="fake-judge", DEMO_LIMIT="3",
               DEMO_WORKSPACE=str(tmp_path / "ws"))  # fmt: skip
    res = subprocess.run(["bash", "examples/demo.sh"], cwd=clone, env=env, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert not [line for line in res.stdout.splitlines() if line.startswith("No LLM endpoint")]
    pairs = read_jsonl(tmp_path / "ws" / "data" / "pairs.jsonl", QAPair)
    assert pairs and len({p.provenance.call_key for p in pairs}) <= 3, "one generation call per chunk, 3 chunks"
    assert all(p.provenance.model == "fake-model" for p in pairs) and any(p.status.value == "passed" for p in pairs)
    assert fake_llm.calls >= 3, "generation and the groundedness judge went through the endpoint"
    assert (tmp_path / "ws" / "report.html").is_file() and re.search(r"^BM25 on \S+: recall@5", res.stdout, re.M)

"""`goldset export` and `goldset import` through the CLI: a workspace's golden set, a release by name, a run for
RAGAS (a run folder with goldset's scores, a run file), and one-line errors that name the options."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from goldset.cli import app
from goldset.io import read_jsonl, write_jsonl
from goldset.schema import QAPair
from tests.helpers import eval_data, interop_data
from tests.helpers.versioning_data import REPO_ROOT

runner = CliRunner()


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A minimal workspace: goldset.yaml, labeling/, the interop dataset in data/, its chunks as the ingested KB."""
    import shutil

    from goldset.prompts import defaults_dir

    monkeypatch.chdir(tmp_path)
    shutil.copytree(defaults_dir("labeling"), tmp_path / "labeling")
    (tmp_path / "goldset.yaml").write_text("eval:\n  ks: [1, 5]\n", encoding="utf-8")
    interop_data.make_dataset(tmp_path / "data")
    write_jsonl(tmp_path / ".goldset" / "kb" / "chunks.jsonl", interop_data.chunks().values())
    return tmp_path


def test_export_then_import_into_another_workspace(ws: Path, tmp_path: Path) -> None:
    golden = [p for p in interop_data.make_pairs() if p.status.value in ("passed", "accepted")]
    n, quotes = len(golden), sum(len(p.evidence) for p in golden)
    result = runner.invoke(app, ["export", "--format", "ragas", "--out", "golden.jsonl", "--contexts", "quotes"])
    assert result.exit_code == 0, result.output
    assert f"wrote {n} pair(s) of" in result.output and "the golden set (passed and accepted pairs)" in result.output
    assert "user_input ← question" in result.output and "question_type ← question_type (extra column" in result.output
    assert "not carried:" in result.output and "status (not in the format" in result.output
    other = tmp_path / "other"
    other.mkdir()
    (other / "goldset.yaml").write_text("", encoding="utf-8")
    write_jsonl(other / ".goldset" / "kb" / "chunks.jsonl", interop_data.chunks().values())
    result = runner.invoke(app, ["import", str(ws / "golden.jsonl"), "--format", "ragas", "-w", str(other)])
    assert result.exit_code == 0, result.output
    assert f"{n} added to" in result.output and f"evidence: named {quotes}" in result.output
    assert "next: `goldset filter`" in result.output
    pairs = read_jsonl(other / "data" / "pairs.jsonl", QAPair)
    assert len(pairs) == n and all(p.status.value == "candidate" and p.provenance.source == "import" for p in pairs)
    again = runner.invoke(app, ["import", str(ws / "golden.jsonl"), "--format", "ragas", "-w", str(other)])
    assert again.exit_code == 0 and "0 added" in again.output and f"{n} already there" in again.output


def test_every_format_exports_from_the_cli(ws: Path) -> None:
    for fmt, default in (("ragas", "ragas.jsonl"), ("deepeval", "deepeval.json"), ("hf", "hf-dataset/README.md"),
                         ("labelstudio", "labelstudio.json"), ("csv", "pairs.csv")):  # fmt: skip
        result = runner.invoke(app, ["export", "-f", fmt, "--status", "all"])
        assert result.exit_code == 0, (fmt, result.output)
        assert (ws / default).is_file(), fmt
        assert f"wrote {len(interop_data.make_pairs())} pair(s)" in result.output


def test_errors_are_one_line_in_the_librarys_wording(ws: Path) -> None:
    (ws / "theirs.jsonl").write_text(json.dumps({"user_input": "Which port?", "reference": "7070"}) + "\n",
                                     encoding="utf-8")  # fmt: skip
    cases = [
        (["import", "theirs.jsonl", "-f", "ragas"], "theirs.jsonl:1: no question type (the file does not give one); "
                                                    "give question_type"),
        (["export", "-f", "parquet"], "error: format 'parquet': expected one of ragas, deepeval, hf, labelstudio"),
        (["export", "-f", "ragas", "--status", "golden-ish"], "error: status 'golden-ish': expected one of"),
        (["export", "-f", "csv", "--contexts", "chunks"], "error: contexts 'chunks': the csv format has no"),
        (["export", "-f", "csv", "--run", "runs/x"], "error: --run: a run is exported for RAGAS only"),
        (["import", "theirs.jsonl", "-f", "ragas", "--question-type", "opinion"],
         "error: question_type 'opinion': expected one of"),
        (["import", "theirs.jsonl", "-f", "ragas", "--type", "factual", "--out", "data"],
         "error: out data: already holds a dataset"),
        (["export", "-f", "csv", "--dataset", "v9.9.9"], "error: v9.9.9: no such dataset folder"),
    ]  # fmt: skip
    for args, message in cases:
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        assert message in result.output, (args, result.output)
        assert result.output.count("error:") == 1 and result.output.strip().count("\n") == 0, result.output


def test_a_release_exports_with_its_whole_corpus_and_its_figures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not (REPO_ROOT / ".git").exists():
        pytest.skip("not a git checkout of goldset: no release to load")
    monkeypatch.setenv("GOLDSET_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(REPO_ROOT)
    out = tmp_path / "hf"
    result = runner.invoke(app, ["export", "-f", "hf", "--dataset", "v0.1.0", "--out", str(out), "--license", "mit"])
    assert result.exit_code == 0, result.output
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "| version | v0.1.0 |" in card and "the golden set of release v0.1.0" in card
    assert "chunks: every chunk of the knowledge-base snapshot the release pins" in card
    assert "| zh |" in card and "## Quality estimate" in card
    rows = [json.loads(line) for line in (out / "data" / "test.jsonl").read_text(encoding="utf-8").splitlines()]
    corpus = (out / "corpus" / "chunks.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(rows) == 16 and all(r["golden"] and r["version"] == "v0.1.0" for r in rows)
    assert len(corpus) > len({c for r in rows for c in r["chunk_ids"]})
    back = runner.invoke(app, ["import", str(out), "-f", "hf", "--out", str(tmp_path / "back")])
    assert back.exit_code == 0, back.output
    pairs = {p.id: p for p in read_jsonl(tmp_path / "back" / "pairs.jsonl", QAPair)}
    assert set(pairs) == {r["id"] for r in rows}
    assert all(pairs[r["id"]].evidence[i].quote == e["quote"] for r in rows for i, e in enumerate(r["evidence"]))
    assert "evidence: named" in back.output and "left out" not in back.output, "the folder's corpus locates it all"


# ------------------------------------------------------------------------------------------------ a run for RAGAS


@pytest.fixture
def eval_ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "goldset.yaml").write_text("eval:\n  ks: [1, 5]\n", encoding="utf-8")
    eval_data.make_dataset(tmp_path / "data")
    pairs = eval_data.evaluated_pairs()
    samples = [eval_data.perfect_sample(p) for p in pairs]
    samples[0] = samples[0].model_copy(update={"answer": "", "contexts": [], "error": "timeout"})
    eval_data.write_run_file(tmp_path / "run.jsonl", samples)
    return tmp_path


def test_a_run_folder_exports_as_ragas_rows_with_goldsets_scores(eval_ws: Path) -> None:
    assert runner.invoke(app, ["eval", "--run", "run.jsonl"]).exit_code == 0
    (run_dir,) = (eval_ws / "runs").iterdir()
    result = runner.invoke(app, ["export", "-f", "ragas", "--run", str(run_dir), "--out", "ragas-run.jsonl",
                                 "--contexts", "quotes"])
    assert result.exit_code == 0, result.output
    assert "response ← the sample's answer" in result.output and "1 failed sample(s)" in result.output
    rows = {r["goldset_id"]: r for r in map(json.loads, (eval_ws / "ragas-run.jsonl").read_text().splitlines())}
    pairs = {p.id: p for p in eval_data.evaluated_pairs()}
    assert set(rows) == set(pairs)
    port = rows["qa-port"]
    assert port["user_input"] == pairs["qa-port"].question and port["response"] == pairs["qa-port"].answer
    assert port["retrieved_contexts"] == [eval_data.CHUNK_TEXTS["c-config"][1]]
    assert port["retrieved_context_ids"] == ["c-config"]
    assert port["reference_contexts"] == ["The port setting defaults to 8080."]
    assert port["goldset_scores"]["recall@5"] == 1.0 and port["error"] is None
    failed = rows[eval_data.evaluated_pairs()[0].id]
    assert failed["response"] == "" and failed["error"] == "timeout" and failed["goldset_scores"]["recall@5"] == 0.0
    zh = rows["qa-zh-port"]
    assert zh["user_input"] == "快袋鼠的默认端口是多少？" and zh["language"] == "zh"
    # the dataset changed after the run was scored: refused, not mixed
    from goldset.data import write_dataset

    changed = [p.model_copy(update={"answer": "Port 8080."}) if p.id == "qa-port" else p
               for p in eval_data.make_pairs()]  # fmt: skip
    chunks = [eval_data.make_chunk(c, d, t) for c, (d, t) in eval_data.CHUNK_TEXTS.items()]
    write_dataset(eval_ws / "data", changed, chunks)
    refused = runner.invoke(app, ["export", "-f", "ragas", "--run", str(run_dir)])
    assert refused.exit_code == 2 and "scored against dataset content" in refused.output
    assert "give dataset, the dataset or release the run was scored against" in refused.output


def test_a_run_file_exports_against_the_workspace_dataset(eval_ws: Path) -> None:
    result = runner.invoke(app, ["export", "-f", "ragas", "--run", "run.jsonl", "--contexts", "chunks"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (eval_ws / "ragas-run.jsonl").read_text().splitlines()]
    assert len(rows) == len(eval_data.evaluated_pairs()) and all(r["goldset_scores"] is None for r in rows)
    token = next(r for r in rows if r["goldset_id"] == "qa-token")
    assert token["reference_contexts"] == [eval_data.CHUNK_TEXTS["c-auth"][1]], "--contexts chunks: whole chunks"
    (eval_ws / "stray.jsonl").write_text(json.dumps({"pair_id": "qa-nope", "answer": "x"}) + "\n", encoding="utf-8")
    stray = runner.invoke(app, ["export", "-f", "ragas", "--run", "stray.jsonl"])
    assert stray.exit_code == 2 and "not in dataset" in stray.output

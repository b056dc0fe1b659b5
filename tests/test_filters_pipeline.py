"""run_filters on a workspace on disk: verdicts recorded, statuses, incremental re-runs, bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from goldset.errors import ConfigError, InputError, RecordError, UsageError
from goldset.filters import run_filters
from goldset.io import read_jsonl, write_jsonl
from goldset.schema import PairStatus, QAPair
from tests.helpers.filter_data import COPY, PARAPHRASE, ZH_COPY, ZH_PARAPHRASE, make_workspace, pair


def _pairs() -> list[QAPair]:
    return [
        pair("qa-copy", "What do the specifications say about a body on GET?", COPY, chunks=("en-body-2",)),
        pair("qa-para", "Can a GET request carry a body in FastAPI?", PARAPHRASE, chunks=("en-body-2",)),
        pair("qa-dup", "Can a GET request carry a body in FastAPI ?", PARAPHRASE + " Rarely.", chunks=("en-body-2",)),
        pair("qa-leak", "Is POST the most common method for sending data?", "POST.", chunks=("en-body-2",)),
        pair("qa-zh-copy", "规范对 GET 请求携带请求体怎么说？", ZH_COPY, chunks=("zh-body-2",)),
        pair("qa-zh-para", "GET 请求可以带请求体吗？", ZH_PARAPHRASE, chunks=("zh-body-2",)),
        pair("qa-passage", "According to the passage, who sends a request body?", "The client.", chunks=("en-body-1",)),
        pair("qa-accepted", "What is a request body, in one sentence?", COPY, chunks=("en-body-2",),
             status=PairStatus.accepted),
        pair("qa-retired", "What is a retired question?", COPY, chunks=("en-body-2",), status=PairStatus.retired),
    ]  # fmt: skip


@pytest.fixture
def ws(tmp_path: Path, no_llm_env: None):
    return make_workspace(tmp_path / "ws", _pairs())


def _load(ws) -> dict[str, QAPair]:
    return {p.id: p for p in read_jsonl(ws.pairs_path, QAPair)}


def test_statuses_and_recorded_verdicts(ws) -> None:
    report = run_filters(ws)
    got = _load(ws)
    assert got["qa-copy"].status == PairStatus.rejected
    assert not got["qa-copy"].checks["verbatim"].passed
    assert got["qa-para"].status == PairStatus.passed
    assert got["qa-dup"].status == PairStatus.rejected
    assert got["qa-dup"].checks["duplicate"].duplicate_of == "qa-para"
    assert not got["qa-leak"].checks["leakage"].passed and got["qa-leak"].status == PairStatus.rejected
    assert got["qa-zh-copy"].status == PairStatus.rejected and got["qa-zh-para"].status == PairStatus.passed
    assert not got["qa-passage"].checks["self_contained"].passed
    # Review owns accepted pairs: verdicts recorded, status kept. Retired pairs are left alone.
    assert got["qa-accepted"].status == PairStatus.accepted and not got["qa-accepted"].checks["verbatim"].passed
    assert got["qa-retired"].checks == {}
    # Every verdict carries what it ran on.
    assert all(c.settings_hash and c.input_hash for c in got["qa-para"].checks.values())
    assert "groundedness" not in report.checks and "no judge endpoint" in report.skipped_checks["groundedness"]
    assert report.per_check["verbatim"].failed == 3 and report.failures_by_type["verbatim"] == {"factual": 3}
    assert report.status_counts == {"accepted": 1, "passed": 2, "rejected": 5, "retired": 1}
    assert report.examples["verbatim"][0].reason.startswith("answer copies")
    assert report.duplicate_groups == 1 and report.written


def test_rerun_is_incremental(ws) -> None:
    first = run_filters(ws)
    before = ws.pairs_path.read_bytes()
    second = run_filters(ws)
    assert second.computed == 0 and second.reused == first.computed
    assert not second.written and ws.pairs_path.read_bytes() == before

    # Change one answer: only that pair's checks that read the answer run again.
    pairs = _load(ws)
    pairs["qa-para"] = pairs["qa-para"].model_copy(update={"answer": COPY})
    write_jsonl(ws.pairs_path, pairs.values())
    third = run_filters(ws)
    answer_checks = {"answer_present", "length", "self_contained", "type_plausible", "leakage", "verbatim"}
    # ... and the duplicate group's survivor flips: qa-para now fails a check, so its twin qa-dup is kept.
    assert third.computed == len(answer_checks) + 2
    got = _load(ws)
    assert got["qa-para"].status == PairStatus.rejected and got["qa-para"].checks["duplicate"].duplicate_of == "qa-dup"
    assert got["qa-dup"].checks["duplicate"].passed and got["qa-dup"].status == PairStatus.passed

    # Change a threshold: that check runs again on every live pair, nothing else does.
    (ws.root / "goldset.yaml").write_text("filter:\n  checks:\n    verbatim: {max_edit_similarity: 0.99}\n")
    fourth = run_filters(ws)
    assert fourth.computed == 8 and fourth.per_check["verbatim"].reused == 0


def test_only_selected_checks(ws) -> None:
    report = run_filters(ws, checks=["leakage"])
    got = _load(ws)
    assert report.checks == ["leakage"]
    assert set(got["qa-leak"].checks) == {"leakage"} and got["qa-leak"].status == PairStatus.rejected
    # Other enabled checks have no verdict yet: the pair cannot be passed.
    assert got["qa-para"].status == PairStatus.candidate


def test_disabled_check_does_not_run(tmp_path: Path, no_llm_env: None) -> None:
    cfg = "filter:\n  checks:\n    verbatim: {enabled: false}\n    duplicate: false\n"
    ws = make_workspace(tmp_path / "ws", _pairs(), config=cfg)
    report = run_filters(ws)
    got = _load(ws)
    assert "verbatim" not in report.checks and "verbatim" not in got["qa-copy"].checks
    assert got["qa-copy"].status == PairStatus.passed


def test_against_a_previous_release(tmp_path: Path, no_llm_env: None) -> None:
    ws = make_workspace(tmp_path / "ws", [pair("qa-new", "Can a GET request carry a body in FastAPI?", PARAPHRASE,
                                               chunks=("en-body-2",))])  # fmt: skip
    release = tmp_path / "v1"
    write_jsonl(release / "pairs.jsonl", [pair("qa-v1", "Can a GET request carry a body in FastAPI ?", "Yes.")])
    run_filters(ws, against=release)
    got = _load(ws)["qa-new"]
    assert got.status == PairStatus.rejected and got.checks["duplicate"].duplicate_of == "qa-v1"
    run_filters(ws, against=release / "pairs.jsonl")  # a pairs file works too
    assert _load(ws)["qa-new"].checks["duplicate"].duplicate_of == "qa-v1"


def test_malformed_line_stops_before_writing(ws) -> None:
    text = ws.pairs_path.read_text(encoding="utf-8").splitlines(keepends=True)
    text.insert(2, '{"id": "broken", "question": \n')
    ws.pairs_path.write_text("".join(text), encoding="utf-8")
    before = ws.pairs_path.read_bytes()
    with pytest.raises(RecordError) as err:
        run_filters(ws)
    assert f"{ws.pairs_path}:3" in str(err.value)
    assert ws.pairs_path.read_bytes() == before and not (ws.data_dir / "manifest.json").exists()


@pytest.mark.parametrize(
    ("config", "needle"),
    [
        ("filter:\n  checks:\n    verbatimm: {}\n", "unknown check 'verbatimm'; known checks: answer_present"),
        ("filter:\n  checks:\n    verbatim: {max_containment: 1.5}\n", "verbatim.max_containment"),
        ("filter:\n  checks:\n    verbatim: {max_containmen: 0.5}\n", "unknown setting"),
        ("filter:\n  checks:\n    duplicate: {num_perm: 100, bands: 30}\n", "multiple of bands"),
    ],
)
def test_bad_config_is_an_error_before_any_work(tmp_path: Path, no_llm_env: None, config: str, needle: str) -> None:
    ws = make_workspace(tmp_path / "ws", _pairs(), config=config)
    ws.pairs_path.write_text("not json\n", encoding="utf-8")  # would be an error too, but config comes first
    with pytest.raises(ConfigError) as err:
        run_filters(ws)
    assert needle in str(err.value) and "filter.checks" in str(err.value)
    assert ws.pairs_path.read_text(encoding="utf-8") == "not json\n"


def test_unknown_requested_check(ws) -> None:
    with pytest.raises(ConfigError, match="unknown check 'nope'"):
        run_filters(ws, checks=["nope"])


def test_workspace_as_a_path_or_found_from_the_current_folder(
    ws, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from goldset.errors import WorkspaceError

    report = run_filters(ws.root)  # a path, not a Workspace
    assert report.written and _load(ws)["qa-copy"].status == PairStatus.rejected
    monkeypatch.delenv("GOLDSET_WORKSPACE", raising=False)
    monkeypatch.chdir(ws.root / "data")  # a folder inside the workspace
    assert run_filters().computed == 0  # the same workspace: every verdict reused
    monkeypatch.chdir(tmp_path)
    with pytest.raises(WorkspaceError, match="not inside a goldset workspace"):
        run_filters()


@pytest.mark.parametrize(
    ("kwargs", "error", "needle"),
    [
        ({"checks": ["nope"]}, ConfigError, "checks: unknown check 'nope'"),
        ({"repair": True, "use_llm": False}, UsageError, "repair=True needs the LLM"),
        ({"repair": True, "checks": ["leakage"]}, UsageError, "include it in checks="),
        ({"against": "nowhere"}, InputError, "against= needs a dataset folder"),
    ],
)
def test_library_errors_name_parameters_not_options(ws, kwargs: dict, error: type, needle: str) -> None:
    before = ws.pairs_path.read_bytes()
    with pytest.raises(error) as err:
        run_filters(ws, **kwargs)
    assert needle in str(err.value) and "--" not in str(err.value)
    assert ws.pairs_path.read_bytes() == before


def test_question_copied_from_another_chunk_is_found_through_the_kb(tmp_path: Path, no_llm_env: None) -> None:
    """question_overlap declares that it reads KB-wide sentences; the pipeline finds them for it."""
    q = "A request body is data sent by the client to your API?"  # a sentence of en-body-1, cited: en-body-3
    ws = make_workspace(tmp_path / "ws", [pair("qa-1", q, PARAPHRASE, chunks=("en-body-3",))])
    run_filters(ws, checks=["question_overlap"])
    got = _load(ws)["qa-1"].checks["question_overlap"]
    assert not got.passed and "request** body is data" in got.reason
    (ws.root / "goldset.yaml").write_text("filter:\n  checks:\n    question_overlap: {whole_kb: false}\n")
    run_filters(ws, checks=["question_overlap"])
    assert _load(ws)["qa-1"].checks["question_overlap"].passed

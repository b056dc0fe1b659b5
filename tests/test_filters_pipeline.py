"""run_filters on a workspace on disk: verdicts recorded, statuses, incremental re-runs, bad input."""

from __future__ import annotations

import json
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
    # "According to the passage" fails self_contained, a heuristic that flags: the pair passes, flagged for review.
    passage = got["qa-passage"]
    assert not passage.checks["self_contained"].passed and passage.checks["self_contained"].severity == "flag"
    assert passage.status == PairStatus.passed and list(passage.flags) == ["self_contained"]
    assert "According to the passage" in passage.flags["self_contained"]
    assert got["qa-copy"].checks["verbatim"].severity == "reject" and got["qa-copy"].flags == {}
    # Review owns accepted pairs: verdicts recorded, status kept. Retired pairs are left alone.
    assert got["qa-accepted"].status == PairStatus.accepted and not got["qa-accepted"].checks["verbatim"].passed
    assert got["qa-retired"].checks == {}
    # Every verdict carries what it ran on.
    assert all(c.settings_hash and c.input_hash for c in got["qa-para"].checks.values())
    assert "groundedness" not in report.checks and "no judge endpoint" in report.skipped_checks["groundedness"]
    assert report.per_check["verbatim"].failed == 3 and report.failures_by_type["verbatim"] == {"factual": 3}
    assert report.status_counts == {"accepted": 1, "passed": 3, "rejected": 4, "retired": 1}
    assert report.flagged == {"self_contained": 1} and report.per_check["self_contained"].severity == "flag"
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
        ("filter:\n  checks:\n    verbatimm: {}\n", "unknown check 'verbatimm'; known checks: evidence, answer_"),
        ("filter:\n  checks:\n    self_contained: {severity: drop}\n", "self_contained.severity"),
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


def test_an_unknown_check_has_one_wording_wherever_it_is_named(ws) -> None:
    """checks=, the registry and goldset.yaml's filter.checks share one check and one message (so does `goldset
    filter --check`: tests/test_cli_filter.py)."""
    from goldset.filters.registry import CHECKS, get

    wording = f"unknown check 'nope'; known checks: {', '.join(CHECKS)}"
    before = ws.pairs_path.read_bytes()
    with pytest.raises(ConfigError) as by_keyword:
        run_filters(ws, checks=["verbatim", "nope"])
    assert str(by_keyword.value) == wording
    with pytest.raises(ConfigError) as by_name:
        get("nope")
    assert str(by_name.value) == wording
    ws.config_path.write_text("filter:\n  checks:\n    verbatim: {}\n    nope: {}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as in_config:
        run_filters(ws)
    assert str(in_config.value) == f"{ws.config_path}: filter.checks: {wording}"
    assert ws.pairs_path.read_bytes() == before


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
        ({"checks": ["nope"]}, ConfigError, "unknown check 'nope'; known checks: evidence, answer_present"),
        ({"repair": True, "use_llm": False}, UsageError, "repair needs the LLM"),
        ({"repair": True, "checks": ["leakage"]}, UsageError, "run the verbatim check too"),
        ({"against": "nowhere"}, InputError, "against needs a dataset folder"),
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


def test_an_unchanged_rerun_of_a_reordered_file_writes_nothing(ws) -> None:
    """Verdicts and their wording do not depend on line order: the same pairs in another order, same bytes."""
    import random

    run_filters(ws)
    before = ws.pairs_path.read_bytes()
    lines = before.decode("utf-8").splitlines(keepends=True)
    random.Random(3).shuffle(lines)
    ws.pairs_path.write_text("".join(lines), encoding="utf-8")
    again = run_filters(ws)
    assert again.computed == 0 and not again.written
    write_jsonl(ws.pairs_path, read_jsonl(ws.pairs_path, QAPair))  # back in id order, unchanged otherwise
    assert ws.pairs_path.read_bytes() == before


def test_bad_evidence_rejects_the_pair(tmp_path: Path, no_llm_env: None) -> None:
    ok = pair("qa-ok", "Can a GET request carry a body in FastAPI?", PARAPHRASE, chunks=("en-body-2",))
    gone = pair("qa-gone", "Which chunk is this?", PARAPHRASE, chunks=("en-nowhere-9",), quote="anything at all")
    misquoted = pair("qa-misquoted", "Is GET with a body allowed?", PARAPHRASE, chunks=("en-body-2",),
                     quote="GET bodies are always forbidden")  # fmt: skip
    wrong_doc = ok.model_copy(update={
        "id": "qa-wrong-doc", "question": "Does FastAPI accept a GET body at all?",
        "evidence": [ok.evidence[0].model_copy(update={"doc_id": "en-cookies.md"})],
    })  # fmt: skip
    ws = make_workspace(tmp_path / "ws", [ok, gone, misquoted, wrong_doc])
    report = run_filters(ws)
    got = _load(ws)
    assert got["qa-ok"].status == PairStatus.passed and got["qa-ok"].checks["evidence"].passed
    reasons = {pid: got[pid].checks["evidence"].reason for pid in ("qa-gone", "qa-misquoted", "qa-wrong-doc")}
    assert "chunk en-nowhere-9 is not in the KB" in reasons["qa-gone"]
    assert "quote not found in chunk en-body-2" in reasons["qa-misquoted"]
    assert "belongs to en-body.md, not to en-cookies.md" in reasons["qa-wrong-doc"]
    assert all(got[pid].status == PairStatus.rejected for pid in reasons)
    assert report.per_check["evidence"].failed == 3 and report.per_check["evidence"].severity == "reject"


def test_a_chunk_that_left_the_kb_fails_evidence_and_stays_in_the_dataset(tmp_path: Path, no_llm_env: None) -> None:
    from goldset.schema import Chunk

    ws = make_workspace(tmp_path / "ws", [pair("qa-1", "Can a GET request carry a body?", PARAPHRASE,
                                                chunks=("en-body-2",))])  # fmt: skip
    run_filters(ws)
    assert _load(ws)["qa-1"].status == PairStatus.passed
    kb = [c for c in read_jsonl(ws.kb_dir / "chunks.jsonl", Chunk) if c.id != "en-body-2"]
    write_jsonl(ws.kb_dir / "chunks.jsonl", kb)  # a re-ingest without the chunk
    run_filters(ws)
    got = _load(ws)["qa-1"]
    assert got.status == PairStatus.rejected and "en-body-2 is not in the KB" in got.checks["evidence"].reason
    # The dataset keeps its copy of the chunk the pair still cites.
    assert "en-body-2" in {c.id for c in read_jsonl(ws.data_dir / "chunks.jsonl", Chunk)}


def _generated(language: str, question: str, answer: str) -> QAPair:
    """A pair as generation makes it (the real validate_reply), with generation's own verdict."""
    from goldset.generation.reply import GeneratedEvidence, GeneratedPair, GeneratedPairs
    from goldset.generation.validation import validate_reply
    from goldset.schema import Provenance
    from tests.helpers.filter_data import fixture_chunks, fixture_quote
    from tests.helpers.generation_data import plan_for

    chunk = fixture_chunks()["en-body-2"]
    plan = plan_for(chunk, ("factual",), language=language)
    item = GeneratedPair(question=question, answer=answer, question_type="factual",
                         evidence=[GeneratedEvidence(chunk_id=chunk.id, quote=fixture_quote(chunk.id))])  # fmt: skip
    (got,) = validate_reply(GeneratedPairs(pairs=[item]), plan, Provenance(call_key="k")).pairs
    return got


def test_generation_input_hash_is_generations_own() -> None:
    from goldset.filters.status import GENERATION, generation_input_hash
    from goldset.generation.validation import CHECK_NAME

    got = _generated("en", "Can a GET request carry a body in FastAPI?", PARAPHRASE)
    assert GENERATION == CHECK_NAME
    assert got.checks[GENERATION].input_hash == generation_input_hash(got)


def test_a_pair_generation_rejected_stays_rejected_until_its_text_changes(tmp_path: Path, no_llm_env: None) -> None:
    """Asked for Chinese, the model wrote English: generation rejected it. Every filter check passes it, and it
    stays rejected; once an expert rewrites the answer, generation's verdict on the old text no longer holds."""
    got = _generated("zh", "Can a GET request carry a body in FastAPI?", PARAPHRASE)
    assert got.status == PairStatus.rejected and "wrong language" in got.checks["generation"].reason
    ws = make_workspace(tmp_path / "ws", [got])
    run_filters(ws)
    after = _load(ws)[got.id]
    assert all(c.passed for name, c in after.checks.items() if name != "generation")
    assert after.status == PairStatus.rejected
    edited = after.model_copy(update={"answer": PARAPHRASE + " Avoid it."})
    write_jsonl(ws.pairs_path, [edited])
    run_filters(ws)
    assert _load(ws)[got.id].status == PairStatus.passed


def test_severity_is_configured_per_check_and_relabels_without_recomputing(ws) -> None:
    run_filters(ws)
    assert _load(ws)["qa-passage"].status == PairStatus.passed
    (ws.root / "goldset.yaml").write_text("filter:\n  checks:\n    self_contained: {severity: reject}\n")
    report = run_filters(ws)
    got = _load(ws)["qa-passage"]
    assert report.computed == 0 and report.written  # the verdicts stand; only what they do changed
    assert got.status == PairStatus.rejected and got.checks["self_contained"].severity == "reject"
    assert got.flags == {}


def test_files_written_before_severities_still_load(ws) -> None:
    """A verdict without a severity (files from before flags) is read as a rejecting one."""
    import json

    line = json.loads(ws.pairs_path.read_text(encoding="utf-8").splitlines()[0])
    line["checks"] = {"verbatim": {"passed": False, "score": 0.9, "reason": "old", "settings_hash": "s",
                                   "input_hash": "i", "duplicate_of": None, "checked_at": "2025-01-01T00:00:00Z"}}
    old = QAPair.model_validate(line)  # fmt: skip
    assert old.checks["verbatim"].severity == "reject" and old.checks["verbatim"].rejects and old.flags == {}


def test_a_run_output_is_the_same_from_a_fresh_file_and_an_unchanged_rerun_writes_nothing(ws, tmp_path: Path) -> None:
    """The run keeps its pairs compact (fields sets shared, verdicts and statuses set on its own copies): what it
    writes is what a run writes, the pairs it reads are not changed under it, and a re-run writes nothing."""
    before = ws.pairs_path.read_bytes()
    run_filters(ws)
    first = ws.pairs_path.read_bytes()
    assert first != before
    got = _load(ws)
    assert got["qa-para"].status == PairStatus.passed and got["qa-dup"].status == PairStatus.rejected
    assert got["qa-dup"].checks["duplicate"].input_hash and got["qa-dup"].checks["duplicate"].settings_hash
    mtime = ws.pairs_path.stat().st_mtime_ns
    assert run_filters(ws).written is False
    assert ws.pairs_path.read_bytes() == first and ws.pairs_path.stat().st_mtime_ns == mtime
    # The same candidates in a second workspace give the same file, but for the verdicts' timestamps.
    same = [QAPair.model_validate_json(line) for line in before.splitlines()]  # _pairs() again: another second
    other = make_workspace(tmp_path / "ws2", same)
    run_filters(other)
    strip = lambda b: [  # noqa: E731
        {**r, "checks": {n: {**c, "checked_at": None} for n, c in r["checks"].items()}}
        for r in map(json.loads, b.splitlines())
    ]
    assert strip(other.pairs_path.read_bytes()) == strip(first)

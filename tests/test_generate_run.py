"""Generation runs end to end against the fake OpenAI server (real openai client over HTTP, real call journal)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from goldset.data import read_dataset
from goldset.errors import EndpointError, RecordError, RunFailed
from goldset.generation.estimate import estimate
from goldset.generation.runner import generate
from goldset.generation.sink import FAILURES_FILE
from goldset.generation.validation import CHECK_NAME
from goldset.io import read_jsonl, write_jsonl
from goldset.llm import CallJournal
from goldset.prompts import load_prompt
from goldset.schema import PairStatus, QAPair
from goldset.schema.generation import GenerationFailure
from goldset.text import detect_language, normalize_ws
from goldset.workspace import Workspace
from tests.helpers.fake_openai import FakeOpenAI, Fault
from tests.helpers.generation_data import EN_TEXT, ZH_TEXT, make_chunk, make_pair
from tests.helpers.responders import invented_quote_responder, never_valid_responder, parse_prompt, qa_responder

CHUNKS = [
    make_chunk("path-1", EN_TEXT, "path-params.md"),
    make_chunk(
        "path-2",
        "Path parameters with types are validated. A request with a string for item_id gets a clear error. "
        "The error says that the value is not a valid integer.",
        "path-params.md",
        position=1,
    ),
    make_chunk(
        "query-1",
        "Query parameters are the key-value pairs after the question mark in a URL. "
        "When a query parameter has a default value it becomes optional. Declaring it with None makes it optional.",
        "query-params.md",
    ),
    make_chunk("zh-1", ZH_TEXT, "zh/path-params.md"),
]


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    (tmp_path / "goldset.yaml").write_text("generate:\n  pairs_per_chunk: 3\n  seed: 1\n", encoding="utf-8")
    return Workspace(tmp_path)


@pytest.fixture
def fake(fake_llm: FakeOpenAI) -> FakeOpenAI:
    fake_llm.add_responder("qa_pairs", qa_responder)
    return fake_llm


def pairs_of(ws: Workspace) -> list[QAPair]:
    return read_jsonl(ws.pairs_path, QAPair)


def test_generate_writes_checked_candidates_with_full_provenance(ws: Workspace, fake: FakeOpenAI) -> None:
    report = generate(ws, chunks=CHUNKS)
    assert report.chunks == 4 and report.llm.calls == 4 == fake.calls and report.llm.cache_hits == 0
    pairs = pairs_of(ws)
    assert len(pairs) == report.pairs_kept + report.pairs_rejected == 12  # 3 per chunk
    assert report.pairs_rejected == 0 and report.llm.failures == 0
    assert [p.id for p in pairs] == sorted(p.id for p in pairs)
    by_id = {c.id: c for c in CHUNKS}
    single, multi = load_prompt("generate"), load_prompt("generate_multi_hop")
    for p in pairs:
        prov = p.provenance
        assert prov.model == "fake-model" and prov.endpoint == "default" and prov.call_key
        assert (prov.prompt_id, prov.prompt_hash) in {(single.id, single.hash), (multi.id, multi.hash)}
        primary = next(iter(prov.chunk_hashes))
        assert prov.chunk_hashes[primary] == by_id[primary].content_hash
        assert p.status is PairStatus.candidate and p.checks[CHECK_NAME].passed
        for ev in p.evidence:  # every kept quote really is in its chunk
            assert normalize_ws(ev.quote) in normalize_ws(by_id[ev.chunk_id].text)
        if p.question_type.value == "multi_hop":
            assert len(p.chunk_ids) == 2 and prov.prompt_id == "generate_multi_hop"
        if p.question_type.value == "unanswerable":
            assert p.evidence == []
    zh_pairs = [p for p in pairs if next(iter(p.provenance.chunk_hashes)) == "zh-1"]
    assert len(zh_pairs) == 3
    assert all(p.language == "zh" and detect_language(p.question) == "zh" for p in zh_pairs)
    # the prompt sent for the Chinese chunk asked for Chinese
    zh_requests = [r for r in fake.chat_requests() if 'id="zh-1"' in r.body["messages"][-1]["content"]]
    assert zh_requests and "Chinese" in parse_prompt(zh_requests[0].body)[1]
    dataset = read_dataset(ws.data_dir)
    assert dataset.manifest is not None and dataset.manifest.n_pairs == 12
    assert set(dataset.chunks) == {cid for p in pairs for cid in p.chunk_ids}
    assert dataset.manifest.prompt_hashes["generate"] == single.hash


def test_unchanged_rerun_makes_zero_calls_and_leaves_the_file_identical(ws: Workspace, fake: FakeOpenAI) -> None:
    generate(ws, chunks=CHUNKS)
    calls, before = fake.calls, ws.pairs_path.read_bytes()
    again = generate(ws, chunks=CHUNKS)  # default: only chunks without pairs → nothing to do
    assert again.chunks == 0 and fake.calls == calls
    everything = generate(ws, chunks=CHUNKS, all_chunks=True)  # all chunks, all from the journal
    assert everything.chunks == 4 and everything.llm.cache_hits == 4 and everything.llm.calls == 0
    assert fake.calls == calls and everything.pairs_existing == 12
    assert ws.pairs_path.read_bytes() == before
    fresh = generate(ws, chunks=CHUNKS, all_chunks=True, no_cache=True)
    assert fresh.llm.calls == 4 and fake.calls == calls + 4


def test_dry_run_estimate_equals_the_real_call_count_and_calls_nothing(ws: Workspace, fake: FakeOpenAI) -> None:
    dry = generate(ws, chunks=CHUNKS, limit=3, dry_run=True)
    est = dry.estimate
    assert est is not None and fake.calls == 0 and not ws.pairs_path.exists()
    assert est.model == "fake-model" and est.cost_usd is None  # no price configured for the fake model
    report = generate(ws, chunks=CHUNKS, limit=3)
    assert est.calls == report.llm.calls == fake.calls == 3
    assert est.pairs_requested == 9
    # the prompt-token estimate is close to what the server counted
    assert abs(est.prompt_tokens - fake.prompt_tokens) <= 0.2 * fake.prompt_tokens
    left = generate(ws, chunks=CHUNKS, dry_run=True).estimate
    assert left is not None and left.calls == 1  # only the chunk still without pairs
    # with --all, the journal already holds 3 of the 4 calls: the estimate knows (keys computed like the client's)
    again = estimate(ws, chunks=CHUNKS, all_chunks=True)
    assert (again.calls, again.cache_hits) == (1, 3)
    assert again.prompt_tokens < est.prompt_tokens  # only the paid call's tokens
    assert estimate(ws, chunks=CHUNKS, all_chunks=True, no_cache=True).calls == 4
    real = generate(ws, chunks=CHUNKS, all_chunks=True)
    assert (real.llm.calls, real.llm.cache_hits) == (again.calls, again.cache_hits) and fake.calls == 4


def test_dry_run_prices_the_estimate_when_the_model_has_a_price(ws: Workspace, fake: FakeOpenAI) -> None:
    ws.config_path.write_text(
        "llm:\n  prices:\n    fake-model: {input_per_mtok: 1.0, output_per_mtok: 2.0}\n", encoding="utf-8"
    )
    est = estimate(ws, chunks=CHUNKS)
    assert est.cost_usd == pytest.approx((est.prompt_tokens * 1.0 + est.completion_tokens * 2.0) / 1e6)
    report = generate(ws, chunks=CHUNKS)  # the real run's cost is what the server's usage says
    assert report.llm.unpriced_requests == 0 and report.llm.cost_usd > 0
    assert report.llm.cost_usd == pytest.approx((fake.prompt_tokens * 1.0 + fake.completion_tokens * 2.0) / 1e6)
    assert (report.llm.prompt_tokens, report.llm.completion_tokens) == (fake.prompt_tokens, fake.completion_tokens)


def test_a_changed_prompt_is_a_cache_miss(ws: Workspace, fake: FakeOpenAI) -> None:
    generate(ws, chunks=CHUNKS)
    calls = fake.calls
    ws.prompts_dir.mkdir()
    text = load_prompt("generate").path.read_text(encoding="utf-8")
    (ws.prompts_dir / "generate.md").write_text(text.replace("Rules:", "Rules (be precise):"), encoding="utf-8")
    report = generate(ws, chunks=CHUNKS, all_chunks=True)
    single_prompt_chunks = sum(
        1 for r in fake.chat_requests()[:calls] if "Second chunk" not in r.body["messages"][-1]["content"]
    )
    assert report.llm.calls == single_prompt_chunks > 0
    assert report.llm.cache_hits == 4 - single_prompt_chunks


def test_invented_quotes_are_rejected_with_reasons_not_dropped(ws: Workspace, fake_llm: FakeOpenAI) -> None:
    fake_llm.add_responder("qa_pairs", invented_quote_responder)
    report = generate(ws, chunks=CHUNKS)
    pairs = pairs_of(ws)
    answerable = [p for p in pairs if p.question_type.value != "unanswerable"]
    assert answerable and all(p.status is PairStatus.rejected for p in answerable)
    assert all("not found verbatim" in p.checks[CHECK_NAME].reason for p in answerable)
    assert report.pairs_rejected == len(answerable)
    assert report.pairs_kept == len(pairs) - len(answerable)


def test_a_reply_that_never_validates_is_a_recorded_failed_call_and_the_run_goes_on(
    ws: Workspace, fake_llm: FakeOpenAI
) -> None:
    def flaky(body: dict[str, Any]) -> dict[str, Any]:
        chunks, _, _ = parse_prompt(body)
        return never_valid_responder(body) if chunks[0][0] == "query-1" else qa_responder(body)

    fake_llm.add_responder("qa_pairs", flaky)
    report = generate(ws, chunks=CHUNKS)
    assert report.llm.failures == 1 and report.chunks == 4
    assert {next(iter(p.provenance.chunk_hashes)) for p in pairs_of(ws)} == {"path-1", "path-2", "zh-1"}
    failures = read_jsonl(ws.state_dir / FAILURES_FILE, GenerationFailure)
    assert [(f.kind, f.chunk_ids[0]) for f in failures] == [("call", "query-1")]
    assert "does not match the schema" in failures[0].reason and "repair" in failures[0].reason
    assert fake_llm.api_key not in (ws.state_dir / FAILURES_FILE).read_text(encoding="utf-8")
    # the failed chunk has no pairs, so the next default run retries it (failed calls are not cached)
    fake_llm.add_responder("qa_pairs", qa_responder)
    retry = generate(ws, chunks=CHUNKS)
    assert retry.chunks == 1 and retry.llm.calls == 1 and retry.llm.failures == 0
    assert read_jsonl(ws.state_dir / FAILURES_FILE, GenerationFailure) == []


def test_existing_pairs_of_any_status_survive_and_new_chunks_only_are_generated(
    ws: Workspace, fake: FakeOpenAI
) -> None:
    reviewed = make_pair(CHUNKS[0], "A reviewed question about path parameters?", status=PairStatus.accepted)
    write_jsonl(ws.pairs_path, [reviewed])
    report = generate(ws, chunks=CHUNKS)
    assert report.chunks == 3  # path-1 already has a pair
    pairs = {p.id: p for p in pairs_of(ws)}
    assert pairs[reviewed.id] == reviewed
    body_text = "Request bodies are declared with Pydantic models, then validated. " * 4
    more = [*CHUNKS, make_chunk("new-1", body_text, "body.md")]
    calls = fake.calls
    again = generate(ws, chunks=more)
    assert again.chunks == 1 and fake.calls == calls + 1


def test_a_broken_candidates_file_is_an_error_and_is_not_rewritten(ws: Workspace, fake: FakeOpenAI) -> None:
    ws.data_dir.mkdir()
    ws.pairs_path.write_text('{"id": "qa-1"}\nnot json\n', encoding="utf-8")
    with pytest.raises(RecordError, match=r"pairs.jsonl:1: invalid QAPair"):
        generate(ws, chunks=CHUNKS)
    assert ws.pairs_path.read_text(encoding="utf-8") == '{"id": "qa-1"}\nnot json\n' and fake.calls == 0


@pytest.mark.usefixtures("no_llm_env")
def test_no_endpoint_says_how_to_configure_one(ws: Workspace) -> None:
    with pytest.raises(EndpointError, match="OPENAI_API_KEY") as err:
        generate(ws, chunks=CHUNKS)
    assert "\n" not in str(err.value) and not ws.pairs_path.exists()
    # a dry run still counts calls and tokens without an endpoint
    est = generate(ws, chunks=CHUNKS, dry_run=True).estimate
    assert est is not None and est.calls == 4 and est.model is None and est.cost_usd is None


def test_progress_reports_every_call(ws: Workspace, fake: FakeOpenAI) -> None:
    seen: list[tuple[int, int, int]] = []
    generate(ws, chunks=CHUNKS, concurrency=2,
             progress=lambda p: seen.append((p.done, int(p.counters["calls"]), int(p.counters["pairs"]))))  # fmt: skip
    assert seen[0] == (0, 0, 0) and seen[-1][:2] == (4, 4) and seen[-1][2] == 12
    assert [s[0] for s in seen] == list(range(5))


def test_the_wire_request_carries_the_schema_and_no_secret_is_written(ws: Workspace, fake: FakeOpenAI) -> None:
    generate(ws, chunks=CHUNKS[:1])
    body = fake.chat_requests()[0].body
    assert body["response_format"]["json_schema"]["name"] == "qa_pairs"
    assert body["response_format"]["json_schema"]["schema"]["properties"]["pairs"]["minItems"] == 1
    assert "self-contained" in json.dumps(body["response_format"])  # the fields' descriptions are for the model
    assert "Lenient on purpose" not in json.dumps(body)  # the classes' docstrings are not
    assert body["seed"] == 1
    for path in ws.root.rglob("*"):
        if path.is_file():
            assert fake.api_key.encode() not in path.read_bytes(), path
    assert json.loads(ws.pairs_path.read_text(encoding="utf-8").splitlines()[0])["provenance"]["endpoint"] == "default"


def test_refresh_style_call_regenerates_named_chunks_without_touching_files(ws: Workspace, fake: FakeOpenAI) -> None:
    generate(ws, chunks=CHUNKS)
    before = ws.pairs_path.read_bytes()
    report = generate(ws, chunks=CHUNKS, chunk_ids=["path-2"], write=False)
    assert report.chunks == 1 and report.llm.cache_hits == 1 and report.llm.calls == 0
    assert ws.pairs_path.read_bytes() == before
    # every pair of the run is returned (here the same ids as in the file: nothing changed)
    in_file = {p.id for p in pairs_of(ws) if next(iter(p.provenance.chunk_hashes)) == "path-2"}
    assert {p.id for p in report.new_pairs} == in_file and len(in_file) == 3
    edited = [
        c if c.id != "path-2" else make_chunk("path-2", c.text + " It returns HTTP 422.", c.doc_id) for c in CHUNKS
    ]
    changed = generate(ws, chunks=edited, chunk_ids=["path-2"], write=False)
    assert changed.llm.calls == 1 and changed.new_pairs and ws.pairs_path.read_bytes() == before
    assert all(p.provenance.chunk_hashes["path-2"] == edited[1].content_hash for p in changed.new_pairs)


def test_a_cut_off_reply_is_repaired_not_cached_as_an_empty_success(ws: Workspace, fake: FakeOpenAI) -> None:
    fake.inject("truncated")  # the first chunk's reply is cut in half
    report = generate(ws, chunks=CHUNKS[:2], concurrency=1)
    assert fake.calls == 3  # two chunks, one repair
    assert report.pairs_kept == 6 and report.llm.failures == 0 and report.failures == []


def test_a_reply_cut_off_twice_is_a_failed_call_and_the_next_run_asks_again(ws: Workspace, fake: FakeOpenAI) -> None:
    fake.inject("truncated", "truncated")
    report = generate(ws, chunks=CHUNKS[:2], concurrency=1)
    assert report.llm.failures == 1 and report.pairs_kept == 3
    (failure,) = read_jsonl(ws.state_dir / FAILURES_FILE, GenerationFailure)
    assert failure.kind == "call" and failure.chunk_ids[0] == "path-1" and "not valid JSON" in failure.reason
    calls = fake.calls
    retry = generate(ws, chunks=CHUNKS[:2])  # a healthy server: the failed chunk is asked again, not served empty
    assert fake.calls == calls + 1 and retry.pairs_kept == 3 and retry.llm.cache_hits == 0


def test_a_reply_marked_cut_off_is_a_failed_call_even_when_it_parses(ws: Workspace, fake: FakeOpenAI) -> None:
    fake.inject(Fault("length", keep=1.0))
    report = generate(ws, chunks=CHUNKS[:2], concurrency=1)
    # the whole 3-pair reply parsed but was marked cut off: not kept; the chunk is asked again for 2 pairs
    assert report.llm.failures == 1 and fake.calls == 3 and report.fewer_pairs == 1 and report.failures == []
    assert report.pairs_kept == 5 and report.pairs_not_asked == 1
    first = [p for p in pairs_of(ws) if next(iter(p.provenance.chunk_hashes)) == "path-1"]
    with CallJournal(ws.cache_path) as journal:
        ((cut_key, reason),) = journal.failures()
    assert "cut off" in reason and "max_tokens" in reason
    assert len(first) == 2 and cut_key not in {p.provenance.call_key for p in first}


def test_an_empty_pairs_list_is_a_failed_call_not_a_success(ws: Workspace, fake_llm: FakeOpenAI) -> None:
    def empty_for_query(body: dict[str, Any]) -> Any:
        chunks, _, _ = parse_prompt(body)
        return {"pairs": []} if chunks[0][0] == "query-1" else qa_responder(body)

    fake_llm.add_responder("qa_pairs", empty_for_query)
    report = generate(ws, chunks=CHUNKS)
    assert report.llm.failures == 1 and fake_llm.calls == 5  # four chunks, one repair of the empty reply
    (failure,) = read_jsonl(ws.state_dir / FAILURES_FILE, GenerationFailure)
    assert failure.kind == "call" and failure.chunk_ids[0] == "query-1" and "at least 1" in failure.reason
    fake_llm.add_responder("qa_pairs", qa_responder)
    retry = generate(ws, chunks=CHUNKS)
    assert retry.chunks == 1 and fake_llm.calls == 6 and retry.pairs_kept == 3


def test_a_reply_with_fewer_pairs_than_asked_is_kept_and_the_shortfall_counted(
    ws: Workspace, fake_llm: FakeOpenAI
) -> None:
    def two_of_three(body: dict[str, Any]) -> Any:
        reply = qa_responder(body)
        return {"pairs": reply["pairs"][:2]}

    fake_llm.add_responder("qa_pairs", two_of_three)
    report = generate(ws, chunks=CHUNKS)
    assert report.llm.failures == 0 and fake_llm.calls == 4
    assert report.pairs_kept + report.pairs_rejected == 8 and report.pairs_missing == 4


def test_a_run_whose_calls_all_failed_raises_run_failed_and_writes_no_dataset(ws: Workspace, fake: FakeOpenAI) -> None:
    ws.config_path.write_text(
        ws.config_path.read_text(encoding="utf-8")
        + "llm:\n  endpoints:\n    default: {max_attempts: 2, backoff_base_s: 0.01, backoff_max_s: 0.01}\n",
        encoding="utf-8",
    )
    fake.inject(*["500"] * 8)  # two attempts for each of the four chunks
    with pytest.raises(RunFailed) as err:
        generate(ws, chunks=CHUNKS, concurrency=1)
    text = str(err.value)
    assert "all 4 generation calls failed" in text and "HTTP 500" in text and FAILURES_FILE in text
    assert "\n" not in text and err.value.exit_code == 3
    assert not ws.pairs_path.exists() and not (ws.data_dir / "manifest.json").exists()
    failures = read_jsonl(ws.state_dir / FAILURES_FILE, GenerationFailure)  # what it got is recorded
    assert len(failures) == 4 and all(f.reason.startswith("HTTP 500: ") for f in failures)
    assert all("never validated" not in f.reason and "gave up after 2 attempts" in f.reason for f in failures)


def test_a_run_in_which_some_calls_worked_keeps_them_and_names_what_failed(ws: Workspace, fake: FakeOpenAI) -> None:
    ws.config_path.write_text(
        ws.config_path.read_text(encoding="utf-8") + "llm:\n  endpoints:\n    default: {max_attempts: 1}\n",
        encoding="utf-8",
    )
    fake.inject("500")
    report = generate(ws, chunks=CHUNKS, concurrency=1)
    assert report.llm.failures == 1 and report.pairs_kept == 9
    assert list(report.failure_reasons) == ["HTTP 500"]
    (failure,) = read_jsonl(ws.state_dir / FAILURES_FILE, GenerationFailure)
    assert failure.reason.startswith("HTTP 500: The server had an error")


@pytest.mark.usefixtures("no_llm_env")
def test_an_unreachable_endpoint_stops_the_run_with_one_line(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("GOLDSET_MODEL", "m")
    with pytest.raises(EndpointError, match=f"connection refused to http://127.0.0.1:{port}/v1"):
        generate(ws, chunks=CHUNKS)
    assert not ws.pairs_path.exists()


def test_a_model_the_server_does_not_know_stops_the_run(ws: Workspace, fake_llm_factory: Any) -> None:
    fake = fake_llm_factory(known_models={"real-model"}, unknown_model_status=400)
    with pytest.raises(EndpointError, match="fake-model"):
        generate(ws, chunks=CHUNKS, concurrency=1)
    assert fake.calls == 1 and not ws.pairs_path.exists()


def test_the_report_and_the_progress_count_every_request_the_server_saw(ws: Workspace, fake: FakeOpenAI) -> None:
    ws.config_path.write_text(
        ws.config_path.read_text(encoding="utf-8")
        + "llm:\n  endpoints:\n    default: {backoff_base_s: 0.01, backoff_max_s: 0.02, retry_budget: 10}\n",
        encoding="utf-8",
    )
    fake.inject(Fault("429", retry_after=0.01), "500", "500", "schema")
    seen: list[dict[str, Any]] = []
    report = generate(ws, chunks=CHUNKS, concurrency=1, progress=lambda p: seen.append(dict(p.counters)))
    llm = report.llm
    assert llm.requests == fake.calls == 8 and llm.calls == report.chunks == 4
    assert (llm.retries, llm.repairs, llm.cache_hits, llm.failures) == (3, 1, 0, 0)
    assert llm.retry_budget_left == 7
    assert (llm.prompt_tokens, llm.completion_tokens) == (fake.prompt_tokens, fake.completion_tokens)
    last = seen[-1]
    assert (last["calls"], last["requests"], last["retries"], last["repairs"]) == (4, 8, 3, 1)
    assert last["budget left"] == 7 and last["cached"] == 0 and last["pairs"] == report.pairs_kept
    assert seen[0]["requests"] == 0 and seen[0]["budget left"] == 10
    again = generate(ws, chunks=CHUNKS, all_chunks=True)
    assert again.llm.cache_hits == 4 and again.llm.requests == 0 and fake.calls == 8


def test_the_workspace_is_a_workspace_a_path_in_one_or_the_current_folder(
    ws: Workspace, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    from goldset.errors import WorkspaceError

    monkeypatch.delenv("GOLDSET_WORKSPACE", raising=False)
    (ws.root / "sub").mkdir()
    assert generate(ws.root / "sub", chunks=CHUNKS, limit=1).llm.calls == 1
    monkeypatch.chdir(ws.root / "sub")
    assert generate(chunks=CHUNKS, limit=1).llm.calls == 1  # the first chunk has pairs already: the second
    assert estimate(chunks=CHUNKS, all_chunks=True).cache_hits == 2
    assert read_jsonl(ws.pairs_path, QAPair) and fake.calls == 2
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))
    with pytest.raises(WorkspaceError, match="goldset init"):
        generate(chunks=CHUNKS)
    with pytest.raises(WorkspaceError, match="goldset init"):
        estimate(chunks=CHUNKS)


SIX_TYPES = (
    "  types: {factual: 0.30, reasoning: 0.20, procedural: 0.15, comparison: 0.10, multi_hop: 0.15, "
    "unanswerable: 0.10}\n"
)


def test_new_types_are_generated_and_leave_the_other_chunks_calls_in_the_journal(
    ws: Workspace, fake: FakeOpenAI
) -> None:
    """A workspace generated with the six original types, then run with the default weights (which add ambiguous
    and open_ended): only the chunks that now draw a new type are asked again; the others are journal hits,
    because their prompt and their reply schema are byte for byte what they were."""
    (ws.root / "goldset.yaml").write_text(f"generate:\n  pairs_per_chunk: 3\n  seed: 1\n{SIX_TYPES}", "utf-8")
    generate(ws, chunks=CHUNKS)
    assert fake.calls == 4
    assert all('"ambiguous"' not in json.dumps(r.body["response_format"]) for r in fake.chat_requests())
    (ws.root / "goldset.yaml").write_text("generate:\n  pairs_per_chunk: 3\n  seed: 1\n", "utf-8")  # defaults
    again = generate(ws, chunks=CHUNKS, all_chunks=True)
    later = {p.provenance.call_key for p in pairs_of(ws) if p.question_type.value in ("ambiguous", "open_ended")}
    assert later and again.llm.calls == len(later) == 2 and again.llm.cache_hits == 2, again.llm
    new_requests = fake.chat_requests()[4:]
    assert all('"open_ended"' in json.dumps(r.body["response_format"]) for r in new_requests)
    for p in pairs_of(ws):
        assert p.status is PairStatus.candidate, p.checks[CHECK_NAME].reason
        if p.question_type.value == "open_ended":
            assert len(p.evidence) >= 2 and p.answer.startswith("- ")


def test_ambiguous_pairs_quote_both_chunks_of_their_call(ws: Workspace, fake: FakeOpenAI) -> None:
    (ws.root / "goldset.yaml").write_text(
        "generate:\n  pairs_per_chunk: 2\n  types: {ambiguous: 1, open_ended: 1}\n", "utf-8"
    )
    report = generate(ws, chunks=CHUNKS)
    assert report.pairs_rejected == 0 and report.pairs_kept == 8
    pairs = pairs_of(ws)
    assert {p.question_type.value for p in pairs} == {"ambiguous", "open_ended"}
    two = [p for p in pairs if p.question_type.value == "ambiguous" and len(p.provenance.chunk_hashes) == 2]
    assert len(two) >= 3  # every English chunk has a partner; the one Chinese chunk has none
    assert all(p.chunk_ids == sorted(p.provenance.chunk_hashes) for p in two)
    assert all(p.provenance.prompt_id == "generate_multi_hop" for p in two)
    zh = [p for p in pairs if next(iter(p.provenance.chunk_hashes)) == "zh-1"]
    assert zh and all(p.language == "zh" and detect_language(p.answer) == "zh" for p in zh)

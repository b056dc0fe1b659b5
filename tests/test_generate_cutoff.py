"""Replies cut off at max_tokens: the chunk is asked again for fewer pairs (3 → 2 → 1), each call's schema says
how many pairs it asks for (maxItems) and its max_tokens is fitted to them; the journal makes a re-run free.
Against the fake OpenAI server (real openai client over HTTP, real call journal)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from goldset.cli import app
from goldset.errors import RunFailed
from goldset.generation.estimate import estimate
from goldset.generation.runner import generate
from goldset.generation.sink import FAILURES_FILE
from goldset.io import read_jsonl
from goldset.kb import ingest
from goldset.scaffold import init_workspace
from goldset.schema import QAPair
from goldset.schema.generation import GenerationFailure
from goldset.workspace import Workspace
from tests.helpers.fake_openai import FakeOpenAI
from tests.helpers.generation_data import EN_TEXT, make_chunk
from tests.helpers.responders import parse_prompt, qa_responder

CHUNKS = [
    make_chunk("path-1", EN_TEXT, "path-params.md"),
    make_chunk(
        "query-1",
        "Query parameters are the key-value pairs after the question mark in a URL. "
        "When a query parameter has a default value it becomes optional. Declaring it with None makes it optional.",
        "query-params.md",
    ),
]
DOCS = Path(__file__).parent / "fixtures" / "generate" / "docs"
SINGLE_TYPE = "  types: {factual: 1}\n"  # no partner chunks: one call per chunk, easy to count


def _workspace(tmp_path: Path, *, max_tokens: int | None = 900, extra: str = "") -> Workspace:
    llm = f"llm:\n  endpoints:\n    default: {{max_tokens: {max_tokens}}}\n" if max_tokens else ""
    (tmp_path / "goldset.yaml").write_text(
        f"generate:\n  pairs_per_chunk: 3\n  seed: 1\n{SINGLE_TYPE}{extra}{llm}", encoding="utf-8"
    )
    return Workspace(tmp_path)


def _asked(body: dict[str, Any]) -> int:
    return len(parse_prompt(body)[2])


def test_a_cut_off_reply_is_asked_again_with_fewer_pairs_and_a_rerun_sends_nothing(
    tmp_path: Path, fake_llm_factory: Callable[..., FakeOpenAI]
) -> None:
    fake = fake_llm_factory(cut_off_above=1)  # a weak model: more than one pair runs past max_tokens
    fake.add_responder("qa_pairs", qa_responder)
    ws = _workspace(tmp_path)
    report = generate(ws, chunks=CHUNKS, concurrency=1)
    requests = fake.chat_requests()
    assert sorted(_asked(r.body) for r in requests) == [1, 1, 2, 2, 3, 3]
    for r in requests:  # maxItems is the count asked; max_tokens the endpoint's 900 shared over 3 pairs
        schema = r.body["response_format"]["json_schema"]["schema"]
        assert schema["properties"]["pairs"]["maxItems"] == _asked(r.body)
        assert r.body["max_tokens"] == 300 * _asked(r.body)
    assert report.fewer_pairs == 4 and report.pairs_not_asked == 4 and report.pairs_kept == 2
    assert report.chunks_failed == 0 and report.failures == [] and report.llm.failures == 4
    pairs = read_jsonl(ws.pairs_path, QAPair)
    assert len(pairs) == 2 and all(p.provenance.call_key for p in pairs)

    assert estimate(ws, chunks=CHUNKS, all_chunks=True).calls == 0  # the dry run follows the journal down too
    again = generate(ws, chunks=CHUNKS, all_chunks=True)
    assert fake.calls == 6 and again.llm.requests == 0 and again.llm.cache_hits == 2  # nothing sent again
    assert again.fewer_pairs == 4 and again.pairs_existing == 2


def test_max_tokens_per_pair_sets_the_budget_and_the_cli_says_it_asked_again(
    tmp_path: Path, fake_llm_factory: Callable[..., FakeOpenAI], monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = fake_llm_factory(cut_off_above=2)
    fake.add_responder("qa_pairs", qa_responder)
    init_workspace(tmp_path / "ws", dvc=False)
    ws = Workspace((tmp_path / "ws").resolve())
    ingest(DOCS, ws)
    monkeypatch.setenv("GOLDSET_GENERATE__MAX_TOKENS_PER_PAIR", "250")  # no endpoint max_tokens: 250 a pair
    monkeypatch.setenv("GOLDSET_GENERATE__TYPES", '{"factual": 1}')
    result = CliRunner().invoke(app, ["generate", "-w", str(ws.root), "--limit", "1", "--concurrency", "1"])
    assert result.exit_code == 0, result.output
    assert "asked again with fewer pairs ×1" in result.output and "1 planned pair(s) not asked" in result.output
    assert [(_asked(r.body), r.body["max_tokens"]) for r in fake.chat_requests()] == [(3, 750), (2, 500)]
    assert len(read_jsonl(ws.pairs_path, QAPair)) == 2


def test_a_one_pair_call_cut_off_fails_with_its_reason(
    tmp_path: Path, fake_llm_factory: Callable[..., FakeOpenAI]
) -> None:
    fake = fake_llm_factory(cut_off_above=0)  # even one pair is too long
    fake.add_responder("qa_pairs", qa_responder)
    ws = _workspace(tmp_path)
    with pytest.raises(RunFailed, match="all 2 generation calls failed"):
        generate(ws, chunks=CHUNKS, concurrency=1)
    assert sorted(_asked(r.body) for r in fake.chat_requests()) == [1, 1, 2, 2, 3, 3]
    failures = read_jsonl(ws.state_dir / FAILURES_FILE, GenerationFailure)
    assert len(failures) == 2 and not ws.pairs_path.exists()
    for failure in failures:
        assert failure.reason.startswith("the reply was cut off at max_tokens (finish_reason length, max_tokens 300)")
        assert failure.reason.endswith("; cut off each time with 3, 2, 1 pair(s) asked")
    # a re-run skips the calls known to be cut off and asks the one-pair call again, as any failed call
    with pytest.raises(RunFailed):
        generate(ws, chunks=CHUNKS, concurrency=1)
    assert [_asked(r.body) for r in fake.chat_requests()[6:]] == [1, 1]


def test_a_grammar_bound_server_gets_max_items_with_its_json_object_schema(
    tmp_path: Path, fake_llm_factory: Callable[..., FakeOpenAI]
) -> None:
    fake = fake_llm_factory(llama_cpp=True)  # refuses json_schema, takes json_object with the schema
    fake.add_responder("qa_pairs", qa_responder)
    report = generate(_workspace(tmp_path, max_tokens=None), chunks=CHUNKS[:1])
    assert report.pairs_kept == 3 and report.llm.format == "json_object"
    last = fake.chat_requests()[-1].body
    assert last["response_format"]["type"] == "json_object"
    assert last["response_format"]["schema"]["properties"]["pairs"]["maxItems"] == 3


def test_the_estimate_counts_at_most_the_fitted_max_tokens(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    roomy = estimate(_workspace(tmp_path, max_tokens=None), chunks=CHUNKS)
    assert roomy.completion_tokens == 2 * 3 * 150  # output_tokens_per_pair, no limit
    tight = estimate(_workspace(tmp_path, max_tokens=300), chunks=CHUNKS)
    assert tight.completion_tokens == 2 * 300 and tight.calls == 2 and fake_llm.calls == 0

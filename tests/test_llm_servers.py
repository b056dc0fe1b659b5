"""Local servers as users run them, through the fake server's imitations of them (a real llama.cpp server:
tests/test_real_servers.py): the structured-output mode a server refuses, found and remembered."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from goldset.generation.runner import generate
from goldset.llm import CallJournal, LLMClient, resolve_endpoint
from goldset.llm.retry import refuses_format
from goldset.workspace import Workspace
from tests.helpers.fake_openai import FakeOpenAI
from tests.helpers.generation_data import EN_TEXT, make_chunk
from tests.helpers.responders import qa_responder

CHUNKS = [
    make_chunk("path-1", EN_TEXT, "path-params.md"),
    make_chunk(
        "query-1",
        "Query parameters are the key-value pairs after the question mark in a URL. "
        "When a query parameter has a default value it becomes optional. Declaring it with None makes it optional.",
        "query-params.md",
    ),
]


class Answer(BaseModel):
    answer: str
    score: int


def _mode(body: dict[str, Any]) -> str:
    fmt = (body.get("response_format") or {}).get("type")
    return fmt or ("tool" if body.get("tools") else "text")


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    (tmp_path / "goldset.yaml").write_text("generate:\n  pairs_per_chunk: 2\n  seed: 1\n", encoding="utf-8")
    return Workspace(tmp_path)


def test_a_5xx_validation_message_about_the_format_is_a_refusal_an_ordinary_5xx_is_not() -> None:
    assert refuses_format(500, "[{'type': 'literal_error', 'msg': \"Input should be 'text' or 'json_object'\"}]")
    assert refuses_format(400, "response_format json_schema is not supported")
    assert not refuses_format(500, "The server had an error while processing your request.")
    assert not refuses_format(503, "schema registry down")  # a format word but no validation message: retried


def test_llama_cpp_server_json_schema_500_falls_back_to_json_object_with_the_schema(
    fake_llm_factory: Any, ws: Workspace
) -> None:
    fake: FakeOpenAI = fake_llm_factory(llama_cpp=True)
    fake.add_responder("qa_pairs", qa_responder)
    report = generate(ws, chunks=CHUNKS)
    assert report.pairs_kept == 4 and report.chunks_failed == 0
    modes = [_mode(r.body) for r in fake.chat_requests()]
    # /props says one slot: one request at a time, so one probe, then the mode that works
    assert modes == ["json_schema", "json_object", "json_object"]
    assert report.llm.concurrency == 1 and "total_slots in /props" in report.llm.concurrency_note
    sent = next(r.body for r in fake.chat_requests() if _mode(r.body) == "json_object")["response_format"]
    assert sent["schema"]["properties"]["pairs"]["items"]["$ref"].endswith("GeneratedPair")
    assert report.llm.retries == 0 and report.llm.fallbacks == 1
    assert report.llm.format_line == "json_object (server refused json_schema)"

    # A re-run of other chunks against the same server does not probe again: the journal remembers the mode.
    more = [make_chunk("more-1", EN_TEXT.replace("item_id", "user_id"), "more.md")]
    again = generate(ws, chunks=more)
    assert [_mode(r.body) for r in fake.chat_requests()][3:] == ["json_object"]
    assert again.llm.format == "json_object" and "remembered in the call journal" in again.llm.format_note


def test_a_server_without_json_modes_gets_a_forced_tool_call(fake_llm_factory: Any, tmp_path: Path) -> None:
    fake: FakeOpenAI = fake_llm_factory(reject_json_schema=True, reject_json_object=True)
    fake.add_responder("answer", lambda body: {"answer": "x", "score": 2})
    endpoint = resolve_endpoint(None, overrides={"timeout_s": 5.0})
    messages = [{"role": "user", "content": "q"}]

    async def go() -> Any:
        with CallJournal(tmp_path / "calls.sqlite") as journal:
            async with LLMClient(endpoint, journal) as llm:
                return await llm.complete_json(messages, Answer, schema_name="answer"), llm.stats

    result, stats = asyncio.run(go())
    assert result.value == Answer(answer="x", score=2)
    tool_request = fake.chat_requests()[-1].body
    assert tool_request["tool_choice"] == {"type": "function", "function": {"name": "answer"}}
    assert tool_request["tools"][0]["function"]["parameters"]["required"] == ["answer", "score"]
    assert stats.format_line == "tool (server refused json_schema, json_object)"


def test_a_pinned_mode_is_used_and_said(fake_llm_factory: Any, ws: Workspace) -> None:
    fake: FakeOpenAI = fake_llm_factory()
    fake.add_responder("qa_pairs", qa_responder)
    (ws.root / "goldset.yaml").write_text(
        "generate:\n  pairs_per_chunk: 2\nllm:\n  endpoints:\n    generate:\n      structured: tool\n",
        encoding="utf-8",
    )
    report = generate(ws, chunks=CHUNKS[:1])
    assert [_mode(r.body) for r in fake.chat_requests()] == ["tool"]
    assert report.llm.format_line == "tool (set by llm.endpoints.generate.structured)"


def test_max_tokens_never_asks_for_more_than_the_context_in_props_leaves(
    fake_llm_factory: Any, tmp_path: Path
) -> None:
    fake: FakeOpenAI = fake_llm_factory(llama_cpp=True, n_ctx=512)
    fake.add_responder("answer", lambda body: {"answer": "x", "score": 2})
    endpoint = resolve_endpoint(None, overrides={"timeout_s": 5.0, "max_tokens": 4096, "structured": "json_object"})
    messages = [{"role": "user", "content": "q"}]

    async def go() -> Any:
        with CallJournal(tmp_path / "calls.sqlite") as journal:
            async with LLMClient(endpoint, journal) as llm:
                return await llm.complete_json(messages, Answer, schema_name="answer"), llm.stats

    result, _ = asyncio.run(go())
    assert result.value == Answer(answer="x", score=2)
    assert fake.props_requests == 1
    sent = fake.chat_requests()[-1].body["max_tokens"]
    assert 16 <= sent < 512  # the endpoint's 4096 would not fit a 512-token context


def test_embeddings_go_to_their_own_server_when_embedding_base_url_is_set(
    fake_llm_factory: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    embed_server: FakeOpenAI = fake_llm_factory()
    chat_server: FakeOpenAI = fake_llm_factory()  # the environment points here
    monkeypatch.setenv("GOLDSET_EMBEDDING_MODEL", "e5")
    endpoint = resolve_endpoint(None, overrides={"timeout_s": 5.0, "embedding_base_url": embed_server.base_url})

    async def go() -> Any:
        async with LLMClient(endpoint) as llm:
            return await llm.embed(["a question", "another"])

    vectors = asyncio.run(go())
    assert len(vectors) == 2 and embed_server.embedding_calls == 1 and chat_server.embedding_calls == 0


@pytest.mark.parametrize(
    ("options", "line"),
    [
        ({"llama_cpp": True, "total_slots": 1}, "concurrency 1 (server reports 1 slot at /props; llm.endpoints."),
        ({"llama_cpp": True, "total_slots": 64}, "(configured; the server reports 64 slots at /props)"),
        ({}, "(configured; the server states no slots: it halves on timeouts, or set llm.endpoints."),
    ],
)
def test_dry_runs_say_the_concurrency_a_local_server_gets(
    fake_llm_factory: Any, tmp_path: Path, options: dict[str, Any], line: str
) -> None:
    from typer.testing import CliRunner

    from goldset.cli import app
    from goldset.kb import ingest
    from goldset.scaffold import init_workspace

    fake: FakeOpenAI = fake_llm_factory(**options)
    init_workspace(tmp_path, dvc=False)
    docs = Path(__file__).parent / "fixtures" / "generate" / "docs"
    ingest(docs, Workspace(tmp_path.resolve()))
    for command in (["generate", "--dry-run"], ["build", str(docs), "--dry-run"]):
        result = CliRunner().invoke(app, [*command, "-w", str(tmp_path)])
        assert result.exit_code == 0, result.output
        said = [ln.strip() for ln in result.output.splitlines() if "concurrency " in ln and "slot" in ln]
        assert len(said) == 1 and line in said[0], result.output
    assert fake.calls == 0  # a dry run asks the server about itself, never for a completion

"""fan_out (many calls, a bounded number in progress, results in order) and session (journal + client for an
endpoint); the LLM callers through them against the fake server (real openai client over HTTP)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from goldset.context import Context
from goldset.errors import EndpointError
from goldset.llm import CallJournal, fan_out, fan_out_limit, resolve_endpoint, session
from goldset.workspace import Workspace
from tests.helpers.fake_openai import FakeOpenAI


class Echo(BaseModel):
    text: str


def echo_responder(body: dict[str, Any]) -> dict[str, Any]:
    return {"text": body["messages"][-1]["content"].upper()}


def test_fan_out_keeps_the_order_and_at_most_limit_calls_in_progress() -> None:
    in_progress = 0
    most = 0
    started: list[int] = []
    ticks: list[tuple[int, int]] = []

    async def call(i: int) -> str:
        nonlocal in_progress, most
        started.append(i)
        in_progress += 1
        most = max(most, in_progress)
        for _ in range((7 * i) % 5):  # items finish out of order
            await asyncio.sleep(0)
        in_progress -= 1
        return f"item {i}"

    results = asyncio.run(fan_out(range(50), call, limit=4, on_done=lambda done, total: ticks.append((done, total))))
    assert results == [f"item {i}" for i in range(50)]
    assert most == 4
    assert started == list(range(50))  # started in order, each once
    assert ticks == [(k, 50) for k in range(1, 51)]
    assert asyncio.run(fan_out([], call, limit=4)) == []
    assert asyncio.run(fan_out([7], call, limit=0)) == ["item 7"]  # a limit below one still makes progress


def test_a_returned_failure_leaves_the_others_alone_an_exception_stops_the_rest() -> None:
    async def may_fail(i: int) -> str | None:
        await asyncio.sleep(0)
        return None if i % 3 == 0 else str(i)

    got = asyncio.run(fan_out(range(10), may_fail, limit=3))
    assert got == [None if i % 3 == 0 else str(i) for i in range(10)]

    started: list[int] = []
    finished: list[int] = []
    cancelled: list[int] = []
    gate = asyncio.Event()

    async def call(i: int) -> int:
        started.append(i)
        try:
            if i == 2:
                await asyncio.sleep(0)
                raise EndpointError("the endpoint refused the key")
            await gate.wait()  # never set: these are in progress when item 2 fails
            finished.append(i)
            return i
        except asyncio.CancelledError:
            cancelled.append(i)
            raise

    async def go() -> None:
        with pytest.raises(EndpointError, match="refused the key"):  # the error itself, not an exception group
            await fan_out(range(20), call, limit=4)
        for _ in range(10):
            await asyncio.sleep(0)  # anything left running would go on here

    asyncio.run(go())
    assert started == [0, 1, 2, 3]  # nothing started after the failure
    assert sorted(cancelled) == [0, 1, 3] and finished == []  # the calls in progress were cancelled, not left running


def test_session_commits_calls_to_the_workspace_journal_and_a_rerun_sends_nothing(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    fake_llm.add_responder("echo", echo_responder)
    (tmp_path / "goldset.yaml").write_text("llm:\n  endpoints:\n    gen: {concurrency: 3}\n", encoding="utf-8")
    ctx = Context.of(Workspace(tmp_path))
    endpoint = resolve_endpoint(ctx, "generate")
    texts = [f"text number {i}" for i in range(12)]

    async def run(where: Any, **options: Any) -> tuple[list[str | None], int]:
        async with session(where, endpoint, **options) as client:
            results = await fan_out(
                texts,
                lambda t: client.complete_json([{"role": "user", "content": t}], Echo, schema_name="echo"),
                limit=fan_out_limit(client.endpoint),
            )
            return [r.value.text if r.value else None for r in results], sum(r.cached for r in results)

    first, cached = asyncio.run(run(ctx))
    assert first == [t.upper() for t in texts] and cached == 0 and fake_llm.calls == 12
    with CallJournal(ctx.workspace.cache_path) as journal:
        assert journal.count() == 12  # committed, in the workspace's journal
    again, cached = asyncio.run(run(ctx.workspace))  # a workspace names the same journal
    assert again == first and cached == 12 and fake_llm.calls == 12  # no request reached the server
    asyncio.run(run(ctx, use_cache=False))
    assert fake_llm.calls == 24  # use_cache=False sends every call
    other = tmp_path / "elsewhere" / "calls.sqlite"
    asyncio.run(run(other))
    assert fake_llm.calls == 36 and other.is_file()  # a path is a journal of its own
    _, cached = asyncio.run(run(other))
    assert cached == 12 and fake_llm.calls == 36
    _, cached = asyncio.run(run(None))
    assert cached == 0 and fake_llm.calls == 48  # no journal: nothing to answer from


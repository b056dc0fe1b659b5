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
from tests.helpers.filter_data import fixture_chunks, pair
from tests.helpers.judge_responders import groundedness_responder


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


def test_the_groundedness_judge_keeps_only_a_bounded_number_of_pairs_in_progress(fake_llm: FakeOpenAI) -> None:
    """50 pairs at concurrency 2: at most fan_out_limit (4) of them exist as tasks at once, not all 50."""
    from goldset.filters import groundedness
    from goldset.prompts import load_prompt

    fake_llm.add_responder("groundedness", groundedness_responder)
    endpoint = resolve_endpoint(None, "judge", overrides={"concurrency": 2})
    pairs = [pair(f"qa-{i}", f"Who sends the request body, case {i}?", "The client sends it.") for i in range(50)]
    tasks_seen: list[int] = []

    async def go() -> list[groundedness.GroundednessOutcome]:
        async with session(None, endpoint) as client:
            return await groundedness.judge_many(
                pairs, fixture_chunks(), groundedness.Settings(), client, load_prompt(groundedness.PROMPT_ID),
                on_done=lambda: tasks_seen.append(len(asyncio.all_tasks())),
            )  # fmt: skip

    outcomes = asyncio.run(go())
    assert [o.pair_id for o in outcomes] == [p.id for p in pairs] and all(o.check is not None for o in outcomes)
    assert fake_llm.calls == 50 and len(tasks_seen) == 50
    assert fan_out_limit(endpoint) == 4
    assert max(tasks_seen) <= fan_out_limit(endpoint) + 1  # the workers and the run's own task


def test_generate_sends_at_most_its_concurrency_whichever_way_it_is_set(tmp_path: Path, fake_llm_factory: Any) -> None:
    """The one concurrency of a generation run reaches the server as set: the option over goldset.yaml's."""
    from goldset.generation.runner import generate
    from tests.helpers.generation_data import EN_TEXT, make_chunk
    from tests.helpers.responders import qa_responder

    fake = fake_llm_factory(latency_s=0.05)
    fake.add_responder("qa_pairs", qa_responder)
    (tmp_path / "goldset.yaml").write_text("generate:\n  concurrency: 3\n", encoding="utf-8")
    ws = Workspace(tmp_path)
    chunks = [make_chunk(f"c-{i}", f"{EN_TEXT} Note number {i}.", "a.md", position=i) for i in range(12)]
    report = generate(ws, chunks=chunks, write=False)
    assert report.llm.calls == 12 and fake.max_in_flight == 3
    fake = fake_llm_factory(latency_s=0.05)
    fake.add_responder("qa_pairs", qa_responder)
    report = generate(ws, chunks=chunks, write=False, concurrency=2, no_cache=True)
    assert report.llm.calls == 12 and fake.max_in_flight == 2

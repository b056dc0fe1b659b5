"""LLMClient against the fake server over real HTTP: happy path, cache, retries, repair, fallback, faults."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, Field

from goldset.errors import EndpointError
from goldset.llm import CallJournal, LLMClient, resolve_endpoint
from tests.helpers.fake_openai import FakeOpenAI, Fault


class Answer(BaseModel):
    answer: str
    score: int


def answer_responder(body: dict[str, Any]) -> dict[str, Any]:
    question = body["messages"][-1]["content"] if body["messages"][-1]["role"] == "user" else ""
    return {"answer": f"about {question}", "score": len(question)}


class Entry(BaseModel):
    name: str


class Listing(BaseModel):
    """Shaped like an older generation reply: a list with a default, whose items are objects."""

    entries: list[Entry] = Field(default_factory=list)


def listing_responder(body: dict[str, Any]) -> dict[str, Any]:
    return {"entries": [{"name": f"entry number {i}"} for i in range(4)]}


def msgs(text: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": "You answer."}, {"role": "user", "content": text}]


def fast(**overrides: Any) -> dict[str, Any]:
    """Endpoint overrides that keep tests quick: tiny backoff and timeout."""
    return {"backoff_base_s": 0.01, "backoff_max_s": 0.05, "timeout_s": 2.0, **overrides}


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_happy_path_validates_and_records_usage(fake_llm: FakeOpenAI, tmp_path: Path) -> None:
    fake_llm.add_responder("answer", answer_responder)
    endpoint = resolve_endpoint(None, "generate", overrides=fast())

    async def go() -> Any:
        with CallJournal(tmp_path / "calls.sqlite") as journal:
            async with LLMClient(endpoint, journal) as llm:
                return await llm.complete_json(msgs("tides"), Answer, schema_name="answer"), llm.stats

    result, stats = run(go())
    assert result.ok
    assert result.value == Answer(answer="about tides", score=5)
    assert not result.cached
    assert result.attempts == 1
    assert result.usage.prompt_tokens == fake_llm.prompt_tokens > 0
    assert result.usage.completion_tokens == fake_llm.completion_tokens > 0
    assert result.cost_usd is None  # no price configured: tokens only
    assert stats.calls == 1 and stats.failures == 0
    body = fake_llm.chat_requests()[0].body
    assert body["model"] == "fake-model"
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["strict"] is True
    assert body["response_format"]["json_schema"]["schema"]["additionalProperties"] is False


def test_unchanged_rerun_makes_zero_calls_and_no_cache_forces_them(fake_llm: FakeOpenAI, tmp_path: Path) -> None:
    fake_llm.add_responder("answer", answer_responder)
    endpoint = resolve_endpoint(None, overrides=fast())
    questions = [f"question {i}" for i in range(5)]

    async def go(use_cache: bool) -> tuple[list[Any], Any]:
        with CallJournal(tmp_path / "calls.sqlite") as journal:
            async with LLMClient(endpoint, journal, use_cache=use_cache) as llm:
                results = await asyncio.gather(
                    *(llm.complete_json(msgs(q), Answer, schema_name="answer") for q in questions)
                )
                return results, llm.stats

    first, _ = run(go(True))
    assert fake_llm.calls == 5
    again, stats = run(go(True))
    assert fake_llm.calls == 5  # zero new calls
    assert stats.calls == 0 and stats.cache_hits == 5 and stats.by_kind == {}  # a journal hit is no call
    assert [r.value for r in again] == [r.value for r in first]
    assert all(r.cached for r in again)
    assert again[0].usage == first[0].usage
    _, stats = run(go(False))
    assert fake_llm.calls == 10 and stats.calls == 5 and stats.cache_hits == 0 and stats.by_kind == {"answer": 5}


def test_changed_prompt_or_temperature_is_a_miss(fake_llm: FakeOpenAI, tmp_path: Path) -> None:
    fake_llm.add_responder("answer", answer_responder)
    endpoint = resolve_endpoint(None, overrides=fast())

    async def go() -> None:
        with CallJournal(tmp_path / "calls.sqlite") as journal:
            async with LLMClient(endpoint, journal) as llm:
                await llm.complete_json(msgs("a"), Answer, schema_name="answer")
                await llm.complete_json(msgs("a"), Answer, schema_name="answer")
                await llm.complete_json(msgs("b"), Answer, schema_name="answer")
                await llm.complete_json(msgs("a"), Answer, schema_name="answer", temperature=0.9)
                await llm.complete_json(msgs("a"), Answer, schema_name="answer", seed=7)

    run(go())
    assert fake_llm.calls == 4


def test_auth_error_stops_at_once_and_key_is_redacted(fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong-key-abcdef123456")
    endpoint = resolve_endpoint(None, overrides=fast())

    async def go() -> None:
        async with LLMClient(endpoint, CallJournal(tmp_path / "c.sqlite")) as llm:
            await asyncio.gather(*(llm.complete_json(msgs(str(i)), Answer, schema_name="answer") for i in range(3)))

    with pytest.raises(EndpointError) as err:
        run(go())
    text = str(err.value)
    assert "authentication failed" in text and "OPENAI_API_KEY" in text
    assert "sk-wrong-key-abcdef123456" not in text and "sk-te****3456" not in text
    assert fake_llm.calls <= 3  # no retries


def test_retries_on_429_500_and_timeout_then_succeeds(fake_llm: FakeOpenAI) -> None:
    fake_llm.add_responder("answer", answer_responder)
    fake_llm.inject(Fault("429", retry_after=0.2), "500", Fault("timeout", delay=1.0))
    endpoint = resolve_endpoint(None, overrides=fast(timeout_s=0.3))

    async def go() -> Any:
        async with LLMClient(endpoint) as llm:
            return await llm.complete_json(msgs("q"), Answer, schema_name="answer"), llm.stats

    result, stats = run(go())
    assert result.ok and result.attempts == 4
    assert stats.retries == 3
    times = fake_llm.arrival_times()
    assert len(times) == 4
    assert times[1] - times[0] >= 0.2  # Retry-After honoured


def test_repair_attempt_shows_the_validation_error(fake_llm: FakeOpenAI) -> None:
    fake_llm.add_responder("answer", answer_responder)
    fake_llm.inject("schema")
    endpoint = resolve_endpoint(None, overrides=fast())

    async def go() -> Any:
        async with LLMClient(endpoint) as llm:
            return await llm.complete_json(msgs("q"), Answer, schema_name="answer"), llm.stats

    result, stats = run(go())
    assert result.ok and result.attempts == 2 and stats.repairs == 1 and stats.retries == 0
    repair = fake_llm.chat_requests()[1].body["messages"]
    assert repair[-2]["role"] == "assistant" and repair[-2]["content"] == '["not", "an", "object"]'
    assert repair[-1]["role"] == "user" and "does not match the schema" in repair[-1]["content"]


def test_never_valid_reply_is_a_recorded_failure_and_run_goes_on(fake_llm: FakeOpenAI, tmp_path: Path) -> None:
    fake_llm.add_responder("answer", answer_responder)
    fake_llm.inject("malformed", "malformed")
    endpoint = resolve_endpoint(None, overrides=fast(concurrency=1))

    async def go() -> Any:
        with CallJournal(tmp_path / "calls.sqlite") as journal:
            async with LLMClient(endpoint, journal) as llm:
                bad = await llm.complete_json(msgs("q1"), Answer, schema_name="answer")
                good = await llm.complete_json(msgs("q2"), Answer, schema_name="answer")
                return bad, good, journal.failures(), llm.stats

    bad, good, failures, stats = run(go())
    assert not bad.ok and bad.value is None
    assert "not valid JSON" in (bad.error or "") and "repair" in (bad.error or "")
    assert good.ok
    assert failures == [(bad.key, bad.error)]
    assert stats.failures == 1
    # A failure is never served from the cache: the next run calls again.
    before = fake_llm.calls

    async def again() -> Any:
        with CallJournal(tmp_path / "calls.sqlite") as journal:
            async with LLMClient(endpoint, journal) as llm:
                return await llm.complete_json(msgs("q1"), Answer, schema_name="answer")

    retry = run(again())
    assert retry.ok and not retry.cached and fake_llm.calls == before + 1


def test_fallback_to_json_object_then_text_when_formats_are_rejected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                                    ) -> None:
    with FakeOpenAI(reject_json_schema=True, reject_json_object=True, reject_tools=True) as fake:
        fake.add_responder("answer", answer_responder)
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", fake.api_key)
        monkeypatch.setenv("GOLDSET_MODEL", "m")
        endpoint = resolve_endpoint(None, overrides=fast(retry_budget=0))

        async def go() -> Any:
            async with LLMClient(endpoint) as llm:
                first = await llm.complete_json(msgs("q1"), Answer, schema_name="answer")
                second = await llm.complete_json(msgs("q2"), Answer, schema_name="answer")
                return first, second, llm.mode, llm.stats

        first, second, mode, stats = run(go())
        assert first.ok and second.ok and mode == "text"
        assert stats.retries == 0  # a fallback does not spend the retry budget
        assert stats.fallbacks == 3 and stats.calls == 2 and stats.requests == 5 == fake.calls
        formats = [(r.body.get("response_format") or {}).get("type") or ("tool" if r.body.get("tools") else None)
                   for r in fake.chat_requests()]
        assert formats == ["json_schema", "json_object", "tool", None, None]  # the client remembers what works
        assert stats.format_line == "text (server refused json_schema, json_object, tool)"
        text_request = fake.chat_requests()[-1].body["messages"]
        assert "JSON schema" in text_request[0]["content"] and '"answer"' in text_request[0]["content"]
        assert text_request[-1]["content"] == "q2"


def test_forced_json_object_mode_sends_schema_in_prompt(fake_llm: FakeOpenAI) -> None:
    fake_llm.add_responder("answer", lambda body: "```json\n" + '{"answer": "x", "score": 1}' + "\n```")
    endpoint = resolve_endpoint(None, overrides=fast(structured="json_object"))

    async def go() -> Any:
        async with LLMClient(endpoint) as llm:
            return await llm.complete_json(msgs("q"), Answer, schema_name="answer")

    assert run(go()).value == Answer(answer="x", score=1)
    body = fake_llm.chat_requests()[0].body
    assert body["response_format"] == {"type": "json_object", "schema": Answer.model_json_schema()}
    assert "JSON" in body["messages"][0]["content"]


def test_retry_budget_is_shared_and_bounds_the_run(fake_llm: FakeOpenAI, tmp_path: Path) -> None:
    fake_llm.add_responder("answer", answer_responder)
    fake_llm.inject(*["500"] * 20)
    endpoint = resolve_endpoint(None, overrides=fast(retry_budget=3, max_attempts=10, concurrency=1))

    async def go() -> Any:
        with CallJournal(tmp_path / "calls.sqlite") as journal:
            async with LLMClient(endpoint, journal) as llm:
                results = [await llm.complete_json(msgs(f"q{i}"), Answer, schema_name="answer") for i in range(3)]
                return results, llm.stats, llm.stats.retry_budget_left

    results, stats, left = run(go())
    assert [r.ok for r in results] == [False, False, False]
    assert stats.retries == 3 and left == 0
    assert fake_llm.calls == (1 + 3) + 1 + 1  # first call: 1 try + 3 retries; then one try each, none left
    assert "retry budget" in (results[1].error or "") and "HTTP 500" in (results[1].error or "")


def test_max_attempts_per_call(fake_llm: FakeOpenAI) -> None:
    fake_llm.inject("500", "500", "500")
    endpoint = resolve_endpoint(None, overrides=fast(max_attempts=2))

    async def go() -> Any:
        async with LLMClient(endpoint) as llm:
            return await llm.complete_json(msgs("q"), Answer, schema_name="answer")

    result = run(go())
    assert not result.ok and result.attempts == 2 and "gave up after 2 attempts" in (result.error or "")
    assert fake_llm.calls == 2


def test_unknown_model_stops_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOpenAI(known_models={"real-model"}) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", fake.api_key)
        endpoint = resolve_endpoint(None, overrides=fast(model="typo-model"))

        async def go() -> None:
            async with LLMClient(endpoint) as llm:
                with pytest.raises(EndpointError) as err:
                    await llm.complete_json(msgs("q"), Answer, schema_name="answer")
                assert "typo-model" in str(err.value) and "GOLDSET_MODEL" in str(err.value)
                with pytest.raises(EndpointError):  # later calls fail at once, without a request
                    await llm.complete_json(msgs("q2"), Answer, schema_name="answer")

        run(go())
        assert fake.calls == 1


def test_missing_usage_is_estimated_and_prices_give_cost(fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch,
                                                         tmp_path: Path) -> None:
    fake_llm.add_responder("answer", answer_responder)
    fake_llm.inject("no_usage")
    endpoint = resolve_endpoint(None, overrides=fast(price_input_per_mtok=2.0, price_output_per_mtok=8.0))

    async def go() -> Any:
        async with LLMClient(endpoint) as llm:
            a = await llm.complete_json(msgs("question one"), Answer, schema_name="answer")
            b = await llm.complete_json(msgs("question two"), Answer, schema_name="answer")
            return a, b, llm.stats

    a, b, stats = run(go())
    assert a.usage.estimated and a.usage.prompt_tokens > 0 and a.usage.completion_tokens > 0
    assert not b.usage.estimated and b.usage.prompt_tokens == fake_llm.prompt_tokens
    assert b.cost_usd == pytest.approx((b.usage.prompt_tokens * 2.0 + b.usage.completion_tokens * 8.0) / 1e6)
    assert stats.cost_usd == pytest.approx((a.cost_usd or 0) + (b.cost_usd or 0))
    assert stats.prompt_tokens == a.usage.prompt_tokens + b.usage.prompt_tokens
    assert stats.unpriced_requests == 0


def test_concurrency_is_bounded_at_the_server(fake_llm_factory: Any) -> None:
    fake = fake_llm_factory(latency_s=0.05)
    fake.add_responder("answer", answer_responder)
    endpoint = resolve_endpoint(None, overrides={"concurrency": 3})

    async def go() -> list[Any]:
        async with LLMClient(endpoint) as llm:
            return await asyncio.gather(
                *(llm.complete_json(msgs(f"q{i}"), Answer, schema_name="answer") for i in range(12))
            )

    assert all(r.ok for r in run(go()))
    assert fake.max_in_flight == 3


def test_api_key_never_reaches_the_journal(fake_llm: FakeOpenAI, tmp_path: Path) -> None:
    """Failures whose server text echoes the key are redacted before they are stored; grep the files."""
    fake_llm.add_responder("answer", answer_responder)
    fake_llm.inject("400", "malformed", "malformed")
    endpoint = resolve_endpoint(None, overrides=fast(concurrency=1))
    path = tmp_path / "calls.sqlite"

    async def go() -> Any:
        with CallJournal(path) as journal:
            async with LLMClient(endpoint, journal) as llm:
                rejected = await llm.complete_json(msgs("q1"), Answer, schema_name="answer")
                invalid = await llm.complete_json(msgs("q2"), Answer, schema_name="answer")
                good = await llm.complete_json(msgs("q3"), Answer, schema_name="answer")
                return rejected, invalid, good, journal.failures(), journal.count()

    rejected, invalid, good, failures, count = run(go())
    assert not rejected.ok and "Bad request" in (rejected.error or "") and "Bearer ***" in (rejected.error or "")
    assert not invalid.ok and good.ok
    assert len(failures) == 2 and count == 1
    secret = fake_llm.api_key.encode()
    for file in tmp_path.iterdir():  # the database and its WAL/SHM files
        data = file.read_bytes()
        assert secret not in data and b"SECRET123456" not in data, file.name


def test_embeddings_batched_cached_and_model_required(fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:
    from tests.helpers.fake_openai import fake_embedding

    texts = ["how do I reset a password", "how do I reset my password", "billing cycle dates"]
    endpoint_without = resolve_endpoint(None, overrides=fast())

    async def no_model() -> None:
        async with LLMClient(endpoint_without) as llm:
            await llm.embed(texts)

    with pytest.raises(EndpointError, match="GOLDSET_EMBEDDING_MODEL"):
        run(no_model())
    monkeypatch.setenv("GOLDSET_EMBEDDING_MODEL", "fake-embed")
    endpoint = resolve_endpoint(None, overrides=fast())

    async def go() -> Any:
        with CallJournal(tmp_path / "calls.sqlite") as journal:
            async with LLMClient(endpoint, journal) as llm:
                return await llm.embed(texts, batch_size=2), llm.stats

    vectors, stats = run(go())
    assert vectors == [pytest.approx(fake_embedding(t)) for t in texts]
    assert fake_llm.embedding_calls == 2 and stats.calls == 2 and stats.by_kind == {"embedding": 2}  # two batches
    assert [r.body["model"] for r in fake_llm.requests] == ["fake-embed", "fake-embed"]
    again, stats = run(go())
    assert again == vectors and stats.calls == 0 and stats.cache_hits == 3
    assert fake_llm.embedding_calls == 2


def test_a_format_400_that_no_mode_fixes_does_not_downgrade_the_client(fake_llm: FakeOpenAI) -> None:
    fake_llm.add_responder("answer", answer_responder)
    fake_llm.inject(*[Fault("400", message="context too long for response_format handling")] * 4)
    endpoint = resolve_endpoint(None, overrides=fast())

    async def go() -> Any:
        async with LLMClient(endpoint) as llm:
            bad = await llm.complete_json(msgs("huge"), Answer, schema_name="answer")
            mode_after = llm.mode
            good = await llm.complete_json(msgs("small"), Answer, schema_name="answer")
            return bad, mode_after, good

    bad, mode_after, good = run(go())
    assert not bad.ok and "HTTP 400" in (bad.error or "") and bad.attempts == 4
    assert mode_after == "json_schema"
    assert good.ok
    formats = [(r.body.get("response_format") or {}).get("type") or ("tool" if r.body.get("tools") else None)
               for r in fake_llm.chat_requests()]
    assert formats == ["json_schema", "json_object", "tool", None, "json_schema"]


def test_backoff_is_exponential_with_jitter_and_capped(fake_llm: FakeOpenAI) -> None:
    """The injected sleep records the waits (and returns at once), so default-sized backoffs cost no time."""
    import random

    fake_llm.add_responder("answer", answer_responder)
    fake_llm.inject("500", "timeout", "500", "500", "500")
    endpoint = resolve_endpoint(None, overrides={"backoff_base_s": 1.0, "backoff_max_s": 5.0, "timeout_s": 0.3})
    waits: list[float] = []

    async def record(seconds: float) -> None:
        waits.append(seconds)

    async def go() -> Any:
        async with LLMClient(endpoint, sleep=record, rng=random.Random(7)) as llm:
            return await llm.complete_json(msgs("q"), Answer, schema_name="answer")

    result = run(go())
    assert result.ok and result.attempts == 6
    assert len(waits) == 5
    for n, wait in enumerate(waits, start=1):
        ceiling = min(5.0, 1.0 * 2 ** (n - 1))
        assert ceiling / 2 <= wait <= ceiling, (n, wait)
    assert len(set(waits)) == 5  # jittered, not a fixed schedule


def test_an_unreachable_server_stops_the_run_at_the_first_call(no_llm_env: None, monkeypatch: pytest.MonkeyPatch
                                                                ) -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://user:pw@127.0.0.1:{port}/v1")
    monkeypatch.setenv("GOLDSET_MODEL", "m")
    endpoint = resolve_endpoint(None, overrides=fast(max_attempts=3))

    async def go() -> Any:
        async with LLMClient(endpoint) as llm:
            with pytest.raises(EndpointError) as err:
                await asyncio.gather(*(llm.complete_json(msgs(f"q{i}"), Answer, schema_name="answer")
                                       for i in range(4)))
            with pytest.raises(EndpointError):  # later calls stop at once too
                await llm.complete_json(msgs("later"), Answer, schema_name="answer")
            return str(err.value), llm.stats

    text, stats = run(go())
    assert f"connection refused to http://127.0.0.1:{port}/v1" in text and "OPENAI_BASE_URL" in text
    assert "\n" not in text and "pw" not in text  # no credentials from the URL
    assert stats.retries == 0 and stats.calls <= 4  # no retry: nothing has ever answered at that address


def test_a_lost_connection_after_a_call_succeeded_is_retried(fake_llm: FakeOpenAI) -> None:
    fake_llm.add_responder("answer", answer_responder)
    endpoint = resolve_endpoint(None, overrides=fast())

    async def go() -> Any:
        async with LLMClient(endpoint) as llm:
            first = await llm.complete_json(msgs("q1"), Answer, schema_name="answer")
            fake_llm.inject("disconnect")
            second = await llm.complete_json(msgs("q2"), Answer, schema_name="answer")
            return first, second, llm.stats

    first, second, stats = run(go())
    assert first.ok and second.ok and second.attempts == 2 and stats.retries == 1 and fake_llm.calls == 3


def test_a_400_naming_an_unknown_model_stops_the_run(fake_llm_factory: Any) -> None:
    fake = fake_llm_factory(known_models={"real-model"}, unknown_model_status=400)
    fake.add_responder("answer", answer_responder)
    endpoint = resolve_endpoint(None, overrides=fast(model="typo-model"))

    async def go() -> Any:
        async with LLMClient(endpoint) as llm:
            with pytest.raises(EndpointError) as err:
                await llm.complete_json(msgs("q"), Answer, schema_name="answer")
            with pytest.raises(EndpointError):
                await llm.complete_json(msgs("q2"), Answer, schema_name="answer")
            return str(err.value)

    text = run(go())
    assert "typo-model" in text and "HTTP 400" in text and "GOLDSET_MODEL" in text and fake.calls == 1


@pytest.mark.parametrize(
    ("message", "code"),
    [("The model `typo-model` does not exist or you do not have access to it.", "invalid_request_error"),
     ("Bad request", "model_not_found")],
)
def test_a_400_about_the_model_is_fatal_whatever_its_wording(fake_llm: FakeOpenAI, message: str, code: str) -> None:
    fake_llm.inject(Fault("400", message=message, code=code))
    endpoint = resolve_endpoint(None, overrides=fast())

    async def go() -> None:
        async with LLMClient(endpoint) as llm:
            await llm.complete_json(msgs("q"), Answer, schema_name="answer")

    with pytest.raises(EndpointError, match="HTTP 400"):
        run(go())


def test_api_key_never_in_logs_even_at_debug(fake_llm: FakeOpenAI, caplog: pytest.LogCaptureFixture,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    import logging

    fake_llm.add_responder("answer", answer_responder)
    fake_llm.inject("400", "500", "malformed", "malformed", "401")
    endpoint = resolve_endpoint(None, overrides=fast(concurrency=1))

    async def go() -> None:
        async with LLMClient(endpoint) as llm:
            for i in range(4):
                await llm.complete_json(msgs(f"q{i}"), Answer, schema_name="answer")

    # every logger at DEBUG, the SDK's and the HTTP library's included
    with caplog.at_level(logging.DEBUG), pytest.raises(EndpointError) as err:
        run(go())
    assert caplog.records, "expected log records to check"
    assert "HTTP 400" in caplog.text and "repair" in caplog.text
    for text in (caplog.text, str(err.value)):
        assert fake_llm.api_key not in text and "SECRET123456" not in text


def test_exhausted_quota_stops_the_run_without_retries(fake_llm: FakeOpenAI) -> None:
    fake_llm.inject(Fault("429", message="You exceeded your current quota.", code="insufficient_quota"), "429")
    endpoint = resolve_endpoint(None, overrides=fast())

    async def go() -> Any:
        async with LLMClient(endpoint) as llm:
            with pytest.raises(EndpointError) as err:
                await llm.complete_json(msgs("q"), Answer, schema_name="answer")
            return str(err.value), llm.stats

    text, stats = run(go())
    assert "quota" in text and "billing" in text
    assert fake_llm.calls == 1 and stats.retries == 0


def test_identical_calls_in_flight_are_sent_once(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOpenAI(latency_s=0.1) as fake:
        fake.add_responder("answer", answer_responder)
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", fake.api_key)
        monkeypatch.setenv("GOLDSET_MODEL", "m")
        endpoint = resolve_endpoint(None, overrides=fast())

        async def go(use_cache: bool) -> Any:
            async with LLMClient(endpoint, use_cache=use_cache) as llm:
                results = await asyncio.gather(
                    *(llm.complete_json(msgs(q), Answer, schema_name="answer") for q in ["same", "same", "other"])
                )
                return results, llm.stats

        results, stats = run(go(True))
        assert fake.calls == 2
        assert [r.value for r in results] == [Answer(answer="about same", score=4)] * 2 + [
            Answer(answer="about other", score=5)
        ]
        assert [r.cached for r in results] == [False, True, False] and stats.cache_hits == 1
        run(go(False))  # --no-cache: every call is sent
        assert fake.calls == 5


def test_a_waiter_makes_the_call_itself_when_the_owner_is_cancelled(fake_llm: FakeOpenAI) -> None:
    fake_llm.add_responder("answer", answer_responder)
    fake_llm.latency_s = 0.3
    endpoint = resolve_endpoint(None, overrides=fast())

    async def go() -> Any:
        async with LLMClient(endpoint) as llm:
            owner = asyncio.create_task(llm.complete_json(msgs("q"), Answer, schema_name="answer"))
            await asyncio.sleep(0.05)
            waiter = asyncio.create_task(llm.complete_json(msgs("q"), Answer, schema_name="answer"))
            await asyncio.sleep(0.05)
            owner.cancel()
            result = await waiter  # the waiter makes the call itself
            return owner.cancelled(), result

    owner_cancelled, result = run(go())
    assert owner_cancelled and result.ok and not result.cached
    assert fake_llm.calls == 2


def test_a_cut_off_reply_gets_a_repair_and_only_the_whole_reply_is_kept(fake_llm: FakeOpenAI, tmp_path: Path) -> None:
    """Half a JSON document holds complete inner objects; none of them may pass for the reply."""
    fake_llm.add_responder("listing", listing_responder)
    fake_llm.inject("truncated")
    endpoint = resolve_endpoint(None, overrides=fast())

    async def go() -> Any:
        with CallJournal(tmp_path / "calls.sqlite") as journal:
            async with LLMClient(endpoint, journal) as llm:
                return await llm.complete_json(msgs("q"), Listing, schema_name="listing"), llm.stats

    result, stats = run(go())
    assert result.ok and result.attempts == 2 and stats.repairs == 1
    assert result.value == Listing.model_validate(listing_responder({}))
    repair = fake_llm.chat_requests()[1].body["messages"][-1]["content"]
    assert "not valid JSON" in repair


def test_a_reply_cut_off_twice_fails_and_is_not_cached(fake_llm: FakeOpenAI, tmp_path: Path) -> None:
    fake_llm.add_responder("listing", listing_responder)
    fake_llm.inject("truncated", "truncated")
    endpoint = resolve_endpoint(None, overrides=fast())

    async def go() -> Any:
        with CallJournal(tmp_path / "calls.sqlite") as journal:
            async with LLMClient(endpoint, journal) as llm:
                return await llm.complete_json(msgs("q"), Listing, schema_name="listing"), journal.count()

    result, stored = run(go())
    assert not result.ok and "not valid JSON" in (result.error or "") and stored == 0
    again, stored = run(go())  # a healthy server now: the call is made again, and kept
    assert again.ok and not again.cached and stored == 1 and fake_llm.calls == 3


def test_finish_reason_length_fails_the_call_even_when_the_reply_parses(fake_llm: FakeOpenAI, tmp_path: Path) -> None:
    fake_llm.add_responder("answer", answer_responder)
    fake_llm.inject(Fault("length", keep=1.0))
    endpoint = resolve_endpoint(None, overrides=fast(max_tokens=50))

    async def go() -> Any:
        with CallJournal(tmp_path / "calls.sqlite") as journal:
            async with LLMClient(endpoint, journal) as llm:
                res = await llm.complete_json(msgs("q"), Answer, schema_name="answer")
                return res, llm.stats, journal.count(), journal.failures()

    result, stats, stored, failures = run(go())
    assert not result.ok and result.attempts == 1 and fake_llm.calls == 1  # no repair: it would be cut off again
    assert "cut off" in (result.error or "") and "max_tokens" in (result.error or "")
    assert "finish_reason" in (result.error or "") and "50" in (result.error or "")
    assert stored == 0 and failures == [(result.key, result.error)] and stats.failures == 1
    again, _, stored, _ = run(go())
    assert again.ok and stored == 1 and fake_llm.calls == 2


def test_the_counters_are_what_the_server_saw(fake_llm: FakeOpenAI) -> None:
    fake_llm.add_responder("answer", answer_responder)
    fake_llm.inject(Fault("429", retry_after=0.01), "500", "schema", "ratelimit_headers", "500")
    endpoint = resolve_endpoint(None, overrides=fast(concurrency=1, retry_budget=10))

    async def go() -> Any:
        async with LLMClient(endpoint) as llm:
            results = [await llm.complete_json(msgs(f"q{i}"), Answer, schema_name="answer") for i in range(4)]
            return results, llm.stats

    results, stats = run(go())
    assert all(r.ok for r in results)
    assert stats.requests == fake_llm.calls == 8 and stats.calls == 4
    assert (stats.retries, stats.repairs, stats.fallbacks, stats.failures) == (3, 1, 0, 0)
    assert stats.requests == stats.calls + stats.retries + stats.repairs + stats.fallbacks
    assert stats.retry_budget == 10 and stats.retry_budget_left == 7
    assert sum(r.attempts for r in results) == stats.requests
    assert (stats.prompt_tokens, stats.completion_tokens) == (fake_llm.prompt_tokens, fake_llm.completion_tokens)
    assert stats.as_dict()["retry_budget_left"] == 7


def test_a_server_that_cannot_embed_says_why(fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    """The server's reason is kept (the filter printed only "29 question(s) got no vector")."""
    fake_llm.embeddings_error = "This server does not support embeddings. Start it with `--embeddings`"
    monkeypatch.setenv("GOLDSET_EMBEDDING_MODEL", "fake-embed")
    endpoint = resolve_endpoint(None, overrides=fast())

    async def go() -> tuple[list[Any], list[str]]:
        async with LLMClient(endpoint) as llm:
            return await llm.embed(["a question", "another question"]), llm.embedding_errors

    vectors, errors = run(go())
    assert vectors == [None, None]
    assert len(errors) == 1 and "does not support embeddings" in errors[0], errors

"""Rate limiting: the limiter's arithmetic with an injected clock, and the real client's pacing measured by the
arrival times the fake server recorded."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel

from goldset.llm import LLMClient, RateLimiter, TokenBucket, resolve_endpoint
from goldset.llm.ratelimit import parse_duration, ratelimit_pause_seconds, retry_after_seconds
from tests.helpers.fake_openai import FakeOpenAI, Fault


class FakeClock:
    """Virtual time: sleeping advances it instantly, and every sleep is recorded."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def test_bucket_refills_at_its_rate_and_caps_at_capacity() -> None:
    clock = FakeClock()
    bucket = TokenBucket(120, clock)  # 2 per second, holds 2
    assert bucket.capacity == 2
    assert bucket.wait_time(1) == 0
    bucket.take(2)
    assert bucket.wait_time(1) == pytest.approx(0.5)
    clock.now += 10
    assert bucket.level <= bucket.capacity and bucket.wait_time(2) == 0
    bucket.take(2)
    bucket.give_back(5)  # settle never overfills
    clock.now += 0
    assert bucket.wait_time(2) == 0 and bucket.level == pytest.approx(2)


def test_requests_are_paced_at_rpm() -> None:
    clock = FakeClock()
    limiter = RateLimiter(rpm=60, clock=clock, sleep=clock.sleep)  # one per second, burst of one

    async def go() -> list[float]:
        times = []
        for _ in range(5):
            await limiter.acquire(10)
            times.append(clock.now)
        return times

    times = asyncio.run(go())
    assert [t - times[0] for t in times] == pytest.approx([0, 1, 2, 3, 4])


def test_token_limit_uses_estimates_and_settles_actual_usage() -> None:
    clock = FakeClock()
    limiter = RateLimiter(tpm=6000, clock=clock, sleep=clock.sleep)  # 100 tokens/s, holds 100

    async def go() -> None:
        await limiter.acquire(100)  # empties the bucket
        start = clock.now
        await limiter.acquire(50)
        assert clock.now - start == pytest.approx(0.5)
        # The reply used 10 tokens, not 50: 40 come back, so the next 40-token request goes at once.
        limiter.settle(50, 10)
        start = clock.now
        await limiter.acquire(40)
        assert clock.now == start
        # A reply that used more than estimated drives the bucket into debt: the next request waits longer.
        limiter.settle(40, 140)
        start = clock.now
        await limiter.acquire(10)
        assert clock.now - start == pytest.approx(1.1)

    asyncio.run(go())


def test_oversized_request_waits_for_full_bucket_not_forever() -> None:
    clock = FakeClock()
    limiter = RateLimiter(tpm=600, clock=clock, sleep=clock.sleep)  # 10 tokens/s, holds 10

    async def go() -> None:
        await limiter.acquire(1000)  # bigger than the bucket: goes when full, leaves a debt of 990
        start = clock.now
        await limiter.acquire(10)
        assert clock.now - start == pytest.approx(100.0)  # (990 + 10) / 10 per second

    asyncio.run(go())


def test_pause_holds_every_request_until_it_ends() -> None:
    clock = FakeClock()
    limiter = RateLimiter(clock=clock, sleep=clock.sleep)  # no rpm/tpm: only pauses

    async def go() -> None:
        await limiter.acquire(1)
        assert clock.sleeps == []
        limiter.pause_for(2.5)
        limiter.pause_for(1.0)  # a shorter pause never cuts an existing one
        start = clock.now
        await asyncio.gather(limiter.acquire(1), limiter.acquire(1))
        assert clock.now - start == pytest.approx(2.5)

    asyncio.run(go())


def test_header_parsing() -> None:
    assert parse_duration("6m0s") == 360
    assert parse_duration("20ms") == pytest.approx(0.02)
    assert parse_duration("1h2m3.5s") == pytest.approx(3723.5)
    assert parse_duration("2") == 2
    assert parse_duration("soon") is None
    assert retry_after_seconds({"retry-after": "3"}) == 3
    assert retry_after_seconds({"retry-after-ms": "250", "retry-after": "1"}) == pytest.approx(0.25)
    assert retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0  # in the past
    assert retry_after_seconds({}) is None
    assert ratelimit_pause_seconds({"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1.5s"}) == 1.5
    assert ratelimit_pause_seconds({"x-ratelimit-remaining-requests": "5", "x-ratelimit-reset-requests": "9s"}) is None
    assert (
        ratelimit_pause_seconds({"x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "250ms"}) == 0.25
    )


class Echo(BaseModel):
    text: str


def _echo(body: dict[str, Any]) -> dict[str, Any]:
    return {"text": body["messages"][-1]["content"]}


def test_client_respects_rpm_measured_at_the_server(fake_llm: FakeOpenAI) -> None:
    fake_llm.add_responder("echo", _echo)
    rpm, n = 240.0, 12  # 4 per second, burst of 4: slow enough that a loaded CI machine's jitter stays in `slack`
    endpoint = resolve_endpoint(None, overrides={"rpm": rpm, "concurrency": n})

    async def go() -> None:
        async with LLMClient(endpoint) as llm:
            # Warm up first (the SDK's first request is slower), then wait for the bucket to refill.
            assert (await llm.complete_json([{"role": "user", "content": "warm"}], Echo, schema_name="echo")).ok
            await asyncio.sleep(0.2)
            results = await asyncio.gather(
                *(llm.complete_json([{"role": "user", "content": f"m{i}"}], Echo, schema_name="echo") for i in range(n))
            )
        assert all(r.ok for r in results)

    asyncio.run(go())
    times = sorted(fake_llm.arrival_times()[1:])
    assert len(times) == n
    rate, burst = rpm / 60, rpm / 60
    # Token-bucket invariant: any k consecutive arrivals span at least (k - burst) / rate seconds, give or take
    # the time between the limiter letting a request go and the server stamping its arrival (the SDK builds each
    # request on the CPU this machine shares with other jobs): `slack`, one request's worth. Without a limiter,
    # the 12 requests arrive within ~0.1 s and break the invariant by several requests.
    slack = 1 / rate
    for i in range(n):
        for j in range(i + 1, n):
            assert (j - i + 1) <= burst + rate * (times[j] - times[i] + slack), (i, j, times[j] - times[i])
    assert times[-1] - times[0] >= (n - burst) / rate - slack


def test_ratelimit_headers_pause_the_client(fake_llm: FakeOpenAI) -> None:
    fake_llm.add_responder("echo", _echo)
    fake_llm.inject(Fault("ratelimit_headers", reset="0.4s"))
    endpoint = resolve_endpoint(None)

    async def go() -> None:
        async with LLMClient(endpoint) as llm:
            for i in range(2):
                assert (await llm.complete_json([{"role": "user", "content": str(i)}], Echo, schema_name="echo")).ok

    asyncio.run(go())
    t0, t1 = fake_llm.arrival_times()
    assert t1 - t0 >= 0.4


def test_retry_after_pauses_other_calls_too(fake_llm: FakeOpenAI) -> None:
    """A 429 pauses the whole client: a call that starts during the pause waits for it as well."""
    fake_llm.add_responder("echo", _echo)
    fake_llm.inject(Fault("429", retry_after=0.5))
    endpoint = resolve_endpoint(None, overrides={"backoff_base_s": 0.0})

    async def go() -> None:
        async with LLMClient(endpoint) as llm:
            first = asyncio.create_task(
                llm.complete_json([{"role": "user", "content": "a"}], Echo, schema_name="echo")
            )
            while fake_llm.calls < 1:
                await asyncio.sleep(0.005)
            await asyncio.sleep(0.05)  # the 429 has been handled: the pause is on
            second = await llm.complete_json([{"role": "user", "content": "b"}], Echo, schema_name="echo")
            assert (await first).ok and second.ok

    asyncio.run(go())
    times = fake_llm.arrival_times()
    assert len(times) == 3
    assert min(times[1:]) - times[0] >= 0.5

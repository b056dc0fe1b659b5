"""Client-side rate limits: token buckets for requests/minute and tokens/minute, plus server-imposed pauses.

Each bucket refills continuously at the configured rate and holds at most ``burst_s`` seconds of allowance (one
second by default, and at least one request): requests are paced evenly instead of being fired in a burst of a
whole minute's allowance, which is what trips server-side limits. A request takes one unit from the
request bucket and its *estimated* tokens from the token bucket before it is sent; when the reply reports the
real usage the difference is settled (:meth:`RateLimiter.settle`), so the tpm limit tracks what the server
counts. A request larger than the bucket waits for a full bucket and then drives it into
debt, rather than waiting forever.

A 429 ``Retry-After`` or ``x-ratelimit-remaining-*: 0`` pauses the *whole* client (:meth:`RateLimiter.pause_until`),
not just the call that saw it: the limit is the account's, shared by every call in flight.

The clock and sleep are injectable, so the arithmetic is unit-tested without waiting.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable, Mapping

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]


class TokenBucket:
    """``rate_per_min`` units per minute; holds up to ``burst_s`` seconds' worth (at least one unit)."""

    def __init__(self, rate_per_min: float, clock: Clock, burst_s: float = 1.0) -> None:
        self.rate = float(rate_per_min) / 60.0  # per second
        self.capacity = max(1.0, self.rate * burst_s)
        self.level = self.capacity
        self._clock = clock
        self._t = clock()

    def _refill(self) -> None:
        now = self._clock()
        if now > self._t:
            self.level = min(self.capacity, self.level + (now - self._t) * self.rate)
        self._t = now

    def wait_time(self, amount: float) -> float:
        """Seconds until ``amount`` (capped at the capacity) can be taken; 0 if now."""
        self._refill()
        need = min(amount, self.capacity)
        if self.level >= need:
            return 0.0
        return (need - self.level) / self.rate

    def take(self, amount: float) -> None:
        """Take ``amount`` units now (the level may go below zero: debt repaid by later refills)."""
        self._refill()
        self.level -= amount

    def give_back(self, amount: float) -> None:
        """Settle an estimate: positive returns units, negative takes more (may go into debt)."""
        self._refill()
        self.level = min(self.capacity, self.level + amount)


def parse_duration(value: str | None) -> float | None:
    """Seconds from a rate-limit header: ``"1.5"``, ``"20ms"``, ``"1s"``, ``"6m0s"``, ``"1h2m3.5s"``."""
    if value is None:
        return None
    value = value.strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    total = 0.0
    matched = False
    for number, unit in re.findall(r"(\d+(?:\.\d+)?)\s*(ms|h|m|s)", value):
        matched = True
        total += float(number) * {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}[unit]
    return total if matched else None


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """The server's requested wait: ``retry-after-ms``, then ``retry-after`` (seconds or an HTTP date)."""
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    seconds = parse_duration(value)
    if seconds is not None:
        return seconds
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def ratelimit_pause_seconds(headers: Mapping[str, str]) -> float | None:
    """How long to pause when ``x-ratelimit-remaining-requests`` or ``-tokens`` is exhausted, else ``None``."""
    pause: float | None = None
    for kind in ("requests", "tokens"):
        remaining = headers.get(f"x-ratelimit-remaining-{kind}")
        if remaining is None:
            continue
        try:
            left = float(remaining)
        except ValueError:
            continue
        if left <= 0:
            reset = parse_duration(headers.get(f"x-ratelimit-reset-{kind}")) or 1.0
            pause = max(pause or 0.0, reset)
    return pause


class RateLimiter:
    """rpm/tpm token buckets and a shared pause. ``None`` limits are not enforced."""

    def __init__(
        self,
        rpm: float | None = None,
        tpm: float | None = None,
        *,
        clock: Clock = time.monotonic,
        sleep: Sleep = asyncio.sleep,
        burst_s: float = 1.0,
    ) -> None:
        self._clock = clock
        self._sleep = sleep
        self.requests = TokenBucket(rpm, clock, burst_s) if rpm else None
        self.tokens = TokenBucket(tpm, clock, burst_s) if tpm else None
        self.paused_until = 0.0
        self._lock: asyncio.Lock | None = None

    def pause_until(self, t: float) -> None:
        """Hold every request until clock time ``t`` (never shortens an existing pause)."""
        self.paused_until = max(self.paused_until, t)

    def pause_for(self, seconds: float) -> None:
        """Hold every request for ``seconds`` from now (never shortens an existing pause)."""
        self.pause_until(self._clock() + seconds)

    def wait_time(self, tokens: int) -> float:
        """Seconds until a request of ``tokens`` may go (0 = now). Pure given the clock."""
        wait = max(0.0, self.paused_until - self._clock())
        if self.requests is not None:
            wait = max(wait, self.requests.wait_time(1))
        if self.tokens is not None:
            wait = max(wait, self.tokens.wait_time(tokens))
        return wait

    async def acquire(self, tokens: int) -> None:
        """Wait until the request may go, then take its share. Requests are served first come, first served."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            while True:
                wait = self.wait_time(tokens)
                if wait <= 0:
                    break
                await self._sleep(wait)
            if self.requests is not None:
                self.requests.take(1)
            if self.tokens is not None:
                self.tokens.take(tokens)

    def settle(self, estimated: int, actual: int) -> None:
        """Correct the token bucket once the real usage of a request is known."""
        if self.tokens is not None and actual != estimated:
            self.tokens.give_back(estimated - actual)

"""Retries and limits of one client: what a failed request means, the run's retry budget, backoff, and pauses.

A failed request is one of:

* **fatal** — it would fail every call of the run (401/403 authentication or permission, 404 or a 400 that names
  the model — ``model_not_found``, "model … does not exist" —, a 429 ``insufficient_quota``, or no connection to
  the server at all while no request has ever succeeded — a wrong or dead base URL): an
  :class:`goldset.errors.EndpointError` is raised, remembered, and raised again by every later call without a
  request, so the run stops at once instead of burning the retry budget on calls that cannot work;
* **worth retrying** — 429, 408, 5xx, timeouts, connection errors once the server has answered a request (a
  server that worked and then dropped a connection or restarted): one retry is taken from ``retry_budget``
  (shared by every call of the client, so it bounds the whole run) and the call waits — exponential backoff with
  jitter, or the server's ``Retry-After``, which pauses *every* call of the client (the limit is the account's);
* **a refused response format** — a 400/422 about ``response_format`` (or tools), or a 5xx whose body is such a
  validation message (llama.cpp's server answers ``json_schema`` with HTTP 500 "Input should be 'text' or
  'json_object'"), while ``structured: auto``: the call tries the next weaker mode; this is not a retry and spends
  no budget (:attr:`RetryPolicy.refusal` keeps what the server said);
* anything else fails the call for good (:class:`CallFailed`), and the run goes on.

A successful reply's ``x-ratelimit-remaining-*: 0`` headers also pause the client (:meth:`RetryPolicy.settle`).
"""

from __future__ import annotations

import asyncio
import logging
import random
import re
import socket
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from goldset.errors import EndpointError
from goldset.llm.ratelimit import RateLimiter, ratelimit_pause_seconds, retry_after_seconds
from goldset.llm.stats import CallStats

if TYPE_CHECKING:
    from goldset.llm.endpoints import Endpoint

log = logging.getLogger("goldset.llm")

#: Longest pause a server can impose through Retry-After (a broken header must not stall a run for hours).
MAX_SERVER_PAUSE_S = 300.0
#: Words in a 400 that mean "this server does not support that response_format" (→ fall back to a weaker mode).
_FORMAT_HINTS = (
    "response_format", "json_schema", "json_object", "schema", "structured", "guided", "format", "tool",
)
#: Words of a validation message (a 5xx counts as a refused format only with one of these and a format hint:
#: an ordinary server error is retried).
_VALIDATION_HINTS = (
    "input should be", "validation", "not supported", "unsupported", "invalid", "must be", "not allowed",
    "unknown", "extra inputs",
)
#: A 400/422 that says the model does not exist (servers differ in code and wording; 404 is fatal anyway).
_UNKNOWN_MODEL_RE = re.compile(r"\bmodel\b.{0,200}?\b(?:does not exist|not found|not exist)\b", re.IGNORECASE)


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and the exceptions it was raised from, outermost first."""
    out: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and all(current is not seen for seen in out):
        out.append(current)
        current = current.__cause__ or current.__context__
    return out


def _server_message(exc: Any) -> str:
    """The message of an ``openai.APIStatusError`` as the server wrote it: the ``error.message`` of an
    OpenAI-style body (the SDK's own ``message`` wraps it in "Error code: N - …", and openai 1.x in the whole body
    as a Python repr), else the SDK's message."""
    body = exc.body
    message = body.get("message") if isinstance(body, dict) else None
    return message if isinstance(message, str) and message.strip() else str(exc.message)


def _attempts(n: int) -> str:
    return f"{n} attempt" if n == 1 else f"{n} attempts"


def connection_failure(exc: BaseException, url: str) -> tuple[bool, str]:
    """(no connection could be made at all, what happened in words) for an ``openai.APIConnectionError``.

    The SDK's error only says "Connection error."; the cause is further down the chain: ``ConnectError`` of
    httpx, httpx2 or httpcore (matched by class name, as the SDK runs on either library) when no connection was
    made — refused, unknown host, TLS handshake —, anything else (the connection dropped mid-request) otherwise.
    """
    chain = _chain(exc)
    connect = any(cls.__name__ == "ConnectError" for e in chain for cls in type(e).__mro__)
    for e in chain:
        if isinstance(e, ConnectionRefusedError):
            return True, f"connection refused to {url}"
        if isinstance(e, socket.gaierror):
            return True, f"cannot connect to {url}: unknown host ({e.strerror or e})"
    detail = str(chain[-1]) or type(chain[-1]).__name__
    if connect:
        return True, f"cannot connect to {url}: {detail}"
    return False, f"connection to {url} lost: {detail}"


def refuses_format(status: int, detail: str) -> bool:
    """True when an HTTP error says the server does not take the request's structured-output form: a 400/422
    naming the format, or a 5xx whose message is a validation error naming it (see the module docstring)."""
    lowered = detail.lower()
    if not any(h in lowered for h in _FORMAT_HINTS):
        return False
    return status in (400, 422) or (status >= 500 and any(h in lowered for h in _VALIDATION_HINTS))


class CallFailed(Exception):
    """The call failed for good; ``str()`` is the reason in one line (redacted before it is shown or stored)."""


class RetryPolicy:
    """The retry budget, backoff, server pauses and fatal errors of one client (see the module docstring).

    ``sleep`` and ``rng`` are injectable so that tests can record the waits instead of sleeping.
    """

    def __init__(
        self,
        endpoint: Endpoint,
        stats: CallStats,
        limiter: RateLimiter,
        *,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.settings = endpoint.settings
        self.stats = stats
        self.limiter = limiter
        stats.retry_budget = self.settings.retry_budget
        #: True once a request got a successful reply: from then on a connection error is worth a retry.
        self.worked = False
        #: The client's request slots (:class:`goldset.llm.capacity.Slots`), to tell a queued timeout from a dead
        #: server in the reason.
        self.slots: Any = None
        #: What the server said when it last refused a response format (for the report).
        self.refusal = ""
        #: The error that stops the run, once one was seen.
        self.fatal: EndpointError | None = None
        self._sleep = sleep
        self._rng = rng or random.Random()

    def check(self) -> None:
        """Raise the run-stopping error, if one was seen."""
        if self.fatal is not None:
            raise self.fatal

    async def before_request(self, estimate: int) -> None:
        """Wait until the rate limits let a request of ``estimate`` tokens go; raise if the run is stopped."""
        self.check()
        await self.limiter.acquire(estimate)
        self.check()  # the run may have been stopped while this request waited for its turn

    def settle(self, estimate: int, used: int, headers: Mapping[str, str]) -> None:
        """A request got its reply: correct the token estimate and honour exhausted rate-limit headers."""
        self.worked = True
        self.limiter.settle(estimate, used)
        pause = ratelimit_pause_seconds(headers)
        if pause:
            self.limiter.pause_for(min(pause, MAX_SERVER_PAUSE_S))

    def _stop(self, message: str) -> EndpointError:
        self.fatal = EndpointError(message)
        return self.fatal

    async def on_error(self, exc: Exception, *, attempts: int, estimate: int, can_fall_back: bool) -> bool:
        """What the failed request ``exc`` means: raise :class:`EndpointError` (fatal) or :class:`CallFailed`, or
        return after the wait for a retry (``False``), or at once to try a weaker response format (``True``,
        only when ``can_fall_back``). ``attempts`` counts the call's requests so far, this one included."""
        import openai

        if isinstance(exc, CallFailed):
            raise exc
        endpoint = self.endpoint
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            detail = endpoint.redact(_server_message(exc))
            self.limiter.settle(estimate, 0)  # a refused request used none of our token allowance
            if status in (401, 403):
                what = "authentication failed" if status == 401 else "permission denied"
                raise self._stop(
                    f"endpoint {endpoint}: {what} (HTTP {status}: {detail}); check the key in "
                    f"{self.settings.api_key_env} (environment or .env)"
                )
            if status == 429 and exc.code == "insufficient_quota":
                # Retrying cannot help until someone adds credit: stop instead of spending the retry budget.
                raise self._stop(
                    f"endpoint {endpoint}: the account's quota is exhausted (HTTP 429: {detail}); check the "
                    "plan and billing of this key, or use another endpoint"
                )
            if status == 404:
                raise self._stop(
                    f"endpoint {endpoint}: HTTP 404 ({detail}); check the model name (GOLDSET_MODEL or "
                    f"llm.endpoints.{endpoint.name}.model) and that base_url ends in /v1"
                )
            if status in (400, 422) and (exc.code == "model_not_found" or _UNKNOWN_MODEL_RE.search(detail)):
                raise self._stop(
                    f"endpoint {endpoint}: the server does not know model {endpoint.model!r} (HTTP {status}: "
                    f"{detail}); check the model name (GOLDSET_MODEL or llm.endpoints.{endpoint.name}.model)"
                )
            if can_fall_back and refuses_format(status, detail):
                self.refusal = f"HTTP {status}: {detail}"
                return True  # a fallback is not a retry: it does not spend the budget
            if status == 429 or status >= 500 or status == 408:
                server_wait = retry_after_seconds({k.lower(): v for k, v in exc.response.headers.items()})
                await self.retry(f"HTTP {status}: {detail}", attempts, server_wait)
                return False
            raise CallFailed(f"HTTP {status}: {detail}")
        if isinstance(exc, TimeoutError | openai.APITimeoutError):
            in_flight = self.slots.in_use if self.slots is not None else 1
            why = (
                f"{in_flight} requests in flight: queued behind the others on a server that serves fewer at once?"
                if in_flight > 1 else
                f"the only request in flight: the server is slow or stuck; raise llm.endpoints.{endpoint.name}."
                "timeout_s for a slow model"
            )
            await self.retry(f"timed out after {self.settings.timeout_s:g} s ({why})", attempts, None)
            return False
        if isinstance(exc, openai.APIConnectionError):
            self.limiter.settle(estimate, 0)
            no_connection, what = connection_failure(exc, endpoint.url)
            what = endpoint.redact(what)
            if no_connection and not self.worked:
                raise self._stop(
                    f"endpoint {endpoint.name}: {what}; check that the server is running and the URL "
                    f"(OPENAI_BASE_URL or llm.endpoints.{endpoint.name}.base_url)"
                )
            await self.retry(what, attempts, None)
            return False
        if isinstance(exc, openai.APIResponseValidationError | ValueError):
            raise CallFailed(f"unreadable response from the server: {endpoint.redact(str(exc))[:300]}") from None
        raise exc

    async def retry(self, reason: str, attempts: int, server_wait: float | None) -> None:
        """Spend one retry from the budget and wait, or fail the call if none is left."""
        if attempts >= self.settings.max_attempts:
            raise CallFailed(f"{reason}; gave up after {_attempts(attempts)}")
        if self.stats.retry_budget_left <= 0:
            raise CallFailed(f"{reason}; the run's retry budget ({self.settings.retry_budget}) is spent")
        self.stats.retries += 1  # spends one of the budget
        if server_wait is not None:
            # The server's limit is the account's: pause every call of this client, not just this one.
            self.limiter.pause_for(min(server_wait, MAX_SERVER_PAUSE_S))
            log.info("%s: %s; pausing %.2f s as the server asks", self.endpoint, reason, server_wait)
            return
        ceiling = min(self.settings.backoff_max_s, self.settings.backoff_base_s * 2 ** (attempts - 1))
        delay = ceiling / 2 + self._rng.uniform(0, ceiling / 2)
        log.info("%s: %s; retrying in %.2f s", self.endpoint, reason, delay)
        await self._sleep(delay)

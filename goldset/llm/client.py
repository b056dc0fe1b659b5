"""The LLM client: the openai SDK's async client, with our own retries, rate limits, structured output and journal.

One :class:`LLMClient` per endpoint per run. Calls go through a bounded pool (``concurrency``), the client-side
rpm/tpm limiter, and a retry loop with exponential backoff and jitter on 429, 5xx, timeouts and connection
errors. The SDK's own retries are off (``max_retries=0``) so that ``retry_budget`` (shared by every call of the
client) really bounds the retries of a run. A 429's ``Retry-After`` and exhausted ``x-ratelimit-remaining-*``
headers pause the whole client.

Outcomes of :meth:`LLMClient.complete_json`:

* a validated pydantic object (``CallResult.ok``), committed to the journal before it is returned;
* ``CallResult(value=None, error=reason)`` when retries run out, the call times out, the server rejects the
  request, or the reply still fails validation after one repair attempt (the model is shown its validation
  error). The failure is recorded in the journal, never served from it, and the run goes on;
* :class:`goldset.errors.EndpointError` for 401/403 (authentication, permission), 404 (unknown model) and a 429
  ``insufficient_quota``: these would fail every call, so the run stops at once instead of burning retries.

Error text from the server is redacted (:func:`goldset.redaction.redact`) before it is shown, logged or stored.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import random
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from goldset.errors import EndpointError
from goldset.hashing import canonical_json
from goldset.llm.journal import CallJournal, call_key, call_key_from_json, canonical_json_with
from goldset.llm.ratelimit import RateLimiter, ratelimit_pause_seconds, retry_after_seconds
from goldset.llm.structured import (
    ReplyError,
    parse_reply,
    response_format_json_schema,
    schema_instruction,
    schema_json_text,
    with_instruction,
)
from goldset.llm.usage import Usage, cost_usd, estimate_tokens
from goldset.redaction import redact
from goldset.text import estimate_llm_tokens

if TYPE_CHECKING:
    from goldset.llm.endpoints import Endpoint

T = TypeVar("T", bound=BaseModel)

log = logging.getLogger("goldset.llm")

#: Completion tokens assumed for the tpm limiter when the call sets no max_tokens.
DEFAULT_COMPLETION_ESTIMATE = 512
#: How much of an invalid reply is shown back to the model in the repair attempt.
REPAIR_ECHO_CHARS = 6000
#: Longest pause a server can impose through Retry-After (a broken header must not stall a run for hours).
MAX_SERVER_PAUSE_S = 300.0
#: Words in a 400 that mean "this server does not support that response_format" (→ fall back to a weaker mode).
_FORMAT_HINTS = ("response_format", "json_schema", "json_object", "schema", "structured", "guided", "format")
_NEXT_MODE = {"json_schema": "json_object", "json_object": "text"}
_RANK = {"json_schema": 0, "json_object": 1, "text": 2}


@dataclass
class CallResult(Generic[T]):
    """The outcome of one call. ``value`` is set on success, ``error`` (redacted, one line) on failure."""

    value: T | None
    error: str | None
    key: str
    cached: bool
    usage: Usage
    cost_usd: float | None
    model: str
    attempts: int

    @property
    def ok(self) -> bool:
        return self.value is not None


@dataclass
class CallStats:
    """Live counters of one client. ``calls`` counts HTTP requests actually sent (cache hits send none)."""

    calls: int = 0
    cache_hits: int = 0
    failures: int = 0
    retries: int = 0
    repairs: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    #: Requests whose model has no price in the config (their tokens are counted, their cost is not).
    unpriced_calls: int = 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class _Fail(Exception):
    """Internal: the call failed for good with this (already redacted) reason."""


def _consume_exception(future: asyncio.Future[Any]) -> None:
    """Mark a shared call's exception as seen: the task that owns it re-raises it itself."""
    if not future.cancelled():
        future.exception()


def _plain_completion(http: Any) -> Any:
    """The chat completion read straight from the JSON body, as plain namespaces with the attributes the client
    uses (``choices[0].message.content`` / ``.refusal``, ``choices[0].finish_reason``, ``usage.prompt_tokens`` /
    ``.completion_tokens``), or ``None`` when the reply is not the usual shape: the caller then lets the SDK parse
    it, which builds the whole ``ChatCompletion`` object tree (~0.2 ms per call). For the usual shape the
    attributes hold exactly what the SDK's object would. A body that is not JSON raises here just as in the SDK,
    which reads it with the same ``response.json()``.
    """
    if not http.headers.get("content-type", "*").split(";")[0].endswith("json"):
        return None
    data = http.json()
    if not isinstance(data, dict):
        return None
    choices, usage = data.get("choices"), data.get("usage")
    if not isinstance(choices, list) or not (usage is None or _plain_usage(usage)):
        return None
    out = []
    for choice in choices[:1]:  # the client reads the first choice only
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict) or "finish_reason" not in choice:
            return None
        content, refusal, finish = message.get("content"), message.get("refusal"), choice["finish_reason"]
        if not all(v is None or type(v) is str for v in (content, refusal, finish)):
            return None
        out.append(SimpleNamespace(message=SimpleNamespace(content=content, refusal=refusal), finish_reason=finish))
    if usage is not None:
        usage = SimpleNamespace(prompt_tokens=usage["prompt_tokens"], completion_tokens=usage["completion_tokens"])
    return SimpleNamespace(choices=out, usage=usage)


_USAGE_KEYS = ("prompt_tokens", "completion_tokens")


def _plain_usage(usage: Any) -> bool:
    if not isinstance(usage, dict):
        return False
    return all(k in usage and (usage[k] is None or type(usage[k]) is int) for k in _USAGE_KEYS)


class LLMClient:
    """Async client for one endpoint. Use ``async with LLMClient(endpoint, journal) as llm:``."""

    def __init__(
        self,
        endpoint: Endpoint,
        journal: CallJournal | None = None,
        *,
        use_cache: bool = True,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.settings = endpoint.settings
        self.journal = journal
        self.use_cache = use_cache
        self.stats = CallStats()
        self._clock = clock
        self._sleep = sleep
        self._rng = rng or random.Random()
        self.limiter = RateLimiter(self.settings.rpm, self.settings.tpm, clock=clock, sleep=sleep)
        self._pool = asyncio.Semaphore(self.settings.concurrency)
        self._budget = self.settings.retry_budget
        self._auto = self.settings.structured == "auto"
        self.mode: str = "json_schema" if self._auto else self.settings.structured
        self._client: Any = None
        self._completion_type: Any = None
        self._raw_header = ""
        self._fatal: EndpointError | None = None
        self._in_flight: dict[str, asyncio.Future[CallResult[Any]]] = {}

    # -- lifecycle -------------------------------------------------------------------------------------------
    def _sdk(self) -> Any:
        if self._client is None:
            from openai import AsyncOpenAI
            from openai._constants import RAW_RESPONSE_HEADER
            from openai.types.chat import ChatCompletion

            # What chat.completions.with_raw_response.create passes to post (see _send).
            self._completion_type = ChatCompletion
            self._raw_header = RAW_RESPONSE_HEADER

            self._client = AsyncOpenAI(
                api_key=self.endpoint.client_key(),
                base_url=self.endpoint.base_url,
                max_retries=0,  # the retry loop and its budget are ours
                timeout=self.settings.timeout_s + 5.0,  # the hard per-request limit is asyncio's, below
            )
        return self._client

    async def __aenter__(self) -> LLMClient:
        self._sdk()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None

    @property
    def retry_budget_left(self) -> int:
        return self._budget

    def _redact(self, text: str) -> str:
        return redact(" ".join(str(text).split()), self.endpoint.secrets())

    # -- the public call -------------------------------------------------------------------------------------
    async def complete_json(
        self,
        messages: list[dict[str, str]],
        schema: type[T],
        *,
        schema_name: str,
        temperature: float | None = None,
        seed: int | None = None,
        max_tokens: int | None = None,
    ) -> CallResult[T]:
        """One structured call: cached reply if the journal has one, else the endpoint (see module docstring)."""
        if self._fatal is not None:
            raise self._fatal
        params = {
            "temperature": self.settings.temperature if temperature is None else temperature,
            "seed": seed,
            "max_tokens": max_tokens if max_tokens is not None else self.settings.max_tokens,
        }
        messages_json = canonical_json([dict(m) for m in messages])  # encoded once: the key and the journal
        key = call_key_from_json(self.endpoint.model, messages_json, schema_json_text(schema), params)
        cached = self._from_cache(key, schema)
        if cached is not None:
            return cached
        if self.use_cache:
            # The same call already in flight (e.g. two identical chunks): wait for it instead of paying twice.
            pending = self._in_flight.get(key)
            if pending is not None:
                shared: CallResult[Any] | None = None
                try:
                    shared = await asyncio.shield(pending)
                except asyncio.CancelledError:
                    if not pending.cancelled():
                        raise  # this task itself was cancelled
                    # the task that owned the call was cancelled: make the call here instead
                if shared is not None:
                    if shared.ok:
                        self.stats.cache_hits += 1
                        return dataclasses.replace(shared, cached=True, attempts=0)
                    return shared
        future: asyncio.Future[CallResult[Any]] = asyncio.get_running_loop().create_future()
        future.add_done_callback(_consume_exception)
        self._in_flight[key] = future
        try:
            async with self._pool:
                if self._fatal is not None:
                    raise self._fatal
                result = await self._call(key, messages, schema, schema_name, params, messages_json)
        except BaseException as exc:
            if isinstance(exc, asyncio.CancelledError):
                future.cancel()
            else:
                future.set_exception(exc)
            raise
        finally:
            if self._in_flight.get(key) is future:
                del self._in_flight[key]
        future.set_result(result)
        return result

    def _from_cache(self, key: str, schema: type[T]) -> CallResult[T] | None:
        if not self.use_cache or self.journal is None:
            return None
        entry = self.journal.get(key)
        if entry is None:
            return None
        try:
            value = schema.model_validate(entry.reply)
        except ValidationError:
            return None  # stored under an older schema definition with the same JSON schema: call again
        self.stats.cache_hits += 1
        usage = Usage(
            prompt_tokens=entry.prompt_tokens,
            completion_tokens=entry.completion_tokens,
            estimated=entry.usage_estimated,
        )
        return CallResult(
            value=value, error=None, key=key, cached=True, usage=usage, cost_usd=entry.cost_usd, model=entry.model,
            attempts=0,
        )

    # -- the retry loop --------------------------------------------------------------------------------------
    async def _call(
        self, key: str, messages: list[dict[str, str]], schema: type[T], schema_name: str, params: dict[str, Any],
        messages_json: str,
    ) -> CallResult[T]:
        usage = Usage()
        attempts = 0
        repaired = False
        convo: list[dict[str, str]] = [dict(m) for m in messages]
        mode = self.mode
        last_reason = ""
        try:
            while True:
                sent = convo if mode == "json_schema" else with_instruction(convo, schema_instruction(schema))
                estimate = estimate_tokens(sent) + (params["max_tokens"] or DEFAULT_COMPLETION_ESTIMATE)
                if attempts >= self.settings.max_attempts:
                    raise _Fail(f"{last_reason}; gave up after {attempts} attempts (max_attempts)")
                await self.limiter.acquire(estimate)
                attempts += 1
                self.stats.calls += 1
                try:
                    content, got, headers, finish = await self._send(sent, schema, schema_name, mode, params)
                except Exception as exc:  # classified below; anything unknown is re-raised
                    if await self._handle_error(exc, mode, attempts, estimate):
                        last_reason = f"the server refused response_format {mode}"
                        mode = _NEXT_MODE[mode]  # try this call in the weaker mode (not a retry)
                    continue
                if _RANK[mode] > _RANK[self.mode]:
                    # The weaker mode worked where the stronger one was refused: use it from now on. Deciding only
                    # after a success keeps one odd 400 from downgrading the whole run.
                    log.warning("%s: response_format %s is refused; using %s from now on", self.endpoint,
                                self.mode, mode)
                    self.mode = mode
                if got is None:  # the server sent no usage: estimate it, and say so
                    got = Usage(
                        prompt_tokens=estimate_tokens(sent), completion_tokens=estimate_llm_tokens(content or ""),
                        estimated=True,
                    )
                usage = usage + got
                self._count_tokens(got)
                self.limiter.settle(estimate, got.total_tokens)
                pause = ratelimit_pause_seconds(headers)
                if pause:
                    self.limiter.pause_for(min(pause, MAX_SERVER_PAUSE_S))
                try:
                    value = parse_reply(content or "", schema)
                except ReplyError as exc:
                    reason = str(exc)
                    if finish == "length":
                        reason += " (the reply was cut off at max_tokens; raise max_tokens)"
                    if repaired:
                        raise _Fail(f"{reason}; still invalid after one repair attempt") from None
                    repaired = True
                    last_reason = reason
                    self.stats.repairs += 1
                    log.info("%s: invalid reply for %s, asking for a repair: %s", self.endpoint, schema_name, reason)
                    convo = [
                        *convo,
                        {"role": "assistant", "content": (content or "")[:REPAIR_ECHO_CHARS]},
                        {
                            "role": "user",
                            "content": f"Your reply was invalid: {reason}. Reply again with only the corrected "
                            "JSON object that matches the schema.",
                        },
                    ]
                    continue
                return self._succeed(key, value, usage, attempts, schema_name, messages, params, messages_json)
        except _Fail as fail:
            reason = self._redact(str(fail))
            self.stats.failures += 1
            # info, not warning: the caller reports failed calls (a warning would print over its progress display)
            log.info("%s: %s call failed: %s", self.endpoint, schema_name, reason)
            if self.journal is not None:
                self.journal.put_failure(
                    key, model=self.endpoint.model, schema_name=schema_name, error=reason,
                    prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens, attempts=attempts,
                )
            return CallResult(
                value=None, error=reason, key=key, cached=False, usage=usage,
                cost_usd=cost_usd(self.endpoint, usage), model=self.endpoint.model, attempts=attempts,
            )

    def _count_tokens(self, got: Usage) -> None:
        self.stats.prompt_tokens += got.prompt_tokens
        self.stats.completion_tokens += got.completion_tokens
        cost = cost_usd(self.endpoint, got)
        if cost is None:
            self.stats.unpriced_calls += 1
        else:
            self.stats.cost_usd += cost

    def _succeed(
        self, key: str, value: T, usage: Usage, attempts: int, schema_name: str, messages: list[dict[str, str]],
        params: dict[str, Any], messages_json: str,
    ) -> CallResult[T]:
        cost = cost_usd(self.endpoint, usage)
        if self.journal is not None:  # committed before the result is used: a kill after this repeats nothing
            request: dict[str, Any] = {"params": params, **self.endpoint.describe()}
            if all(type(m) is dict for m in messages):  # then messages_json is also canonical_json(messages)
                request_json = canonical_json_with(request, messages=messages_json)
            else:
                request_json = canonical_json({"messages": messages, **request})
            self.journal.put(
                key, model=self.endpoint.model, schema_name=schema_name, reply=value.model_dump(mode="json"),
                prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens,
                usage_estimated=usage.estimated, cost_usd=cost, attempts=attempts, request_json=request_json,
            )
        return CallResult(
            value=value, error=None, key=key, cached=False, usage=usage, cost_usd=cost, model=self.endpoint.model,
            attempts=attempts,
        )

    async def _send(
        self, messages: list[dict[str, str]], schema: type[BaseModel], schema_name: str, mode: str,
        params: dict[str, Any],
    ) -> tuple[str | None, Usage | None, Mapping[str, str], str | None]:
        """One HTTP request. Returns (content, usage or None, response headers, finish_reason).

        The request is what ``chat.completions.with_raw_response.create`` sends, byte for byte (same body, keys in
        the same order, same headers), posted through the SDK's ``post``: ``create`` first walks the whole request,
        schema included, against its TypedDict annotations (``async_transform``, ~0.7 ms per call on the event
        loop), which maps aliases and encodes files and dates; a body of plain strings and numbers such as this
        one comes out of it unchanged. Auth, headers, timeouts and errors are still the SDK's.
        """
        body: dict[str, Any] = {"model": self.endpoint.model, "messages": messages}
        if params.get("max_tokens"):
            body["max_tokens"] = params["max_tokens"]
        if mode == "json_schema":
            body["response_format"] = response_format_json_schema(schema, schema_name)
        elif mode == "json_object":
            body["response_format"] = {"type": "json_object"}
        if params.get("seed") is not None:
            body["seed"] = params["seed"]
        body["temperature"] = params["temperature"]
        sdk = self._sdk()
        async with asyncio.timeout(self.settings.timeout_s):
            raw = await sdk.post(
                "/chat/completions",
                cast_to=self._completion_type,
                body=body,
                options={
                    "headers": {"X-Goldset-Schema": schema_name, self._raw_header: "true"},
                    "security": {"bearer_auth": True},
                },
            )
            completion = _plain_completion(raw.http_response)
            if completion is None:  # not the usual shape: the SDK reads it, as it always has
                completion = raw.parse()
        headers = {k.lower(): v for k, v in raw.http_response.headers.items()}
        if not completion.choices:
            raise _Fail("the server returned no choices")
        choice = completion.choices[0]
        content = choice.message.content
        if content is None and getattr(choice.message, "refusal", None):
            raise _Fail(f"the model refused: {choice.message.refusal}")
        usage = None
        if completion.usage is not None:
            usage = Usage(
                prompt_tokens=completion.usage.prompt_tokens or 0,
                completion_tokens=completion.usage.completion_tokens or 0,
            )
        return content, usage, headers, choice.finish_reason

    # -- embeddings ------------------------------------------------------------------------------------------
    async def embed(
        self, texts: Sequence[str], *, model: str | None = None, batch_size: int = 64
    ) -> list[list[float] | None]:
        """Embedding vectors for ``texts`` (``None`` where a batch failed for good), cached per text.

        Uses the endpoint's ``embedding_model`` (or ``GOLDSET_EMBEDDING_MODEL``) unless ``model`` is given.
        Same pool, limits, retries and journal as :meth:`complete_json`; 401/403/404 raise :class:`EndpointError`.
        """
        if self._fatal is not None:
            raise self._fatal
        model = model or self.endpoint.embedding_model
        if not model:
            raise EndpointError(
                f"endpoint {self.endpoint}: no embedding model; set GOLDSET_EMBEDDING_MODEL or "
                f"llm.endpoints.{self.endpoint.name}.embedding_model"
            )
        keys = [call_key(model, [{"role": "embed", "content": t}], {}, {"kind": "embedding"}) for t in texts]
        out: list[list[float] | None] = [None] * len(texts)
        todo: list[int] = []
        for i, key in enumerate(keys):
            entry = self.journal.get(key) if (self.use_cache and self.journal is not None) else None
            if entry is not None and isinstance(entry.reply, list):
                out[i] = [float(x) for x in entry.reply]
                self.stats.cache_hits += 1
            else:
                todo.append(i)
        batches = [todo[k : k + max(1, batch_size)] for k in range(0, len(todo), max(1, batch_size))]

        async def one(batch: list[int]) -> None:
            async with self._pool:
                vectors = await self._embed_batch(model, [texts[i] for i in batch], [keys[i] for i in batch])
            for i, vec in zip(batch, vectors, strict=True):
                out[i] = vec

        await asyncio.gather(*(one(b) for b in batches))
        return out

    async def _embed_batch(self, model: str, texts: list[str], keys: list[str]) -> list[list[float] | None]:
        estimate = sum(estimate_llm_tokens(t) for t in texts)
        attempts = 0
        try:
            while True:
                if self._fatal is not None:
                    raise self._fatal
                await self.limiter.acquire(estimate)
                attempts += 1
                self.stats.calls += 1
                try:
                    async with asyncio.timeout(self.settings.timeout_s):
                        reply = await self._sdk().embeddings.create(model=model, input=texts, encoding_format="float")
                except Exception as exc:
                    await self._handle_error(exc, "text", attempts, estimate)
                    continue
                break
        except _Fail as fail:
            reason = self._redact(str(fail))
            self.stats.failures += 1
            log.info("%s: embeddings failed: %s", self.endpoint, reason)
            if self.journal is not None:
                for key in keys:
                    self.journal.put_failure(key, model=model, schema_name="embedding", error=reason,
                                             attempts=attempts)
            return [None] * len(texts)
        prompt = reply.usage.prompt_tokens if reply.usage is not None else estimate
        self.limiter.settle(estimate, prompt)
        self._count_tokens(Usage(prompt_tokens=prompt, estimated=reply.usage is None))
        vectors: list[list[float] | None] = [None] * len(texts)
        for item in reply.data:
            if 0 <= item.index < len(texts):
                vectors[item.index] = [float(x) for x in item.embedding]
        share = prompt // max(1, len(texts))
        for key, vec in zip(keys, vectors, strict=True):
            if vec is not None and self.journal is not None:
                self.journal.put(key, model=model, schema_name="embedding", reply=vec, prompt_tokens=share,
                                 completion_tokens=0, attempts=attempts)
        return vectors

    async def _handle_error(self, exc: Exception, mode: str, attempts: int, estimate: int) -> bool:
        """Decide what a failed request means: fatal (raise), retry after a wait (False), fail the call
        (raise :class:`_Fail`), or try a weaker structured-output mode (True)."""
        import openai

        if isinstance(exc, _Fail):
            raise exc
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            detail = self._redact(exc.message)
            self.limiter.settle(estimate, 0)  # a refused request used none of our token allowance
            if status in (401, 403):
                what = "authentication failed" if status == 401 else "permission denied"
                self._fatal = EndpointError(
                    f"endpoint {self.endpoint}: {what} (HTTP {status}: {detail}); check the key in "
                    f"{self.settings.api_key_env} (environment or .env)"
                )
                raise self._fatal
            if status == 429 and exc.code == "insufficient_quota":
                # Retrying cannot help until someone adds credit: stop instead of spending the retry budget.
                self._fatal = EndpointError(
                    f"endpoint {self.endpoint}: the account's quota is exhausted (HTTP 429: {detail}); check the "
                    "plan and billing of this key, or use another endpoint"
                )
                raise self._fatal
            if status == 404:
                self._fatal = EndpointError(
                    f"endpoint {self.endpoint}: HTTP 404 ({detail}); check the model name (GOLDSET_MODEL or "
                    f"llm.endpoints.{self.endpoint.name}.model) and that base_url ends in /v1"
                )
                raise self._fatal
            if status in (400, 422) and self._auto and mode in _NEXT_MODE and (
                any(h in detail.lower() for h in _FORMAT_HINTS)
            ):
                log.info("%s rejected response_format %s (%s); trying %s", self.endpoint, mode, detail,
                         _NEXT_MODE[mode])
                return True  # a fallback is not a retry: it does not spend the budget
            if status == 429 or status >= 500 or status == 408:
                server_wait = retry_after_seconds({k.lower(): v for k, v in exc.response.headers.items()})
                await self._retry(f"HTTP {status}: {detail}", attempts, server_wait)
                return False
            raise _Fail(f"HTTP {status}: {detail}")
        if isinstance(exc, TimeoutError | openai.APITimeoutError):
            await self._retry(f"timed out after {self.settings.timeout_s:g} s", attempts, None)
            return False
        if isinstance(exc, openai.APIConnectionError):
            self.limiter.settle(estimate, 0)
            await self._retry(f"cannot connect to {self.endpoint.base_url or 'api.openai.com'}", attempts, None)
            return False
        if isinstance(exc, openai.APIResponseValidationError | ValueError):
            raise _Fail(f"unreadable response from the server: {self._redact(str(exc))[:300]}") from None
        raise exc

    async def _retry(self, reason: str, attempts: int, server_wait: float | None) -> None:
        """Spend one retry from the budget and wait, or fail the call if none is left."""
        if attempts >= self.settings.max_attempts:
            raise _Fail(f"{reason}; gave up after {attempts} attempts")
        if self._budget <= 0:
            raise _Fail(f"{reason}; the run's retry budget ({self.settings.retry_budget}) is spent")
        self._budget -= 1
        self.stats.retries += 1
        if server_wait is not None:
            # The server's limit is the account's: pause every call of this client, not just this one.
            self.limiter.pause_for(min(server_wait, MAX_SERVER_PAUSE_S))
            log.info("%s: %s; pausing %.2f s as the server asks", self.endpoint, reason, server_wait)
            return
        ceiling = min(self.settings.backoff_max_s, self.settings.backoff_base_s * 2 ** (attempts - 1))
        delay = ceiling / 2 + self._rng.uniform(0, ceiling / 2)
        log.info("%s: %s; retrying in %.2f s", self.endpoint, reason, delay)
        await self._sleep(delay)

"""The LLM client: structured calls (and embeddings) to one OpenAI-compatible endpoint, with the call journal.

One :class:`LLMClient` per endpoint per run. Its parts, one module each:

* :mod:`goldset.llm.transport` — the openai SDK client, one HTTP request, reading the reply;
* :mod:`goldset.llm.retry` — what a failed request means, the run's retry budget, backoff, server pauses;
* :mod:`goldset.llm.ratelimit` — the client-side rpm/tpm limiter;
* :mod:`goldset.llm.structured` — the schema as a response format, and parsing the reply;
* :mod:`goldset.llm.embeddings` — ``/v1/embeddings``;
* :mod:`goldset.llm.stats` — the counters (:class:`goldset.llm.CallStats`).

This module holds the structured call itself: the journal and the in-flight sharing of identical calls, the
bounded pool (``concurrency``), and the conversation of one call — the structured-output mode (``json_schema``,
falling back to ``json_object`` with the schema, a forced ``tool`` call, then ``text`` when the server refuses one)
and the one repair attempt. The mode found is remembered for the endpoint's URL and model in the journal
(:meth:`goldset.llm.CallJournal.fact`), so a later client of the run (the filters after generate) or a re-run
does not probe the refused modes again; ``CallStats.format_line`` says which mode and why.

Outcomes of :meth:`LLMClient.complete_json`:

* a validated pydantic object (``CallResult.ok``), committed to the journal before it is returned;
* ``CallResult(value=None, error=reason)`` when retries run out, the call times out, the server rejects the
  request, the reply is cut off (``finish_reason`` length or content_filter: no repair, it would be cut off again),
  or the reply is still not one valid JSON document matching the schema after one repair attempt (the model is
  shown its error). The failure is recorded in the journal, never served from it, and the run goes on;
* :class:`goldset.errors.EndpointError` for errors that would fail every call (see :mod:`goldset.llm.retry`):
  the run stops at once instead of burning retries.

Error text from the server is redacted (:meth:`goldset.llm.Endpoint.redact`) before it is shown, logged or stored.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import random
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from goldset.hashing import canonical_json
from goldset.llm.capacity import ServerFacts, Slots, server_facts, starting_concurrency
from goldset.llm.embeddings import Embedder
from goldset.llm.journal import CallJournal, call_key_from_json, canonical_json_with
from goldset.llm.ratelimit import RateLimiter
from goldset.llm.retry import CallFailed, RetryPolicy
from goldset.llm.stats import CallStats
from goldset.llm.structured import ReplyError, parse_reply, schema_instruction, schema_json_text, with_instruction
from goldset.llm.transport import Transport, chat_body
from goldset.llm.usage import Usage, cost_usd, estimate_tokens
from goldset.text import estimate_llm_tokens

if TYPE_CHECKING:
    from goldset.llm.endpoints import Endpoint

T = TypeVar("T", bound=BaseModel)

log = logging.getLogger("goldset.llm")

#: Completion tokens assumed for the tpm limiter when the call sets no max_tokens.
DEFAULT_COMPLETION_ESTIMATE = 512
#: How much of an invalid reply is shown back to the model in the repair attempt.
REPAIR_ECHO_CHARS = 6000
_NEXT_MODE = {"json_schema": "json_object", "json_object": "tool", "tool": "text"}
_RANK = {"json_schema": 0, "json_object": 1, "tool": 2, "text": 3}
#: How a cut-off failure's reason starts (:meth:`LLMClient._cut_off`): such a call is known to be cut off again.
CUT_OFF_REASON = "the reply was cut off at max_tokens"


def _format_fact(endpoint: Endpoint) -> str:
    return f"structured-output mode {endpoint.url} {endpoint.model}"


def _request(
    endpoint: Endpoint,
    messages: Sequence[Mapping[str, str]],
    schema: type[BaseModel],
    temperature: float | None,
    seed: int | None,
    max_tokens: int | None,
) -> tuple[str, str, dict[str, Any]]:
    """A structured call's journal key, its messages' canonical JSON and its sampling parameters (the endpoint's
    where not given)."""
    params = {
        "temperature": endpoint.settings.temperature if temperature is None else temperature,
        "seed": seed,
        "max_tokens": max_tokens if max_tokens is not None else endpoint.settings.max_tokens,
    }
    messages_json = canonical_json([dict(m) for m in messages])  # encoded once: the key and the journal
    return call_key_from_json(endpoint.model, messages_json, schema_json_text(schema), params), messages_json, params


def request_key(
    endpoint: Endpoint,
    messages: Sequence[Mapping[str, str]],
    schema: type[BaseModel],
    *,
    temperature: float | None = None,
    seed: int | None = None,
    max_tokens: int | None = None,
) -> str:
    """The journal key :meth:`LLMClient.complete_json` gives this call (for estimates: which calls the journal
    holds, calling nothing)."""
    return _request(endpoint, messages, schema, temperature, seed, max_tokens)[0]


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
    #: True when the reply was cut off at max_tokens (the caller may ask for less).
    cut_off: bool = False

    @property
    def ok(self) -> bool:
        """True when the call returned a validated value."""
        return self.value is not None


def _consume_exception(future: asyncio.Future[Any]) -> None:
    """Mark a shared call's exception as seen: the task that owns it re-raises it itself."""
    if not future.cancelled():
        future.exception()


class LLMClient:
    """Async client for one endpoint. Use ``async with LLMClient(endpoint, journal) as llm:``.

    ``use_cache=False`` sends every call even when the journal holds its reply (the reply is still recorded).
    ``clock``, ``sleep`` and ``rng`` are injectable so that tests of limits and backoff need not wait.
    """

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
        self.limiter = RateLimiter(self.settings.rpm, self.settings.tpm, clock=clock, sleep=sleep)
        self.policy = RetryPolicy(endpoint, self.stats, self.limiter, sleep=sleep, rng=rng)
        self.transport = Transport(endpoint)
        self._pool = Slots(self.settings.concurrency)
        self.stats.concurrency = self.settings.concurrency
        self._facts: ServerFacts | None = None
        self._facts_lock = asyncio.Lock()
        self._timeouts = 0
        self.policy.slots = self._pool
        self._embedder = Embedder(
            endpoint, self.transport, self.policy, self._pool, journal, self.stats, use_cache=use_cache
        )
        self._auto = self.settings.structured == "auto"
        #: The structured-output mode calls start in (``auto`` moves it down when the server refuses one).
        self.mode: str = "json_schema" if self._auto else self.settings.structured
        note = "" if self._auto else f"set by llm.endpoints.{endpoint.name}.structured"
        if self._auto:
            fact = journal.fact(_format_fact(endpoint)) if journal is not None else None
            if isinstance(fact, dict) and fact.get("mode") in _RANK:
                self.mode = fact["mode"]
                note = f"{fact.get('note') or 'found earlier'}; remembered in the call journal"
        self.stats.format, self.stats.format_note = self.mode, note
        self._refused: list[str] = []
        self._in_flight: dict[str, asyncio.Future[CallResult[Any]]] = {}

    # -- lifecycle -------------------------------------------------------------------------------------------
    async def __aenter__(self) -> LLMClient:
        self.transport.sdk()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        await self.transport.aclose()

    # -- the server ------------------------------------------------------------------------------------------
    async def server_facts(self) -> ServerFacts:
        """What the server says about its context window and slots (:func:`goldset.llm.capacity.server_facts`),
        asked once per client; the pool starts at the stated slots when they are fewer than ``concurrency``."""
        if self._facts is None:
            async with self._facts_lock:
                if self._facts is None:
                    facts = await asyncio.to_thread(server_facts, self.endpoint)
                    limit, note = starting_concurrency(self.endpoint, facts)
                    if self._pool.lower(limit):
                        self.stats.concurrency, self.stats.concurrency_note = limit, note
                    self._facts = facts
        return self._facts

    def _timed_out(self) -> None:
        """A request timed out: with several in flight they were queued behind each other on a server that serves
        fewer at once, so let fewer go (halving, down to one) and say why."""
        self._timeouts += 1
        in_flight = self._pool.in_use
        if in_flight <= 1:
            return
        limit = max(1, min(self._pool.limit, in_flight) // 2)
        if self._pool.lower(limit):
            note = (
                f"concurrency lowered to {limit}: {self._timeouts} request(s) timed out after "
                f"{self.settings.timeout_s:g} s with {in_flight} in flight, queued on a server that serves fewer at "
                f"once; set llm.endpoints.{self.endpoint.name}.concurrency: {limit} to start there"
            )
            log.warning("%s: %s", self.endpoint, note)
            self.stats.concurrency, self.stats.concurrency_note = limit, note

    # -- the public calls ------------------------------------------------------------------------------------
    async def complete_json(
        self,
        messages: list[dict[str, str]],
        schema: type[T],
        *,
        schema_name: str,
        temperature: float | None = None,
        seed: int | None = None,
        max_tokens: int | None = None,
        known_cut_off: bool = False,
    ) -> CallResult[T]:
        """One structured call: cached reply if the journal has one, else the endpoint (see module docstring).

        ``known_cut_off``: when the journal records this very call (same key, so the same max_tokens) as cut off
        at max_tokens, return that failure (``cut_off`` set) without sending it again: for a caller that then asks
        for less (generation asks for fewer pairs), so that its re-run makes no request."""
        self.policy.check()
        key, messages_json, params = _request(self.endpoint, messages, schema, temperature, seed, max_tokens)
        cached = self._from_cache(key, schema)
        if cached is not None:
            return cached
        if known_cut_off and self.use_cache and self.journal is not None:
            reason = next((e for _, e in reversed(self.journal.failures(key)) if e.startswith(CUT_OFF_REASON)), None)
            if reason is not None:
                return CallResult(
                    value=None, error=reason, key=key, cached=True, usage=Usage(), cost_usd=0.0,
                    model=self.endpoint.model, attempts=0, cut_off=True,
                )
        if self._facts is None:
            await self.server_facts()  # once, before the first request goes out
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
                self.policy.check()
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

    async def embed(
        self, texts: Sequence[str], *, model: str | None = None, batch_size: int = 64
    ) -> list[list[float] | None]:
        """Embedding vectors for ``texts`` (``None`` where a batch failed for good), cached per text.

        Uses the endpoint's ``embedding_model`` (or ``GOLDSET_EMBEDDING_MODEL``) unless ``model`` is given.
        Same pool, limits, retries and journal as :meth:`complete_json`; fatal errors raise :class:`EndpointError`.
        """
        return await self._embedder.embed(texts, model=model, batch_size=batch_size)

    @property
    def embedding_errors(self) -> list[str]:
        """Why :meth:`embed` batches got no vectors: the server's reasons (redacted), in the order they failed."""
        return self._embedder.errors

    # -- the journal -----------------------------------------------------------------------------------------
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

    def _fail(
        self, key: str, reason: str, usage: Usage, attempts: int, schema_name: str, cut_off: bool = False
    ) -> CallResult[Any]:
        reason = self.endpoint.redact(reason)
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
            cost_usd=cost_usd(self.endpoint, usage), model=self.endpoint.model, attempts=attempts, cut_off=cut_off,
        )

    # -- one call: its requests, mode fallbacks and repair ---------------------------------------------------
    def _cut_off(self, finish_reason: str | None, max_tokens: int | None) -> str | None:
        """Why a reply with this finish reason is not whole, or ``None`` when it is."""
        if finish_reason == "length":
            limit = max_tokens if max_tokens else "unset: the server's default"
            return (
                f"{CUT_OFF_REASON} (finish_reason length, max_tokens {limit}); raise "
                f"llm.endpoints.{self.endpoint.name}.max_tokens"
            )
        if finish_reason == "content_filter":
            return "the server's content filter stopped the reply (finish_reason content_filter)"
        return None

    def _fit_context(self, sent: list[dict[str, str]], params: dict[str, Any]) -> dict[str, Any]:
        """``params`` with max_tokens no larger than what the model's context leaves after the prompt (when the
        context is known); :class:`CallFailed` when the prompt alone does not fit."""
        context = self._facts.context_tokens if self._facts is not None else None
        if context is None:
            return params
        # estimate_tokens counts ~4 characters a token; small models' tokenizers take more: keep a tenth spare
        room = int(context * 0.9) - estimate_tokens(sent)
        if room < 16:
            raise CallFailed(
                f"the prompt (~{estimate_tokens(sent)} tokens) does not fit the model's context ({context} tokens, "
                f"{self._facts.source if self._facts else ''}); use a model with a larger context or smaller chunks"
            )
        wanted = params["max_tokens"]
        if wanted is not None and wanted <= room:
            return params
        return {**params, "max_tokens": room}

    def _settle_mode(self, mode: str) -> None:
        """Use ``mode`` from now on (it worked where stronger ones were refused), in this client and, through the
        journal, in every later client of the run and later runs."""
        refused = [m for m in self._refused if _RANK[m] < _RANK[mode]] or [self.mode]
        note = f"server refused {', '.join(refused)}"
        log.warning("%s: structured-output mode %s; using %s from now on", self.endpoint, note, mode)
        self.mode = mode
        self.stats.format, self.stats.format_note = mode, note
        if self.journal is not None:
            self.journal.put_fact(_format_fact(self.endpoint), {"mode": mode, "note": note})

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
        self.stats.count_call(schema_name)
        try:
            while True:
                sent = convo if mode == "json_schema" else with_instruction(convo, schema_instruction(schema))
                request_params = self._fit_context(sent, params)
                estimate = estimate_tokens(sent) + (request_params["max_tokens"] or DEFAULT_COMPLETION_ESTIMATE)
                if attempts >= self.settings.max_attempts:
                    raise CallFailed(f"{last_reason}; gave up after {attempts} attempts (max_attempts)")
                await self.policy.before_request(estimate)
                attempts += 1
                self.stats.requests += 1
                body = chat_body(self.endpoint.model, sent, mode, schema, schema_name, request_params)
                try:
                    reply = await self.transport.chat(body, schema_name)
                except Exception as exc:  # classified by the policy; anything unknown is re-raised
                    if isinstance(exc, TimeoutError) or type(exc).__name__ == "APITimeoutError":
                        self._timed_out()
                    can_fall_back = self._auto and mode in _NEXT_MODE
                    if await self.policy.on_error(exc, attempts=attempts, estimate=estimate,
                                                  can_fall_back=can_fall_back):
                        log.info("%s refused structured-output mode %s (%s); trying %s", self.endpoint, mode,
                                 self.policy.refusal, _NEXT_MODE[mode])
                        last_reason = f"the server refused structured-output mode {mode} ({self.policy.refusal})"
                        if mode not in self._refused:
                            self._refused.append(mode)
                        mode = _NEXT_MODE[mode]  # try this call in the weaker mode (not a retry)
                        self.stats.fallbacks += 1
                    continue
                if not reply.has_choice:
                    raise CallFailed("the server returned no choices")
                content = reply.content
                if content is None and reply.refusal:
                    raise CallFailed(f"the model refused: {reply.refusal}")
                if _RANK[mode] > _RANK[self.mode]:
                    # The weaker mode worked where the stronger one was refused: use it from now on. Deciding only
                    # after a success keeps one odd 400 from downgrading the whole run.
                    self._settle_mode(mode)
                got = reply.usage
                if got is None:  # the server sent no usage: estimate it, and say so
                    got = Usage(
                        prompt_tokens=estimate_tokens(sent), completion_tokens=estimate_llm_tokens(content or ""),
                        estimated=True,
                    )
                usage = usage + got
                self.stats.add_usage(got, cost_usd(self.endpoint, got))
                self.policy.settle(estimate, got.total_tokens, reply.headers)
                cut_off = self._cut_off(reply.finish_reason, request_params["max_tokens"])
                if cut_off:
                    # A repair would be cut off the same way; and a cut-off reply that happens to parse is still
                    # not the whole answer, so it is never kept.
                    return self._fail(key, cut_off, usage, attempts, schema_name,
                                      cut_off=reply.finish_reason == "length")
                try:
                    value = parse_reply(content or "", schema)
                except ReplyError as exc:
                    reason = str(exc)
                    if repaired:
                        raise CallFailed(f"{reason}; still invalid after one repair attempt") from None
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
        except CallFailed as fail:
            return self._fail(key, str(fail), usage, attempts, schema_name)

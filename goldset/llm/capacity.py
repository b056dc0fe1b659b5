"""What a server can take: its context window and how many requests it serves at once, and the client's
adjustable pool of request slots.

* :func:`server_facts` asks a local server once what it says about itself: llama.cpp's ``GET /props``
  (``total_slots``, ``n_ctx``) and ``GET /v1/models`` (vLLM's ``max_model_len``, LM Studio's
  ``max_context_length``, Ollama's and llama-cpp-python's say neither). Nothing is asked of api.openai.com or
  Azure. The endpoint's ``context_tokens`` setting wins over what the server says.
* :class:`Slots` is the client's bound on requests on the wire: it starts at the endpoint's ``concurrency``, or
  the server's stated slots when fewer, and :meth:`Slots.lower` takes it down when the server turns out to serve
  fewer at once (requests timing out while several are in flight: they were queued behind each other), with the
  reason kept for the report ("concurrency lowered to 1: …").
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import urllib.error
import urllib.request
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from goldset.llm.endpoints import Endpoint

log = logging.getLogger("goldset.llm")

#: Seconds a server has to answer one of the questions of :func:`server_facts` (a local server answers in ms).
FACTS_TIMEOUT_S = 3.0
#: Hosts nothing is asked of: hosted APIs, whose limits are the account's, not a server's slots.
HOSTED = ("api.openai.com", "openai.azure.com", "api.anthropic.com", "generativelanguage.googleapis.com")


@dataclass(frozen=True)
class ServerFacts:
    """What a server says about itself (``None``: it does not say). ``source`` names where each fact came from."""

    context_tokens: int | None = None
    total_slots: int | None = None
    source: str = ""


def _get_json(url: str, key: str) -> Any:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {key}"})
    try:
        with urllib.request.urlopen(request, timeout=FACTS_TIMEOUT_S) as response:
            return json.loads(response.read() or b"null")
    except (OSError, urllib.error.URLError, ValueError):
        return None


def _positive_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def is_local(endpoint: Endpoint) -> bool:
    """True for an endpoint with its own ``base_url`` that is not a hosted API (:data:`HOSTED`): a server to ask."""
    base = (endpoint.base_url or "").rstrip("/")
    return bool(base) and not any(host in base for host in HOSTED)


def server_facts(endpoint: Endpoint) -> ServerFacts:
    """Ask the endpoint's server (once: the caller keeps the answer) for its slots and context window; see the
    module docstring. A hosted API, an unreachable server or one that says nothing gives empty facts."""
    configured = endpoint.settings.context_tokens
    base = (endpoint.base_url or "").rstrip("/")
    if not is_local(endpoint):
        return ServerFacts(context_tokens=configured, source="settings" if configured else "")
    key = endpoint.client_key()
    root = base.removesuffix("/v1")
    context: int | None = None
    slots: int | None = None
    sources: list[str] = []
    props = _get_json(f"{root}/props", key)
    if isinstance(props, dict):
        slots = _positive_int(props.get("total_slots"))
        settings = props.get("default_generation_settings")
        context = _positive_int(props.get("n_ctx")) or (
            _positive_int(settings.get("n_ctx")) if isinstance(settings, dict) else None
        )
        if slots or context:
            sources.append("/props")
    if context is None:
        models = _get_json(f"{base}/models", key)
        data = models.get("data") if isinstance(models, dict) else None
        for item in data if isinstance(data, list) else []:
            if isinstance(item, dict) and item.get("id") in (endpoint.model, None):
                context = _positive_int(item.get("max_model_len")) or _positive_int(item.get("max_context_length"))
                if context:
                    sources.append("/v1/models")
                break
    if configured:
        context = configured
        sources.append("settings")
    return ServerFacts(context_tokens=context, total_slots=slots, source=", ".join(sources))


def starting_concurrency(endpoint: Endpoint, facts: ServerFacts) -> tuple[int, str]:
    """The requests to let go at once at the start, and why when it is not the configured ``concurrency``."""
    wanted = endpoint.settings.concurrency
    if facts.total_slots is not None and facts.total_slots < wanted:
        return facts.total_slots, (
            f"the server serves {facts.total_slots} at once (total_slots in /props); "
            f"llm.endpoints.{endpoint.name}.concurrency is {wanted}"
        )
    return wanted, ""


def concurrency_line(endpoint: Endpoint) -> str:
    """One line for a dry run on a local endpoint: the concurrency a run starts at and where it comes from, e.g.
    ``concurrency 1 (server reports 1 slot at /props)``; asks the server once (:func:`server_facts`). ``""`` for
    a hosted API (its limits are the account's)."""
    if not is_local(endpoint):
        return ""
    facts = server_facts(endpoint)
    limit, _ = starting_concurrency(endpoint, facts)
    wanted, setting = endpoint.settings.concurrency, f"llm.endpoints.{endpoint.name}.concurrency"
    if facts.total_slots is None:
        return (
            f"concurrency {wanted} (configured; the server states no slots: it halves on timeouts, or set {setting})"
        )
    slots = f"{facts.total_slots} slot{'' if facts.total_slots == 1 else 's'} at /props"
    if limit < wanted:
        return f"concurrency {limit} (server reports {slots}; {setting} is {wanted})"
    return f"concurrency {limit} (configured; the server reports {slots})"


class Slots:
    """An async bound on requests in flight whose limit can be lowered while the run goes (``async with slots:``).
    Waiters get a freed slot in their order."""

    def __init__(self, limit: int) -> None:
        self.limit = max(1, limit)
        self.in_use = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    async def __aenter__(self) -> None:
        if self.in_use < self.limit and not self._waiters:
            self.in_use += 1
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self._release()  # the slot was handed over just as this task was cancelled: give it back
            else:
                with contextlib.suppress(ValueError):
                    self._waiters.remove(waiter)
            raise

    async def __aexit__(self, *exc: object) -> None:
        self._release()

    def _release(self) -> None:
        self.in_use -= 1
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self.in_use < self.limit:
            waiter = self._waiters.popleft()
            if not waiter.done():
                self.in_use += 1  # handed over: the woken task holds it
                waiter.set_result(None)

    def lower(self, limit: int) -> bool:
        """Let at most ``limit`` (≥ 1) requests go at once from now on (those in flight finish); True if lowered."""
        limit = max(1, limit)
        if limit >= self.limit:
            return False
        self.limit = limit
        return True

"""The LLM client layer: OpenAI-compatible endpoints, structured output, rate limits, retries, call journal.

Typical use::

    from goldset.llm import CallJournal, LLMClient, resolve_endpoint

    endpoint = resolve_endpoint(ws, "generate", overrides={"concurrency": 4})
    with CallJournal(ws.cache_path) as journal:
        async with LLMClient(endpoint, journal) as llm:
            result = await llm.complete_json(messages, MySchema, schema_name="qa_pairs")
            if result.ok: ...  # result.value is a validated MySchema
            else: ...          # result.error says why (redacted); the run goes on
            llm.stats          # CallStats: calls, HTTP requests, retries, repairs, cache hits, tokens, cost

Nothing here imports openai at module level (it is imported on first use), so importing this package is cheap.
"""

from __future__ import annotations

from goldset.llm.client import CallResult, LLMClient
from goldset.llm.endpoints import (
    PLACEHOLDER_KEY,
    Endpoint,
    endpoint_configured,
    load_llm_settings,
    resolve_endpoint,
)
from goldset.llm.journal import CallJournal, JournalEntry, call_key
from goldset.llm.ratelimit import RateLimiter, TokenBucket
from goldset.llm.settings import EndpointSettings, LLMSettings, ModelPrice
from goldset.llm.stats import CallStats
from goldset.llm.structured import ReplyError, extract_json, parse_reply
from goldset.llm.usage import Usage, cost_usd, estimate_tokens

__all__ = [
    "PLACEHOLDER_KEY",
    "CallJournal",
    "CallResult",
    "CallStats",
    "Endpoint",
    "EndpointSettings",
    "JournalEntry",
    "LLMClient",
    "LLMSettings",
    "ModelPrice",
    "RateLimiter",
    "ReplyError",
    "TokenBucket",
    "Usage",
    "call_key",
    "cost_usd",
    "endpoint_configured",
    "estimate_tokens",
    "extract_json",
    "load_llm_settings",
    "parse_reply",
    "resolve_endpoint",
]

"""The LLM client layer: OpenAI-compatible endpoints, structured output, rate limits, retries, call journal.

Typical use::

    from goldset.llm import fan_out, fan_out_limit, resolve_endpoint, session

    endpoint = resolve_endpoint(ctx, "generate", overrides={"concurrency": 4})
    async with session(ctx, endpoint) as llm:  # the workspace's call journal and a client over it
        result = await llm.complete_json(messages, MySchema, schema_name="qa_pairs")
        if result.ok: ...  # result.value is a validated MySchema
        else: ...          # result.error says why (redacted); the run goes on
        llm.stats          # CallStats: calls, HTTP requests, retries, repairs, cache hits, tokens, cost
        results = await fan_out(items, one_call, limit=fan_out_limit(endpoint))  # many calls, in order

Names load lazily and nothing imports openai at module level (it is imported on first use): importing this
package is cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from goldset._lazy import lazy_exports

_EXPORTS = {
    "CallResult": "goldset.llm.client",
    "LLMClient": "goldset.llm.client",
    "PLACEHOLDER_KEY": "goldset.llm.endpoints",
    "Endpoint": "goldset.llm.endpoints",
    "endpoint_configured": "goldset.llm.endpoints",
    "resolve_endpoint": "goldset.llm.endpoints",
    "fan_out": "goldset.llm.fanout",
    "fan_out_limit": "goldset.llm.fanout",
    "CallJournal": "goldset.llm.journal",
    "JournalEntry": "goldset.llm.journal",
    "call_key": "goldset.llm.journal",
    "RateLimiter": "goldset.llm.ratelimit",
    "session": "goldset.llm.sessions",
    "TokenBucket": "goldset.llm.ratelimit",
    "EndpointSettings": "goldset.llm.settings",
    "LLMSettings": "goldset.llm.settings",
    "ModelPrice": "goldset.llm.settings",
    "CallStats": "goldset.llm.stats",
    "ReplyError": "goldset.llm.structured",
    "extract_json": "goldset.llm.structured",
    "parse_reply": "goldset.llm.structured",
    "Usage": "goldset.llm.usage",
    "cost_usd": "goldset.llm.usage",
    "estimate_tokens": "goldset.llm.usage",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


if TYPE_CHECKING:  # the same names, for type checkers (a test holds the two lists equal)
    from goldset.llm.client import CallResult, LLMClient
    from goldset.llm.endpoints import (
        PLACEHOLDER_KEY,
        Endpoint,
        endpoint_configured,
        resolve_endpoint,
    )
    from goldset.llm.fanout import fan_out, fan_out_limit
    from goldset.llm.journal import CallJournal, JournalEntry, call_key
    from goldset.llm.ratelimit import RateLimiter, TokenBucket
    from goldset.llm.sessions import session
    from goldset.llm.settings import EndpointSettings, LLMSettings, ModelPrice
    from goldset.llm.stats import CallStats
    from goldset.llm.structured import ReplyError, extract_json, parse_reply
    from goldset.llm.usage import Usage, cost_usd, estimate_tokens

"""What one :class:`goldset.llm.LLMClient` did, counted as it happens: the one set of call counters that reports
hold and progress displays show (instead of each caller summing results into its own copy)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from goldset.llm.usage import Usage


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

    def add_usage(self, usage: Usage, cost: float | None) -> None:
        """Count the tokens of one reply and its cost (``None``: the model has no price)."""
        self.prompt_tokens += usage.prompt_tokens
        self.completion_tokens += usage.completion_tokens
        if cost is None:
            self.unpriced_calls += 1
        else:
            self.cost_usd += cost

    def as_dict(self) -> dict[str, Any]:
        """The counters as a plain dict (for reports written as JSON)."""
        return asdict(self)

"""What one :class:`goldset.llm.LLMClient` did, counted as it happens: the one set of call counters that reports
hold (``GenerationReport.llm``, the filter report's ``as_dict()``) and progress displays show, instead of each
caller summing results into a copy of its own that can drift from what was really sent."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from goldset.llm.usage import Usage


@dataclass
class CallStats:
    """Live counters of one client.

    A *call* is one :meth:`~goldset.llm.LLMClient.complete_json` that went to the endpoint (or one embeddings
    batch); a *request* is one HTTP request sent for it. Every request after a call's first is a retry, a repair
    or a format fallback, so ``requests == calls + retries + repairs + fallbacks``. Calls answered from the journal
    (or by an identical call in flight) are ``cache_hits`` and send nothing. Tokens and cost are those of the
    requests sent (the server's usage, or an estimate when it sent none).
    """

    calls: int = 0
    requests: int = 0
    cache_hits: int = 0
    #: Calls that failed for good (their reason is in the CallResult and the journal's failures table).
    failures: int = 0
    retries: int = 0
    repairs: int = 0
    #: Requests sent again in a weaker structured-output mode after the server refused one.
    fallbacks: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    #: Requests whose model has no price in the config (their tokens are counted, their cost is not).
    unpriced_requests: int = 0
    #: The run's retry budget (``retry_budget`` of the endpoint); every retry spends one.
    retry_budget: int = 0
    #: The structured-output mode the calls use now (:data:`goldset.llm.structured.MODES`), and why, in words
    #: ("server refused json_schema", "set by llm.endpoints.generate.structured"; empty: the first one worked).
    format: str = ""
    format_note: str = ""
    #: Requests the client lets go at once, and why it is not the configured concurrency (empty: it is).
    concurrency: int = 0
    concurrency_note: str = ""
    #: Calls by what they ask: the reply schema's name (``qa_pairs``, ``groundedness``, ``closed_book_answer``…;
    #: ``embedding`` for an embeddings batch). Sums to ``calls``.
    by_kind: dict[str, int] = field(default_factory=dict)

    @property
    def format_line(self) -> str:
        """``json_object (server refused json_schema)``: the mode and why, for reports."""
        return f"{self.format} ({self.format_note})" if self.format_note else self.format

    @property
    def concurrency_line(self) -> str:
        """``1 request(s) at once (…why)``, for reports."""
        return f"{self.concurrency} request(s) at once" + (f" ({self.concurrency_note})" if self.concurrency_note
                                                            else "")

    @property
    def retry_budget_left(self) -> int:
        """Retries the client may still make."""
        return self.retry_budget - self.retries

    @property
    def tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    @property
    def cost(self) -> float | None:
        """``cost_usd``, or ``None`` when some request's model has no price (the sum would be too low)."""
        return None if self.unpriced_requests else self.cost_usd

    def count_call(self, kind: str) -> None:
        """One more call of ``kind`` sent."""
        self.calls += 1
        self.by_kind[kind] = self.by_kind.get(kind, 0) + 1

    def add_usage(self, usage: Usage, cost: float | None) -> None:
        """Count the tokens of one reply and its cost (``None``: the model has no price)."""
        self.prompt_tokens += usage.prompt_tokens
        self.completion_tokens += usage.completion_tokens
        if cost is None:
            self.unpriced_requests += 1
        else:
            self.cost_usd += cost

    def as_dict(self) -> dict[str, Any]:
        """The counters as a plain dict (for reports written as JSON), ``retry_budget_left`` included."""
        return {**asdict(self), "retry_budget_left": self.retry_budget_left}

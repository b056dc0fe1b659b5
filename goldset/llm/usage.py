"""Token usage, offline token estimates and cost.

Estimates never download anything: tiktoken fetches its encodings from the internet on first use, which fails
offline and in air-gapped companies, so goldset uses :func:`goldset.text.estimate_llm_tokens` (shipped with the
package, within ~15% of cl100k/o200k) for rate limits and budgets. Recorded usage comes from the server's reply
whenever it sends one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from goldset.text import estimate_llm_tokens

if TYPE_CHECKING:
    from goldset.llm.endpoints import Endpoint

#: Chat formats wrap each message in a few tokens of markup (role, separators).
TOKENS_PER_MESSAGE = 4


class Usage(BaseModel):
    """Tokens of one request or call (the sum of its requests: ``a + b``)."""

    prompt_tokens: int = Field(0, description="Tokens of the messages sent.")
    completion_tokens: int = Field(0, description="Tokens of the reply.")
    estimated: bool = Field(False, description="True when the server sent no usage and the numbers are estimates.")

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            estimated=self.estimated or other.estimated,
        )


def estimate_tokens(messages: Iterable[Mapping[str, object]]) -> int:
    """Prompt tokens of chat ``messages``, estimated offline."""
    total = 3  # every reply is primed with a few tokens
    for message in messages:
        content = message.get("content")
        total += TOKENS_PER_MESSAGE + (estimate_llm_tokens(content) if isinstance(content, str) else 0)
    return total


def cost_usd(endpoint: Endpoint, usage: Usage) -> float | None:
    """Cost of ``usage`` at the endpoint's price; ``None`` when the price of its model is unknown."""
    price = endpoint.price
    if price is None:
        return None
    return (usage.prompt_tokens * price.input_per_mtok + usage.completion_tokens * price.output_per_mtok) / 1e6

"""Quality heuristic: the answer is an answer, not a placeholder ("N/A", "unknown", "无", "...")."""

from __future__ import annotations

from functools import lru_cache

from pydantic import Field

from goldset.filters.base import CheckSettings, CheckSpec, ChunkMap, verdict
from goldset.filters.textsim import tokens
from goldset.schema import CheckResult, QAPair
from goldset.text import count_tokens, normalize

NAME = "answer_present"

DEFAULT_PLACEHOLDERS = [
    "n/a", "na", "none", "null", "nil", "unknown", "tbd", "todo", "-", "--", "...", "?", "no answer",
    "i don't know", "i do not know", "not sure", "无", "暂无", "不知道", "未知", "没有", "略",
]  # fmt: skip


class Settings(CheckSettings):
    """Thresholds of the answer_present check (``filter.checks.answer_present``)."""

    placeholders: list[str] = Field(
        default_factory=lambda: list(DEFAULT_PLACEHOLDERS),
        description="Answers that say nothing; compared after normalisation (case, width, trailing punctuation).",
    )


@lru_cache(maxsize=64)
def _normalized(placeholders: tuple[str, ...]) -> tuple[frozenset[str], int]:
    """The normalised placeholders, and the most tokens one of them has (:func:`goldset.text.count_tokens`)."""
    forms = frozenset(normalize(p) for p in placeholders)
    return forms, max(map(count_tokens, forms), default=0)


def check(pair: QAPair, chunks: ChunkMap, settings: Settings) -> CheckResult:
    """Fail a blank answer or a placeholder."""
    n = len(tokens(pair.answer))
    if not n:
        return verdict(settings, False, None, "answer has no words, only punctuation or symbols")
    forms, most = _normalized(tuple(settings.placeholders))
    # tokens(answer) are the tokens of its normal form (normalize only folds whitespace, which is no token, and
    # the strip removes no word character), so an answer with more tokens than every placeholder is none of them
    if n <= most and normalize(pair.answer).strip(" .。!！") in forms:
        return verdict(settings, False, None, f"answer is a placeholder ({pair.answer.strip()!r})")
    return verdict(settings, True, None, "answer present")


SPEC = CheckSpec(
    name=NAME,
    settings_model=Settings,
    kind="pair",
    summary="answer is not empty / 'N/A'",
    reads=("answer",),
    func=check,
)

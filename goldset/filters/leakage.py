"""Check 3: the question must not contain its own answer.

"Does the server listen on port 8000?" / "port 8000" tests nothing. Two signals: the whole answer occurs in
the question (token boundaries respected), or nearly all of the answer's content tokens already appear in the
question (the answer adds nothing new). Function words are left out of the share, so an answer that restates
the question's subject but adds the fact ("FastAPI uses Pydantic") is not a leak.
"""

from __future__ import annotations

from itertools import filterfalse

from pydantic import Field

from goldset.filters.base import CheckSettings, CheckSpec, ChunkMap, verdict
from goldset.filters.textsim import STOPWORDS, normalized_contains, tokens
from goldset.schema import CheckResult, QAPair, QuestionType

NAME = "leakage"


class Settings(CheckSettings):
    """Thresholds of the leakage check (``filter.checks.leakage``)."""

    max_token_share: float = Field(
        0.9, ge=0, le=1, description="Fail when this share of the answer's content is in the question."
    )
    min_answer_chars: int = Field(2, ge=1, description="A verbatim occurrence counts only for answers this long.")


def content_tokens(text: str) -> list[str]:
    """The tokens of ``text`` that carry content (function words left out)."""
    return list(filterfalse(STOPWORDS.__contains__, tokens(text)))


def check(pair: QAPair, chunks: ChunkMap, settings: Settings) -> CheckResult:
    """Fail a question that contains its answer, or nearly all of its content words."""
    if pair.question_type == QuestionType.unanswerable:
        return verdict(settings, True, None, "unanswerable pairs have no answer to leak")
    answer = pair.answer.strip()
    question_tokens = tokens(pair.question)
    q_tokens = set(question_tokens)
    # an answer inside the question is a run of the question's tokens (tokens hold no space): so it has no more
    # tokens than the question, and none outside it; for any other answer the canonical forms are not needed
    answer_tokens = tokens(answer)
    if (
        len(answer) >= settings.min_answer_chars
        and len(answer_tokens) <= len(question_tokens)
        and q_tokens.issuperset(answer_tokens)
        and normalized_contains(pair.question, answer)
    ):
        return verdict(settings, False, 1.0, "the question contains the whole answer")
    a_tokens = content_tokens(answer)
    if not a_tokens:
        return verdict(settings, True, 0.0, "answer has no content words")
    share = sum(map(q_tokens.__contains__, a_tokens)) / len(a_tokens)  # the count of True, looped in C
    if share >= settings.max_token_share:
        return verdict(settings, False, share, f"{share:.0%} of the answer's content words are already in the question")
    return verdict(settings, True, share, f"{share:.0%} of the answer's content words are in the question")


SPEC = CheckSpec(
    name=NAME,
    settings_model=Settings,
    kind="pair",
    summary="question does not contain its answer",
    reads=("question", "answer", "question_type"),
    func=check,
)

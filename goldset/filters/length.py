"""Quality heuristic: question and answer lengths within bounds (tokens: CJK characters count one each)."""

from __future__ import annotations

from pydantic import Field, model_validator

from goldset.filters.base import CheckSettings, CheckSpec, ChunkMap, verdict
from goldset.filters.textsim import tokens
from goldset.schema import CheckResult, QAPair

NAME = "length"


class Settings(CheckSettings):
    """Bounds of the length check (``filter.checks.length``), in tokens (a CJK character is one)."""

    min_question_tokens: int = Field(3, ge=1, description="Fewest question tokens (CJK character = 1 token).")
    max_question_tokens: int = Field(60, ge=1, description="Most question tokens.")
    min_answer_tokens: int = Field(1, ge=1, description="Fewest answer tokens.")
    max_answer_tokens: int = Field(300, ge=1, description="Most answer tokens.")

    @model_validator(mode="after")
    def _ordered(self) -> Settings:
        if self.min_question_tokens > self.max_question_tokens:
            raise ValueError("min_question_tokens is larger than max_question_tokens")
        if self.min_answer_tokens > self.max_answer_tokens:
            raise ValueError("min_answer_tokens is larger than max_answer_tokens")
        return self


def check(pair: QAPair, chunks: ChunkMap, settings: Settings) -> CheckResult:
    """Fail a question or answer outside its bounds."""
    nq, na = len(tokens(pair.question)), len(tokens(pair.answer))
    problems = []
    if nq < settings.min_question_tokens:
        problems.append(f"question has {nq} tokens (< {settings.min_question_tokens})")
    if nq > settings.max_question_tokens:
        problems.append(f"question has {nq} tokens (> {settings.max_question_tokens})")
    if na < settings.min_answer_tokens:
        problems.append(f"answer has {na} tokens (< {settings.min_answer_tokens})")
    if na > settings.max_answer_tokens:
        problems.append(f"answer has {na} tokens (> {settings.max_answer_tokens})")
    if problems:
        return verdict(settings, False, None, "; ".join(problems))
    return verdict(settings, True, None, f"question {nq} tokens, answer {na} tokens")


SPEC = CheckSpec(
    name=NAME,
    settings_model=Settings,
    kind="pair",
    summary="question and answer lengths within bounds",
    reads=("question", "answer"),
    func=check,
)

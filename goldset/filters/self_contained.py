"""Quality heuristic: the pair must make sense without the chunk ("according to the passage", "文中", "上文").

A golden question is asked of a whole knowledge base; "the passage" does not exist for the system under test.
"""

from __future__ import annotations

import re

from pydantic import Field, model_validator

from goldset.filters.base import CheckSettings, CheckSpec, ChunkMap, result
from goldset.schema import CheckResult, QAPair

NAME = "self_contained"

DEFAULT_PATTERNS = [
    r"\baccording to (the|this) (passage|text|document|context|article|section|excerpt|chunk|snippet|paragraph)",
    r"\b(in|from|based on) (the|this) (given |above |provided )?"
    r"(passage|text|context|excerpt|chunk|snippet|paragraph)\b",
    r"\bthe (above|following|given|provided) (text|passage|context|section|document|excerpt|paragraph)\b",
    r"\b(mentioned|described|shown|stated) (above|earlier|in the (passage|text|excerpt))\b",
    r"\bthis (passage|excerpt|chunk|snippet|paragraph)\b",
    r"\bthe author\b",
    r"文中|上文|原文|本文|上述|以上内容|该段|这段|本段|给定(的)?(文本|段落|材料|内容)|根据(文本|段落|材料|文档内容)",
]


class Settings(CheckSettings):
    patterns: list[str] = Field(
        default_factory=lambda: list(DEFAULT_PATTERNS),
        description="Regular expressions (case-insensitive) that reveal a pair leaning on its source chunk.",
    )
    check_answer: bool = Field(True, description="Also look in the answer, not only the question.")

    def compiled(self) -> list[re.Pattern[str]]:
        return [re.compile(p, re.IGNORECASE) for p in self.patterns]

    @model_validator(mode="after")
    def _valid_patterns(self) -> Settings:
        for p in self.patterns:
            try:
                re.compile(p)
            except re.error as exc:
                raise ValueError(f"pattern {p!r} is not a valid regular expression ({exc})") from None
        return self


def check(pair: QAPair, chunks: ChunkMap, settings: Settings) -> CheckResult:
    fields = [("question", pair.question)] + ([("answer", pair.answer)] if settings.check_answer else [])
    for field, text in fields:
        for pattern in settings.compiled():
            m = pattern.search(text)
            if m:
                return result(False, None, f"{field} refers to its source ({m.group(0)!r}); it must stand alone")
    return result(True, None, "no reference to 'the passage'")


SPEC = CheckSpec(
    name=NAME,
    settings_model=Settings,
    kind="pair",
    summary="no 'according to the passage' / 文中 / 上文",
    reads=("question", "answer"),
    func=check,
)

"""Quality heuristic: the question is one question (a question mark or an interrogative/imperative opening).

Two questions in one ("What is X? And how do I Y?") make an ambiguous target: a system answering half of it
is neither right nor wrong. A word list cannot know every phrasing of a question (an imperative 说明…, a
statement ending in 吗), so a failure only flags the pair by default.
"""

from __future__ import annotations

import re

from pydantic import Field

from goldset.filters.base import CheckSettings, CheckSpec, ChunkMap, Severity, verdict
from goldset.schema import CheckResult, QAPair

NAME = "question_form"

_OPENERS = re.compile(
    r"^(what|how|why|when|where|which|who|whom|whose|is|are|was|were|can|could|does|do|did|should|would|will|"
    r"shall|may|must|has|have|explain|describe|list|name|give|compare|show|tell|in what|for what|with what)\b",
    re.IGNORECASE,
)
_ZH_CUES = re.compile(
    r"吗|呢|什么|怎么|怎样|如何|为什么|为何|哪|是否|多少|几|请|能否|可否|有没有|是不是|何|"
    r"说明|解释|列出|列举|描述|介绍|比较|区分|举例|简述|概述"
)


class Settings(CheckSettings):
    """Settings of the question_form check (``filter.checks.question_form``)."""

    max_question_marks: int = Field(1, ge=1, description="More question marks means more than one question.")
    severity: Severity = Field("flag", description="Word lists cannot be certain: flag for review by default.")


def check(pair: QAPair, chunks: ChunkMap, settings: Settings) -> CheckResult:
    """Fail (flag, by default) a question that is two questions or does not read as one."""
    q = pair.question.strip()
    marks = q.count("?") + q.count("？")
    if marks > settings.max_question_marks:
        return verdict(settings, False, None, f"{marks} question marks: ask one question per pair")
    if marks or _OPENERS.match(q) or _ZH_CUES.search(q):
        return verdict(settings, True, None, "reads as a question")
    return verdict(settings, False, None, "does not read as a question (no '?' and no interrogative word)")


SPEC = CheckSpec(
    name=NAME,
    settings_model=Settings,
    kind="pair",
    summary="one well-formed question",
    reads=("question",),
    func=check,
    version=2,
)

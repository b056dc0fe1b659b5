"""Quality heuristic: the pair looks like its declared question type.

Cheap cues, not a classifier: a ``comparison`` names a contrast, a ``procedural`` question asks how, a
``multi_hop`` pair cites at least two chunks, an ``unanswerable`` pair's answer says the KB does not answer, and
an answerable pair's answer does not say so. Cue lists are settings so a team can widen them.
"""

from __future__ import annotations

import re

from pydantic import Field, model_validator

from goldset.filters.base import CheckSettings, CheckSpec, ChunkMap, result
from goldset.schema import CheckResult, QAPair, QuestionType

NAME = "type_plausible"

REFUSAL = (
    r"\bnot (mentioned|covered|specified|stated|documented|described|provided|discussed|included|answer(ed|able))\b|"
    r"\b(does|do|did) not (say|mention|specify|cover|document|describe|state|explain|provide|discuss)\b|"
    r"\bno (information|mention|details?)\b|\bcannot be answered\b|\bunanswerable\b|"
    r"\bnot possible to (tell|answer|determine)\b|"
    r"没有提到|未提及|没有提及|没有说明|未说明|无法回答|没有相关|不包含|未涉及|没有涉及|未提供|没有提供|无法确定|无法从"
)
COMPARISON = (
    r"\b(differen(ce|t)|differ|compare[ds]?|comparison|versus|vs\.?|better|worse|than|between|unlike|whereas|"
    r"same as|similar|prefer|instead of|rather than|or)\b|"
    r"区别|不同|比较|相比|差异|还是|异同|对比|优于|而不是|哪个|哪一个"
)
PROCEDURAL = (
    r"\b(how|steps?|procedure|process|configure|set up|setup|install|create|implement|add|enable|declare|define|"
    r"use|make|write|run|deploy)\b|如何|怎么|怎样|步骤|流程|配置|设置|安装|创建|实现|添加|启用|声明|定义|使用|编写|运行"
)
REASONING = (
    r"\b(why|what happens|what would|explain|would|if|when|consequence|effect|reason|purpose|benefit|should)\b|"
    r"为什么|为何|如果|会|原因|作用|目的|好处|影响|应该|是否"
)


class Settings(CheckSettings):
    refusal_pattern: str = REFUSAL
    comparison_pattern: str = COMPARISON
    procedural_pattern: str = PROCEDURAL
    reasoning_pattern: str = REASONING
    min_multi_hop_chunks: int = Field(2, ge=1, description="A multi_hop pair cites at least this many chunks.")

    @model_validator(mode="after")
    def _valid_patterns(self) -> Settings:
        for name in ("refusal_pattern", "comparison_pattern", "procedural_pattern", "reasoning_pattern"):
            try:
                re.compile(getattr(self, name))
            except re.error as exc:
                raise ValueError(f"{name} is not a valid regular expression ({exc})") from None
        return self


def _has(pattern: str, text: str) -> bool:
    return re.search(pattern, text, re.IGNORECASE) is not None


def check(pair: QAPair, chunks: ChunkMap, settings: Settings) -> CheckResult:
    qt = pair.question_type
    refuses = _has(settings.refusal_pattern, pair.answer)
    if qt == QuestionType.unanswerable:
        if not refuses:
            return result(False, None, "unanswerable pair, but the answer does not say the KB lacks the answer")
        return result(True, None, "answer states the KB does not answer")
    if refuses:
        return result(False, None, f"{qt.value} pair, but the answer says the KB does not answer it")
    if qt == QuestionType.comparison and not _has(settings.comparison_pattern, pair.question):
        return result(False, None, "comparison pair, but the question names no contrast (difference, vs, than...)")
    if qt == QuestionType.procedural and not _has(settings.procedural_pattern, pair.question):
        return result(False, None, "procedural pair, but the question does not ask how to do something")
    if qt == QuestionType.reasoning and not _has(settings.reasoning_pattern, pair.question):
        return result(False, None, "reasoning pair, but the question asks no why/what-if")
    if qt == QuestionType.multi_hop and len(pair.chunk_ids) < settings.min_multi_hop_chunks:
        return result(
            False, None, f"multi_hop pair cites {len(pair.chunk_ids)} chunk(s) (< {settings.min_multi_hop_chunks})"
        )
    return result(True, None, f"plausible {qt.value} pair")


SPEC = CheckSpec(
    name=NAME,
    settings_model=Settings,
    kind="pair",
    summary="pair looks like its question type",
    reads=("question", "answer", "question_type", "evidence"),
    func=check,
)

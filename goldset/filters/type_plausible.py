"""Quality heuristic: the pair looks like its declared question type.

Cheap cues, not a classifier: a ``comparison`` names a contrast, a ``procedural`` question asks how, a
``multi_hop`` pair cites at least two chunks, an ``unanswerable`` pair's answer says the KB does not answer, and
an answerable pair's answer does not say so. An ``ambiguous`` pair's answer names the readings or asks which one
is meant ("depends on whether", "which one do you mean", 指的是……还是……, 哪一种) and quotes each reading; an
``open_ended`` question asks how to design or what to consider ("how would you design", "what should one
consider", 如何设计, 需要考虑哪些) and its answer lists key points. Cue lists are settings so a team can widen them.
Cues cannot be certain (有何差别 is a comparison, 意味着什么 a reasoning question, 没有……并未给出 a refusal, and a
list never has every phrasing), so a failure only flags the pair by default.
"""

from __future__ import annotations

import re
from functools import lru_cache

from pydantic import Field, model_validator

from goldset.filters.base import CheckSettings, CheckSpec, ChunkMap, Severity, verdict
from goldset.filters.textsim import WordGate, tokens
from goldset.generation.keypoints import key_points
from goldset.schema import CheckResult, QAPair, QuestionType
from goldset.text import has_cjk

NAME = "type_plausible"

REFUSAL_EN = (
    r"(?:\bnot|n't) (?:be |been |yet )?(?:mentioned|covered|specified|stated|documented|described|provided|discussed|"
    r"included|given|explained|addressed|listed|answer(?:ed|able))\b|"
    r"\b(?:does|do|did|is|are|was|were)(?:n't| not) (?:say|mention|specify|cover|document|describe|state|explain|"
    r"provide|discuss|address|include|list|give|contain)\b|"
    r"\bno (?:information|mention|details?|documentation|description|explanation)\b|"
    r"\bno\s+(?:\w+\s+){0,3}(?:is|are|was|were)\s+(?:documented|mentioned|specified|stated|given|listed|described)\b|"
    r"\bcannot be (?:answered|determined)\b|\bunanswerable\b|"
    r"\b(?:not possible|impossible) to (?:tell|answer|determine|say)\b|\b(?:can't|cannot) (?:tell|determine)\b"
)
REFUSAL_ZH = (
    r"没有提到|未提及|没有提及|没有说明|未说明|无法回答|没有相关|不包含(?:相关|这方面|此类|任何)|未涉及|没有涉及|"
    r"未提供|没有提供|无法确定|无法从|无从|无法得知|不得而知|(?:文档|资料|文中)(?:里|中)?找不到|没有记载|未记载|"
    r"没有任何(?:信息|说明|内容|介绍)|"
    r"并未(?:给出|提到|提及|说明|介绍|涉及|提供|描述|列出|包含|记载|谈及)|"
    r"(?:并)?没有(?:给出|介绍|描述|列出|谈到|讲到|说到|谈及)|未(?:给出|介绍|描述|列出|谈及)"
)
REFUSAL = REFUSAL_EN + "|" + REFUSAL_ZH
COMPARISON_EN = (
    r"\b(?:differen(?:ces?|t|tly)|differs?|distinguish\w*|compar(?:e[ds]?|ing|ison)|versus|vs\.?|better|worse|"
    r"faster|slower|"
    r"than|between|unlike|whereas|same as|similar|prefer|preferred|instead of|rather than|or|trade-?offs?|"
    r"pros and cons|advantages?|contrast|both)\b"
)
COMPARISON_ZH = (
    r"区别|不同|差别|差异|分别|区分|比较|相比|对比|异同|优劣|优缺点|优于|还是|而不是|哪个|哪一个|哪种|哪一种|谁更|"
    r"相同|一样|类似|相似|更(?:好|快|适合|合适|推荐|简单)|或者|选择"
)
COMPARISON = COMPARISON_EN + "|" + COMPARISON_ZH
PROCEDURAL_EN = (
    r"\b(?:how|steps?|procedure|process|configure|set up|setup|install|create|implement|add|enable|declare|define|"
    r"use|make|write|run|deploy|in order to|what do i need|what should i do)\b"
)
PROCEDURAL_ZH = (
    r"如何|怎么|怎样|步骤|流程|配置|设置|安装|创建|实现|添加|启用|声明|定义|使用|编写|运行|部署|做法|方法|才能|用什么"
)
PROCEDURAL = PROCEDURAL_EN + "|" + PROCEDURAL_ZH
REASONING_EN = (
    r"\b(?:why|what happens|happen|what would|explain|would|if|when|consequences?|effects?|reasons?|purpose|"
    r"benefits?|drawbacks?|should|mean|means|implications?|imply|risks?|cause[sd]?|result|matter|so that|"
    r"what for|trade-?offs?|advantages?|disadvantages?)\b"
)
REASONING_ZH = (
    r"为什么|为何|如果|会|原因|作用|目的|好处|坏处|影响|应该|是否|意味着|意义|说明了什么|导致|结果|后果|何时|"
    r"什么时候|什么情况|有什么用|用途|代价|风险|优点|缺点|为了|原理|机制|怎么会"
)
REASONING = REASONING_EN + "|" + REASONING_ZH
#: An answer naming a question's readings, or asking which one is meant.
AMBIGUOUS_EN = (
    r"\bdepends? (?:on )?(?:whether|which|what|if)\b|\bwhich (?:one|kind|sense|meaning|of (?:the|these|them)\b[^.?!]*)"
    r"(?: do| did| would)? you mean\b|\b(?:do|did) you mean\b|\bif (?:you|one) (?:mean|means|meant|refer)\b|"
    r"\b(?:two|three|several|multiple|different) (?:readings|meanings|interpretations|senses|things)\b|"
    r"\b(?:could|can|may|might) (?:mean|refer to)\b|\bambiguous\b|\beither\b[^.?!]*\bor\b"
)
AMBIGUOUS_ZH = (
    r"指.{0,40}?还是|哪一种|哪种|哪一个|哪个|取决于|要看|视.{0,12}?而定|"
    r"(?:两|几|多)种(?:情况|含义|理解|意思|解释|可能)|有歧义|不同的(?:含义|意思)|可以指|分(?:为|成)?两种"
)
AMBIGUOUS = AMBIGUOUS_EN + "|" + AMBIGUOUS_ZH
#: A question asking how one would design or approach something, or what to consider.
OPEN_ENDED_EN = (
    r"\bhow (?:would|should|could|can|might|do|does) (?:one|you|i|we|a team|a developer)\b[^?]*\b(?:design|"
    r"approach|structure|plan|architect|organi[sz]e|build|set up|handle|choose|decide)\b|"
    r"\bwhat (?:should|must|would|do|does) (?:one|you|i|we|a team|a developer) (?:consider|keep in mind|"
    r"take into account|think about|weigh|watch out for|look out for|pay attention to)\b|"
    r"\bwhat (?:are|would be|is) (?:the )?(?:main |key |important )?(?:considerations?|factors|trade-?offs|"
    r"best practices|things to consider|aspects)\b|\b(?:considerations?|best practices|things to consider|"
    r"design choices|design decisions)\b|\bwhat to consider\b"
)
OPEN_ENDED_ZH = (
    r"如何设计|怎样设计|怎么设计|如何规划|如何组织|如何权衡|如何选择|(?:需要|应该|应当|要)(?:考虑|注意)(?:哪些|什么)|"
    r"考虑哪些|注意哪些|哪些因素|哪些方面|哪些考虑|最佳实践|注意事项|设计.{0,10}?时"
)
OPEN_ENDED = OPEN_ENDED_EN + "|" + OPEN_ENDED_ZH


class Settings(CheckSettings):
    """Cue patterns of the type_plausible check (``filter.checks.type_plausible``)."""

    refusal_pattern: str = Field(REFUSAL, description="An answer saying the KB does not answer (regex).")
    comparison_pattern: str = Field(COMPARISON, description="A question naming a contrast (regex).")
    procedural_pattern: str = Field(PROCEDURAL, description="A question asking how to do something (regex).")
    reasoning_pattern: str = Field(REASONING, description="A question asking why / what if / what it means (regex).")
    ambiguous_pattern: str = Field(
        AMBIGUOUS, description="An answer naming the question's readings or asking which one is meant (regex)."
    )
    open_ended_pattern: str = Field(
        OPEN_ENDED, description="A question asking how one would design something or what to consider (regex)."
    )
    min_multi_hop_chunks: int = Field(2, ge=1, description="A multi_hop pair cites at least this many chunks.")
    min_ambiguous_quotes: int = Field(
        2, ge=1, description="An ambiguous pair quotes at least this many different spans (one per reading)."
    )
    min_key_points: int = Field(
        2, ge=0, description="An open_ended answer lists at least this many key points (0: prose is fine)."
    )
    severity: Severity = Field("flag", description="Cue lists cannot be certain: flag for review by default.")

    @model_validator(mode="after")
    def _valid_patterns(self) -> Settings:
        for name in (
            "refusal_pattern", "comparison_pattern", "procedural_pattern", "reasoning_pattern", "ambiguous_pattern",
            "open_ended_pattern",
        ):  # fmt: skip
            try:
                re.compile(getattr(self, name))
            except re.error as exc:
                raise ValueError(f"{name} is not a valid regular expression ({exc})") from None
        return self


@lru_cache(maxsize=64)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


#: Each default cue pattern -> its English alternatives: the Chinese ones (``*_ZH``) each need a CJK character, so
#: on a text without one the English part finds a match exactly when the whole pattern does, in a fraction of the
#: time (the Chinese alternatives are most of the search).
_EN_PART = {
    REFUSAL: REFUSAL_EN, COMPARISON: COMPARISON_EN, PROCEDURAL: PROCEDURAL_EN, REASONING: REASONING_EN,
    AMBIGUOUS: AMBIGUOUS_EN, OPEN_ENDED: OPEN_ENDED_EN,
}  # fmt: skip
ZH_PARTS = (REFUSAL_ZH, COMPARISON_ZH, PROCEDURAL_ZH, REASONING_ZH, AMBIGUOUS_ZH, OPEN_ENDED_ZH)


#: The alternatives of :data:`REFUSAL_EN` (same order), each with the groups of words of which its every match
#: holds one as a whole token (:class:`~goldset.filters.textsim.WordGate`: each word sits between ``\b``, spaces
#: or ``\s`` in the pattern; "n't" leaves the token "t").
_REFUSAL_GATE = WordGate(
    [
        [
            ["not", "t"],
            (
                "mentioned covered specified stated documented described provided discussed included given "
                "explained addressed listed answered answerable"
            ),
        ],
        [
            ["not", "t"],
            (
                "say mention specify cover document describe state explain provide discuss address include list "
                "give contain"
            ),
        ],
        [["no"], ["information", "mention", "detail", "details", "documentation", "description", "explanation"]],
        [["no"], ["documented", "mentioned", "specified", "stated", "given", "listed", "described"]],
        [["cannot"], ["answered", "determined"]],
        [["unanswerable"]],
        [["possible", "impossible"], ["tell", "answer", "determine", "say"]],
        [["t", "cannot"], ["tell", "determine"]],
    ]
)
#: A character or piece every match of :data:`REFUSAL_ZH` holds (CJK characters have no case).
_REFUSAL_ZH_NEEDS = re.compile("没|未|无|不包含|不得而知|找不到")


#: Every alternative of :data:`REFUSAL_EN` holds an n (not, n't, no, cannot, unanswerable) or the p of impossible,
#: and re.IGNORECASE matches those with n, N, p or P only (no other code point folds to them).
_REFUSAL_EN_LETTERS = re.compile("[nNpP]")


def _has(pattern: str, text: str) -> bool:
    en = _EN_PART.get(pattern)
    if pattern == REFUSAL:  # the default refusal cue: a sound quick "no" for most answers
        if text.isascii():
            return bool(_REFUSAL_GATE.possible(tokens(text))) and _compiled(REFUSAL_EN).search(text) is not None
        # REFUSAL is REFUSAL_EN|REFUSAL_ZH: search only the part that can match
        en_may = _REFUSAL_EN_LETTERS.search(text) is not None
        zh_may = _REFUSAL_ZH_NEEDS.search(text) is not None
        if not (en_may or zh_may):
            return False
        pattern = REFUSAL if en_may and zh_may else REFUSAL_EN if en_may else REFUSAL_ZH
    elif en is not None and not has_cjk(text):
        pattern = en
    return _compiled(pattern).search(text) is not None


def check(pair: QAPair, chunks: ChunkMap, settings: Settings) -> CheckResult:
    """Fail (flag, by default) a pair that does not look like its question type."""
    qt = pair.question_type
    refuses = _has(settings.refusal_pattern, pair.answer)
    if qt == QuestionType.unanswerable:
        if not refuses:
            why = "unanswerable pair, but the answer does not say the KB lacks the answer"
            return verdict(settings, False, None, why)
        return verdict(settings, True, None, "answer states the KB does not answer")
    if refuses:
        return verdict(settings, False, None, f"{qt.value} pair, but the answer says the KB does not answer it")
    if qt == QuestionType.comparison and not _has(settings.comparison_pattern, pair.question):
        why = "comparison pair, but the question names no contrast (difference, vs, than...)"
        return verdict(settings, False, None, why)
    if qt == QuestionType.procedural and not _has(settings.procedural_pattern, pair.question):
        return verdict(settings, False, None, "procedural pair, but the question does not ask how to do something")
    if qt == QuestionType.reasoning and not _has(settings.reasoning_pattern, pair.question):
        return verdict(settings, False, None, "reasoning pair, but the question asks no why/what-if")
    if qt == QuestionType.multi_hop and len(pair.chunk_ids) < settings.min_multi_hop_chunks:
        why = f"multi_hop pair cites {len(pair.chunk_ids)} chunk(s) (< {settings.min_multi_hop_chunks})"
        return verdict(settings, False, None, why)
    if qt == QuestionType.ambiguous:
        if not _has(settings.ambiguous_pattern, pair.answer):
            why = "ambiguous pair, but the answer names no readings (depends on whether, which one do you mean, 还是…)"
            return verdict(settings, False, None, why)
        quotes = len({(e.chunk_id, " ".join(e.quote.split())) for e in pair.evidence})
        if quotes < settings.min_ambiguous_quotes:
            why = f"ambiguous pair quotes {quotes} span(s) (< {settings.min_ambiguous_quotes}: one per reading)"
            return verdict(settings, False, None, why)
    if qt == QuestionType.open_ended:
        if not _has(settings.open_ended_pattern, pair.question):
            why = "open_ended pair, but the question asks no how-to-design / what-to-consider (如何设计, 需要考虑哪些…)"
            return verdict(settings, False, None, why)
        points = len(key_points(pair.answer))
        if points < settings.min_key_points:
            why = f"open_ended pair, but the answer lists {points} key point(s) (< {settings.min_key_points})"
            return verdict(settings, False, None, why)
    return verdict(settings, True, None, f"plausible {qt.value} pair")


SPEC = CheckSpec(
    name=NAME,
    settings_model=Settings,
    kind="pair",
    summary="pair looks like its question type",
    reads=("question", "answer", "question_type", "evidence"),
    func=check,
    version=3,
)

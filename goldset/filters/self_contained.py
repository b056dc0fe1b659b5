"""Quality heuristic: the pair must make sense without the chunk ("according to the passage", "文中", "上文").

A golden question is asked of a whole knowledge base; "the passage" does not exist for the system under test.

The patterns look for a *reference* to the source, not for the words alone: "in the context of OAuth2", "the
author of FastAPI", 英文原文 (the English original), 中文中 (in Chinese) or 线上文档 (online docs) are ordinary
language; "in this document", "per the excerpt", 根据这篇文章, 原文中提到, 如上所述 are references. Chinese has no
word boundaries, so a Chinese reference word counts where it starts a phrase (after punctuation, a space or a
preposition such as 在/根据) or is followed by a verb of saying (提到, 所述, 说 …). Even so a pattern cannot be
certain, so a failure only *flags* the pair by default (``severity: flag``): it still passes, and review sees it
first.
"""

from __future__ import annotations

import re

from pydantic import Field, model_validator

from goldset.filters.base import CheckSettings, CheckSpec, ChunkMap, Severity, verdict
from goldset.filters.textsim import WordGate, tokens
from goldset.schema import CheckResult, QAPair
from goldset.text import has_cjk

NAME = "self_contained"

_DOC = r"(?:passage|text|document|context|article|section|excerpt|chunk|snippet|paragraph|page|material)"
_THIS = r"(?:passage|excerpt|chunk|snippet|paragraph|article|document|section|page)"
_SHOWN = r"(?:described|explained|mentioned|shown|stated|noted|discussed|outlined|given|presented|defined|listed)"
# Chinese: where a reference word may start (nothing CJK before it, or one of these prepositions) ...
_ZH_START = r"(?:(?<![\u4e00-\u9fff])|(?<=[在据如从按由于见照就同与和对依]))"
# ... or what follows it when it refers to a text (a verb of saying or a locative).
_ZH_SAY = r"(?:提到|提及|说|讲|指出|所述|所说|所示|描述|介绍|给出|列出|认为|强调|写道|表示|举的|中|里)"
_ZH_TEXT = r"(?:文章|文本|段落|材料|文档|内容|资料|上下文|短文|篇章|原文)"

#: The English default patterns; none can match a text without CJK characters of the Chinese ones below, so on such
#: a text (most of an English dataset) only these are searched while the patterns are the defaults.
EN_PATTERNS = [
    r"\b(?:according to|based on|per|as per|from what) (?:the|this|that) "
    rf"(?:given |above |provided |following )?{_DOC}\b(?! of\b)",
    r"\b(?:in|from|within) (?:the|this) (?:given |above |provided |following )?"
    r"(?:passage|excerpt|chunk|snippet|paragraph|article|section)\b(?! of\b)",
    r"\b(?:in|from|within) (?:the )?(?:given|above|provided|following) (?:text|context)\b",
    rf"\bthis {_THIS}\b",
    rf"\bthe (?:above|following|given|provided|preceding) {_DOC}\b",
    r"\bthe (?:example|code|snippet|section|table|list|passage|paragraph|text|figure|excerpt|sentence)s? "
    r"(?:above|below)\b",
    rf"\b{_SHOWN} (?:above|earlier|previously|before|below)\b",
    rf"\bas {_SHOWN} (?:in|by) (?:the|this) (?:{_DOC}|example|author)\b(?! of\b)",
    r"\b(?:the|this) (?:authors?|writers?)\b(?!\s+of\b)",
    r"\b(?:does |do |did )?the (?:text|passage|excerpt|snippet|paragraph|chunk|article|section|page|context) "
    r"(?:says?|said|states?|stated|mentions?|notes?|explains?|describes?|suggests?|shows?|lists?|claims?|tells?)\b",
]
#: The Chinese default patterns: each alternative needs a CJK character (``goldset.text.has_cjk``) to match.
ZH_PATTERNS = [
    rf"(?:根据|依据|按照|参考|结合|基于|据)(?:这|该|本|此|上面的?|上述|以上|所给的?|给出的|提供的|给定的?)?[篇段份]?{_ZH_TEXT}",
    rf"{_ZH_START}文中|文中{_ZH_SAY}",
    rf"{_ZH_START}(?:上文|前文|下文)|(?<![线网])(?:上文|前文){_ZH_SAY}",
    rf"{_ZH_START}本[文篇段节章]|(?<![版基样剧脚范课日])本文{_ZH_SAY}",
    rf"{_ZH_START}原文|原文(?:中|里)?(?:提到|提及|说|讲|指出|所述|所说|描述|介绍|给出|认为|强调)",
    r"(?<![线网])上述|如上所[述示说]|如前所述|以上(?:内容|段落|文字|材料|文本|描述|信息|文章)",
    r"[该此这本]篇|[该此这]段(?:话|文字|内容|描述|材料|文本|说明|介绍|文档|段落)|该(?:文章|文档|文本|材料|段落|章节)",
    r"文章(?:里|中)?(?:说|提到|提及|指出|认为|讲|介绍|描述|写道)",
    rf"{_ZH_START}作者(?!是谁|是哪)|作者(?:认为|提到|提及|指出|说|建议|强调|表示|提出|写道|觉得)|作者的(?:说法|观点|意思|建议)",
    r"(?:上面|下面|前面|上方|下方|以上|以下)的?(?:例子|示例|代码|表格|列表|段落|文字|内容|说明|介绍|描述|材料)|上例|下例",
    r"给定(?:的)?(?:文本|段落|材料|内容|文档|上下文)",
]
DEFAULT_PATTERNS = EN_PATTERNS + ZH_PATTERNS
_DEFAULT = tuple(DEFAULT_PATTERNS)
_EN = tuple(EN_PATTERNS)


def _words(alternation: str) -> list[str]:
    """The words of a ``(?:a|b|c)`` alternation of plain words."""
    return alternation.removeprefix("(?:").removesuffix(")").split("|")


#: Per English pattern (same order), the words of which each match holds one of each group as a whole token
#: (:class:`~goldset.filters.textsim.WordGate`): every word below sits between spaces or ``\b`` in its pattern.
_EN_GATE = WordGate(
    [
        [["according", "based", "per", "what"], _words(_DOC)],
        [["passage", "excerpt", "chunk", "snippet", "paragraph", "article", "section"]],
        [["given", "above", "provided", "following"], ["text", "context"]],
        [["this"], _words(_THIS)],
        [["above", "following", "given", "provided", "preceding"], _words(_DOC)],
        [["above", "below"]],
        [_words(_SHOWN), ["above", "earlier", "previously", "before", "below"]],
        [["as"], _words(_SHOWN), [*_words(_DOC), "example", "author"]],
        [["author", "authors", "writer", "writers"]],
        [
            ["text", "passage", "excerpt", "snippet", "paragraph", "chunk", "article", "section", "page", "context"],
            (
                "say says said state states stated mention mentions note notes explain explains describe "
                "describes suggest suggests show shows list lists claim claims tell tells"
            ),
        ],
    ]
)
#: A piece of text at least one of which every Chinese pattern's match holds (CJK characters have no case, so
#: re.IGNORECASE changes nothing for them): a text with none of them can match an English pattern at most.
_ZH_NEEDS = (
    "文章 文本 段落 材料 文档 内容 资料 上下文 短文 篇章 原文 文中 上文 前文 下文 本文 本篇 本段 本节 本章 上述 如上所 "
    "如前所述 以上 该篇 此篇 这篇 该段 此段 这段 该文 该材 该章 作者 上面 下面 前面 上方 下方 以下 上例 下例 给定"
)
_ZH_NEEDS_RE = re.compile("|".join(_ZH_NEEDS.split()))  # literal pieces: one search in C
#: Every English pattern holds an e or a t (the, this, that, text, context, or above/earlier/previously/before/
#: below), and re.IGNORECASE matches those with e, E, t or T only (no other code point folds to them).
_EN_LETTERS_RE = re.compile("[eEtT]")
_ZH = tuple(ZH_PATTERNS)


class Settings(CheckSettings):
    """Patterns of the self_contained check (``filter.checks.self_contained``)."""

    patterns: list[str] = Field(
        default_factory=lambda: list(DEFAULT_PATTERNS),
        description="Regular expressions (case-insensitive) that reveal a pair leaning on its source chunk.",
    )
    check_answer: bool = Field(True, description="Also look in the answer, not only the question.")
    severity: Severity = Field("flag", description="A pattern cannot be certain: flag for review by default.")

    def compiled(self) -> list[re.Pattern[str]]:
        """The patterns, compiled once per list."""
        return _compiled(tuple(self.patterns))

    @model_validator(mode="after")
    def _valid_patterns(self) -> Settings:
        for p in self.patterns:
            try:
                re.compile(p)
            except re.error as exc:
                raise ValueError(f"pattern {p!r} is not a valid regular expression ({exc})") from None
        return self

    def any_pattern(self) -> re.Pattern[str] | None:
        """One regex matching wherever any pattern matches (see :func:`_merged`), or None if they cannot merge."""
        return _merged(tuple(self.patterns))


_cache: dict[tuple[str, ...], list[re.Pattern[str]]] = {}
_merged_cache: dict[tuple[str, ...], re.Pattern[str] | None] = {}


def _compiled(patterns: tuple[str, ...]) -> list[re.Pattern[str]]:
    """Compiled once per pattern list (a run checks every pair with the same list)."""
    got = _cache.get(patterns)
    if got is None:
        got = _cache[patterns] = [re.compile(p, re.IGNORECASE) for p in patterns]
    return got


def _merged(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    """The patterns as one alternation: one search tells most pairs (no reference at all) apart, instead of one
    search per pattern. Only a quick "no": which pattern matched, and where, is still found pattern by pattern, in
    list order, so the verdict is the same. None when a pattern has groups (a backreference would point elsewhere
    in the alternation) or inline flags, or the merge fails to compile."""
    if patterns not in _merged_cache:
        merged: re.Pattern[str] | None = None
        if (
            patterns
            and all(p.groups == 0 for p in _compiled(patterns))
            and not any("(?" + f in p for p in patterns for f in "aiLmsux")
        ):
            try:
                merged = re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)
            except re.error:
                merged = None
        _merged_cache[patterns] = merged
    return _merged_cache[patterns]


def _searched(patterns: tuple[str, ...], text: str) -> tuple[str, ...]:
    """The patterns of the list that may match ``text``, in list order, so the first match found among them is the
    list's first match. All of them but for the default list, where the others provably cannot match: on a text
    without CJK the Chinese patterns (each needs a CJK character), on an ASCII text also the English patterns
    missing a word they need (:data:`_EN_GATE`), on a CJK text the Chinese ones if it holds none of
    :data:`_ZH_NEEDS`, on any other text the English ones if it has no e or t (:data:`_EN_LETTERS_RE`)."""
    if patterns != _DEFAULT:
        return patterns
    if text.isascii():
        return tuple(_EN[i] for i in _EN_GATE.possible(tokens(text)))
    en = _EN if _EN_LETTERS_RE.search(text) is not None else ()
    if not has_cjk(text) or _ZH_NEEDS_RE.search(text) is None:
        return en
    return patterns if en else _ZH


def check(pair: QAPair, chunks: ChunkMap, settings: Settings) -> CheckResult:
    """Fail (flag, by default) a question or answer that refers to its source."""
    fields = [("question", pair.question)] + ([("answer", pair.answer)] if settings.check_answer else [])
    patterns = tuple(settings.patterns)
    for field, text in fields:
        searched = _searched(patterns, text)
        if not searched:
            continue
        quick = _merged(searched)
        if quick is not None and quick.search(text) is None:
            continue
        for pattern in _compiled(searched):
            m = pattern.search(text)
            if m:
                why = f"{field} refers to its source ({m.group(0)!r}); it must stand alone"
                return verdict(settings, False, None, why)
    return verdict(settings, True, None, "no reference to 'the passage'")


SPEC = CheckSpec(
    name=NAME,
    settings_model=Settings,
    kind="pair",
    summary="no 'according to the passage' / 文中 / 上文",
    reads=("question", "answer"),
    func=check,
    version=2,
)

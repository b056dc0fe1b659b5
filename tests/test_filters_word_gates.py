"""The quick "no" of self_contained and type_plausible (:class:`goldset.filters.textsim.WordGate` on ASCII text, the
Chinese pieces on CJK text) never hides a match: on real and on made-up text, with and without the gates, the same
first pattern matches at the same place, and the same answers read as refusals."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from goldset.filters import self_contained, type_plausible
from goldset.filters.textsim import WordGate, split_sentences, tokens
from tests.test_filters_cjk_patterns import CORPUS

ROOT = Path(__file__).parents[1]

#: Texts each default pattern (or refusal cue) matches, in several casings, and texts where only a non-ASCII case
#: fold (ſ for s, the Kelvin sign for k, dotted İ for i) makes it match: those must not take the ASCII gate.
MATCHING = [
    "According to the passage, what is a body?",
    "Based on this text, how?",
    "As per the document: yes.",
    "From what the given context says",
    "In the passage above, FastAPI",
    "from this excerpt of the docs",
    "within the provided section",
    "in the given text",
    "from the above context",
    "What does this snippet show?",
    "the following material",
    "The Table Below lists it",
    "the examples above",
    "as described above",
    "listed below",
    "mentioned earlier",
    "as explained by the author",
    "What do the authors think?",
    "this writer says",
    "does the text say so?",
    "the page lists three",
    "ACCORDING TO THE PASSAGE",
    "AS STATED IN THIS DOCUMENT",
    "According to the paſſage, what?",
    "What does this chun\u212a say?",
    "\u0130n the passage",
    "café: what do the authors say?",
    "The docs don't mention it.",
    "It is not documented.",
    "It isn't covered yet.",
    "There is no information about this.",
    "No such option is documented.",
    "No option  of\tthat kind\nis listed.",
    "This cannot be answered.",
    "Unanswerable.",
    "It is impossible to tell.",
    "It is not possible to say.",
    "I can't determine that.",
    "The docs doeſn't ſay.",
    "上文提到的请求体是什么？",
    "根据这篇文章，请求体是什么？",
    "文中说的 body 是什么？",
    "本文介绍了什么？",
    "如上所述，它是数据。",
    "作者认为什么？",
    "下面的例子说明了什么？",
    "给定的文本里有什么？",
    "文档中没有提到这一点。",
    "并未给出默认值。",
    "资料里找不到。",
    "这一点不得而知。",
    "According to the 文档, what is it?",
    "Selon the passage — 文档里说什么？",
    "It is not documented in the 文档。",
    "It is impossible to tell – 无法确定。",
    "As SHOWN ABOVE，请求体是数据。",
]
#: Near misses: the gate's words without the pattern around them, and a text whose words are all gate words.
NEAR = [
    "What is the context of OAuth2?",
    "the author of FastAPI",
    "passages and texts",
    "this is per se a text",
    "as given in the text above",
    "not mentioned? no information",
    "text page section document article",
    "线上文档",
    "英文原文",
    "中文中",
    "内容",
    "没有",
]


def _real_text() -> list[str]:
    """English lines (the docs, the fixture chunks) and the Chinese fixture chunks, by sentence."""
    chunks = json.loads((ROOT / "tests/fixtures/filters/chunks.json").read_text(encoding="utf-8"))
    sentences = [s for t in chunks.values() for s in split_sentences(t)]
    return [*CORPUS, *sentences]


TEXTS = [*MATCHING, *NEAR, *(t.upper() for t in MATCHING), *(t.lower() for t in MATCHING), *_real_text()]


def _first_match(patterns: list[str], text: str) -> tuple[int, str, int] | None:
    """(pattern index, matched text, start) of the first pattern of the list that matches: the check's rule."""
    for i, p in enumerate(patterns):
        m = re.compile(p, re.IGNORECASE).search(text)
        if m:
            return i, m.group(0), m.start()
    return None


def _first_match_gated(text: str) -> tuple[int, str, int] | None:
    searched = self_contained._searched(self_contained._DEFAULT, text)
    got = _first_match(list(searched), text)
    if got is None:
        return None
    return self_contained.DEFAULT_PATTERNS.index(searched[got[0]]), got[1], got[2]


def test_the_texts_hold_matches_and_the_gate_skips_most() -> None:
    matched = [t for t in MATCHING if _first_match(self_contained.DEFAULT_PATTERNS, t)]
    refusals = [t for t in MATCHING if re.search(type_plausible.REFUSAL, t, re.IGNORECASE)]
    assert len(matched) >= 30 and len(refusals) >= 14
    # the gate does skip: most real ASCII lines need no pattern at all
    ascii_lines = [t for t in CORPUS if t.isascii()]
    skipped = [t for t in ascii_lines if not self_contained._searched(self_contained._DEFAULT, t)]
    assert len(skipped) > 0.8 * len(ascii_lines)


@pytest.mark.parametrize(
    "text", ["According to the paſſage, what?", "What does this chun\u212a say?", "\u0130n the passage"]
)
def test_a_non_ascii_case_fold_takes_the_full_search(text: str) -> None:
    assert _first_match(self_contained.DEFAULT_PATTERNS, text) is not None
    assert self_contained._searched(self_contained._DEFAULT, text) == self_contained._EN


def test_self_contained_first_match_is_the_same_with_the_gates() -> None:
    differ = [t for t in TEXTS if _first_match_gated(t) != _first_match(self_contained.DEFAULT_PATTERNS, t)]
    assert differ == []


def test_self_contained_verdicts_are_the_same_with_the_gates() -> None:
    from tests.helpers.filter_data import fixture_chunks, pair

    gated = self_contained.Settings()
    full = self_contained.Settings(patterns=[*self_contained.DEFAULT_PATTERNS, "(?!x)x"])  # not the default list
    for text in [*MATCHING, *NEAR]:
        for p in (pair("q", text, "Data sent by the client."), pair("q", "What is a body?", text)):
            a, b = self_contained.check(p, fixture_chunks(), gated), self_contained.check(p, fixture_chunks(), full)
            assert (a.passed, a.reason) == (b.passed, b.reason), text


def test_refusal_is_the_same_with_the_gates() -> None:
    full = re.compile(type_plausible.REFUSAL, re.IGNORECASE)
    differ = [t for t in TEXTS if type_plausible._has(type_plausible.REFUSAL, t) != bool(full.search(t))]
    assert differ == []


def test_word_gate_needs_every_group() -> None:
    gate = WordGate([[["this"], ["passage", "text"]], [["author"]]])
    assert gate.possible(tokens("What does this passage say?")) == (0,)
    assert gate.possible(tokens("What is a passage?")) == ()
    assert gate.possible(tokens("this author's text")) == (0, 1)
    assert gate.possible(tokens("the authors")) == ()  # a whole token: "authors" is not "author"


def test_only_these_letters_fold_to_the_letters_the_english_patterns_need() -> None:
    """The non-ASCII quick "no"s rest on this: under re.IGNORECASE, e/t (every English self_contained pattern
    holds one) and n/p (every English refusal alternative holds one) match only their two ASCII cases."""
    folds = [chr(c) for c in range(0x110000) if re.match("[etnp]", chr(c), re.IGNORECASE)]
    assert folds == list("ENPTenpt")
    for pattern in self_contained.EN_PATTERNS:
        assert re.search("[et]", pattern.replace("(?!", "").lower()), pattern
    assert self_contained._searched(self_contained._DEFAULT, "请求体是什么？") == ()
    assert not type_plausible._has(type_plausible.REFUSAL, "请求体是客户端发送的数据。")

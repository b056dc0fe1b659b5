"""The Chinese default patterns of self_contained and type_plausible cannot match a text without CJK characters:
what lets those checks search only the English ones on such a text (the verdicts the same, the search faster)."""

from __future__ import annotations

import json
import re
import string
from pathlib import Path

import pytest

from goldset.filters import self_contained, type_plausible
from goldset.text import has_cjk

ROOT = Path(__file__).parents[1]
ZH = [*self_contained.ZH_PATTERNS, *type_plausible.ZH_PARTS]


def _english_corpus() -> list[str]:
    """Real English text without CJK characters: the repository's docs and the English fixture chunks, by line,
    plus every printable ASCII character and the punctuation a Chinese text uses around an English one."""
    lines = [
        line
        for path in sorted([*ROOT.glob("docs/*.md"), ROOT / "README.md"])
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip() and not has_cjk(line)
    ]
    chunks = json.loads((ROOT / "tests/fixtures/filters/chunks.json").read_text(encoding="utf-8"))
    lines += [t for t in chunks.values() if not has_cjk(t)]
    return [
        *lines,
        string.printable,
        "，。？！：；“”‘’（）《》、…—·「」【】",
        "According to the passage, per this text.",
    ]


CORPUS = _english_corpus()


def test_the_corpus_is_real_english() -> None:
    assert len(CORPUS) > 1000 and sum(len(t) for t in CORPUS) > 100_000
    # the English defaults do match in it (so the corpus holds what the patterns look for)
    assert any(re.search(p, t, re.IGNORECASE) for p in self_contained.EN_PATTERNS for t in CORPUS)


@pytest.mark.parametrize("pattern", ZH, ids=[f"zh-{i}" for i in range(len(ZH))])
def test_a_chinese_default_pattern_needs_a_cjk_character(pattern: str) -> None:
    compiled = re.compile(pattern, re.IGNORECASE)
    assert [t for t in CORPUS if compiled.search(t)] == []
    # and each of its top-level alternatives names a CJK character outside a lookaround (a rough look at its
    # shape; the corpus above is the proof)
    for alt in _alternatives(pattern):
        assert has_cjk(re.sub(r"\(\?<?[!=][^()]*\)", "", alt)), alt


def _alternatives(pattern: str) -> list[str]:
    """The pattern split at its top-level ``|`` (not inside a group or a character class)."""
    out, depth, start, i, in_class = [], 0, 0, 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            out.append(pattern[start:i])
            start = i + 1
        i += 1
    return [*out, pattern[start:]]


def test_the_defaults_are_the_english_then_the_chinese_patterns() -> None:
    assert self_contained.DEFAULT_PATTERNS == self_contained.EN_PATTERNS + self_contained.ZH_PATTERNS
    assert not any(has_cjk(p) for p in self_contained.EN_PATTERNS)
    assert type_plausible.REFUSAL == type_plausible.REFUSAL_EN + "|" + type_plausible.REFUSAL_ZH
    assert not has_cjk(type_plausible.COMPARISON_EN) and not has_cjk(type_plausible.OPEN_ENDED_EN)


@pytest.mark.parametrize(
    ("question", "answer", "passed"),
    [
        ("What does the passage say about bodies?", "Data.", False),
        ("What is a request body?", "As stated in the passage, data.", False),
        ("上文提到的请求体是什么？", "数据", False),
        ("What is a body, 文中说的?", "Data.", False),
        ("What is a request body?", "Data sent by the client.", True),
    ],
)
def test_self_contained_verdicts_with_and_without_the_shortcut(question: str, answer: str, passed: bool) -> None:
    """The default list (shortcut on text without CJK) and the same list as custom patterns (no shortcut) agree."""
    from tests.helpers.filter_data import fixture_chunks, pair

    p = pair("q", question, answer)
    fast = self_contained.check(p, fixture_chunks(), self_contained.Settings())
    slow = self_contained.check(
        p, fixture_chunks(), self_contained.Settings(patterns=[*self_contained.DEFAULT_PATTERNS, "(?!x)x"])
    )
    assert (fast.passed, fast.reason) == (slow.passed, slow.reason)
    assert fast.passed is passed

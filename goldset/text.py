"""Text primitives shared by ingestion, filters and metrics: normalisation, CJK-aware tokens, language.

One tokeniser for the whole project, so a chunk's token count, a filter's n-grams and a metric's overlap all
agree on what a "word" is. CJK characters are one token each (a Chinese sentence has no spaces and must not
become one giant word); runs of letters, digits and underscores are one token (code identifiers survive);
other punctuation is dropped.
"""

from __future__ import annotations

import re
import unicodedata

# CJK Unified Ideographs (+ extension A, compatibility), Hiragana/Katakana, Hangul syllables.
_CJK_RANGES = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u309f\u30a0-\u30ff\uac00-\ud7af"
_CJK_RE = re.compile(f"[{_CJK_RANGES}]")
_TOKEN_RE = re.compile(f"[{_CJK_RANGES}]|[^\\W{_CJK_RANGES}]+", re.UNICODE)
_WS_RE = re.compile(r"\s+")
_ASCII_TOKEN_RE = re.compile(r"[A-Za-z0-9_]+")


def normalize_ws(text: str) -> str:
    """Collapse every run of whitespace to one space and strip the ends."""
    return _WS_RE.sub(" ", text).strip()


def normalize(text: str) -> str:
    """Form used for matching and content hashes: NFKC, case-folded, whitespace collapsed.

    NFKC folds full-width Latin letters and punctuation (common in Chinese text) onto their ASCII forms.
    """
    return normalize_ws(unicodedata.normalize("NFKC", text).casefold())


def tokenize(text: str) -> list[str]:
    """Normalised tokens: one per CJK character, one per run of word characters.

    Same tokens as ``_TOKEN_RE.findall(normalize(text))`` without the whitespace pass, which tokens never see.
    ASCII text takes a shortcut with the same result, ~40% faster: NFKC leaves ASCII unchanged, case folding
    it is ``lower()``, and there the token pattern is ``[A-Za-z0-9_]+`` (no CJK, no other word characters).
    """
    if text.isascii():
        return _ASCII_TOKEN_RE.findall(text.lower())
    return _TOKEN_RE.findall(unicodedata.normalize("NFKC", text).casefold())


def count_tokens(text: str) -> int:
    """Token count used for chunk sizes and cost estimates (see module docstring).

    It is close to an LLM tokenizer for Chinese (about one token per character) and undercounts English
    by ~25% (BPE splits long words); :func:`estimate_llm_tokens` corrects for that where money is involved.
    """
    return len(_TOKEN_RE.findall(text))


def estimate_llm_tokens(text: str) -> int:
    """A tokenizer-free estimate of BPE tokens (cl100k/o200k-like), shipped with the package.

    Needs no download, so it works offline: about 4 characters per token for non-CJK text, ~1 token per CJK
    character. Within ~15% of tiktoken on English prose and Markdown.
    """
    cjk = len(_CJK_RE.findall(text))
    rest = len(text) - cjk
    return cjk + (rest + 3) // 4


def cjk_ratio(text: str) -> float:
    """Share of CJK characters among the letters of ``text`` (0.0 when it has none)."""
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return 0.0
    return sum(1 for c in letters if _CJK_RE.match(c)) / len(letters)


def detect_language(text: str) -> str:
    """'zh' when CJK characters make up a fifth of the letters or more, else 'en'.

    A fifth, not a half: Chinese technical prose is full of English identifiers and code, and its CJK share
    of letters still sits well above 0.2, while English text with a stray Chinese name stays far below.
    """
    return "zh" if cjk_ratio(text) >= 0.2 else "en"


def has_cjk(text: str) -> bool:
    return _CJK_RE.search(text) is not None

"""Similarity primitives shared by the checks: small, pure, and defined on goldset's one tokeniser.

Every function returns a value in [0, 1] and gives 1 for identical non-empty input. Tokens come from
:func:`goldset.text.tokenize` (one per CJK character, one per run of word characters), so a Chinese answer
without spaces yields character n-grams and ``response_model`` stays one token in mixed code/English text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from goldset.text import normalize, tokenize

# Sentence ends: Latin punctuation followed by space, CJK full stops (no space needed), and line breaks.
_SENTENCE_SPLIT_RE = re.compile(r"(?<=[.!?;:])\s+|(?<=[。！？；：])|\n+")


def ngrams(tokens: Sequence[str], n: int) -> list[tuple[str, ...]]:
    """Word n-grams; a sequence shorter than ``n`` yields itself as its one n-gram (short texts still count)."""
    if not tokens:
        return []
    if len(tokens) < n:
        return [tuple(tokens)]
    return [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]


def containment(part: Sequence[str], whole: Sequence[str], n: int = 3) -> float:
    """Share of ``part``'s n-grams that also occur in ``whole`` (asymmetric: is ``part`` made of ``whole``?)."""
    if not part:
        return 0.0
    n = max(1, min(n, len(part)))  # a part shorter than n is compared at its own length
    grams = ngrams(part, n)
    source = set(ngrams(whole, n)) if len(whole) >= n else set()
    return sum(1 for g in grams if g in source) / len(grams)


def jaccard(a: Sequence[str], b: Sequence[str], n: int = 1) -> float:
    """Jaccard similarity of the n-gram sets (symmetric); two empty inputs are identical (1.0)."""
    sa, sb = set(ngrams(a, n)), set(ngrams(b, n))
    if not sa and not sb:
        return 1.0
    return len(sa & sb) / len(sa | sb)


def longest_common_run(a: Sequence[str], b: Sequence[str]) -> int:
    """Length (in tokens) of the longest common contiguous token run of ``a`` and ``b``.

    Indexes ``b``'s positions by token, then extends only maximal starts (no match one step back), so the cost
    is about the number of shared token occurrences, not len(a) * len(b).
    """
    if not a or not b:
        return 0
    positions: dict[str, list[int]] = {}
    for j, tok in enumerate(b):
        positions.setdefault(tok, []).append(j)
    best = 0
    la, lb = len(a), len(b)
    for i, tok in enumerate(a):
        if la - i <= best:
            break
        for j in positions.get(tok, ()):
            if i and j and a[i - 1] == b[j - 1]:
                continue  # not a maximal start: the run was measured from an earlier position
            k = 1
            while i + k < la and j + k < lb and a[i + k] == b[j + k]:
                k += 1
            if k > best:
                best = k
    return best


def lcs_ratio(part: Sequence[str], whole: Sequence[str]) -> float:
    """Longest common token run relative to the length of ``part`` (asymmetric, like containment)."""
    if not part:
        return 0.0
    return longest_common_run(part, whole) / len(part)


def canonical(text: str) -> str:
    """Tokens joined by single spaces: case, width, punctuation and spacing differences vanish.

    Character 3-grams of this string are word trigrams' pieces for Latin text and character *bigrams* for
    CJK text (each CJK character is its own token), which suits both scripts.
    """
    return " ".join(tokenize(text))


def edit_similarity(a: str, b: str) -> float:
    """Normalised Indel similarity of the canonical forms (rapidfuzz, C speed); symmetric; identity → 1."""
    from rapidfuzz.distance import Indel

    ca, cb = canonical(a), canonical(b)
    if not ca and not cb:
        return 1.0
    return float(Indel.normalized_similarity(ca, cb))


def split_sentences(text: str) -> list[str]:
    """Sentences and lines of ``text`` (Latin and CJK punctuation), blank pieces dropped."""
    return [s.strip() for s in _SENTENCE_SPLIT_RE.split(text) if s and s.strip()]


def sentence_windows(sentences: Sequence[str], width: int = 3) -> list[str]:
    """Each sentence plus runs of up to ``width`` consecutive sentences (an answer may copy two or three)."""
    out: list[str] = []
    for i in range(len(sentences)):
        for w in range(1, width + 1):
            if i + w <= len(sentences):
                out.append(" ".join(sentences[i : i + w]))
    return out


def best_edit_match(text: str, candidates: Sequence[str]) -> tuple[float, str]:
    """The candidate most similar to ``text`` by :func:`edit_similarity` and its score (0.0, '' when none)."""
    from rapidfuzz import fuzz, process

    query = canonical(text)
    choices = [canonical(c) for c in candidates]
    if not query or not choices:
        return 0.0, ""
    hit = process.extractOne(query, choices, scorer=fuzz.ratio)
    if hit is None:
        return 0.0, ""
    _, score, index = hit
    return float(score) / 100.0, candidates[index]


def normalized_contains(haystack: str, needle: str) -> bool:
    """Whether ``needle`` occurs in ``haystack`` once both are canonical (token boundaries respected)."""
    n, h = canonical(needle), canonical(haystack)
    if not n:
        return False
    return f" {n} " in f" {h} "


__all__ = [
    "best_edit_match",
    "canonical",
    "containment",
    "edit_similarity",
    "jaccard",
    "lcs_ratio",
    "longest_common_run",
    "ngrams",
    "normalize",
    "normalized_contains",
    "sentence_windows",
    "split_sentences",
    "tokenize",
]

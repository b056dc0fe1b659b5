"""Similarity primitives shared by the checks: small, pure, and defined on goldset's one tokeniser.

Every function returns a value in [0, 1] and gives 1 for identical non-empty input. Tokens come from
:func:`goldset.text.tokenize` (one per CJK character, one per run of word characters), so a Chinese answer
without spaces yields character n-grams and ``response_model`` stays one token in mixed code/English text.
"""

from __future__ import annotations

import operator
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from itertools import pairwise
from typing import Any

from goldset.text import _CJK_RANGES, normalize, tokenize

#: Function words (English) and function characters (Chinese) that carry no content.
STOPWORDS = frozenset(
    """
a an the is are was were be been being of to in on at for by with from as and or not no yes it its this that
these those there here what which who whom whose when where why how do does did can could should would will
shall may might must i you we they he she me us them my your our their use used uses using
的 了 是 在 和 与 及 或 吗 呢 吧 啊 么 什 怎 哪 谁 为 把 被 这 那 有 个 也 就 都 而 之 于 以 中 一 不 可 能 会 要 用
""".split()  # noqa: SIM905 (a word list reads better as text)
)

# Sentence ends: Latin punctuation followed by space, CJK full stops (no space needed), and line breaks.
_SENTENCE_SPLIT_RE = re.compile(r"(?<=[.!?;:])\s+|(?<=[。！？；：])|\n+")


@lru_cache(maxsize=1 << 17)
def tokens(text: str) -> tuple[str, ...]:
    """:func:`goldset.text.tokenize`, memoised: a filter run tokenises each question and answer in several
    checks (and canonical forms for the duplicate index), so the shared tokeniser runs once per text.

    Tokens are interned: 50,000 candidates repeat a vocabulary of a few thousand words, and the cache would
    otherwise hold a string per occurrence (about 2 KB a pair)."""
    return tuple(map(sys.intern, tokenize(text)))


@lru_cache(maxsize=1 << 14)
def token_set(text: str) -> frozenset[str]:
    """The distinct tokens of a (long, recurring) text such as a chunk."""
    return frozenset(tokens(text))


def ngrams(tokens: Sequence[str], n: int) -> list[tuple[str, ...]]:
    """Word n-grams; a sequence shorter than ``n`` yields itself as its one n-gram (short texts still count)."""
    if not tokens:
        return []
    if len(tokens) < n:
        return [tuple(tokens)]
    if n < 1:
        return [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]
    if n == 1:
        return [(t,) for t in tokens]
    if n == 3:
        return list(zip(tokens, tokens[1:], tokens[2:], strict=False))
    # zip of shifted views builds the same tuples as slicing, without a slice per n-gram.
    return list(zip(*(tokens[i:] for i in range(n)), strict=False))


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


def token_positions(tokens: Sequence[str]) -> dict[str, list[int]]:
    """Token -> its positions in ``tokens`` (what a longest-common-run search walks)."""
    positions: dict[str, list[int]] = {}
    for j, tok in enumerate(tokens):
        positions.setdefault(tok, []).append(j)
    return positions


def longest_common_run(a: Sequence[str], b: Sequence[str], positions: dict[str, list[int]] | None = None) -> int:
    """Length (in tokens) of the longest common contiguous token run of ``a`` and ``b``.

    Indexes ``b``'s positions by token (or takes them precomputed), then extends only maximal starts (no match
    one step back), so the cost is about the number of shared token occurrences, not len(a) * len(b).
    """
    if not a or not b:
        return 0
    if positions is None:
        positions = token_positions(b)
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


@lru_cache(maxsize=1 << 18)
def canonical(text: str) -> str:
    """Tokens joined by single spaces: case, width, punctuation and spacing differences vanish.

    Character 3-grams of this string are word trigrams' pieces for Latin text and character *bigrams* for
    CJK text (each CJK character is its own token), which suits both scripts. Memoised (one short string per
    text, so the cache is cheap): the duplicate index, the sentence index and the checks ask for the same
    questions' canonical forms, and the token cache alone is too small to keep them across a 100k-pair run.
    """
    return " ".join(tokens(text))


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


#: Where a sentence may end, for splitting when the punctuation itself is not kept (:func:`sentence_pieces`).
_SENTENCE_BREAK_RE = re.compile(r"[.!?;:]\s+|[。！？；：\n]+")
_SENTENCE_END_RE = re.compile("[.!?;:。！？；：\n]")


def sentence_pieces(text: str) -> list[str]:
    """The sentences of ``text`` as :func:`split_sentences` cuts them, without their end punctuation (for
    measures that ignore punctuation: no look-behind, ~3x faster), blank pieces dropped."""
    if _SENTENCE_END_RE.search(text) is None:  # no character the split could cut at
        return [text]
    return [piece for piece in _SENTENCE_BREAK_RE.split(text) if piece.strip()]


def sentence_windows(sentences: Sequence[str], width: int = 3) -> list[str]:
    """Each sentence plus runs of up to ``width`` consecutive sentences (an answer may copy two or three)."""
    out: list[str] = []
    for i in range(len(sentences)):
        for w in range(1, width + 1):
            if i + w <= len(sentences):
                out.append(" ".join(sentences[i : i + w]))
    return out


@lru_cache(maxsize=1)
def _rapidfuzz() -> tuple[Any, Any]:
    """rapidfuzz's ``process.extractOne`` and ``fuzz.ratio``, imported on first use (not at goldset's import) and
    then kept: an import statement per call cost a few microseconds, 100,000s of times a run."""
    from rapidfuzz import fuzz, process

    return process.extractOne, fuzz.ratio


def best_edit_match(
    text: str,
    candidates: Sequence[str],
    canonical_candidates: Sequence[str] | None = None,
    *,
    query_is_canonical: bool = False,
) -> tuple[float, str]:
    """The candidate most similar to ``text`` by :func:`edit_similarity` and its score (0.0, '' when none).

    ``canonical_candidates`` (the candidates already through :func:`canonical`) saves recomputing them, and
    ``query_is_canonical`` says ``text`` is canonical already.
    """
    query = text if query_is_canonical else canonical(text)
    choices = canonical_candidates if canonical_candidates is not None else [canonical(c) for c in candidates]
    if not query or not choices:
        return 0.0, ""
    extract_one, ratio = _rapidfuzz()
    hit = extract_one(query, choices, scorer=ratio)
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


#: Spans that name something exactly by their casing: `code`, ACRONYMS and CamelCase names (HTTPException).
_CASED_IDENTIFIER_RE = re.compile(r"`[^`\n]+`|\b(?:[A-Z]{2,}[A-Z0-9]*s?|[A-Za-z][a-z0-9]*[A-Z][A-Za-z0-9]*)\b")


@lru_cache(maxsize=1 << 15)
def identifier_tokens(text: str) -> frozenset[str]:
    """The tokens of the identifiers, acronyms and numbers in ``text`` (``HTTPException``, ``user_agent``, HTTP,
    404): words no rephrasing can change, and the words two otherwise alike questions differ in when they ask
    about different things (``limit`` vs ``skip``, 400 vs 404). Casing is evidence, so it reads the original
    text; a token with a digit or an underscore is one whatever its case."""
    found = {t for m in _CASED_IDENTIFIER_RE.findall(text) for t in tokenize(m)}
    toks = tokens(text)
    if not "".join(toks).isalpha():  # some token holds a digit or an underscore (rare: skip the scan otherwise)
        found.update(t for t in toks if not t.isalpha())
    return frozenset(found)


class WordGate:
    """A quick, sound "no" for case-insensitive patterns on ASCII text, from the words each pattern needs.

    ``needs``: per pattern, groups of words (a list, or one string of words split at spaces); every match of the
    pattern on an ASCII text holds, for each group, one of its words as a whole token (:func:`tokens`: on ASCII
    text, the runs of ``[a-z0-9_]`` of the lowered text). That holds for a word that sits between ``\\b``, a
    space or ``\\s`` on both sides of the pattern: on ASCII text ``\\w`` is ``[A-Za-z0-9_]`` and re.IGNORECASE
    is ``lower()`` (the non-ASCII case folds, ``ſ`` for ``s`` or the Kelvin sign for ``k``, need a non-ASCII
    text). So only a pattern each of whose groups has a word among the text's tokens can match. Only for ASCII
    text: the caller checks ``text.isascii()``.
    """

    def __init__(self, needs: Sequence[Sequence[Sequence[str] | str]]) -> None:
        # one bit per (pattern, group): a word sets the bits of the groups it is in; a pattern may match when the
        # text's words set all of its bits
        self._bits: dict[str, int] = {}
        self._needs: list[int] = []
        bit = 1
        for groups in needs:
            need = 0
            for group in groups:
                for word in group.split() if isinstance(group, str) else group:
                    self._bits[word] = self._bits.get(word, 0) | bit
                need |= bit
                bit <<= 1
            self._needs.append(need)
        self.words = frozenset(self._bits)
        self._of_mask: dict[int, tuple[int, ...]] = {}

    def possible(self, toks: Sequence[str]) -> tuple[int, ...]:
        """The indices of the patterns that may match a text of tokens ``toks`` (in order); () for most texts."""
        hit = self.words.intersection(toks)
        if not hit:
            return ()
        mask = 0
        for word in hit:
            mask |= self._bits[word]
        got = self._of_mask.get(mask)
        if got is None:
            got = tuple(i for i, need in enumerate(self._needs) if mask & need == need)
            if len(self._of_mask) < 4096:  # bounded (a few dozen masks occur)
                self._of_mask[mask] = got
        return got


#: Full-width ASCII forms (Ａ, ０, ＿) -> ASCII, as NFKC maps them.
_FULL_WIDTH = {c: c - 0xFEE0 for c in range(0xFF01, 0xFF5F)}
#: The word characters among them (digits, letters, ＿): the rest are punctuation and map to ASCII punctuation, a
#: non-word character before and after (Chinese text is full of ，？：, which the fold need not touch).
_FULL_WIDTH_WORD_RE = re.compile("[\uff10-\uff19\uff21-\uff3a\uff3f\uff41-\uff5a]")
#: Content units: a run of CJK characters (cut into bigrams below) or a run of other word characters.
_ASCII_WORD_RE = re.compile(r"[a-z0-9_]+")
_UNIT_RE = re.compile(f"[{_CJK_RANGES}]+|[^\\W{_CJK_RANGES}]+")


def content_units(text: str, minus: frozenset[str] = frozenset()) -> frozenset[str]:
    """The content of ``text`` as an order-free set: words that are not function words, and each run of CJK
    characters as its character bigrams (a Chinese word is two characters or more; a lone character counts
    alone unless it is a function character). Normalised like :func:`goldset.text.tokenize`.

    Not memoised: chunk sentences' units are kept on their :class:`SourceProfile`, and answers are seen once.
    Units compare texts whatever their word order: a copied clause moved to the front keeps every unit. Full-width
    letters and digits are folded to ASCII (what NFKC does to them; full NFKC costs ~10x more on Chinese text and
    changes nothing else that matters here). ``minus``: units left out too (``content_units(t) - minus``, in one
    set operation).
    """
    if text.isascii():  # no CJK: the words minus the function words, all in C
        return frozenset(_ASCII_WORD_RE.findall(text.lower())).difference(STOPWORDS, minus)
    if _FULL_WIDTH_WORD_RE.search(text) is not None:  # else the fold changes punctuation only, which no unit holds
        text = text.translate(_FULL_WIDTH)
    out: set[str] = set()
    for piece in _UNIT_RE.findall(text.lower()):
        if len(piece) > 1 and piece[0] >= "\u3040":  # a CJK run (pieces are all CJK or all not)
            out.update(map(operator.add, piece, piece[1:]))
        elif piece not in STOPWORDS:
            out.add(piece)
    return frozenset(out.difference(minus) if minus else out)


@dataclass(frozen=True)
class SourceProfile:
    """What the copy checks need from one source text, computed once per text (sources recur across pairs)."""

    tokens: tuple[str, ...]
    positions: dict[str, list[int]]
    sentences: tuple[str, ...]
    sentence_tokens: tuple[tuple[str, ...], ...]
    sentences_canonical: tuple[str, ...]
    windows: tuple[str, ...]
    windows_canonical: tuple[str, ...]
    _gram_cache: dict[int, frozenset[tuple[str, ...]]] = field(default_factory=dict, compare=False, repr=False)

    @cached_property
    def window_set(self) -> frozenset[str]:
        """The canonical windows as a set: an exact copy of one is found without any edit distance."""
        return frozenset(self.windows_canonical)

    @cached_property
    def unit_index(self) -> dict[str, tuple[int, ...]]:
        """Content unit (:func:`content_units`) -> the windows holding it. Window ``s`` is sentence ``s``; window
        ``P + s`` is sentences ``s`` and ``s + 1`` together (a clause may be moved across a sentence end), ``P``
        the number of sentences; window ``2P + b`` is block ``b`` of list items or table rows with the sentence
        that introduces it (:func:`_item_blocks`: items reordered and re-joined into one sentence keep their
        units). The sentence-overlap measure counts, per window, the answer's units in it."""
        units = [content_units(sentence) for sentence in self.sentences]
        n = len(units)
        index: dict[str, list[int]] = {}
        for s, us in enumerate(units):
            for u in us:
                index.setdefault(u, []).append(s)
        for s, (a, b) in enumerate(pairwise(units)):
            for u in a | b:
                index[u].append(n + s)
        for k, (start, end) in enumerate(_item_blocks(self.sentences)):
            for u in frozenset[str]().union(*units[start:end]):
                index[u].append(2 * n + k)
        return {u: tuple(ws) for u, ws in index.items()}

    @cached_property
    def all_units(self) -> frozenset[str]:
        """Every content unit of the text (no window holds a unit outside it)."""
        return frozenset(self.unit_index)

    def grams(self, n: int) -> frozenset[tuple[str, ...]]:
        """The n-gram set of the whole text, kept on the profile (no re-hashing of the token tuple per call)."""
        got = self._gram_cache.get(n)
        if got is None:
            got = self._gram_cache[n] = _grams(self.tokens, n)
        return got


#: A sentence that is a Markdown list item or table row (what :func:`split_sentences` leaves of one).
_ITEM_RE = re.compile(r"(?:[*+-]|\d+[.)]|\|)\s")
#: The most sentences of one list or table block kept as one window (a long table is not one sentence's source).
MAX_BLOCK_SENTENCES = 12


def _item_blocks(sentences: Sequence[str]) -> list[tuple[int, int]]:
    """(start, end) of each run of two or more list-item or table-row sentences, with the sentence before it (the
    one that introduces the list), at most :data:`MAX_BLOCK_SENTENCES` long (a longer run is cut into blocks)."""
    blocks: list[tuple[int, int]] = []
    i, n = 0, len(sentences)
    while i < n:
        if not _ITEM_RE.match(sentences[i]):
            i += 1
            continue
        j = i
        while j < n and _ITEM_RE.match(sentences[j]):
            j += 1
        if j - i >= 2:
            start = max(0, i - 1)
            blocks += [(k, min(j, k + MAX_BLOCK_SENTENCES)) for k in range(start, j - 1, MAX_BLOCK_SENTENCES)]
        i = j
    return blocks


@lru_cache(maxsize=8192)
def _grams(tokens: tuple[str, ...], n: int) -> frozenset[tuple[str, ...]]:
    return frozenset(ngrams(tokens, n))


@lru_cache(maxsize=16384)
def sentence_grams(text: str, n: int) -> tuple[frozenset[tuple[str, ...]], ...]:
    """The n-gram set of each sentence of a source text (cached like :func:`source_profile`)."""
    return tuple(frozenset(ngrams(toks, n)) for toks in source_profile(text).sentence_tokens)


@lru_cache(maxsize=4096)
def source_profile(text: str) -> SourceProfile:
    """Cached :class:`SourceProfile` of a chunk text (an LRU cache: a filter run sees each chunk many times).

    Each sentence is tokenised once; a window's canonical form is its sentences' canonical forms joined by a
    space, which is ``canonical`` of the joined window text: tokens never span the space, and NFKC and
    case folding act on each side of a space independently (a space is a stable code point in NFKC).
    """
    tokens = tuple(tokenize(text))
    sentences = tuple(split_sentences(text))
    windows = tuple(sentence_windows(sentences))
    sentence_tokens = tuple(tuple(tokenize(s)) for s in sentences)
    sentences_canonical = tuple(" ".join(toks) for toks in sentence_tokens)
    windows_canonical = tuple(
        " ".join(c for c in sentences_canonical[i : i + w] if c)
        for i in range(len(sentences))
        for w in range(1, 4)
        if i + w <= len(sentences)
    )  # the order of sentence_windows(sentences), whose width is 3
    return SourceProfile(
        tokens=tokens,
        positions=token_positions(tokens),
        sentences=sentences,
        sentence_tokens=sentence_tokens,
        sentences_canonical=sentences_canonical,
        windows=windows,
        windows_canonical=windows_canonical,
    )


__all__ = [
    "STOPWORDS",
    "SourceProfile",
    "WordGate",
    "best_edit_match",
    "canonical",
    "containment",
    "content_units",
    "edit_similarity",
    "identifier_tokens",
    "jaccard",
    "lcs_ratio",
    "longest_common_run",
    "ngrams",
    "normalize",
    "normalized_contains",
    "sentence_grams",
    "sentence_pieces",
    "sentence_windows",
    "source_profile",
    "split_sentences",
    "token_set",
    "tokenize",
    "tokens",
]

"""Check 1: the answer must not copy its evidence chunk(s).

A copied answer makes context recall look perfect, because the retrieved text *is* the answer. Five measures,
each in [0, 1] and taken over *all* the pair's evidence chunks together (an answer stitched from two chunks is a
copy too); any of them at or over its threshold fails the pair:

* ``containment``: the share of the answer's token n-grams found anywhere in the evidence;
* ``run``: the longest stretch copied from one chunk, relative to the answer;
* ``clause``: the share of the answer's tokens in its longest stretch copied word for word, counted only when
  that stretch is a clause (``min_clause_words`` words, a CJK character 0.6 of one, with some words of its own):
  one clause copied and the rest reworded is still a copy, though no measure above reaches its threshold;
* ``similarity``: edit similarity to the best-matching run of one to three sentences of a chunk, which still
  catches a copy with a few words changed; an answer opening with a short lead-in ("To put it simply,") is
  compared without it too;
* ``overlap``: sentence by sentence, the share of the answer's content words (CJK: character bigrams) found in
  one evidence sentence or two adjacent ones, or in one list or table, *in any order*: two clauses swapped, a
  prefix added ("In short,", 总的来说, whose own words may be left out) list items or table cells reordered, or
  two or three synonyms leave most of a copied sentence's words in place; a real paraphrase does not.

What a paraphrase cannot avoid does not count as copying: the question's own words (the answer to "what status
code is sent for a Not Found response?" says "for a Not Found response" because the question did), code
identifiers, acronyms and numbers (``HTTPException``, ``user_agent``, HTTP, 404). ``containment`` and ``run``
count only n-grams and stretches holding some other word, ``overlap`` only the other content words, and an
answer with fewer than ``min_own_words`` other words is not judged by them. Very short answers (a name, a number)
cannot be phrased without the source's words, so they pass with a note.

All five are lexical and need no endpoint. What they cannot tell apart is a careful paraphrase that keeps most
of a sentence's content words in a new order from a light edit; the LLM judge (``groundedness``) does not judge
copying, so such a pair is caught here or not at all (tests/fixtures/filters/copy_cases.jsonl measures both).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence
from itertools import accumulate, chain

from pydantic import Field

from goldset.filters.base import CheckSettings, CheckSpec, ChunkMap, evidence_texts, verdict
from goldset.filters.textsim import (
    STOPWORDS,
    SourceProfile,
    best_edit_match,
    content_units,
    identifier_tokens,
    ngrams,
    sentence_pieces,
    source_profile,
)
from goldset.filters.textsim import tokens as text_tokens
from goldset.schema import CheckResult, QAPair
from goldset.text import count_tokens

NAME = "verbatim"
#: A CJK character's weight as a word, for clause lengths (a Chinese word is one to three characters; 0.6 puts a
#: copied clause of 8 words at 14 characters).
CJK_WORD_WEIGHT = 0.6


class Settings(CheckSettings):
    """Thresholds of the verbatim check (``filter.checks.verbatim``): a measure at or over its threshold fails."""

    ngram: int = Field(3, ge=1, le=8, description="n of the token n-grams for containment.")
    max_containment: float = Field(0.6, ge=0, le=1, description="Fail at or above this n-gram containment.")
    max_lcs_ratio: float = Field(0.5, ge=0, le=1, description="Fail at or above this longest-run share.")
    max_edit_similarity: float = Field(0.8, ge=0, le=1, description="Fail at or above this sentence similarity.")
    max_sentence_overlap: float = Field(
        0.7, ge=0, le=1, description="Fail at or above this share of content words found in one evidence sentence."
    )
    max_clause_share: float = Field(
        0.2,
        ge=0,
        le=1,
        description="Fail at or above this share of the answer's tokens in one clause copied word for word (a "
        "stretch of min_clause_words words or more): a partial copy, the rest of the answer reworded.",
    )
    min_clause_words: float = Field(
        8,
        ge=1,
        description="The shortest copied stretch counted as a copied clause, in words (a CJK character counts "
        f"{CJK_WORD_WEIGHT} of a word: 14 characters); it also needs min_own_words words of its own.",
    )
    min_answer_tokens: int = Field(8, ge=0, description="Shorter answers pass: too short to judge copying.")
    min_own_words: int = Field(
        4,
        ge=1,
        description="Containment, run and overlap judge only answers with this many words (CJK: characters, or "
        "bigrams for overlap) beyond the question's words and identifiers: fewer say too little of their own.",
    )


MEASURES = ("similarity", "containment", "overlap", "run", "clause")


def measure(
    answer: str, sources: Sequence[str], settings: Settings, tokens: Sequence[str] | None = None, question: str = ""
) -> dict[str, float]:
    """The five copy measures of ``answer`` against the evidence ``sources`` (each in [0, 1]; the module
    docstring says what each is). ``question``: its words, and identifiers, do not count as copied."""
    if tokens is None:
        tokens = text_tokens(answer)
    got = dict(_measures(answer, [source_profile(t) for t in sources], settings, tokens, question))
    return {name: got.get(name, 0.0) for name in MEASURES}


def _measures(
    answer: str, profiles: Sequence[SourceProfile], settings: Settings, tokens: Sequence[str], question: str
) -> Iterator[tuple[str, float]]:
    """(name, value) of each measure, computed only as far as the caller reads (:func:`check` stops at the first
    that fails the pair), in the order that settles most pairs soonest: an exact copy of a sentence window is a
    set lookup, a reworded copy fails the order-free overlap, the n-gram measures and the edit similarity (the
    dearest) come last.

    Per-token flags are ``bytes`` (1 = a given token) so the loops over them run in C.
    """
    if not tokens:
        return
    query = " ".join(tokens)  # canonical(answer): its tokens joined by spaces, no second tokenisation
    exact = any(query in prof.window_set for prof in profiles)
    if exact:
        yield "similarity", 1.0  # a window is the answer itself: the highest similarity there is (fuzz.ratio 100)
    identifiers = identifier_tokens(answer)
    lead = _lead_in(answer, tokens)
    yield "overlap", _overlap(answer, question, tokens, identifiers, profiles, settings.min_own_words, lead)
    given = frozenset(tokens).intersection(text_tokens(question)).union(identifiers)
    flags = bytes(map(given.__contains__, tokens))
    n_own = len(flags) - flags.count(1)
    if n_own >= settings.min_own_words:
        n = max(1, min(settings.ngram, len(tokens)))
        grams = ngrams(tokens, n)
        hits = [bytes(map(prof.grams(n).__contains__, grams)) for prof in profiles]
        pooled = hits[0] if len(hits) == 1 else bytes(map(max, *hits))
        # An n-gram made only of given tokens does not count (1 = all given); a shorter answer is one n-gram.
        if len(flags) >= n:
            # min over each n-gram's flags, for all n-grams at once: flags are 0 or 1, so min is AND, and flags[k:]
            # is the flags as one big-endian integer shifted k bytes up (the bytes past the end drop out below)
            whole = int.from_bytes(flags, "big")
            ands = whole
            for k in range(1, n):
                ands &= whole << (8 * k)
            all_given = ands.to_bytes(len(flags), "big")[: len(flags) - n + 1]
        else:
            all_given = bytes([min(flags)])
        n_counted = len(all_given) - all_given.count(1)
        # the n-grams found (1) and not all given (0): pooled AND NOT all_given, counted as bits (bytes are 0 or 1)
        found = (int.from_bytes(pooled, "big") & ~int.from_bytes(all_given, "big")).bit_count()
        yield "containment", found / n_counted if n_counted else 0.0
        prefix = list(accumulate(flags.translate(_FLIP), initial=0))
        if answer.isascii():  # no CJK token: every weight 1.0, and the sums 0.0, 1.0, 2.0 ... are exact
            weights = list(map(float, range(len(tokens) + 1)))
        else:
            weights = list(accumulate(map(_word_weight, tokens), initial=0.0))
        clause_rule = (settings.min_clause_words, settings.min_own_words)
        run = clause = 0
        for prof, chunk_hits in zip(profiles, hits, strict=True):
            if 1 in chunk_hits:
                own, stretch = _longest_run(tokens, prof, n, chunk_hits, prefix, weights, clause_rule)
                run, clause = max(run, own), max(clause, stretch)
            else:  # no n-gram in common: a shorter common run at most (never a clause)
                run = max(run, _short_run(tokens, prof, n, prefix))
        yield "run", run / n_own
        yield "clause", clause / len(tokens)
    else:
        yield "containment", 0.0
        yield "run", 0.0
        yield "clause", 0.0
    if not exact:
        similarity = _similarity(query, profiles)
        if lead and similarity < settings.max_edit_similarity:  # the answer without its lead-in may be closer
            similarity = max(similarity, _similarity(" ".join(tokens[lead[0] :]), profiles))
        yield "similarity", similarity


def _word_weight(token: str) -> float:
    """A token's length in words: 1, or :data:`CJK_WORD_WEIGHT` for a CJK character."""
    return CJK_WORD_WEIGHT if len(token) == 1 and token >= "\u2e80" else 1.0


#: A short opening clause set off by a comma or colon ("To sum up,", "In short,", "总的来说，", "注意："): the
#: lead-in an LLM told not to copy puts in front of a copied sentence.
_LEAD_IN_RE = re.compile(r"\s*([^,，:：;；.!?。！？\n]+)[,，:：]")
#: The longest lead-in, in words (CJK characters weighted as for clauses: up to six characters).
MAX_LEAD_IN_WORDS = 4.0


def _lead_in(answer: str, tokens: Sequence[str]) -> tuple[int, frozenset[str]] | None:
    """(its number of tokens, its content units) of the answer's lead-in, when it opens with one of at most
    :data:`MAX_LEAD_IN_WORDS` words and has at least twice as many tokens after it; else None."""
    found = _LEAD_IN_RE.match(answer)
    if found is None:
        return None
    if answer.isascii():
        # ASCII: the lead-in ends at a comma or colon (no word character), so its tokens are the answer's first
        # ones and each weighs one word; only their number is needed (no tokenising of the lead-in)
        k = count_tokens(found.group(1))
        if not k or k > MAX_LEAD_IN_WORDS or 3 * k > len(tokens):
            return None
        return k, content_units(found.group(1))
    lead = text_tokens(found.group(1))
    if not lead or sum(map(_word_weight, lead)) > MAX_LEAD_IN_WORDS or 3 * len(lead) > len(tokens):
        return None
    if tuple(tokens[: len(lead)]) != lead:
        return None
    return len(lead), content_units(found.group(1))


#: bytes.translate table swapping 0 and 1 (given flags -> own flags).
_FLIP = bytes([1, 0, *range(2, 256)])


def _longest_run(
    a: Sequence[str],
    prof: SourceProfile,
    n: int,
    hits: bytes,
    prefix: Sequence[int],
    weights: Sequence[float],
    clause_rule: tuple[float, int],
) -> tuple[int, int]:
    """(the most own tokens in one stretch of ``a`` copied from the source, the length in tokens of the longest
    copied stretch that is a clause: ``clause_rule`` = (its least length in words, :func:`_word_weight`; its least
    own tokens)), when some n-gram of ``a`` is in the source (``hits[i]``: n-gram i is in the source).

    A common stretch of L >= n tokens starting at token s makes the n-grams s .. s+L-n all hits: so only starts
    inside a run of consecutive hits are tried, and a start s in the run ending at n-gram e covers at most
    e - s + n tokens, of which at most that many are own (stop once that cannot beat either best).
    """
    b, positions = prof.tokens, prof.positions
    la, lb, g = len(a), len(b), len(hits)
    min_words, min_own = clause_rule
    best = clause = 0
    i = 0
    while i < g:
        if not hits[i]:
            i += 1
            continue
        e = i
        while e + 1 < g and hits[e + 1]:
            e += 1
        for s in range(i, e + 1):
            if e - s + n <= best and e - s + n <= clause:
                break
            for j in positions.get(a[s], ()):
                if s and j and a[s - 1] == b[j - 1]:
                    continue  # not a maximal start: measured from s - 1 (also in this run)
                k = 1
                while s + k < la and j + k < lb and a[s + k] == b[j + k]:
                    k += 1
                own = prefix[s + k] - prefix[s]
                best = max(best, own)
                if k > clause and own >= min_own and weights[s + k] - weights[s] >= min_words:
                    clause = k
        i = e + 1
    return best, clause


def _short_run(a: Sequence[str], prof: SourceProfile, n: int, prefix: Sequence[int]) -> int:
    """:func:`_longest_run` when no n-gram of ``a`` is in the source: the most own tokens in an m-gram (m < n)
    of ``a`` that is."""
    best = 0
    for m in range(n - 1, 0, -1):
        have = prof.grams(m)
        for s, g in enumerate(ngrams(a, m)):
            if g in have:
                best = max(best, prefix[s + m] - prefix[s])
        if best:
            return best
    return best


def _similarity(query: str, profiles: Sequence[SourceProfile]) -> float:
    """Best edit similarity of the canonical answer to a window of one to three sentences of one chunk."""
    if len(profiles) == 1:  # the common case: no copies of the window lists
        windows, canon = profiles[0].windows, profiles[0].windows_canonical
    else:
        windows = tuple(w for prof in profiles for w in prof.windows)
        canon = tuple(w for prof in profiles for w in prof.windows_canonical)
    score, _ = best_edit_match(query, windows, canon, query_is_canonical=True)
    return score


def _overlap(
    answer: str,
    question: str,
    tokens: Sequence[str],
    identifiers: frozenset[str],
    profiles: Sequence[SourceProfile],
    min_units: int,
    lead: tuple[int, frozenset[str]] | None = None,
) -> float:
    """Per answer sentence, the share of its own content units (not the question's, not identifiers) in the best
    evidence window (one sentence or two adjacent, or a list or table, of any chunk), weighted by the sentence's
    units; 0 when the answer has fewer than ``min_units``. With a ``lead`` (:func:`_lead_in`), the higher of the
    share with and without its units.

    ASCII text's units are its tokens minus function words, so for ASCII text the token sets already at hand
    are used: set operations in C instead of a second pass over the text.
    """
    q_units = frozenset(text_tokens(question)) if question.isascii() else content_units(question)
    given = q_units | identifiers
    pieces = sentence_pieces(answer)
    if len(pieces) == 1 and answer.isascii():  # one ASCII sentence: its units are its tokens minus function words
        units = [frozenset(tokens).difference(STOPWORDS, given)]
    else:
        units = [content_units(piece, given) for piece in pieces]
    share = _covered_share(units, profiles, min_units)
    if lead and lead[1] & units[0]:  # without the lead-in's words ("sum", "short", 总的, 来说) it may be closer
        share = max(share, _covered_share([units[0].difference(lead[1]), *units[1:]], profiles, min_units))
    return share


def _covered_share(units: Sequence[frozenset[str]], profiles: Sequence[SourceProfile], min_units: int) -> float:
    """:func:`_overlap` of the answer sentences' ``units``."""
    total = sum(len(u) for u in units)
    if total < min_units:
        return 0.0
    covered = 0
    for sent in units:
        most = 0
        for prof in profiles:
            present = sent & prof.all_units
            if len(present) > most:  # else no window of this chunk can beat the best
                # Windows holding each present unit, back to back; the most frequent window is the best. A Counter
                # (counted in C) beats list.count per distinct window: ~17 sentences make ~40 windows a chunk.
                most = max(most, *Counter(chain.from_iterable(map(prof.unit_index.__getitem__, present))).values())
        covered += most
    return covered / total


def check(pair: QAPair, chunks: ChunkMap, settings: Settings) -> CheckResult:
    """Fail at the first measure at or over its threshold (the reason names it, the score is its value); a
    pass reports every measure, its score the highest."""
    sources = evidence_texts(pair, chunks)
    if not sources:
        return verdict(settings, True, None, "no evidence to compare with")
    tokens = text_tokens(pair.answer)  # the memoised tuple, not a copy
    if len(tokens) < settings.min_answer_tokens:
        why = f"answer has {len(tokens)} tokens (< {settings.min_answer_tokens}); not judged"
        return verdict(settings, True, 0.0, why)
    seen: dict[str, float] = {}
    for name, value in _measures(pair.answer, [source_profile(t) for t in sources], settings, tokens, pair.question):
        if value >= getattr(settings, _LIMIT[name]):
            return verdict(settings, False, value, "answer copies the evidence: " + _why(name, value, settings))
        seen[name] = value
    summary = ", ".join(f"{k} {seen.get(k, 0.0):.2f}" for k in MEASURES)
    return verdict(settings, True, max(seen.values(), default=0.0), summary)


#: The setting holding each measure's threshold.
_LIMIT = {
    "similarity": "max_edit_similarity",
    "containment": "max_containment",
    "overlap": "max_sentence_overlap",
    "run": "max_lcs_ratio",
    "clause": "max_clause_share",
}


def _why(name: str, value: float, settings: Settings) -> str:
    if name == "containment":
        return f"{value:.0%} of answer {settings.ngram}-grams are in the evidence"
    if name == "run":
        return f"a copied run covers {value:.0%} of the answer"
    if name == "similarity":
        return f"answer is {value:.0%} similar to an evidence sentence"
    if name == "clause":
        return f"a clause of {value:.0%} of the answer is copied word for word"
    return f"{value:.0%} of its content words sit in one evidence sentence, in any order"


SPEC = CheckSpec(
    name=NAME,
    settings_model=Settings,
    kind="pair",
    summary="answer does not copy its evidence chunk(s)",
    reads=("question", "answer", "evidence"),
    uses_chunks=True,
    func=check,
    version=3,
)

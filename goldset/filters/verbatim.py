"""Check 1: the answer must not copy its evidence chunk(s).

A copied answer makes context recall look perfect, because the retrieved text *is* the answer. Three
measures, each against the evidence text, any of them over its threshold fails the pair:

* n-gram containment: the share of the answer's token n-grams found in the evidence;
* longest common token run relative to the answer length (one long copied stretch);
* edit similarity to the best-matching evidence sentence (or run of up to three sentences), which still
  catches a copy with a few words swapped or changed.

Very short answers (a name, a number, an identifier) cannot be phrased without the source's words, so they
pass with a note instead of failing.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from goldset.filters.base import CheckSettings, CheckSpec, ChunkMap, evidence_texts, result
from goldset.filters.textsim import SourceProfile, best_edit_match, ngrams, source_profile
from goldset.filters.textsim import tokens as text_tokens
from goldset.schema import CheckResult, QAPair

NAME = "verbatim"


class Settings(CheckSettings):
    ngram: int = Field(3, ge=1, le=8, description="n of the token n-grams for containment.")
    max_containment: float = Field(0.6, ge=0, le=1, description="Fail at or above this n-gram containment.")
    max_lcs_ratio: float = Field(0.5, ge=0, le=1, description="Fail at or above this longest-run share.")
    max_edit_similarity: float = Field(0.8, ge=0, le=1, description="Fail at or above this sentence similarity.")
    min_answer_tokens: int = Field(8, ge=0, description="Shorter answers pass: too short to judge copying.")


def measure(
    answer: str, sources: list[str], settings: Settings, tokens: Sequence[str] | None = None
) -> dict[str, float]:
    """The three copy measures of ``answer`` against the evidence ``sources`` (each in [0, 1])."""
    if tokens is None:
        tokens = text_tokens(answer)
    best = {"containment": 0.0, "lcs": 0.0, "edit": 0.0}
    if not tokens:
        return best
    n = max(1, min(settings.ngram, len(tokens)))
    grams = ngrams(tokens, n)
    profiles = [source_profile(text) for text in sources]
    for prof in profiles:
        have = prof.grams(n)
        if have.isdisjoint(grams):  # no n-gram in common (often): no per-gram list
            run = _longest_short_run(tokens, prof, n)
        else:
            hits = [g in have for g in grams]
            best["containment"] = max(best["containment"], sum(hits) / len(grams))
            run = _longest_run(tokens, prof, n, hits)
        best["lcs"] = max(best["lcs"], run / len(tokens))
    if len(profiles) == 1:  # the common case: no copies of the window lists
        windows, canon = profiles[0].windows, profiles[0].windows_canonical
    else:
        windows = tuple(w for prof in profiles for w in prof.windows)
        canon = tuple(w for prof in profiles for w in prof.windows_canonical)
    # canonical(answer) is its tokens joined by spaces: no second tokenisation.
    query = " ".join(tokens)
    if any(query in prof.window_set for prof in profiles):
        best["edit"] = 1.0  # a window is the answer itself: the highest similarity there is (fuzz.ratio 100)
    else:
        best["edit"], _ = best_edit_match(query, windows, canon, query_is_canonical=True)
    return best


def _longest_run(a: Sequence[str], prof: SourceProfile, n: int, hits: list[bool]) -> int:
    """:func:`longest_common_run` of ``a`` and the source, when some n-gram of ``a`` is in the source.

    The answer is then at least n, and a common run of L >= n tokens starting at token s makes the n-grams
    s .. s+L-n all hits: so only starts inside a stretch of consecutive hits are tried, and a start s in the
    stretch ending at n-gram e can give at most e - s + n tokens (stop once that cannot beat the best).
    """
    b, positions = prof.tokens, prof.positions
    la, lb, g = len(a), len(b), len(hits)
    best = 0
    i = 0
    while i < g:
        if not hits[i]:
            i += 1
            continue
        e = i
        while e + 1 < g and hits[e + 1]:
            e += 1
        for s in range(i, e + 1):
            if e - s + n <= best:
                break
            for j in positions.get(a[s], ()):
                if s and j and a[s - 1] == b[j - 1]:
                    continue  # not a maximal start: measured from s - 1 (also in this stretch)
                k = 1
                while s + k < la and j + k < lb and a[s + k] == b[j + k]:
                    k += 1
                if k > best:
                    best = k
        i = e + 1
    return best


def _longest_short_run(a: Sequence[str], prof: SourceProfile, n: int) -> int:
    """:func:`longest_common_run` when no n-gram of ``a`` is in the source: the largest m < n such that an
    m-gram of ``a`` is (0 when not even a token is shared)."""
    for m in range(n - 1, 0, -1):
        have = prof.grams(m)
        if any(g in have for g in ngrams(a, m)):
            return m
    return 0


def check(pair: QAPair, chunks: ChunkMap, settings: Settings) -> CheckResult:
    sources = evidence_texts(pair, chunks)
    if not sources:
        return result(True, None, "no evidence to compare with")
    tokens = text_tokens(pair.answer)  # the memoised tuple, not a copy
    if len(tokens) < settings.min_answer_tokens:
        return result(True, 0.0, f"answer has {len(tokens)} tokens (< {settings.min_answer_tokens}); not judged")
    m = measure(pair.answer, sources, settings, tokens)
    over = []
    if m["containment"] >= settings.max_containment:
        over.append(f"{m['containment']:.0%} of answer {settings.ngram}-grams are in the evidence")
    if m["lcs"] >= settings.max_lcs_ratio:
        over.append(f"a copied run covers {m['lcs']:.0%} of the answer")
    if m["edit"] >= settings.max_edit_similarity:
        over.append(f"answer is {m['edit']:.0%} similar to an evidence sentence")
    score = max(m.values())
    if over:
        return result(False, score, "answer copies the evidence: " + "; ".join(over))
    return result(
        True, score, f"containment {m['containment']:.2f}, longest run {m['lcs']:.2f}, similarity {m['edit']:.2f}"
    )


SPEC = CheckSpec(
    name=NAME,
    settings_model=Settings,
    kind="pair",
    summary="answer does not copy its evidence chunk(s)",
    reads=("answer", "evidence"),
    uses_chunks=True,
    func=check,
)

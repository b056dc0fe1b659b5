"""Check 2: the question must not be a near copy of a source sentence.

A question that repeats a chunk sentence is trivially retrievable by lexical match and tests nothing. The
question is compared with every sentence of its evidence chunks and with the near-matching sentences of the
whole KB, which the pipeline finds with :class:`~goldset.filters.neardup.SentenceIndex` because this check's spec
declares it (:class:`~goldset.filters.base.KBSentences`). Markdown headings are left out: a heading names a topic
("FastAPI's HTTPException vs Starlette's"), and a natural question about the topic names it the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from pydantic import Field

from goldset.filters.base import CheckSettings, CheckSpec, ChunkMap, KBSentences, evidence_texts, verdict
from goldset.filters.textsim import (
    best_edit_match,
    canonical,
    ngrams,
    sentence_grams,
    source_profile,
    tokens,
)
from goldset.schema import CheckResult, QAPair

NAME = "question_overlap"


class Settings(CheckSettings):
    """Thresholds of the question_overlap check (``filter.checks.question_overlap``)."""

    max_similarity: float = Field(0.85, ge=0, le=1, description="Fail at or above this sentence similarity.")
    ngram: int = Field(3, ge=1, le=8, description="n of the token n-grams for containment.")
    max_containment: float = Field(
        0.9, ge=0, le=1, description="Fail when this share of the question's n-grams is in one sentence."
    )
    min_tokens_for_containment: int = Field(8, ge=1, description="Shorter questions are judged by similarity only.")
    whole_kb: bool = Field(True, description="Also compare with near-matching sentences of every KB chunk.")


def check(pair: QAPair, chunks: ChunkMap, settings: Settings, kb_sentences: Sequence[str] = ()) -> CheckResult:
    """``kb_sentences``: near-matching sentences of other chunks, found by the pipeline's sentence index.

    Containment here is over distinct n-grams: the share of the question's n-gram set inside one sentence's.
    """
    q_canon = canonical(pair.question)  # memoised: the sentence index asked for it already
    q_tokens = tokens(pair.question)  # the memoised tuple q_canon joins (cheaper than splitting q_canon again)
    use_containment = len(q_tokens) >= settings.min_tokens_for_containment
    n = settings.ngram
    texts = evidence_texts(pair, chunks)
    kb_prose = [s for s in kb_sentences if not _is_heading(s)] if settings.whole_kb else []
    kb = [_sentence_info(s, n) for s in kb_prose]
    sentences: Sequence[str]
    canon: Sequence[str]
    if len(texts) == 1 and not kb:  # the common case: the text's own tuples, no copies
        sentences, canon = _prose(texts[0])
    else:
        sentences, canon = [], []
        for text in texts:
            prose, prose_canon = _prose(text)
            sentences.extend(prose)
            canon.extend(prose_canon)
        sentences.extend(kb_prose)
        canon.extend(c for c, _ in kb)
    if not sentences:
        return verdict(settings, True, None, "no source sentences to compare with")
    sim, best = best_edit_match(q_canon, sentences, canon, query_is_canonical=True)
    cont = 0.0
    if use_containment:
        # max over sentences of |question n-grams ∩ sentence n-grams|: each evidence text through its inverted
        # index (n-gram -> sentences holding it), each KB sentence through its own set.
        q_grams = set(ngrams(q_tokens, n))
        most = 0
        for text in texts:
            index, known = _gram_index(text, n)
            counts: dict[int, int] = {}
            for g in q_grams & known:  # set & frozenset reuses the stored hashes: few grams left to look up
                for i in index[g]:
                    counts[i] = counts.get(i, 0) + 1
            if counts:
                most = max(most, max(counts.values()))
        for _, grams in kb:
            if len(grams) > most and not q_grams.isdisjoint(grams):
                most = max(most, len(q_grams & grams))
        cont = most / len(q_grams)
    score = max(sim, cont)
    if sim >= settings.max_similarity:
        return verdict(settings, False, score, f"question is {sim:.0%} similar to source sentence {best[:80]!r}")
    if cont >= settings.max_containment:
        why = f"{cont:.0%} of the question's {settings.ngram}-grams are in one source sentence"
        return verdict(settings, False, score, why)
    return verdict(settings, True, score, f"closest source sentence {sim:.2f} similar")


def _is_heading(sentence: str) -> bool:
    """A Markdown heading: it names a topic, and a question about the topic names it too without copying."""
    return sentence.startswith("#")


@lru_cache(maxsize=4096)
def _prose(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The sentences of a source text that are not headings, and their canonical forms."""
    prof = source_profile(text)
    keep = [i for i, sent in enumerate(prof.sentences) if not _is_heading(sent)]
    return tuple(prof.sentences[i] for i in keep), tuple(prof.sentences_canonical[i] for i in keep)


@lru_cache(maxsize=1 << 16)
def _sentence_info(sentence: str, n: int) -> tuple[str, frozenset[tuple[str, ...]]]:
    """Canonical form and n-gram set of a KB sentence (the same sentences come back for many questions)."""
    toks = tokens(sentence)
    return " ".join(toks), frozenset(ngrams(toks, n))


@lru_cache(maxsize=4096)
def _gram_index(
    text: str, n: int
) -> tuple[dict[tuple[str, ...], tuple[int, ...]], frozenset[tuple[str, ...]]]:
    """n-gram -> the sentences of ``text`` (indices) whose n-gram set holds it, and the set of those n-grams."""
    index: dict[tuple[str, ...], list[int]] = {}
    headings = source_profile(text).sentences
    for i, grams in enumerate(sentence_grams(text, n)):
        if _is_heading(headings[i]):
            continue
        for g in grams:
            index.setdefault(g, []).append(i)
    return {g: tuple(ids) for g, ids in index.items()}, frozenset(index)


def wants_kb_sentences(settings: Settings) -> bool:
    """Whether these settings compare with the whole KB (``whole_kb``), i.e. the pipeline must find sentences."""
    return settings.whole_kb


SPEC = CheckSpec(
    name=NAME,
    settings_model=Settings,
    kind="pair",
    summary="question is not a near copy of a source sentence",
    reads=("question", "evidence"),
    uses_chunks=True,
    func=check,
    version=2,
    kb_sentences=KBSentences(check=check, wanted=wants_kb_sentences, min_similarity=0.5),
)

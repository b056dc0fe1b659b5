"""Lexical answer metrics: the system's answer against the pair's reference answer, token by token.

Tokens come from :func:`goldset.text.tokenize` (NFKC, case-folded; one token per CJK character, one per run of
letters/digits; punctuation dropped), so the metrics mean the same on Chinese and English. (``rouge_score``'s
default tokenizer deletes everything outside ``[a-z0-9]`` and would score every Chinese answer 0.)
Unanswerable pairs are scored on refusals instead (:mod:`.refusal`): their lexical metrics are ``None``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from goldset.evaluation.metrics.registry import metric


@dataclass(frozen=True, slots=True)
class AnswerInput:
    """What the answer metrics of one sample read."""

    answer_tokens: tuple[str, ...]
    reference_tokens: tuple[str, ...]
    answerable: bool = True
    refused: bool = False


def lcs_length(a: tuple[str, ...] | list[str], b: tuple[str, ...] | list[str]) -> int:
    """Length of the longest common subsequence of two token sequences (rapidfuzz's bit-parallel C++)."""
    if not a or not b:
        return 0
    from rapidfuzz.distance import LCSseq

    return int(LCSseq.similarity(a, b))


def _f1(overlap: float, n_pred: int, n_ref: int) -> float:
    if overlap <= 0 or not n_pred or not n_ref:
        return 0.0
    p = overlap / n_pred
    r = overlap / n_ref
    return 2 * p * r / (p + r)


@metric(
    name="rouge_l",
    family="lexical",
    description="ROUGE-L F1: longest common token subsequence of answer and reference (CJK: per character).",
    citation="Lin, ROUGE: A Package for Automatic Evaluation of Summaries, ACL Workshop 2004",
)
def rouge_l(a: AnswerInput) -> float | None:
    if not a.answerable:
        return None
    return _f1(lcs_length(a.answer_tokens, a.reference_tokens), len(a.answer_tokens), len(a.reference_tokens))


@metric(
    name="token_f1",
    family="lexical",
    description="SQuAD-style F1 of the bag of answer tokens against the bag of reference tokens.",
    citation="Rajpurkar et al., SQuAD: 100,000+ Questions for Machine Comprehension of Text, EMNLP 2016",
)
def token_f1(a: AnswerInput) -> float | None:
    if not a.answerable:
        return None
    if not a.answer_tokens or not a.reference_tokens:
        return 0.0
    overlap = sum((Counter(a.answer_tokens) & Counter(a.reference_tokens)).values())
    return _f1(overlap, len(a.answer_tokens), len(a.reference_tokens))


@metric(
    name="exact_match",
    family="lexical",
    description="1 if the answer's tokens equal the reference's (case, width, spacing and punctuation ignored).",
    citation="Rajpurkar et al., SQuAD: 100,000+ Questions for Machine Comprehension of Text, EMNLP 2016",
)
def exact_match(a: AnswerInput) -> float | None:
    if not a.answerable:
        return None
    return 1.0 if a.answer_tokens and a.answer_tokens == a.reference_tokens else 0.0

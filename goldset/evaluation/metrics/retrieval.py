"""Retrieval metrics over one sample's ranked contexts, with trec_eval's conventions (as in ir-measures/ranx).

The input is a :class:`RankedRelevance` built by :mod:`goldset.evaluation.matcher`. A pair's *relevant units*
are its distinct evidence units (quotes for the text matcher, chunk or document ids for the id matchers);
``n_relevant`` counts them. The context at rank ``i`` (0-based) is

- *relevant* (``rel[i] = 1``) when it matches at least one unit not matched at an earlier rank: a context that
  holds several quotes counts once at its rank, and a unit counts once, at the first rank it is found (a second
  context with the same quote is a duplicate, like a repeated document in a TREC run, and scores 0);
- *matched* (``matched[i] = 1``) when it matches any unit at all (duplicates included): used by context
  precision, which asks "is this context useful", not "is it new";
- ``new_units[i]`` is the number of units first found at rank ``i`` (``>= rel[i]``; > 1 only when one context
  holds several quotes).

With this, when every context matches at most one unit (always the case for the id matchers), each number below
equals trec_eval's on qrels = {unit: 1} and a run where context ``i`` is named after the unit it first finds (or
a unique non-relevant name): the agreement test checks it against ir-measures/pytrec_eval to 1e-9.
Conventions: P@k = relevant in top k / k even when fewer than k were retrieved; R@k = units found in top k /
n_relevant; hit@k (Success@k) = any relevant in top k; nDCG uses linear gain rel / log2(rank + 1) with the ideal
ranking of ``min(n_relevant, k)`` relevant contexts; a sample with no relevant unit scores 0 everywhere.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from goldset.evaluation.metrics.registry import metric

_TREC = "trec_eval (https://github.com/usnistgov/trec_eval); ir-measures, MacAvaney et al., ECIR 2022"

#: 1 / log2(i + 2) for ranks i = 0, 1, ... (grown on demand): nDCG's discount, computed once.
_DISCOUNTS: list[float] = [1.0 / math.log2(i + 2) for i in range(64)]


def _discount(n: int) -> list[float]:
    while len(_DISCOUNTS) < n:
        _DISCOUNTS.append(1.0 / math.log2(len(_DISCOUNTS) + 2))
    return _DISCOUNTS


@dataclass(frozen=True, slots=True)
class RankedRelevance:
    """Per-rank relevance of one sample's retrieved contexts (see the module docstring for the definitions)."""

    rel: tuple[int, ...]
    new_units: tuple[int, ...]
    matched: tuple[int, ...]
    n_relevant: int
    n_covered: int = -1
    """Units covered by the retrieved contexts together (context recall); -1 = ``sum(new_units)``."""

    @classmethod
    def from_binary(cls, rel: list[int] | tuple[int, ...], n_relevant: int) -> RankedRelevance:
        """From a plain 0/1 relevance vector where every relevant context finds exactly one new unit."""
        r = tuple(1 if x else 0 for x in rel)
        return cls(r, r, r, n_relevant)


@metric(
    name="hit@k",
    family="retrieval",
    description="1 if any of the top k contexts is relevant, else 0 (hit rate; trec_eval success@k).",
    citation=_TREC,
    params={"k": "cut-off rank (eval.ks)"},
)
def hit_at_k(r: RankedRelevance, k: int) -> float:
    return 1.0 if r.n_relevant and any(r.rel[:k]) else 0.0


@metric(
    name="precision@k",
    family="retrieval",
    description="Relevant contexts in the top k divided by k (even when fewer than k were retrieved).",
    citation=_TREC,
    params={"k": "cut-off rank (eval.ks)"},
)
def precision_at_k(r: RankedRelevance, k: int) -> float:
    return sum(r.rel[:k]) / k if r.n_relevant else 0.0


@metric(
    name="recall@k",
    family="retrieval",
    description="Share of the pair's evidence units found in the top k contexts.",
    citation=_TREC,
    params={"k": "cut-off rank (eval.ks)"},
)
def recall_at_k(r: RankedRelevance, k: int) -> float:
    return min(1.0, sum(r.new_units[:k]) / r.n_relevant) if r.n_relevant else 0.0


@metric(
    name="mrr",
    family="retrieval",
    description="Reciprocal rank of the first relevant context (0 if none); its mean over samples is MRR.",
    citation="Voorhees, The TREC-8 Question Answering Track Report, 1999; " + _TREC,
)
def mrr(r: RankedRelevance) -> float:
    if not r.n_relevant:
        return 0.0
    for i, x in enumerate(r.rel):
        if x:
            return 1.0 / (i + 1)
    return 0.0


@metric(
    name="ndcg@k",
    family="retrieval",
    description="nDCG of the top k with binary linear gain rel/log2(rank+1), ideal = min(n_relevant, k) hits.",
    citation="Järvelin & Kekäläinen, Cumulated gain-based evaluation of IR techniques, TOIS 2002; " + _TREC,
    params={"k": "cut-off rank (eval.ks)"},
)
def ndcg_at_k(r: RankedRelevance, k: int) -> float:
    if not r.n_relevant:
        return 0.0
    disc = _discount(max(k, len(r.rel)))
    dcg = sum(disc[i] for i, x in enumerate(r.rel[:k]) if x)
    idcg = sum(disc[: min(r.n_relevant, k)])
    return dcg / idcg


@metric(
    name="map",
    family="retrieval",
    description="Average precision over all retrieved contexts (sum of P@i at relevant ranks / n_relevant).",
    citation=_TREC,
)
def average_precision(r: RankedRelevance) -> float:
    if not r.n_relevant:
        return 0.0
    hits = 0
    total = 0.0
    for i, x in enumerate(r.rel):
        if x:
            hits += 1
            total += hits / (i + 1)
    return total / r.n_relevant


@metric(
    name="context_precision",
    family="retrieval",
    description=(
        "Rank-weighted precision of the retrieved contexts with the reference evidence as ground truth: mean of "
        "P@i over the ranks i of matching contexts (duplicates count as matching); 0 if none match."
    ),
    citation="Es et al., RAGAS: Automated Evaluation of Retrieval Augmented Generation, 2023 (context precision)",
)
def context_precision(r: RankedRelevance) -> float:
    if not r.n_relevant:
        return 0.0
    hits = 0
    total = 0.0
    for i, x in enumerate(r.matched):
        if x:
            hits += 1
            total += hits / (i + 1)
    return total / hits if hits else 0.0


@metric(
    name="context_recall",
    family="retrieval",
    description=(
        "Share of the pair's evidence units (quotes) covered by all retrieved contexts together; a quote split "
        "across contexts counts when the pieces together hold eval.text_match_min of its tokens."
    ),
    citation="Es et al., RAGAS: Automated Evaluation of Retrieval Augmented Generation, 2023 (context recall)",
)
def context_recall(r: RankedRelevance) -> float:
    if not r.n_relevant:
        return 0.0
    covered = sum(r.new_units) if r.n_covered < 0 else r.n_covered
    return min(1.0, covered / r.n_relevant)

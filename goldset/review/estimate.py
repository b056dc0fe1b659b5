"""How good the pairs nobody reviewed are: the acceptance rate of the random part, with a Wilson interval.

Only the random part of the sample counts (``review.random``): the risk-first part was chosen *because* it
looked bad, so it says nothing unbiased about the rest. Each random pair carries its weight (the pairs of its
stratum's remainder it stands for, ``review/sampling.py``); the rate is the weighted mean of "accepted"
(Hájek estimator) and the interval is Wilson's at the Kish effective sample size ``(Σw)² / Σw²``. When every
weight is equal (a self-weighting sample) this is exactly the ordinary Wilson interval of ``accepted / reviewed``.

"Accepted" means accepted as it was; a pair an expert had to edit counts as not acceptable unless
``review.edits_count_as_accepted`` is set (an unreviewed pair like it would go out with its flaw).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from statistics import NormalDist
from typing import TYPE_CHECKING

from goldset.schema import QAPair
from goldset.schema.base import utcnow
from goldset.schema.manifest import AcceptanceEstimate, ReviewRound, ReviewSampleStats

if TYPE_CHECKING:
    from goldset.review.settings import ReviewSettings


def z_value(confidence: float) -> float:
    """The two-sided normal quantile of a confidence level (0.95 -> 1.95996...)."""
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def wilson(successes: float, n: float, confidence: float = 0.95) -> tuple[float, float] | None:
    """Wilson score interval of a proportion ``successes / n``; ``None`` when ``n`` is 0. ``n`` may be an
    effective (non-integer) sample size."""
    if n <= 0:
        return None
    z = z_value(confidence)
    p = successes / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def estimate(
    items: Sequence[tuple[bool, float]], *, population: float, random: int, confidence: float
) -> AcceptanceEstimate:
    """The estimate from reviewed random pairs given as (accepted, weight)."""
    est = AcceptanceEstimate(population=round(population), random=random, reviewed=len(items))
    est.accepted = sum(1 for ok, _ in items if ok)
    total = sum(w for _, w in items)
    if not items or total <= 0:
        return est
    rate = sum(w for ok, w in items if ok) / total
    n_eff = total * total / sum(w * w for _, w in items)
    interval = wilson(rate * n_eff, n_eff, confidence)
    est.acceptance_rate = round(rate, 4)
    est.effective_n = round(n_eff, 2)
    if interval is not None:
        est.ci_low, est.ci_high = round(interval[0], 4), round(interval[1], 4)
    return est


def is_accepted(pair: QAPair, edits_count: bool) -> bool:
    return pair.review.outcome == "accepted" or (edits_count and pair.review.outcome == "edited")


def grouped(
    pairs: Iterable[QAPair], key: Callable[[QAPair], str], settings: ReviewSettings
) -> dict[str, AcceptanceEstimate]:
    """One estimate per value of ``key`` over the random part of ``pairs``."""
    groups: dict[str, list[QAPair]] = defaultdict(list)
    for p in pairs:
        groups[key(p)].append(p)
    return {k: _estimate_of(v, settings) for k, v in sorted(groups.items())}


def _estimate_of(random_pairs: Sequence[QAPair], settings: ReviewSettings) -> AcceptanceEstimate:
    reviewed = [
        (is_accepted(p, settings.edits_count_as_accepted), p.review.weight or 1.0)
        for p in random_pairs
        if p.review.outcome is not None
    ]
    population = sum(p.review.weight or 1.0 for p in random_pairs)
    return estimate(reviewed, population=population, random=len(random_pairs), confidence=settings.confidence)


def review_stats(
    pairs: Sequence[QAPair], settings: ReviewSettings, *, rounds: Sequence[ReviewRound] = ()
) -> ReviewSampleStats:
    """The manifest's ``review`` section: counts of the whole sample, the estimate overall, per stratum, per
    question type and per language (from the random part only)."""
    sampled = [p for p in pairs if p.review.sampled]
    randoms = [p for p in sampled if p.review.random]
    overall = _estimate_of(randoms, settings)
    return ReviewSampleStats(
        sampled=len(sampled),
        reviewed=sum(1 for p in sampled if p.review.outcome is not None),
        accepted=sum(1 for p in sampled if p.review.outcome == "accepted"),
        rejected=sum(1 for p in sampled if p.review.outcome == "rejected"),
        edited=sum(1 for p in sampled if p.review.outcome == "edited"),
        acceptance_rate=overall.acceptance_rate,
        ci_low=overall.ci_low,
        ci_high=overall.ci_high,
        confidence=settings.confidence,
        random=overall.random,
        random_reviewed=overall.reviewed,
        effective_n=overall.effective_n,
        population=overall.population,
        edits_count_as_accepted=settings.edits_count_as_accepted,
        rounds=list(rounds),
        strata=grouped(randoms, lambda p: p.review.stratum or "-", settings),
        by_question_type=grouped(randoms, lambda p: p.question_type.value, settings),
        by_language=grouped(randoms, lambda p: p.language, settings),
        estimated_at=utcnow(),
    )

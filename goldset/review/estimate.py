"""How good the pairs nobody reviewed are: the acceptance rate of the random part, with a Wilson interval.

Only the random part of the sample counts (``review.random``): the risk-first part was chosen *because* it
looked bad, so it says nothing unbiased about the rest. The rate is the weighted mean of "accepted" over the
decided random pairs (Hájek estimator) and the interval is Wilson's at the Kish effective sample size
``(Σw)² / Σw²``. When every weight is equal (a self-weighting sample) this is exactly the ordinary Wilson interval
of ``accepted / reviewed``.

**What the estimate speaks for: the pairs as they are now, not as they were drawn.** A sample round's stratum has
a *remainder*: the pairs of the round's population in that stratum the risk part did not take (``review.round``
and ``review.stratum`` set, not drawn for risk). Its random part is a uniform draw from it
(``review/sampling.py``). A pair counts while it is *in the set*: passed or accepted, or decided by an expert (a
rejection in review is what the estimate measures), and neither retired nor stale. A pair that left since the
draw (refresh retired it or made it stale; the filters rejected it) is gone from the estimate, a random-part pair
too: its decision no longer counts (``retired_since``, ``random_retired``).

**Weights are derived from what is still there, not read from the pair.** For round r and stratum s::

    weight(r, s) = N(r, s) / n(r, s)

N = pairs of the remainder still in the set, n = random-part pairs still in the set *with a decision*. Why this
keeps the estimate unbiased: the random part is a uniform draw without replacement from the remainder, and
whether a pair left since does not depend on whether it was drawn (retirement follows document changes), so the
draws still in the set are a uniform sample of the remainder still in the set; decided draws are taken as missing
at random within their stratum. Each stratum's rate is then its decided draws' mean, weighted by its size N: the
Hájek ratio with these weights is exactly Σ N·p̂ / Σ N. (Dividing by every draw rather than the decided ones
would under-weight strata whose review is behind.) With nothing gone and every draw decided this is the weight
sampling recorded (remainder / drawn). A random pair with no round (files written before rounds were recorded)
keeps its recorded weight (1 when none): N is then the sum of those weights over its stratum's draws still in the
set. A stratum with no decided draw left has no estimate: its unreviewed pairs are outside it (while its draws
wait for a decision it still counts in ``population``, the pairs the sample was drawn to speak for). One caveat: the
filters never overrule an expert, so a filter rejection after the draw can only remove an unreviewed pair; a
stratum the filters cleaned since is then judged by draws that were not cleaned (conservative: biased low, if
anything).

**Coverage** (:func:`coverage`): of the golden pairs, the estimate speaks for the reviewed ones (their quality is
known one by one) and the unreviewed ones of a remainder that has a decided draw (``covered``); the rest are
outside it (``outside``): pairs in no round (``unsampled``: added since the last round, e.g. by refresh), pairs
drawn for risk and not decided yet, pairs of a stratum whose draws are all gone or undecided.

"Accepted" means accepted as it was; a pair an expert had to edit counts as not acceptable unless
``review.edits_count_as_accepted`` is set (an unreviewed pair like it would go out with its flaw).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import TYPE_CHECKING

from goldset.dataset import golden_ids
from goldset.schema import PairStatus, QAPair
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


#: Statuses of a pair that left the set since it was drawn (a document change): whatever its review said.
GONE = frozenset({PairStatus.retired, PairStatus.stale})
#: Statuses of a pair in the set without an expert decision.
KEPT = frozenset({PairStatus.passed, PairStatus.accepted})


def in_set(pair: QAPair) -> bool:
    """The pair still counts (module doc): passed or accepted, or decided by an expert; not retired or stale."""
    if pair.status in GONE:
        return False
    return pair.status in KEPT or pair.review.outcome is not None


def in_round(pair: QAPair) -> bool:
    """A sample round held the pair (drawn or not)."""
    return pair.review.round is not None or pair.review.sampled


@dataclass
class Weighting:
    """The estimate's footing (module doc): the derived weight of every decided random pair still in the set, the
    random pairs still in the set and the pairs each stands for (``N / draws``: what ``population`` adds up), the
    pairs of a remainder with a decided draw, and the round pairs that left."""

    weights: dict[str, float] = field(default_factory=dict)
    stands_for: dict[str, float] = field(default_factory=dict)
    draws: list[QAPair] = field(default_factory=list)
    covered: set[str] = field(default_factory=set)
    left: list[QAPair] = field(default_factory=list)


def weighting(pairs: Iterable[QAPair]) -> Weighting:
    """Group the remainders by (round, stratum) and derive each decided draw's weight from what is still there."""
    out = Weighting()
    groups: dict[tuple[int | None, str], list[QAPair]] = defaultdict(list)
    for p in pairs:
        r = p.review
        if in_round(p) and not in_set(p):
            out.left.append(p)
        if r.random or (r.round is not None and not r.sampled):
            groups[(r.round, r.stratum or "-")].append(p)
    for (round_no, _), group in sorted(groups.items(), key=lambda kv: (kv[0][0] or 0, kv[0][1])):
        kept = [p for p in group if in_set(p)]
        draws = [p for p in kept if p.review.random]
        decided = [p for p in draws if p.review.outcome is not None]
        if not draws:
            continue  # every draw left: nothing speaks for the rest of this remainder
        out.draws += draws
        # No round recorded: the population is unknown, each draw stands for its recorded weight.
        size = len(kept) if round_no is not None else sum(p.review.weight or 1.0 for p in draws)
        out.stands_for.update({p.id: size / len(draws) for p in draws})
        if not decided:
            continue
        out.weights.update({p.id: size / len(decided) for p in decided})
        out.covered.update(p.id for p in kept)
    return out


@dataclass
class Coverage:
    """Which golden pairs the estimate speaks for (module doc)."""

    golden: set[str] = field(default_factory=set)
    covered: set[str] = field(default_factory=set)
    outside: set[str] = field(default_factory=set)
    unsampled: set[str] = field(default_factory=set)


def default_golden(pairs: Iterable[QAPair]) -> set[str]:
    """The golden set when none is given: a working copy's, the accepted and passed pairs
    (:func:`goldset.dataset.golden_ids`, the default ``versioning.golden``)."""
    return golden_ids(pairs)


def coverage(
    pairs: Sequence[QAPair], golden: Collection[str] | None = None, footing: Weighting | None = None
) -> Coverage:
    """The golden pairs (``golden`` ids; default: accepted and passed) the estimate speaks for, and the rest."""
    footing = footing if footing is not None else weighting(pairs)
    ids = set(golden) if golden is not None else default_golden(pairs)
    out = Coverage(golden={p.id for p in pairs if p.id in ids})
    for p in pairs:
        if p.id not in out.golden:
            continue
        if p.review.outcome is not None or p.id in footing.covered:
            out.covered.add(p.id)
        else:
            out.outside.add(p.id)
            if not in_round(p):
                out.unsampled.add(p.id)
    return out


def grouped(
    draws: Iterable[QAPair], footing: Weighting, key: Callable[[QAPair], str], settings: ReviewSettings
) -> dict[str, AcceptanceEstimate]:
    """One estimate per value of ``key`` over the random pairs ``draws`` (weighted as ``footing`` says)."""
    groups: dict[str, list[QAPair]] = defaultdict(list)
    for p in draws:
        groups[key(p)].append(p)
    return {k: _estimate_of(v, footing, settings) for k, v in sorted(groups.items())}


def _estimate_of(draws: Sequence[QAPair], footing: Weighting, settings: ReviewSettings) -> AcceptanceEstimate:
    weights = footing.weights
    reviewed = [(is_accepted(p, settings.edits_count_as_accepted), weights[p.id]) for p in draws if p.id in weights]
    population = sum(footing.stands_for.get(p.id, 0.0) for p in draws)
    return estimate(reviewed, population=population, random=len(draws), confidence=settings.confidence)


def review_stats(
    pairs: Sequence[QAPair],
    settings: ReviewSettings,
    *,
    rounds: Sequence[ReviewRound] = (),
    golden: Collection[str] | None = None,
) -> ReviewSampleStats:
    """The manifest's ``review`` section over ``pairs`` as they are now (module doc): counts of the sample still in
    the set, the estimate overall, per stratum, per question type and per language (from the random part only),
    and the share of the golden pairs (``golden`` ids; default: accepted and passed) it speaks for."""
    footing = weighting(pairs)
    cover = coverage(pairs, golden, footing)
    sampled = [p for p in pairs if p.review.sampled and in_set(p)]
    overall = _estimate_of(footing.draws, footing, settings)
    decided = [d.at for p in pairs if in_set(p) and p.review.outcome is not None for d in p.review.decisions]
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
        strata=grouped(footing.draws, footing, lambda p: p.review.stratum or "-", settings),
        by_question_type=grouped(footing.draws, footing, lambda p: p.question_type.value, settings),
        by_language=grouped(footing.draws, footing, lambda p: p.language, settings),
        estimated_at=utcnow(),
        last_decision_at=max(decided, default=None),
        golden=len(cover.golden),
        covered=len(cover.covered),
        outside=len(cover.outside),
        unsampled=len(cover.unsampled),
        retired_since=len(footing.left),
        random_retired=sum(1 for p in footing.left if p.review.random),
    )

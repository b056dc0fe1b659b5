"""The quality estimate: Wilson intervals against published figures, weights, and the manifest's numbers."""

from __future__ import annotations

import math

import pytest

from goldset.review.estimate import estimate, review_stats, wilson, z_value
from goldset.review.settings import ReviewSettings
from goldset.schema import QAPair, Review


@pytest.mark.parametrize(
    ("successes", "n", "low", "high"),
    [
        (8, 10, 0.4902, 0.9433),  # Wilson (1927) / Newcombe (1998) table values
        (0, 10, 0.0, 0.2775),
        (10, 10, 0.7225, 1.0),
        (50, 100, 0.4038, 0.5962),
        (81, 263, 0.2553, 0.3662),  # Newcombe 1998, example (a)
    ],
)
def test_wilson_matches_published_values(successes: int, n: int, low: float, high: float) -> None:
    got = wilson(successes, n, 0.95)
    assert got is not None
    assert got[0] == pytest.approx(low, abs=1e-4) and got[1] == pytest.approx(high, abs=1e-4)


def test_wilson_edge_cases_and_z() -> None:
    assert wilson(0, 0) is None
    assert z_value(0.95) == pytest.approx(1.959964, abs=1e-6)
    narrow, wide = wilson(45, 50, 0.90), wilson(45, 50, 0.99)
    assert narrow is not None and wide is not None and wide[0] < narrow[0] < 0.9 < narrow[1] < wide[1]


def test_equal_weights_give_the_plain_wilson_interval() -> None:
    items = [(True, 3.0)] * 8 + [(False, 3.0)] * 2
    est = estimate(items, population=30, random=10, confidence=0.95)
    assert est.acceptance_rate == 0.8 and est.effective_n == 10
    assert (est.ci_low, est.ci_high) == (0.4902, 0.9433)


def test_unequal_weights_use_the_weighted_rate_and_kish_effective_n() -> None:
    # stratum A: 4 reviewed, each standing for 10 pairs, all accepted; stratum B: 4 reviewed, each for 2, none
    items = [(True, 10.0)] * 4 + [(False, 2.0)] * 4
    est = estimate(items, population=48, random=8, confidence=0.95)
    assert est.acceptance_rate == pytest.approx(40 / 48, abs=1e-4)
    n_eff = 48**2 / (4 * 100 + 4 * 4)  # (Σw)² / Σw² = 5.538
    assert est.effective_n == pytest.approx(n_eff, abs=0.01)
    expected = wilson(40 / 48 * n_eff, n_eff)
    assert expected is not None and est.ci_low == pytest.approx(expected[0], abs=1e-4)
    assert est.accepted == 4 and est.reviewed == 8 and est.population == 48


_STATUS = {"accepted": "accepted", "edited": "accepted", "rejected": "rejected", None: "passed"}


def _pair(i: int, *, random: bool, outcome: str | None, weight: float = 2.0, qtype: str = "factual",
          sampled: bool = True, stratum: str | None = None, round_no: int | None = 1,
          status: str | None = None) -> QAPair:  # fmt: skip
    review = Review(sampled=sampled, random=random, weight=weight if random else None, outcome=outcome,
                    stratum=stratum or f"{qtype}|en|a.md", round=round_no)  # fmt: skip
    return QAPair(id=f"qa-{i:03d}", question="What is it?", answer="It is this.", question_type=qtype, review=review,
                  status=status or _STATUS[outcome])  # fmt: skip


def test_review_stats_rest_on_the_random_part_only() -> None:
    pairs = [_pair(i, random=True, outcome="accepted") for i in range(9)]
    pairs.append(_pair(9, random=True, outcome="edited"))
    pairs += [_pair(10 + i, random=False, outcome="rejected") for i in range(5)]  # the risk part: all bad
    pairs.append(_pair(20, random=True, outcome=None))  # drawn, not reviewed yet
    pairs += [_pair(30 + i, random=False, outcome=None, sampled=False) for i in range(11)]  # the remainder's rest
    stats = review_stats(pairs, ReviewSettings())
    assert (stats.sampled, stats.reviewed, stats.accepted, stats.rejected, stats.edited) == (16, 15, 9, 5, 1)
    assert stats.random == 11 and stats.random_reviewed == 10 and stats.population == 22
    assert stats.acceptance_rate == 0.9, "the risk part's rejections do not count; the edit counts against"
    lenient = review_stats(pairs, ReviewSettings(edits_count_as_accepted=True))
    assert lenient.acceptance_rate == 1.0
    assert stats.strata["factual|en|a.md"].reviewed == 10
    assert set(stats.by_question_type) == {"factual"} and set(stats.by_language) == {"en"}
    low, high = wilson(9, 10) or (math.nan, math.nan)
    assert stats.ci_low == pytest.approx(low, abs=1e-4) and stats.ci_high == pytest.approx(high, abs=1e-4)
    # every golden pair (accepted or passed) is reviewed or in the remainder, except the waiting risk part: none
    assert (stats.golden, stats.covered, stats.outside, stats.unsampled) == (22, 22, 0, 0)


def _two_strata() -> list[QAPair]:
    """Round 1: stratum A has 10 pairs in its remainder, 4 drawn (3 accepted, 1 rejected: weight 2.5); stratum B
    has 4, 2 drawn (both accepted: weight 2)."""
    a, b = "factual|en|a.md", "factual|en|b.md"
    pairs = [_pair(i, random=True, outcome="accepted", weight=2.5, stratum=a) for i in range(3)]
    pairs.append(_pair(3, random=True, outcome="rejected", weight=2.5, stratum=a))
    pairs += [_pair(10 + i, random=False, outcome=None, sampled=False, stratum=a) for i in range(6)]
    pairs += [_pair(20 + i, random=True, outcome="accepted", weight=2.0, stratum=b) for i in range(2)]
    pairs += [_pair(30 + i, random=False, outcome=None, sampled=False, stratum=b) for i in range(2)]
    return pairs


def test_retired_pairs_leave_the_estimate_and_their_stratum_is_reweighted() -> None:
    pairs = _two_strata()
    before = review_stats(pairs, ReviewSettings())
    assert before.acceptance_rate == pytest.approx((10 * 0.75 + 4 * 1.0) / 14, abs=1e-4) and before.population == 14
    # refresh retires an accepted draw of A and three of its unsampled pairs; five new pairs come in, never drawn;
    # one pair drawn for risk waits for its decision
    retire = {"qa-000", "qa-010", "qa-011", "qa-012"}
    pairs = [p.model_copy(update={"status": "retired"}) if p.id in retire else p for p in pairs]
    pairs += [_pair(40 + i, random=False, outcome=None, sampled=False, round_no=None) for i in range(5)]
    pairs.append(_pair(50, random=False, outcome=None, round_no=1))
    stats = review_stats(pairs, ReviewSettings())
    # A: 6 left, 3 draws (2 accepted) -> weight 2; B unchanged (weight 2): (6 * 2/3 + 4 * 1) / 10. The recorded
    # weights (2.5, 2) would give 9 / 11.5 = 0.78; counting the retired draw, 0.82 as before.
    assert stats.acceptance_rate == pytest.approx(0.8, abs=1e-4) and stats.population == 10
    assert stats.strata["factual|en|a.md"].population == 6 and stats.strata["factual|en|a.md"].reviewed == 3
    assert (stats.random, stats.random_reviewed, stats.retired_since, stats.random_retired) == (5, 5, 4, 1)
    assert stats.sampled == 6 and stats.accepted == 4, "the retired draw is no longer in the sample's counts"
    # golden: A 2 accepted + 3 passed, B 4, the 5 new ones, the waiting risk pair = 15; outside: the new ones and
    # the risk pair (drawn for its risk, not in the random remainder)
    assert (stats.golden, stats.covered, stats.outside, stats.unsampled) == (15, 9, 6, 5)
    assert stats.coverage == pytest.approx(9 / 15)


def test_a_stratum_whose_draws_are_all_gone_is_outside_the_estimate() -> None:
    pairs = _two_strata()
    pairs = [p.model_copy(update={"status": "stale"}) if p.id in ("qa-020", "qa-021") else p for p in pairs]
    stats = review_stats(pairs, ReviewSettings())
    assert stats.acceptance_rate == pytest.approx(0.75, abs=1e-4) and set(stats.strata) == {"factual|en|a.md"}
    assert stats.population == 10 and (stats.covered, stats.outside, stats.unsampled) == (9, 2, 0)
    only = review_stats(pairs, ReviewSettings(), golden={"qa-000", "qa-030"})
    assert (only.golden, only.covered, only.outside) == (2, 1, 1)


def test_the_estimate_stays_unbiased_when_pairs_are_retired() -> None:
    """Every possible random part of stratum A (3 of its 6 pairs; 4 good) with two of its pairs retired whatever
    was drawn (one good, one bad): the estimates average to the true rate of what is left, (3 + 4) / 8, with B's 4
    pairs all good. The recorded weights would not: they ignore that A shrank."""
    from itertools import combinations

    good = {0, 1, 2, 3}
    retired = {0, 4}
    rates = []
    for drawn in combinations(range(6), 3):
        pairs = []
        for i in range(6):
            outcome = ("accepted" if i in good else "rejected") if i in drawn else None
            p = _pair(i, random=i in drawn, outcome=outcome, sampled=i in drawn, weight=2.0, stratum="A")
            pairs.append(p.model_copy(update={"status": "retired"}) if i in retired else p)
        pairs += [_pair(10 + i, random=i < 2, outcome="accepted" if i < 2 else None, sampled=i < 2, weight=2.0,
                        stratum="B") for i in range(4)]  # fmt: skip
        rate = review_stats(pairs, ReviewSettings()).acceptance_rate
        assert rate is not None
        rates.append(rate)
    assert sum(rates) / len(rates) == pytest.approx(7 / 8, abs=1e-4)


def test_a_random_pair_without_a_round_keeps_its_recorded_weight() -> None:
    old = [_pair(i, random=True, outcome="accepted" if i else "rejected", weight=3.0, round_no=None) for i in range(4)]
    stats = review_stats(old, ReviewSettings())
    assert stats.acceptance_rate == 0.75 and stats.population == 12 and stats.effective_n == 4

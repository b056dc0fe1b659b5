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


def _pair(i: int, *, random: bool, outcome: str | None, weight: float = 2.0, qtype: str = "factual") -> QAPair:
    review = Review(sampled=True, random=random, weight=weight if random else None, outcome=outcome,
                    stratum=f"{qtype}|en|a.md", round=1)  # fmt: skip
    return QAPair(id=f"qa-{i:03d}", question="What is it?", answer="It is this.", question_type=qtype, review=review)


def test_review_stats_rest_on_the_random_part_only() -> None:
    pairs = [_pair(i, random=True, outcome="accepted") for i in range(9)]
    pairs.append(_pair(9, random=True, outcome="edited"))
    pairs += [_pair(10 + i, random=False, outcome="rejected") for i in range(5)]  # the risk part: all bad
    pairs.append(_pair(20, random=True, outcome=None))  # drawn, not reviewed yet
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

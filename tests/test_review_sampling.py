"""The review sample: strata covered, risk first, a weighted random part, reproducible, recorded, unbiased."""

from __future__ import annotations

import random
from pathlib import Path
from statistics import mean, stdev

import pytest

from goldset.errors import UsageError
from goldset.filters.settings import FilterSettings
from goldset.io import read_json, read_jsonl
from goldset.review import sample
from goldset.review.sampling import borderline_of, changed_chunks_of, draw, flags_of, risk_of, stratum_of
from goldset.schema import CheckResult, Manifest, PairStatus, QAPair, QuestionType
from tests.helpers.review_data import build, make_workspace


def pairs_of(ws_root: Path) -> list[QAPair]:
    return read_jsonl(ws_root / "data" / "pairs.jsonl", QAPair)


def test_flags_borderline_and_changed_chunks_are_risks() -> None:
    pairs, chunks = build(40)
    flagged = pairs[3]
    assert flags_of(flagged) == ["leakage"], "a failed check on a passed pair is a flag"
    assert flags_of(flagged.model_copy(update={"status": PairStatus.rejected})) == []
    assert borderline_of(pairs[5], FilterSettings(), 0.1) == ["verbatim"], "0.47 is within 0.1 of 0.5"
    assert borderline_of(pairs[5], FilterSettings(), 0.01) == []
    assert changed_chunks_of(pairs[7], chunks) == [pairs[7].chunk_ids[0]]
    score, reasons = risk_of(flagged, chunks, FilterSettings(), 0.1)
    assert score > 0 and "flag:leakage" in reasons
    assert risk_of(pairs[0], chunks, FilterSettings(), 0.1) == (0, [])


@pytest.mark.parametrize("qtype", ["multi_hop", "unanswerable", "ambiguous", "open_ended"])
def test_types_that_no_cheap_check_vouches_for_are_risks(qtype: str) -> None:
    pairs, chunks = build(40)
    plain = pairs[0]
    assert plain.question_type.value == "factual" and risk_of(plain, chunks, FilterSettings(), 0.1) == (0, [])
    risky = plain.model_copy(update={"question_type": QuestionType(qtype)})
    assert risk_of(risky, chunks, FilterSettings(), 0.1) == (2, [f"type:{qtype}"])


def test_draw_covers_every_stratum_takes_risk_first_and_weights_the_random_part() -> None:
    pairs, chunks = build(240)
    dims = ["question_type", "language", "doc"]
    risk = {p.id: risk_of(p, chunks, FilterSettings(), 0.1) for p in pairs}
    d = draw(pairs, 60, seed=3, round_no=1, random_share=0.5, dimensions=dims, risk=risk)
    strata = {stratum_of(p, dims) for p in pairs}
    assert len(d.sampled) == 60 and len(d.random) >= 30
    assert {d.strata[pid] for pid in d.random} == strata, "every stratum has a random pair"
    risky_scores = sorted((risk[p.id][0] for p in pairs if risk[p.id][0] > 0), reverse=True)
    assert sorted((risk[pid][0] for pid in d.risk), reverse=True) == risky_scores[: len(d.risk)], "riskiest first"
    assert all(risk[pid][0] > 0 for pid in d.risk)
    for s in strata:  # the weights of a stratum add up to what was left of it after the risk part
        members = [p.id for p in pairs if d.strata[p.id] == s]
        left = [pid for pid in members if pid not in d.risk]
        assert sum(d.random[pid] for pid in members if pid in d.random) == pytest.approx(len(left))


def test_the_random_part_estimates_the_rest_without_bias() -> None:
    """Simulated truth: risky pairs are accepted half as often. Over many seeds, the weighted acceptance of the
    random part averages to the acceptance of everything the risk part did not take (the unreviewed rest)."""
    pairs, chunks = build(300)
    risk = {p.id: risk_of(p, chunks, FilterSettings(), 0.1) for p in pairs}
    rng = random.Random(1)
    good = {p.id: rng.random() < (0.45 if risk[p.id][0] else 0.9) for p in pairs}
    errors = []
    for seed in range(400):
        d = draw(pairs, 45, seed=seed, round_no=1, random_share=0.5, dimensions=["question_type", "language"],
                 risk=risk)  # fmt: skip
        rest = [p.id for p in pairs if p.id not in d.risk]
        truth = mean(good[pid] for pid in rest)
        est = sum(w for pid, w in d.random.items() if good[pid]) / sum(d.random.values())
        errors.append(est - truth)
    se = stdev(errors) / len(errors) ** 0.5
    assert abs(mean(errors)) < max(3 * se, 0.005) and se < 0.006, (mean(errors), se)
    naive = mean(good[p.id] for p in pairs)
    assert naive < mean(good[p.id] for p in pairs if not risk[p.id][0]), "the risk part really is worse"


def test_sample_is_reproducible_and_recorded(tmp_path: Path) -> None:
    a = make_workspace(tmp_path / "a", 120)
    b = make_workspace(tmp_path / "b", 120)
    c = make_workspace(tmp_path / "c", 120)
    ra = sample(a, fraction=0.2, seed=7)
    sample(b, fraction=0.2, seed=7)
    sample(c, fraction=0.2, seed=8)
    got = {name: [p.id for p in pairs_of(ws.root) if p.review.sampled] for name, ws in (("a", a), ("b", b), ("c", c))}
    assert got["a"] == got["b"] and got["a"] != got["c"]
    assert ra.sampled == len(got["a"]) == 24 and ra.random + ra.risk == 24 and ra.population == 120
    pairs = pairs_of(a.root)
    assert all(p.review.round == 1 and p.review.stratum for p in pairs), "the whole population is recorded"
    drawn = [p for p in pairs if p.review.sampled]
    assert all(p.review.seed == 7 for p in drawn)
    assert all((p.review.weight or 0) >= 1 for p in drawn if p.review.random)
    assert all(p.review.weight is None and p.review.risk for p in drawn if not p.review.random)
    manifest = read_json(a.data_dir / "manifest.json", Manifest)
    assert manifest.review is not None and manifest.review.sampled == 24 and manifest.review.random == ra.random
    assert [(r.round, r.seed, r.sampled, r.population) for r in manifest.review.rounds] == [(1, 7, 24, 120)]
    assert manifest.review.population == 120 - ra.risk, "the estimate speaks for everything but the risk part"


def test_rounds_redraw_and_bad_arguments(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws", 60)
    with pytest.raises(UsageError, match="not both"):
        sample(ws, fraction=0.2, size=5)
    with pytest.raises(UsageError, match="redraw: there is no sample round"):
        sample(ws, redraw=True)
    first = sample(ws, size=10, seed=1)
    with pytest.raises(UsageError, match="have no decision yet"):
        sample(ws)
    again = sample(ws, size=12, seed=2, redraw=True)
    assert again.discarded == 60 and again.round == 1 and again.sampled == 12 and first.sampled == 10
    # pairs generated later form the next round's population once this round is decided
    pairs = pairs_of(ws.root)
    done = {"status": PairStatus.accepted}
    decided = [p.model_copy(update={**done, "review": p.review.model_copy(update={"outcome": "accepted"})})
               if p.review.sampled else p for p in pairs]  # fmt: skip
    extra, _ = build(70)
    new = [p.model_copy(update={"id": f"qa-new-{i}"}) for i, p in enumerate(extra[60:])]
    from goldset.dataset import write_dataset
    from goldset.filters.inputs import read_chunk_sources

    write_dataset(ws.data_dir, decided + new, read_chunk_sources(ws).kept.values())
    second = sample(ws, fraction=0.5)
    assert second.round == 2 and second.population == 10 and second.sampled == 5
    assert {p.id for p in pairs_of(ws.root) if p.review.round == 2} == {p.id for p in new}


def test_only_passed_unreviewed_pairs_are_drawn(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws", 30)
    pairs = pairs_of(ws.root)
    pairs[0] = pairs[0].model_copy(update={"status": PairStatus.rejected})
    pairs[1] = pairs[1].model_copy(update={"status": PairStatus.candidate})
    pairs[2] = pairs[2].model_copy(update={"checks": {"x": CheckResult(passed=True)}})
    from goldset.dataset import write_dataset
    from goldset.filters.inputs import read_chunk_sources

    write_dataset(ws.data_dir, pairs, read_chunk_sources(ws).kept.values())
    r = sample(ws, fraction=1.0)
    assert r.population == 28 and r.sampled == 28
    assert {p.id for p in pairs_of(ws.root) if not p.review.sampled} == {"qa-0000", "qa-0001"}

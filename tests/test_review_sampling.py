"""The review sample: strata covered, risk first, a weighted random part, reproducible, recorded, unbiased."""

from __future__ import annotations

import random
from pathlib import Path
from statistics import mean, stdev

import pytest

from goldset.errors import UsageError
from goldset.filters.settings import FilterSettings
from goldset.io import read_json, read_jsonl, write_jsonl
from goldset.review import sample
from goldset.review.sampling import (
    REFRESH_TAGS,
    allocate,
    borderline_of,
    changed_chunks_of,
    draw,
    fit_strata,
    flags_of,
    risk_of,
    split,
    stratum_of,
)
from goldset.review.settings import DEFAULT_STRATA, ReviewSettings
from goldset.schema import CheckResult, Chunk, Manifest, PairStatus, QAPair, QuestionType
from tests.helpers.review_data import TYPES, build, make_workspace

DIMS = list(DEFAULT_STRATA)


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
    assert len(d.sampled) == 60 and len(d.random) == 30 and len(d.risk) == 30
    left = {d.strata[p.id] for p in pairs if p.id not in d.risk}
    assert {d.strata[pid] for pid in d.random} == left, "every stratum with pairs left has a random pair"
    assert all(sum(d.strata[pid] == s for pid in d.random) >= 2 for s in left), "two draws each (the default)"
    risky_scores = sorted((risk[p.id][0] for p in pairs if risk[p.id][0] > 0), reverse=True)
    assert sorted((risk[pid][0] for pid in d.risk), reverse=True) == risky_scores[: len(d.risk)], "riskiest first"
    assert all(risk[pid][0] > 0 for pid in d.risk)
    for s in set(d.strata.values()):  # the weights of a stratum add up to what was left of it after the risk part
        members = [p.id for p in pairs if d.strata[p.id] == s]
        rest = [pid for pid in members if pid not in d.risk]
        assert sum(d.random[pid] for pid in members if pid in d.random) == pytest.approx(len(rest))


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
    from goldset.data import read_chunk_sources, write_dataset

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
    from goldset.data import read_chunk_sources, write_dataset

    write_dataset(ws.data_dir, pairs, read_chunk_sources(ws).kept.values())
    r = sample(ws, fraction=1.0)
    assert r.population == 28 and r.sampled == 28
    assert {p.id for p in pairs_of(ws.root) if not p.review.sampled} == {"qa-0000", "qa-0001"}


# --------------------------------------------------------------- the sample of a workspace with many documents


def issue_population() -> tuple[list[QAPair], dict[str, Chunk]]:
    """The workspace the issue saw: 233 passed pairs in 99 strata (question type x language x document, 19
    documents), 14 of them flagged, no evidence changed since generation."""
    pairs, chunks = build(233, docs=19)
    out, flagged = [], 0
    for p in pairs:
        checks = dict(p.checks)
        if "leakage" in checks:
            flagged += 1
            if flagged > 14:
                del checks["leakage"]
        hashes = {e.chunk_id: chunks[e.chunk_id].content_hash for e in p.evidence}
        update = {"checks": checks, "provenance": p.provenance.model_copy(update={"chunk_hashes": hashes})}
        if p.id in ("qa-0000", "qa-0001"):  # two pairs in a third language: two strata more
            update["language"] = "de"
        out.append(p.model_copy(update=update))
    return out, chunks


def write_pairs(ws_root: Path, pairs: list[QAPair]) -> None:
    from goldset.data import read_chunk_sources, write_dataset
    from goldset.workspace import Workspace

    ws = Workspace(ws_root)
    write_dataset(ws.data_dir, pairs, read_chunk_sources(ws).kept.values())


def test_many_strata_no_longer_squeeze_out_the_risk_part_or_leave_pairs_outside_the_estimate() -> None:
    """The issue: 15% of 233 pairs in 99 strata drew "risk part 0; random part 35, in 99 strata", none of the 14
    flagged pairs, and an estimate that spoke for 146 of the pairs."""
    pairs, chunks = issue_population()
    assert len({stratum_of(p, DIMS) for p in pairs}) == 99
    flagged = {p.id for p in pairs if flags_of(p)}
    assert len(flagged) == 14
    risk = {p.id: risk_of(p, chunks, FilterSettings(), 0.1) for p in pairs}
    defaults = ReviewSettings()
    for fraction in (0.15, 0.2):
        size = round(fraction * len(pairs))
        for seed in range(5):
            d = draw(pairs, size, seed=seed, round_no=1, random_share=defaults.random_share, dimensions=DIMS,
                     risk=risk, min_random_per_stratum=defaults.min_random_per_stratum)  # fmt: skip
            assert len(d.risk) == size - round(defaults.random_share * size) >= len(flagged), (fraction, seed)
            assert flagged <= set(d.risk), "every flagged pair fits in the risk part, so it is there"
            left = len(pairs) - len(d.risk)
            speaks_for = sum(d.random.values())
            assert speaks_for == pytest.approx(left), "every stratum with pairs left has a random pair"
            assert (len(d.risk) + speaks_for) / len(pairs) >= 0.9
            assert len(set(d.strata.values())) < 20, "strata fitted to a random part of 18-24 pairs"


def test_the_risk_part_gets_its_share_whatever_the_strata() -> None:
    pairs, chunks = issue_population()
    risk = {p.id: risk_of(p, chunks, FilterSettings(), 0.1) for p in pairs}
    n_risky = sum(1 for v in risk.values() if v[0] > 0)
    for size in (1, 2, 3, 5, 10, 20, 35, 47, 99, 150, 233):
        d = draw(pairs, size, seed=1, round_no=1, random_share=0.5, dimensions=DIMS, risk=risk)
        n_random = split(size, 0.5)
        assert len(d.risk) == min(size - n_random, n_risky) and len(d.sampled) == size, size
        assert size < 2 or d.risk, "two places or more: the risky pairs get some"
        left = {d.strata[p.id] for p in pairs if p.id not in d.risk}
        assert {d.strata[pid] for pid in d.random} == left, size
    assert (split(1, 0.5), split(10, 0.05), split(10, 0.0), split(10, 1.0)) == (1, 1, 0, 10)


def test_fitted_strata_keep_big_strata_pool_small_ones_and_drop_dimensions_when_needed() -> None:
    pairs, chunks = issue_population()
    risk = {p.id: risk_of(p, chunks, FilterSettings(), 0.1) for p in pairs}
    d = draw(pairs, 35, seed=0, round_no=1, random_share=0.5, dimensions=DIMS, risk=risk)
    # 18 random places, 216 pairs left: a stratum needs 2 * 216 / 18 = 24 pairs left to stand alone. No document
    # stratum has that many; each English question type has, the Chinese and German pairs do not.
    assert sorted(set(d.strata.values())) == [
        "comparison|en", "factual|en", "multi_hop|en", "other", "procedural|en", "reasoning|en", "unanswerable|en|-",
    ]  # fmt: skip
    assert d.dimensions == DIMS and len(d.merged["factual|en"]) == 18
    assert {s.split("|")[1] for s in d.merged["other"]} == {"zh", "de"}
    assert all(d.strata[p.id] == "other" for p in pairs if p.language != "en")
    # the same pairs with room for ~10 pairs per document stratum: documents stand on their own
    left = [p for p in pairs if p.id not in d.risk]
    wide = fit_strata(pairs, left, 200, DIMS, 2)
    assert any(s.count("|") == 2 and "other" not in s for s in set(wide.of.values()))
    assert len({wide.of[p.id] for p in left}) <= 100
    # too many strata for the places even pooled: 80 pairs, 20 places, 3 each: 12 pairs stand alone, at most 6
    # strata. factual|en and reasoning|en (12 each) would, the other types whole (12), and their Chinese pairs
    # (4 + 4) pooled in `other`: 7 strata. So the language goes: one stratum per type.
    few, _ = build(80)
    by_type = fit_strata(few, few, 20, ["question_type", "language"], 3)
    assert by_type.dimensions == ["question_type"] and set(by_type.of.values()) == {t.value for t in QuestionType
                                                                                    if t.value in TYPES}  # fmt: skip
    one = fit_strata(pairs, left, 1, DIMS, 2)
    assert set(one.of.values()) == {"all"} and len(one.merged["all"]) == 99, "one place: one stratum"


def test_allocate_gives_each_stratum_its_least_then_in_proportion() -> None:
    assert allocate({"a": 100, "b": 3, "c": 1}, 10, least=2) == {"a": 7, "b": 2, "c": 1}
    assert allocate({"a": 100, "b": 3, "c": 1}, 2, least=2) == {"a": 2, "b": 0, "c": 0}
    assert allocate({"a": 100, "b": 3, "c": 1}, 3, least=2) == {"a": 1, "b": 1, "c": 1}
    assert sum(allocate({"a": 50, "b": 40, "c": 30}, 17, least=2).values()) == 17


def test_fitted_strata_keep_the_estimate_unbiased() -> None:
    """Known acceptance per stratum: documents differ, the Chinese and German pairs are much worse, risky pairs
    worse still. Over many seeds the weighted acceptance of the random part averages to that of everything the
    risk part left, while the unweighted one does not (the small pooled stratum is over-drawn), so the weights
    matter."""
    pairs, chunks = issue_population()
    risk = {p.id: risk_of(p, chunks, FilterSettings(), 0.1) for p in pairs}
    rng = random.Random(5)
    strata = sorted({stratum_of(p, DIMS) for p in pairs})
    accept = {s: (0.25 if "|en|" not in s else rng.uniform(0.7, 0.98)) for s in strata}
    good = {p.id: rng.random() < accept[stratum_of(p, DIMS)] * (0.7 if risk[p.id][0] else 1.0) for p in pairs}
    errors, naive = [], []
    for seed in range(300):
        d = draw(pairs, 35, seed=seed, round_no=1, random_share=0.5, dimensions=DIMS, risk=risk)
        truth = mean(good[p.id] for p in pairs if p.id not in d.risk)
        errors.append(sum(w for pid, w in d.random.items() if good[pid]) / sum(d.random.values()) - truth)
        naive.append(mean(good[pid] for pid in d.random) - truth)
    se = stdev(errors) / len(errors) ** 0.5
    assert abs(mean(errors)) < max(3 * se, 0.005) and se < 0.01, (mean(errors), se)
    assert mean(naive) < -5 * se, (mean(naive), se)


def test_after_a_refresh_new_and_rechecked_pairs_come_first(tmp_path: Path) -> None:
    from goldset.versioning import refresh

    assert (refresh.TAG_NEW, refresh.TAG_RECHECKED, refresh.TAG_REVIEW) == REFRESH_TAGS
    ws = make_workspace(tmp_path / "ws", 0)
    pairs, chunks = issue_population()
    plain = [p for p in pairs if risk_of(p, chunks, FilterSettings(), 0.1)[0] == 0]
    tagged = {p.id: REFRESH_TAGS[i % 2] for i, p in enumerate(plain[:8])}
    pairs = [p.model_copy(update={"tags": [*p.tags, tagged[p.id]]}) if p.id in tagged else p for p in pairs]
    # evidence whose text changed since generation (the document changed, no refresh yet) counts the same
    moved = next(p for p in plain[8:] if p.evidence)
    pairs = [p.model_copy(update={"provenance": p.provenance.model_copy(update={"chunk_hashes": {
        p.evidence[0].chunk_id: "old-text"}})}) if p.id == moved.id else p for p in pairs]  # fmt: skip
    write_jsonl(ws.kb_dir / "chunks.jsonl", list(chunks.values()))
    write_pairs(ws.root, pairs)
    new_pair = next(p for p in pairs if p.id in tagged)
    assert risk_of(new_pair, chunks, FilterSettings(), 0.1) == (16, [tagged[new_pair.id]]), "ahead of a flag (8)"
    r = sample(ws)
    got = {p.id: p for p in pairs_of(ws.root)}
    risk_part = {pid for pid, p in got.items() if p.review.sampled and not p.review.random}
    assert {*tagged, moved.id} <= risk_part, "changed and new pairs are in the risk part"
    assert {pid for pid in tagged if got[pid].review.risk == [tagged[pid]]} == set(tagged)
    assert r.risk_reasons["refresh"] == 8 and r.risk_reasons["changed"] == 1
    flagged = {p.id for p in pairs if flags_of(p)}
    assert len(risk_part) == r.risk == 17 and len(risk_part & flagged) == 17 - 9, "then the flagged pairs"


def test_sample_says_what_the_estimate_speaks_for_and_how_strata_were_fitted(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from goldset.cli import app

    ws = make_workspace(tmp_path / "ws", 0)
    pairs, chunks = issue_population()
    write_jsonl(ws.kb_dir / "chunks.jsonl", list(chunks.values()))
    write_pairs(ws.root, pairs)
    res = CliRunner().invoke(app, ["review", "sample", "-w", str(ws.root)], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())
    assert "risk part 17" in out and "random part 18, in 7 strata" in out
    assert "the 99 strata of question_type|language|doc became 7" in out and "other <- 8" in out
    assert "speaks for 216 of the 216 pairs outside the risk part" in out and "100% of the 233 passed pairs" in out
    assert "no random pair" not in out
    manifest = read_json(ws.data_dir / "manifest.json", Manifest)
    assert manifest.review is not None and manifest.review.population == 216
    recorded = {p.review.stratum for p in pairs_of(ws.root)}
    assert len(recorded) == 7 and "other" in recorded, "pairs record the stratum the round used"

    none = make_workspace(tmp_path / "none", 40, review="  random_share: 0\n")
    r = sample(none, size=10)
    assert (r.random, r.risk, r.speaks_for, r.uncovered) == (0, 10, 0, ["all"])
    assert r.covered_share == pytest.approx(10 / 40)
    res = CliRunner().invoke(app, ["review", "sample", "--redraw", "--size", "10", "-w", str(none.root)],
                             env={"COLUMNS": "200"})  # fmt: skip
    out = " ".join(res.output.split())
    assert "speaks for 0 of the 30 pairs" in out and "1 strata (30 pairs) have no random pair" in out, out

"""`compare`: paired-bootstrap intervals and Holm-corrected permutation verdicts on constructed data (checked
against scipy), dataset and settings checks, the questions that got worse."""

from __future__ import annotations

import random
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from goldset.errors import InputError, UsageError
from goldset.evaluation.compare import compare_runs, holm, paired_bootstrap, paired_permutation_test
from goldset.evaluation.runs import StoredRun, read_run, write_run
from goldset.schema import RunMeta, RunSample, RunSummary, SampleScores


def store(
    folder: Path,
    values: Mapping[str, Mapping[str, float | None]],
    *,
    manifest_hash: str = "h1",
    version: str = "v1",
    config: dict[str, Any] | None = None,
) -> StoredRun:
    """A run folder with hand-made per-sample scores (no scoring code involved)."""
    scores = [
        SampleScores(pair_id=pid, question_type="factual" if i % 2 else "procedural", language="en", metrics=dict(m))
        for i, (pid, m) in enumerate(sorted(values.items()))
    ]
    samples = [RunSample(pair_id=pid, question=f"question {pid}?") for pid in values]
    meta = RunMeta(
        run_id=folder.name,
        dataset="data",
        dataset_version=version,
        manifest_hash=manifest_hash,
        metric_config=config if config is not None else {"matcher": "auto", "ks": [1, 5]},
    )
    summary = RunSummary(run_id=folder.name, n_samples=len(scores))
    write_run(folder, meta, samples, scores, summary)
    return read_run(folder)


def test_bootstrap_of_a_constant_shift_is_that_shift() -> None:
    a = [0.2, 0.5, 0.9, 0.4]
    b = [x + 0.1 for x in a]
    mean, low, high = paired_bootstrap(a, b, n_resamples=500, seed=1)
    assert mean == pytest.approx(0.1)
    assert low == pytest.approx(0.1) and high == pytest.approx(0.1)


def test_bootstrap_interval_covers_the_true_difference_and_is_seeded() -> None:
    rng = random.Random(7)
    a = [rng.random() for _ in range(400)]
    b = [x + 0.05 + rng.gauss(0, 0.1) for x in a]
    mean, low, high = paired_bootstrap(a, b, n_resamples=2000, seed=3)
    assert low < 0.05 < high
    assert low > 0  # 400 paired questions: a +0.05 shift with sd 0.1 is clearly significant
    # standard error of the mean difference is 0.1/sqrt(400)=0.005: the 95% interval is about ±0.01 wide
    assert 0.01 < high - low < 0.03
    assert paired_bootstrap(a, b, n_resamples=2000, seed=3) == (mean, low, high)
    assert paired_bootstrap(a, b, n_resamples=2000, seed=4) != (mean, low, high)


def test_pairing_makes_a_small_consistent_gain_significant() -> None:
    """Per-question values vary a lot, but B is better on every question: paired intervals see it."""
    a = [i / 50 for i in range(50)]
    b = [x + 0.02 for x in a]
    _, low, _ = paired_bootstrap(a, b, n_resamples=1000, seed=0)
    assert low > 0


def test_compare_runs_reports_metrics_and_regressions(tmp_path: Path) -> None:
    a_vals = {f"q{i}": {"recall@5": 1.0, "mrr": 0.5, "latency_ms": 100.0} for i in range(20)}
    b_vals: dict[str, dict[str, float | None]] = {
        f"q{i}": {"recall@5": 1.0, "mrr": 0.5, "latency_ms": 80.0} for i in range(20)
    }
    b_vals["q3"]["recall@5"] = 0.0
    b_vals["q7"]["mrr"] = 0.25
    b_vals["q9"]["recall@5"] = None  # not applicable in B: left out of the pairing for that metric
    a = store(tmp_path / "a", a_vals)
    b = store(tmp_path / "b", b_vals)
    cmp = compare_runs(a, b, n_resamples=500, seed=0)
    by = {m.metric: m for m in cmp.metrics}
    assert by["recall@5"].n == 19
    assert by["recall@5"].diff == pytest.approx(-1 / 19)
    assert by["recall@5"].ci_low <= by["recall@5"].diff <= by["recall@5"].ci_high
    assert by["latency_ms"].diff == pytest.approx(-20.0)
    assert by["latency_ms"].verdict == "better"  # lower latency is better
    assert [r.pair_id for r in cmp.regressions] == ["q3", "q7"]  # biggest drop first
    assert cmp.regressions[0].metric == "recall@5" and cmp.regressions[0].question == "question q3?"
    assert cmp.n_worse == 2


def test_compare_refuses_different_datasets(tmp_path: Path) -> None:
    vals = {"q1": {"mrr": 1.0}, "q2": {"mrr": 0.0}}
    a = store(tmp_path / "a", vals, manifest_hash="aaaa")
    b = store(tmp_path / "b", vals, manifest_hash="bbbb")
    with pytest.raises(InputError, match="different datasets"):
        compare_runs(a, b)
    c = store(tmp_path / "c", vals, manifest_hash="aaaa", version="v2")
    with pytest.raises(InputError, match=r"different dataset versions \(v1 vs v2\)"):
        compare_runs(a, c)


def test_compare_needs_common_questions(tmp_path: Path) -> None:
    a = store(tmp_path / "a", {"q1": {"mrr": 1.0}})
    b = store(tmp_path / "b", {"q2": {"mrr": 1.0}})
    with pytest.raises(InputError, match="no question in common"):
        compare_runs(a, b)


def test_read_run_rejects_an_incomplete_folder(tmp_path: Path) -> None:
    store(tmp_path / "a", {"q1": {"mrr": 1.0}})
    (tmp_path / "a" / "scores.jsonl").unlink()
    with pytest.raises(InputError, match=r"missing scores\.jsonl"):
        read_run(tmp_path / "a")
    with pytest.raises(InputError, match="no such run"):
        read_run(tmp_path / "nope")


def test_runs_scored_with_different_settings_are_refused_naming_them(tmp_path: Path) -> None:
    vals = {f"q{i}": {"mrr": 1.0 if i % 2 else 0.5} for i in range(10)}
    a = store(tmp_path / "a", vals, config={"matcher": "auto", "ks": [1, 5], "conciseness": {"max_ratio": 2.0}})
    b = store(tmp_path / "b", vals, config={"matcher": "text", "ks": [1, 5], "conciseness": {"max_ratio": 3.0}})
    with pytest.raises(
        UsageError, match=r'different settings: conciseness\.max_ratio \(2\.0 vs 3\.0\); matcher \("auto" vs "text"\)'
    ):
        compare_runs(a, b)
    with pytest.raises(UsageError, match="compare them anyway with allow_different_settings"):
        compare_runs(a, b)
    cmp = compare_runs(a, b, allow_different_settings=True, n_resamples=200)
    assert cmp.setting_differences == ["conciseness.max_ratio (2.0 vs 3.0)", 'matcher ("auto" vs "text")']
    c = store(tmp_path / "c", vals, config={})  # a run that recorded no settings cannot vouch for them
    with pytest.raises(UsageError, match="records no scoring settings"):
        compare_runs(a, c)
    same = store(tmp_path / "d", vals, config={"matcher": "auto", "ks": [1, 5], "conciseness": {"max_ratio": 2.0}})
    assert compare_runs(a, same, n_resamples=200).setting_differences == []
    # a setting the older run does not record compares as its default (added since, with the old behaviour)...
    conciseness: dict[str, float] = {"max_ratio": 2.0, "slack_tokens": 10}
    newer = {"matcher": "auto", "ks": [1, 5], "conciseness": conciseness}
    assert compare_runs(a, store(tmp_path / "e", vals, config=newer), n_resamples=200).setting_differences == []
    # ...and as a difference when it is not the default
    conciseness["slack_tokens"] = 0
    with pytest.raises(UsageError, match=r"conciseness\.slack_tokens \(10 vs 0\)"):
        compare_runs(a, store(tmp_path / "f", vals, config=newer))


def test_permutation_p_values_agree_with_scipy() -> None:
    """The same data through scipy.stats.permutation_test (an independent implementation): exact for few pairs,
    within Monte Carlo error for many."""
    from scipy import stats

    rng = np.random.default_rng(11)
    a = rng.random(9).round(2).tolist()
    b = (np.asarray(a) + rng.normal(0.15, 0.2, 9)).round(2).tolist()

    def mean_diff(x: np.ndarray, y: np.ndarray, axis: int) -> np.ndarray:
        return np.mean(y - x, axis=axis)

    exact = stats.permutation_test((a, b), mean_diff, permutation_type="samples", n_resamples=10_000, vectorized=True)
    assert paired_permutation_test(a, b, n_resamples=10_000) == pytest.approx(exact.pvalue, abs=1e-12)
    assert 0.001 < exact.pvalue < 0.5  # a case where the value matters

    a = rng.random(300).tolist()
    b = (np.asarray(a) + rng.normal(0.02, 0.2, 300)).tolist()
    mc = stats.permutation_test(
        (a, b), mean_diff, permutation_type="samples", n_resamples=20_000, vectorized=True, rng=1
    ).pvalue
    ours = paired_permutation_test(a, b, n_resamples=20_000, seed=2)
    assert 0.01 < mc < 0.5
    assert ours == pytest.approx(mc, abs=0.015)  # two Monte Carlo estimates: sd about 0.003 each
    # and the paired t-test, another view of the same question, agrees on these well-behaved differences
    assert ours == pytest.approx(stats.ttest_rel(b, a).pvalue, abs=0.02)


def test_holm_adjustment() -> None:
    """Holm's step-down adjustment on a worked example (Holm 1979): sorted p 0.005, 0.01, 0.03, 0.04 of m = 4."""
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == [1.0, 1.0]
    assert holm([]) == []


def test_verdicts_are_corrected_for_the_number_of_metrics(tmp_path: Path) -> None:
    """26 metrics: one with a modest gain (p about 0.01 alone) is not called better once corrected; a strong one is."""
    rng = np.random.default_rng(3)
    n = 400
    a_vals: dict[str, dict[str, float]] = {}
    b_vals: dict[str, dict[str, float]] = {}
    modest = rng.normal(0.0, 1.0, n)
    modest = modest - modest.mean() + 0.13  # mean difference 0.13 with sd 1: t about 2.6, p about 0.01
    for i in range(n):
        base = {f"hit@{j}": float(rng.random()) for j in range(1, 27)}  # registered names: higher is better
        a_vals[f"q{i:03d}"] = dict(base)
        b = dict(base)
        b["hit@1"] = base["hit@1"] + float(modest[i])
        b["hit@2"] = base["hit@2"] + 0.5  # a large, consistent gain
        b_vals[f"q{i:03d}"] = b
    cmp = compare_runs(store(tmp_path / "a", a_vals), store(tmp_path / "b", b_vals), n_resamples=2000, seed=0)
    by = {m.metric: m for m in cmp.metrics}
    assert len(cmp.metrics) == 26
    assert by["hit@1"].p_value < 0.05 and by["hit@1"].ci_low > 0  # significant on its own...
    assert by["hit@1"].p_adjusted > 0.05 and by["hit@1"].verdict == "no clear change"  # ...not among 26 metrics
    assert by["hit@2"].verdict == "better" and by["hit@2"].p_adjusted < 0.01
    assert {m.verdict for m in cmp.metrics if m.metric not in ("hit@1", "hit@2")} == {"no clear change"}
    assert "Holm–Bonferroni over the 26 metrics" in cmp.method()


def test_a_run_compared_with_itself_changes_nothing(tmp_path: Path) -> None:
    vals = {f"q{i}": {"recall@5": float(i % 2), "mrr": 1 / (1 + i % 3)} for i in range(50)}
    cmp = compare_runs(store(tmp_path / "a", vals), store(tmp_path / "b", vals), n_resamples=300)
    assert all(m.diff == 0 and m.p_value == 1.0 and m.verdict == "no clear change" for m in cmp.metrics)
    assert cmp.regressions == [] and cmp.n_worse == 0

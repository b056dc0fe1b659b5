"""`compare`: paired-bootstrap intervals on constructed data, dataset checks, the questions that got worse."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from goldset.errors import InputError
from goldset.evaluation.compare import compare_runs, paired_bootstrap
from goldset.evaluation.runs import read_run, write_run
from goldset.schema import RunMeta, RunSample, RunSummary, SampleScores


def store(folder: Path, values: dict[str, dict[str, float | None]], *, manifest_hash: str = "h1", version: str = "v1"):
    """A run folder with hand-made per-sample scores (no scoring code involved)."""
    scores = [
        SampleScores(pair_id=pid, question_type="factual" if i % 2 else "procedural", language="en", metrics=m)
        for i, (pid, m) in enumerate(sorted(values.items()))
    ]
    samples = [RunSample(pair_id=pid, question=f"question {pid}?") for pid in values]
    meta = RunMeta(run_id=folder.name, dataset="data", dataset_version=version, manifest_hash=manifest_hash)
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
    b_vals = {f"q{i}": {"recall@5": 1.0, "mrr": 0.5, "latency_ms": 80.0} for i in range(20)}
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

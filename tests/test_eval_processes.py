"""Scoring on several cores: forked processes give exactly the scores one process gives, and a child that fails
costs time, never results."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from goldset.evaluation.evaluator import evaluate
from goldset.evaluation.processes import available_cpus, split_work
from goldset.evaluation.scoring import MIN_PER_PROCESS, scoring_processes
from goldset.evaluation.settings import EvalSettings
from goldset.schema import RetrievedContext, RunSample
from tests.helpers.eval_data import evaluated_pairs, make_dataset, perfect_sample, poor_sample, write_run_file


def _mixed_samples() -> list[RunSample]:
    """Perfect, poor, failed, partly retrieved and missing samples, so every branch of scoring is in the run."""
    out: list[RunSample] = []
    for i, pair in enumerate(evaluated_pairs()):
        if i % 5 == 4:
            continue  # missing from the run
        sample = [perfect_sample, poor_sample][i % 2](pair)
        if i % 5 == 3:
            sample = sample.model_copy(update={"error": "timeout", "answer": ""})
        if i % 5 == 2:
            noise = RetrievedContext(text="Something else entirely about kangaroos and tables.", doc_id="other.md")
            sample = sample.model_copy(update={"contexts": [noise, *sample.contexts]})
        out.append(sample)
    return out


def test_scores_from_several_processes_equal_those_of_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    data = make_dataset(tmp_path / "data", version="v1")
    run = write_run_file(tmp_path / "run.jsonl", _mixed_samples())
    one = evaluate(data, run=run, out_dir=tmp_path / "one", settings=EvalSettings(score_processes=1))
    many = evaluate(data, run=run, out_dir=tmp_path / "many", settings=EvalSettings(score_processes=4))
    assert one.summary.n_failed > 0 and 0 < one.summary.overall["recall@5"] < 1  # a mixed run, not a trivial one
    assert (tmp_path / "many" / "scores.jsonl").read_bytes() == (tmp_path / "one" / "scores.jsonl").read_bytes()
    summaries = [json.loads((tmp_path / name / "summary.json").read_text()) for name in ("one", "many")]
    for s in summaries:
        s.pop("run_id")
    assert summaries[0] == summaries[1]
    # the number of processes is how a run is made, not how it is scored: the two runs are comparable
    assert one.meta.metric_config == many.meta.metric_config


def test_work_is_split_over_forked_processes_in_order() -> None:
    parent = os.getpid()
    out = split_work(lambda a, b: [(i, os.getpid()) for i in range(a, b)], 10, 3)
    assert [i for i, _ in out] == list(range(10))
    pids = [pid for _, pid in out]
    assert pids[:4] == [parent] * 4  # this process computes the first slice
    assert len(set(pids)) == 3 and parent not in pids[4:]


@pytest.mark.parametrize("how", ["raises", "exits", "short"])
def test_a_failing_child_costs_time_not_results(how: str) -> None:
    parent = os.getpid()

    def work(a: int, b: int) -> list[int]:
        if os.getpid() != parent:
            if how == "raises":
                raise MemoryError
            if how == "exits":
                os._exit(7)
            return [0]  # one result for a slice of several items
        return [i * i for i in range(a, b)]

    assert split_work(work, 9, 3) == [i * i for i in range(9)]


def _children() -> set[int]:
    """Process ids of this process's children (Linux /proc), zombies included."""
    found: set[int] = set()
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        found |= {int(pid) for pid in (task / "children").read_text().split()}
    return found


def test_an_error_in_this_process_stops_and_reaps_the_children() -> None:
    parent = os.getpid()

    def work(a: int, b: int) -> list[int]:
        if os.getpid() == parent:
            raise ValueError("bad sample")
        return list(range(a, b))

    before = _children()
    with pytest.raises(ValueError, match="bad sample"):
        split_work(work, 6, 3)
    assert _children() == before  # no child left behind, running or unreaped


def test_how_many_processes_score() -> None:
    auto = EvalSettings()
    assert scoring_processes(auto, 10) == 1  # a small run: starting a process costs more than it saves
    assert scoring_processes(auto, 10 * MIN_PER_PROCESS) == min(available_cpus(), 10)
    assert scoring_processes(EvalSettings(score_processes=3), 10) == 3
    assert "score_processes" not in EvalSettings(score_processes=3).scoring()


def test_scoring_ahead_gives_the_scores_of_one_process(tmp_path: Path) -> None:
    from goldset.evaluation.scoring import ScoringAhead, score_run

    settings = EvalSettings(score_processes=2)
    pairs = evaluated_pairs()
    samples = {s.pair_id: s for s in _mixed_samples()}
    alone = score_run(pairs, samples, EvalSettings(score_processes=1))
    first = dict(list(samples.items())[:4])
    ahead = ScoringAhead(pairs, settings)
    ahead.start(first)
    assert ahead.started and ahead.taken() == set(first)
    assert score_run(pairs, samples, settings, ahead=ahead) == alone
    # a child that is gone (killed, or failed) costs time, not scores: its pairs are scored here
    gone = ScoringAhead(pairs, settings)
    gone.start(first)
    gone.cancel()
    assert score_run(pairs, samples, settings, ahead=gone) == alone


def test_a_bad_line_after_scoring_started_leaves_no_process_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from goldset.errors import RecordError

    monkeypatch.chdir(tmp_path)
    data = make_dataset(tmp_path / "data", version="v1")
    samples = _mixed_samples()
    lines = [s.model_dump_json() for s in samples] + [samples[0].model_dump_json()]  # the first pair again, last
    (tmp_path / "run.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    before = _children()
    two = EvalSettings(score_processes=2)
    with pytest.raises(RecordError, match="appears twice"):
        evaluate(data, run=tmp_path / "run.jsonl", out_dir=tmp_path / "out", settings=two)
    assert _children() == before and not (tmp_path / "out").exists()


def test_a_child_that_never_answers_is_stopped_and_its_work_done_here() -> None:
    import time

    from goldset.evaluation.processes import Forked

    before = _children()
    stuck = Forked(lambda: [time.sleep(60)])  # a child stuck (on a lock another thread held at the fork, say)
    started = time.monotonic()
    assert stuck.result(timeout=0.5) is None
    assert time.monotonic() - started < 5 and _children() == before  # stopped and reaped, not waited for
    assert Forked(lambda: [1, 2]).result(timeout=30) == [1, 2]

"""The pair checks computed in worker processes (filter.workers): the same verdicts and progress as in one process,
and a check's error raised in the caller."""

from __future__ import annotations

import multiprocessing
import random
from pathlib import Path

import pytest

from goldset.filters import duplicates
from goldset.filters.base import CheckSettings, CheckSpec, make_result, result
from goldset.filters.registry import CHECKS
from goldset.filters.report import CheckCounts, FilterReport
from goldset.filters.run_state import FilterRun
from goldset.filters.settings import FilterSettings
from goldset.filters.stage_pair_checks import run_pair_checks
from goldset.progress import Progress
from goldset.schema import CheckResult, QAPair
from goldset.workspace import Workspace
from tests.helpers.filter_data import _raw_chunks, fixture_chunks, pair

needs_fork = pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="workers need the 'fork' start method"
)

EN_Q = ["What does {s} mean?", "How is {s} used?", "According to the passage, {s}?", "Why {s}", "{s}"]
ZH_Q = ["{s}是什么意思？", "请问{s}", "上文中{s}？"]


def _generated_pairs(n: int) -> list[QAPair]:
    """``n`` pairs over the fixture chunks: questions and answers from their sentences (copies, halves, others'
    text), each kind of question type, so the checks pass and fail in many ways."""
    rng = random.Random(22)
    raw = _raw_chunks()
    ids = sorted(raw)
    out = []
    for i in range(n):
        cid = rng.choice(ids)
        words = raw[cid].split()
        a = rng.randrange(max(1, len(words) - 12))
        span = " ".join(words[a : a + rng.randint(3, 12)])
        tmpl = rng.choice(ZH_Q if cid.startswith("zh") else EN_Q)
        answer = rng.choice([span, raw[cid][:200], "Yes.", " ".join(reversed(words[:15])), raw[rng.choice(ids)]])
        qtype = rng.choice(["factual", "factual", "procedural", "reasoning", "comparison", "unanswerable"])
        out.append(pair(f"qa-{i}", tmpl.format(s=span), answer, qtype=qtype, chunks=(cid,)))
    return out


def _run(
    tmp_path: Path, pairs: list[QAPair], workers: int, names: list[str] | None = None, meanwhile=None, got=None
):
    events: list[Progress] = []
    settings = FilterSettings(workers=workers)
    names = names or [n for n, s in CHECKS.items() if s.kind == "pair"]
    report = FilterReport(per_check={name: CheckCounts() for name in names})
    run = FilterRun(
        ws=Workspace(tmp_path), settings=settings, names=names, chunks=fixture_chunks(), report=report,
        progress=events.append,
    )  # fmt: skip
    out = [p.model_copy() for p in pairs]  # the stage gives the pairs their verdicts in place
    ahead = run_pair_checks(run, out, meanwhile=meanwhile)
    if got is not None:
        got.append(ahead)
    return out, events, run.report


@needs_fork
def test_two_workers_make_the_verdicts_of_one(tmp_path: Path) -> None:
    pairs = _generated_pairs(2500)  # checked in many spans of pairs
    one, events_one, report_one = _run(tmp_path, pairs, workers=1)
    two, events_two, report_two = _run(tmp_path, pairs, workers=2)
    assert report_one.computed == report_two.computed >= 20000
    # every verdict the same, checked_at aside (the second run may be a second later)
    dump = [p.model_dump_json(exclude={"checks": {"__all__": {"checked_at"}}}) for p in one]
    assert dump == [p.model_dump_json(exclude={"checks": {"__all__": {"checked_at"}}}) for p in two]
    assert len({(c.passed, c.reason) for p in two for c in p.checks.values()}) > 20  # varied verdicts
    assert [(e.done, e.total) for e in events_one] == [(e.done, e.total) for e in events_two]
    assert events_two[-1].done == events_two[-1].total == report_two.computed + report_two.reused
    assert len(events_two) > 10  # progress as the spans come back, not once at the end
    # the input hashes the workers computed are the ones a re-run (in one process) finds: nothing to compute
    _, _, again = _run(tmp_path, two, workers=1)
    assert (again.computed, again.reused) == (0, report_two.computed)
    _, _, again = _run(tmp_path, one, workers=2)
    assert (again.computed, again.reused) == (0, report_one.computed)


@pytest.mark.parametrize("workers", [1, pytest.param(2, marks=needs_fork)])
def test_work_of_a_later_stage_is_done_meanwhile_and_returned(tmp_path: Path, workers: int) -> None:
    pairs = _generated_pairs(2500)
    calls: list[int] = []
    got: list[object] = []

    def later() -> str:
        calls.append(len(calls))
        return "links"

    checked, _, report = _run(tmp_path, pairs, workers=workers, meanwhile=later, got=got)
    assert calls == [0] and got == ["links"]
    assert report.computed == 2500 * len([s for s in CHECKS.values() if s.kind == "pair"])
    assert all(p.checks for p in checked)
    # no check to run: the later stage's work is still done
    _run(tmp_path, pairs[:3], workers=workers, names=[duplicates.NAME], meanwhile=later, got=got)
    assert calls == [0, 1] and got[-1] == "links"


class _Boom(Exception):
    pass


def _exploding(p: QAPair, chunks: object, settings: CheckSettings) -> CheckResult:
    if p.id == "qa-1234":
        raise _Boom(f"cannot check {p.id}")
    return result(True, None, "fine")


@needs_fork
def test_an_error_in_a_worker_is_raised_in_the_caller(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = CheckSpec("exploding", CheckSettings, "pair", "raises on one pair", reads=("question",), func=_exploding)
    monkeypatch.setitem(CHECKS, spec.name, spec)
    pairs = [pair(f"qa-{i}", f"Question {i}?", "An answer.") for i in range(3000)]
    with pytest.raises(_Boom, match="cannot check qa-1234"):
        _run(tmp_path, pairs, workers=2, names=["exploding"])
    done, _, report = _run(tmp_path, pairs[:1000], workers=2, names=["exploding"])  # the pool is usable again
    assert report.computed == 1000 and all(p.checks["exploding"].passed for p in done)


def test_make_result_equals_model_construct() -> None:
    r = result(False, 0.123456, "too close", severity="flag", duplicate_of="qa-9")
    values = dict(
        passed=False, score=0.1235, reason="too close", settings_hash="s", input_hash="i", duplicate_of="qa-9",
        checked_at=r.checked_at, severity="flag",
    )  # fmt: skip
    fast = make_result(False, 0.1235, "too close", "flag", "qa-9", r.checked_at, settings_hash="s", input_hash="i")
    slow = CheckResult.model_construct(set(CheckResult.model_fields), **values)  # type: ignore[arg-type]
    assert fast == slow == CheckResult.model_validate(values)
    assert fast.model_dump_json() == slow.model_dump_json()
    assert fast.model_fields_set == slow.model_fields_set
    # and as CheckResult's post-init hook makes a complete one: the shared fields set, the reason interned
    reason = "".join(["too ", "close"])  # a string of its own, not the literal
    read = CheckResult.model_validate({**values, "reason": reason})
    assert read.model_fields_set is fast.model_fields_set and read.reason is fast.reason
    assert list(fast.__dict__) == list(CheckResult.model_fields)
    fast.input_hash = "j"  # still a normal model: assignment works
    assert fast.model_dump()["input_hash"] == "j"

"""Reading run files fast must read them exactly as pydantic does: a context text seen before is decoded once and
reused, and neither the samples nor the errors may change because of it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from goldset.errors import RecordError
from goldset.evaluation.run_files import iter_samples
from goldset.io import line_error
from goldset.schema import RunSample


def _plain(path: Path) -> list[RunSample] | str:
    """The samples pydantic reads line by line, or the first error, worded as goldset words it."""
    out = []
    for lineno, raw in enumerate(path.read_bytes().split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            out.append(RunSample.model_validate_json(raw))
        except ValidationError as exc:
            return str(line_error(path, lineno, raw, exc, "RunSample"))
    return out


def _fast(path: Path) -> list[RunSample] | str:
    try:
        return [sample for _, _, sample in iter_samples(path)]
    except RecordError as exc:
        return str(exc)


def _write(path: Path, lines: list[str | bytes]) -> Path:
    path.write_bytes(b"\n".join(x if isinstance(x, bytes) else x.encode("utf-8") for x in lines) + b"\n")
    return path


TRICKY = [
    'He said "text": "no" and left \\',
    "ends in a backslash \\",
    'a quote at the end "',
    "汉字与 “引号” 和 \\u 反斜杠",
    '{"text": "nested"}',
    "plain words",
]


def _line(pid: str, texts: list[str], **extra: object) -> str:
    return json.dumps({"pair_id": pid, "answer": "a", "contexts": [{"text": t} for t in texts], **extra})


def test_recurring_texts_read_as_pydantic_reads_them(tmp_path: Path) -> None:
    lines = [
        _line("p1", TRICKY),
        _line("p2", list(reversed(TRICKY))),  # every text seen before, other order
        json.dumps({"pair_id": "p3", "contexts": [{"text": t} for t in TRICKY]}, ensure_ascii=False),  # raw UTF-8
        '{"pair_id":"p4","contexts":[{"text":"plain words","doc_id":"d"},{ "text" :  "plain words" }]}',
        # a context with two text keys: pydantic keeps the last; the count of keys no longer places the texts
        '{"pair_id": "p5", "contexts": [{"text": "plain words", "text": "ends in a backslash \\\\"}]}',
    ]
    path = _write(tmp_path / "run.jsonl", lines)
    fast, plain = _fast(path), _plain(path)
    assert isinstance(plain, list) and len(plain) == 5
    assert fast == plain
    assert isinstance(fast, list) and fast[4].contexts[0].text == "ends in a backslash \\"
    # a recurring text is one string, not a copy per context
    assert fast[0].contexts[5].text is fast[1].contexts[0].text is fast[3].contexts[1].text


@pytest.mark.parametrize(
    "bad",
    [
        _line("p2", ["plain words", "other"], text="top-level text key"),  # not a RunSample field
        '{"pair_id": "p2", "contexts": [{"text": "plain words", "score": "high"}]}',
        '{"pair_id": "p2", "contexts": [{"text": "plain words"}, {"text": "   "}]}',  # blank text
        '{"pair_id": "p2", "contexts": [{"text": "plain words"}, {"txt": "plain words"}]}',
        '{"pair_id": "p2", "contexts": [{"text": "plain words"}], "latency": {"text": "plain words"}}',
        '{"pair_id": "p2", "contexts": [{"text": "plain words"}',  # cut off
        '{"pair_id": "p2", "contexts": [{"text": "plain words"}]} trailing',
    ],
)
def test_a_bad_line_gets_the_error_it_gets_without_reuse(tmp_path: Path, bad: str) -> None:
    path = _write(tmp_path / "run.jsonl", [_line("p1", ["plain words", "other"]), bad])
    fast = _fast(path)
    assert isinstance(fast, str) and ":2:" in fast  # on its own line
    plain = _plain(path)
    if isinstance(plain, str):
        assert fast == plain
    else:  # pydantic accepts it: goldset refuses it for another reason (a blank retrieved text)
        assert "contexts[1].text is empty" in fast


def test_a_bad_byte_in_a_recurring_text_is_reported_on_its_line(tmp_path: Path) -> None:
    good = _line("p1", ["plain words"])
    bad = good.replace("p1", "p2").encode().replace(b"plain", b"pl\xffain")
    path = _write(tmp_path / "run.jsonl", [good, _line("p3", ["x"]), bad])
    fast = _fast(path)
    assert isinstance(fast, str) and ":3:" in fast and "not UTF-8" in fast
    assert fast == _plain(path)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from([*TRICKY, "", " ", "x" * 50, 'q"', "\\\\", "\\"]), min_size=0, max_size=5),
        min_size=1,
        max_size=6,
    ),
    st.booleans(),
)
def test_any_run_of_recurring_texts_reads_the_same(tmp_path_factory: pytest.TempPathFactory,
                                                   rows: list[list[str]], ascii_only: bool) -> None:  # fmt: skip
    lines = [
        json.dumps({"pair_id": f"p{i}", "contexts": [{"text": t} for t in row]}, ensure_ascii=ascii_only)
        for i, row in enumerate(rows)
    ]
    path = _write(tmp_path_factory.mktemp("run") / "run.jsonl", lines)
    fast, plain = _fast(path), _plain(path)
    if isinstance(plain, str) or not isinstance(fast, list):
        assert fast == plain or (isinstance(fast, str) and "is empty" in fast)
    else:
        assert fast == plain


def test_paused_gc_hands_its_objects_on_without_undoing_a_freeze() -> None:
    import gc

    from goldset.collector import paused_gc

    frozen_before = gc.get_freeze_count()  # whatever froze objects in this test process before
    gc.unfreeze()
    try:
        _check_paused_gc(paused_gc)
    finally:
        if frozen_before:
            gc.freeze()


def _check_paused_gc(paused_gc: Any) -> None:
    import gc

    assert gc.isenabled() and not gc.get_freeze_count()
    with paused_gc():
        assert not gc.isenabled()
        made = [[i] for i in range(50_000)]
        passes = gc.get_stats()[0]["collections"]
    after = [[i] for i in range(100)]
    assert gc.isenabled() and not gc.get_freeze_count()
    # the young count was reset: the next allocations did not start a pass over the 50,000 lists made meanwhile
    assert gc.get_stats()[0]["collections"] == passes
    assert gc.is_tracked(made[0]) and len(after) == 100
    gc.freeze()  # someone else froze objects: left frozen
    try:
        assert gc.get_freeze_count() >= len(made)
        with paused_gc():
            more = [[i] for i in range(1000)]
        # still frozen: at least the 50,000 lists this test holds (an unfreeze would leave 0). Not `== frozen`:
        # other threads of the test process free frozen objects of their own meanwhile.
        assert gc.get_freeze_count() >= len(made) and gc.isenabled() and len(more) == 1000
    finally:
        gc.unfreeze()

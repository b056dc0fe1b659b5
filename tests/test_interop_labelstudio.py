"""Label Studio task JSON: the very tasks the review flow pushes, imported by a real Label Studio server, exported
by it as JSON and imported back into pairs; quotes found by their UTF-16 offsets; files that are not goldset's
tasks refused."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from goldset.errors import InputError
from goldset.interop import export_pairs, import_pairs
from goldset.interop.fields import NOT_LOCATED
from goldset.interop.labelstudio import _utf16_to_index, label_config
from goldset.review.tasks import task_of
from tests.helpers.interop_data import carried_view, chunks, make_dataset, make_pairs
from tests.helpers.labelstudio import require_server

CARRIED = ("id", "question", "answer", "question_type", "language", "evidence")


def test_the_export_is_the_task_the_review_flow_pushes(tmp_path: Path) -> None:
    ds = make_dataset(tmp_path / "ds")
    out = tmp_path / "tasks.json"
    report = export_pairs("labelstudio", out, dataset=ds, status="all")
    tasks = json.loads(out.read_text(encoding="utf-8"))
    config = label_config(None)
    expected = [task_of(p, chunks(), config) for p in sorted(make_pairs(), key=lambda p: p.id)]
    assert tasks == expected
    assert report.files == [out, tmp_path / "tasks.xml"]
    assert (tmp_path / "tasks.xml").read_text(encoding="utf-8") == config.xml


def test_utf16_offsets_are_read_as_the_web_ui_counts_them() -> None:
    text = "a🐨b🐨🐨c"
    assert [_utf16_to_index(text, n) for n in (0, 1, 3, 4, 6, 8, 9)] == [0, 1, 2, 3, 4, 5, 6]


def test_a_quote_after_characters_outside_the_bmp_comes_back_from_its_section(tmp_path: Path) -> None:
    ds = make_dataset(tmp_path / "ds")
    out = tmp_path / "tasks.json"
    export_pairs("labelstudio", out, dataset=ds, status="all")
    back = {p.id: p for p in import_pairs("labelstudio", out, out=tmp_path / "back", corpus=ds).pairs}
    multi = back["p-en-multihop"]  # its k-setup section follows the 🐨 of k-cache
    assert sorted((e.chunk_id, e.quote) for e in multi.evidence) == [
        ("k-cache", "🐨 marks cached lines."), ("k-setup", "Wombat needs Python 3.12 or later.")]  # fmt: skip


def test_a_chunk_that_left_the_kb_is_named_by_its_section(tmp_path: Path) -> None:
    pair = next(p for p in make_pairs() if p.id == "p-en-factual")
    task = task_of(pair, {}, label_config(None))  # the chunk is gone: its section names it
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([task]), encoding="utf-8")
    report = import_pairs("labelstudio", path, out=tmp_path / "back")  # no chunk known: the ids are kept unchecked
    assert [(e.chunk_id, e.doc_id, e.quote) for e in report.pairs[0].evidence] == [
        ("k-ports", "guide/config.md", "Wombat listens on port 7070 unless WOMBAT_PORT is set.")]  # fmt: skip
    assert report.evidence == {"unchecked": 1}


@pytest.mark.parametrize(
    ("tasks", "message"),
    [
        ({"data": {}}, "expected a list of tasks"),
        ([{"data": {"question": "q?"}}], r"task 1: no pair_id in its data"),
        ([{"id": 3}], r"task 1: not a task with data"),
    ],
)
def test_files_that_are_not_goldset_tasks_are_refused(tmp_path: Path, tasks: Any, message: str) -> None:
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(tasks), encoding="utf-8")
    with pytest.raises(InputError, match=message):
        import_pairs("labelstudio", path, out=tmp_path / "out")


def _snapshot(ls: Any, project: int) -> bytes:
    """A JSON export snapshot with the predictions in full (the quick export lists them by id only)."""
    from label_studio_sdk.types import SerializationOptionRequest, SerializationOptionsRequest

    options = SerializationOptionsRequest(predictions=SerializationOptionRequest(only_id=False))
    export = ls.projects.exports.create(id=project, serialization_options=options)
    for _ in range(120):
        state = ls.projects.exports.get(project, export.id).status
        if state in ("completed", "failed"):
            break
        time.sleep(0.25)
    assert state == "completed", state
    return b"".join(ls.projects.exports.download(project, export.id, export_type="JSON"))


def test_round_trip_through_a_real_label_studio_project(tmp_path: Path) -> None:
    server = require_server()
    ls = server.client()
    ds = make_dataset(tmp_path / "ds")
    out = tmp_path / "tasks.json"
    export_pairs("labelstudio", out, dataset=ds, status="all")
    project = ls.projects.create(title=f"interop-{tmp_path.name}"[:50],
                                 label_config=(tmp_path / "tasks.xml").read_text(encoding="utf-8"))  # fmt: skip
    try:
        ls.projects.import_tasks(id=project.id, request=json.loads(out.read_text(encoding="utf-8")))
        first = next(iter(ls.tasks.list(project=project.id, fields="all")))
        ls.annotations.create(id=first.id, result=[{"from_name": "verdict", "to_name": "question", "type": "choices",
                                                    "value": {"choices": ["accept"]}}])  # fmt: skip
        snapshot = _snapshot(ls, project.id)
        quick = b"".join(ls.projects.exports.download_sync(project.id, export_type="JSON", download_all_tasks=True))
    finally:
        ls.projects.delete(id=project.id)
    exported = tmp_path / "export.json"
    exported.write_bytes(snapshot)
    report = import_pairs("labelstudio", exported, out=tmp_path / "back", corpus=ds)
    back = {p.id: p for p in report.pairs}
    for pair in make_pairs():
        assert carried_view(back[pair.id], CARRIED, ordered=False) == carried_view(pair, CARRIED, ordered=False)
    assert any("1 task(s) carry annotations: not applied" in n for n in report.notes)
    # the quick export has the pairs but not their highlights: imported without evidence, marked, and said why
    (tmp_path / "quick.json").write_bytes(quick)
    report = import_pairs("labelstudio", tmp_path / "quick.json", out=tmp_path / "quick", corpus=ds)
    answerable = [p for p in report.pairs if p.question_type.value != "unanswerable"]
    assert len(report.pairs) == len(make_pairs()) and all(not p.evidence and NOT_LOCATED in p.tags for p in answerable)
    assert any("only_id=false" in n for n in report.notes)

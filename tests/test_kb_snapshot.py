"""Ingest into a snapshot, re-ingest, diff two versions of the FastAPI docs, and failures that keep the old one."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from goldset.errors import ConfigError, InputError, WorkspaceError
from goldset.kb import (
    CHUNKS_FILE,
    SNAPSHOT_FILE,
    KBSettings,
    NothingToIngest,
    diff_snapshots,
    ingest,
    load_chunks,
    load_snapshot,
    snapshot_id,
)
from goldset.scaffold import init_workspace
from goldset.workspace import Workspace

FIXTURES = Path(__file__).parent / "fixtures" / "kb"
OLD = FIXTURES / "en-0.120.0"
NEW = FIXTURES / "en"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    init_workspace(tmp_path / "ws", dvc=False)
    return Workspace((tmp_path / "ws").resolve())


def _files(folder: Path) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in (CHUNKS_FILE, SNAPSHOT_FILE)}


def _docs(tmp_path: Path, source: Path, names: list[str]) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir(exist_ok=True)
    for name in names:
        shutil.copy2(source / name, docs / name)
    return docs


def test_ingest_writes_a_snapshot_the_workspace_reads_back(ws: Workspace) -> None:
    result = ingest(FIXTURES / "zh", ws)
    assert (ws.kb_dir / CHUNKS_FILE).is_file() and (ws.kb_dir / SNAPSHOT_FILE).is_file()
    snap = load_snapshot(ws)
    chunks = load_chunks(ws)
    assert snap == result.snapshot
    assert chunks == result.chunks
    assert [c.id for c in chunks] == sorted(c.id for c in chunks)
    assert snap.id == snapshot_id(chunks) and snap.n_chunks == len(chunks)
    assert {d.doc_id for d in snap.documents} == {"body.md", "metadata.md", "query-params.md"}
    assert all(d.language == "zh" and d.encoding == "utf-8" for d in snap.documents)
    assert sum(d.n_chunks for d in snap.documents) == len(chunks)
    assert snap.chunking["target_tokens"] == 350 and snap.chunking["max_tokens"] == 700
    assert result.diff.counts()["chunks"]["added"] == len(chunks)
    assert result.previous_snapshot_id is None


def test_settings_come_from_goldset_yaml_and_the_environment(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    ws.config_path.write_text("kb:\n  target_tokens: 80\n  max_tokens: 160\n  min_tokens: 10\n", encoding="utf-8")
    small = ingest(NEW, ws)
    assert small.snapshot.chunking["target_tokens"] == 80
    monkeypatch.setenv("GOLDSET_KB__MAX_TOKENS", "400")
    monkeypatch.setenv("GOLDSET_KB__TARGET_TOKENS", "300")
    large = ingest(NEW, ws)
    assert large.snapshot.chunking["max_tokens"] == 400
    assert large.snapshot.n_chunks < small.snapshot.n_chunks
    monkeypatch.setenv("GOLDSET_KB__MAX_TOKENS", "50")
    with pytest.raises(ConfigError, match=r"kb\.max_tokens"):
        ingest(NEW, ws)


def test_reingesting_an_unchanged_kb_is_byte_for_byte_identical(ws: Workspace) -> None:
    first = ingest(FIXTURES / "en", ws)
    before = _files(ws.kb_dir)
    second = ingest(FIXTURES / "en", ws)
    assert _files(ws.kb_dir) == before
    assert not second.changed and second.previous_snapshot_id == first.snapshot.id
    counts = second.diff.counts()
    assert counts["chunks"]["unchanged"] == len(first.chunks)
    assert counts["chunks"]["added"] == counts["chunks"]["changed"] == counts["chunks"]["removed"] == 0
    assert not second.diff.has_changes


def test_diff_between_two_releases_of_the_docs(tmp_path: Path) -> None:
    names = ["cookie-params.md", "query-params.md", "debugging.md"]
    docs = _docs(tmp_path, OLD, names)
    out = tmp_path / "out"
    old = ingest(docs, settings=KBSettings(), out_dir=out)
    _docs(tmp_path, NEW, names)  # the 0.141.1 versions replace them
    shutil.copy2(NEW / "body.md", docs / "body.md")  # a new page
    new = ingest(docs, settings=KBSettings(), out_dir=out)
    diff = new.diff
    # cookie-params only changed "/// info" to "/// note": markup, not content
    assert diff.documents_unchanged == ["cookie-params.md"]
    assert diff.documents_changed == ["debugging.md", "query-params.md"]
    assert diff.documents_added == ["body.md"] and diff.documents_removed == []
    assert diff.chunks_changed and not diff.chunks_removed
    old_ids = {c.id for c in old.chunks}
    for cid in diff.chunks_changed + diff.chunks_unchanged:
        assert cid in old_ids
    body_ids = {c.id for c in new.chunks if c.doc_id == "body.md"}
    assert set(diff.chunks_added) == body_ids
    # query-params' edits ("processes that apply to", a link attribute list) touch few sections
    qp = [c for c in new.chunks if c.doc_id == "query-params.md"]
    changed_qp = [c for c in qp if c.id in diff.chunks_changed]
    assert 0 < len(changed_qp) < len(qp)
    assert new.snapshot.id != old.snapshot.id and new.previous_snapshot_id == old.snapshot.id

    (docs / "debugging.md").unlink()  # a deleted page
    gone = ingest(docs, settings=KBSettings(), out_dir=out)
    assert gone.diff.documents_removed == ["debugging.md"]
    assert set(gone.diff.chunks_removed) == {c.id for c in new.chunks if c.doc_id == "debugging.md"}


def test_diff_snapshots_on_hand_made_chunk_lists() -> None:
    from goldset.kb import chunk_document

    a = chunk_document("# A { #a }\n\nFirst text.\n", "a.md")
    b1 = chunk_document("# B { #b }\n\nSecond text.\n", "b.md")
    b2 = chunk_document("# B { #b }\n\nSecond text, edited.\n", "b.md")
    c = chunk_document("# C { #c }\n\nThird.\n", "c.md")
    diff = diff_snapshots(a + b1, b2 + c)
    assert diff.documents_removed == ["a.md"] and diff.documents_added == ["c.md"]
    assert diff.documents_changed == ["b.md"] and diff.documents_unchanged == []
    assert diff.chunks_changed == [b2[0].id] and diff.chunks_removed == [a[0].id] and diff.chunks_added == [c[0].id]
    assert diff.to_dict()["chunks_changed"] == [b2[0].id]
    assert diff_snapshots(a, a).counts()["documents"] == {"added": 0, "changed": 0, "removed": 0, "unchanged": 1}


def test_a_failed_ingest_keeps_the_previous_snapshot(ws: Workspace, tmp_path: Path) -> None:
    ingest(FIXTURES / "zh", ws)
    before = _files(ws.kb_dir)
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "image.png").write_bytes(b"\x89PNG")
    with pytest.raises(NothingToIngest, match="no supported documents") as info:
        ingest(empty, ws)
    assert any("image.png" not in w and ".png ×1" in w for w in info.value.warnings)
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "a.md").write_bytes(b"")
    (bad / "b.md").write_bytes(b"\x00\x01\x02")
    with pytest.raises(NothingToIngest, match="none of the 2 document") as info:
        ingest(bad, ws)
    assert len(info.value.warnings) == 2 and "a.md: empty file" in info.value.warnings[0]
    with pytest.raises(InputError, match="folder not found"):
        ingest(tmp_path / "missing", ws)
    with pytest.raises(InputError, match="not a folder"):
        ingest(bad / "a.md", ws)
    assert _files(ws.kb_dir) == before
    assert load_snapshot(ws) is not None and load_chunks(ws)


def test_a_snapshot_that_cannot_be_written_is_an_error_and_detected_later(tmp_path: Path) -> None:
    out = tmp_path / "out"
    ingest(FIXTURES / "zh", settings=KBSettings(), out_dir=out)
    (out / SNAPSHOT_FILE).unlink()
    old = ingest(FIXTURES / "zh", settings=KBSettings(target_tokens=100, max_tokens=200), out_dir=out)
    # a real failure: the snapshot path is taken by a folder, so its rename fails after chunks.jsonl was replaced
    (out / SNAPSHOT_FILE).unlink()
    (out / SNAPSHOT_FILE).mkdir()
    with pytest.raises(InputError, match="cannot write"):
        ingest(FIXTURES / "zh", settings=KBSettings(), out_dir=out)
    (out / SNAPSHOT_FILE).rmdir()
    from goldset.io import write_json

    write_json(out / SNAPSHOT_FILE, old.snapshot)  # the old snapshot beside the new chunks
    with pytest.raises(InputError, match="does not match"):
        load_chunks(out_dir=out)
    assert load_chunks(out_dir=out, check=False)


def test_out_dir_works_without_a_workspace_and_one_of_them_is_needed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = ingest(FIXTURES / "en", settings=KBSettings(), out_dir=tmp_path / "kb")
    assert load_chunks(out_dir=tmp_path / "kb") == result.chunks
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GOLDSET_WORKSPACE", raising=False)
    with pytest.raises(WorkspaceError, match="goldset init"):
        ingest(FIXTURES / "en", settings=KBSettings())


def test_the_workspace_is_found_from_the_current_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "goldset.yaml").write_text("kb:\n  target_tokens: 120\n  max_tokens: 240\n", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    monkeypatch.delenv("GOLDSET_WORKSPACE", raising=False)
    result = ingest(FIXTURES / "en")
    assert (tmp_path / ".goldset" / "kb" / "chunks.jsonl").is_file()
    assert max(c.n_tokens for c in result.chunks if "oversized" not in c.flags) <= 240
    assert load_chunks(tmp_path / "sub") == result.chunks

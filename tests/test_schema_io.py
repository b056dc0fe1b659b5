"""Records round-trip through JSONL sorted by id; malformed input is reported with file and line."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from goldset.data import read_dataset, write_dataset
from goldset.errors import InputError, RecordError
from goldset.io import atomic_write_text, dump_record, read_jsonl, write_jsonl
from goldset.schema import Chunk, Evidence, PairStatus, QAPair, QuestionType, pair_id
from goldset.text import normalize


def make_chunk(cid: str, text: str, doc: str = "a.md") -> Chunk:
    return Chunk(
        id=cid,
        doc_id=doc,
        heading_path=["intro"],
        text=text,
        content_hash="h" + cid,
        raw_hash="r" + cid,
        n_tokens=len(text.split()),
        char_start=0,
        char_end=len(text),
    )


def make_pair(chunk: Chunk, question: str, status: PairStatus = PairStatus.candidate) -> QAPair:
    return QAPair(
        id=pair_id([chunk.id], "factual", question),
        question=question,
        answer="An answer.",
        question_type=QuestionType.factual,
        evidence=[Evidence(chunk_id=chunk.id, doc_id=chunk.doc_id, quote=chunk.text[:10])],
        status=status,
    )


def test_write_jsonl_sorts_by_id_and_round_trips(tmp_path: Path) -> None:
    chunks = [make_chunk(c, f"text of {c}") for c in ("c-3", "c-1", "c-2")]
    path = tmp_path / "chunks.jsonl"
    write_jsonl(path, chunks)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["id"] for line in lines] == ["c-1", "c-2", "c-3"]
    assert read_jsonl(path, Chunk) == sorted(chunks, key=lambda c: c.id)
    before = path.read_bytes()
    write_jsonl(path, read_jsonl(path, Chunk))
    assert path.read_bytes() == before, "rewriting unchanged records must be byte-identical"


def test_chinese_text_is_stored_as_utf8_not_escaped(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    write_jsonl(path, [make_chunk("c-1", "路径参数和数据校验")])
    assert "路径参数" in path.read_text(encoding="utf-8")


def test_malformed_json_line_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "chunks.jsonl"
    write_jsonl(path, [make_chunk("c-1", "one"), make_chunk("c-2", "two")])
    path.write_text(path.read_text(encoding="utf-8") + "{not json\n", encoding="utf-8")
    with pytest.raises(RecordError) as err:
        read_jsonl(path, Chunk)
    assert err.value.line == 3
    assert f"{path}:3" in str(err.value)


def test_invalid_record_reports_field(tmp_path: Path) -> None:
    chunk = make_chunk("c-1", "some text here")
    row = json.loads(make_pair(chunk, "What is it?").model_dump_json())
    row["answer"] = "   "
    path = tmp_path / "pairs.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(RecordError, match=r"pairs.jsonl:1: invalid QAPair: answer: .*must not be empty"):
        read_jsonl(path, QAPair)


def test_unknown_field_is_an_error_not_silently_dropped(tmp_path: Path) -> None:
    row = json.loads(make_chunk("c-1", "x").model_dump_json())
    row["txet"] = "typo"
    path = tmp_path / "chunks.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(RecordError, match="txet"):
        read_jsonl(path, Chunk)


def test_atomic_write_leaves_old_file_when_serialisation_fails(tmp_path: Path) -> None:
    path = tmp_path / "pairs.jsonl"
    atomic_write_text(path, "old\n")

    class Boom:
        id = "x"

        def model_dump_json(self) -> str:
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        write_jsonl(path, [Boom()])  # type: ignore[list-item]
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["pairs.jsonl"], "no temp file may be left behind"


def test_a_large_file_written_in_two_processes_is_the_same_bytes(tmp_path: Path) -> None:
    """From 20,000 records on a forked child serialises the second half: the file must not show it."""
    chunks = [make_chunk(f"c-{i:05d}", f"文本 {i} text") for i in range(20_001)]
    chunks.reverse()
    path = tmp_path / "chunks.jsonl"
    assert write_jsonl(path, chunks) == 20_001
    expected = "".join(dump_record(c) + "\n" for c in sorted(chunks, key=lambda c: c.id))
    assert path.read_text(encoding="utf-8") == expected
    assert [p.name for p in tmp_path.iterdir()] == ["chunks.jsonl"], "no part file may be left behind"


class _FailsInAChild:
    """A record that cannot be serialised outside the process that made it (as a forked child's failure)."""

    def __init__(self, rid: str) -> None:
        self.id, self.parent = rid, os.getpid()

    def model_dump_json(self) -> str:
        if os.getpid() != self.parent:
            raise RuntimeError("not here")
        return json.dumps({"id": self.id})


def test_when_the_child_fails_its_half_is_written_here(tmp_path: Path) -> None:
    rows = [_FailsInAChild(f"r-{i:05d}") for i in range(20_000)]
    path = tmp_path / "rows.jsonl"
    write_jsonl(path, rows)  # type: ignore[arg-type]
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["id"] for line in lines] == [r.id for r in rows]
    assert [p.name for p in tmp_path.iterdir()] == ["rows.jsonl"]


def test_pair_id_is_stable_and_ignores_case_and_spacing() -> None:
    a = pair_id(["c-2", "c-1"], "factual", "What  is FastAPI?")
    b = pair_id(["c-1", "c-2"], "factual", "what is fastapi?")
    assert a == b and a.startswith("qa-")
    assert a != pair_id(["c-1", "c-2"], "reasoning", "what is fastapi?")
    assert normalize("ＦａｓｔＡＰＩ") == "fastapi"


def test_dataset_folder_keeps_only_cited_chunks_and_hashes_files(tmp_path: Path) -> None:
    c1, c2 = make_chunk("c-1", "first chunk text"), make_chunk("c-2", "second chunk text")
    pairs = [make_pair(c1, "Q one?", PairStatus.passed), make_pair(c1, "Q two?", PairStatus.rejected)]
    manifest = write_dataset(tmp_path / "data", pairs, [c1, c2], kb_snapshot_id="kb-1")
    ds = read_dataset(tmp_path / "data")
    assert set(ds.chunks) == {"c-1"}
    assert manifest.n_pairs == 2 and manifest.counts_by_status == {"passed": 1, "rejected": 1}
    assert manifest.kb_snapshot_id == "kb-1"
    assert set(manifest.files) == {"pairs.jsonl", "chunks.jsonl"}
    assert ds.manifest == manifest


def test_read_dataset_on_a_folder_without_pairs_says_what_is_missing(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"no pairs\.jsonl"):
        read_dataset(tmp_path)


def test_atomic_write_gives_normal_permissions_and_keeps_existing_ones(tmp_path: Path) -> None:
    new = tmp_path / "new.txt"
    atomic_write_text(new, "x")
    assert new.stat().st_mode & 0o644 == 0o644, "a new data file must be readable by others, not 0600"
    new.chmod(0o640)
    atomic_write_text(new, "y")
    assert new.stat().st_mode & 0o777 == 0o640


def test_a_file_that_is_not_utf8_is_a_record_error_on_its_own_line(tmp_path: Path) -> None:
    path = tmp_path / "chunks.jsonl"
    write_jsonl(path, [make_chunk("c-1", "one"), make_chunk("c-2", "two"), make_chunk("c-3", "three")])
    lines = path.read_bytes().splitlines(keepends=True)
    lines[2] = lines[2].replace(b"three", "路径".encode("gb18030"))
    path.write_bytes(b"".join(lines))
    with pytest.raises(RecordError, match=r"chunks.jsonl:3: not UTF-8 text.*re-save the file as UTF-8"):
        read_jsonl(path, Chunk)


def test_a_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "chunks.jsonl"
    write_jsonl(path, [make_chunk("c-1", "one")])
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert [c.id for c in read_jsonl(path, Chunk)] == ["c-1"]


def test_a_duplicate_id_is_refused_with_both_lines(tmp_path: Path) -> None:
    path = tmp_path / "chunks.jsonl"
    write_jsonl(path, [make_chunk("c-1", "one"), make_chunk("c-2", "two")])
    first = path.read_text(encoding="utf-8").splitlines()[0]
    path.write_text(path.read_text(encoding="utf-8") + first.replace('"one"', '"uno"') + "\n", encoding="utf-8")
    with pytest.raises(RecordError, match=r"chunks.jsonl:3: duplicate id 'c-1' \(also on line 1\)"):
        read_jsonl(path, Chunk)


def test_pairs_read_from_a_file_share_one_fields_set_and_serialise_the_same(tmp_path: Path) -> None:
    from goldset.schema.base import AllFields

    chunk = make_chunk("c1", "Some chunk text that is long enough.")
    built = [make_pair(chunk, "First question?"), make_pair(chunk, "Second question?")]
    # Built in code with some fields given: each keeps its own fields set (exclude_unset still means something).
    assert not isinstance(built[0].model_fields_set, AllFields)
    assert built[0].model_fields_set is not built[1].model_fields_set
    write_jsonl(tmp_path / "p.jsonl", built)
    a, b = read_jsonl(tmp_path / "p.jsonl", QAPair)
    # A file writes every field: every record read shares its model's one set, its parts too.
    assert a.model_fields_set is b.model_fields_set and a.model_fields_set == set(QAPair.model_fields)
    assert a.evidence[0].model_fields_set is b.evidence[0].model_fields_set
    assert a.provenance.model_fields_set is b.provenance.model_fields_set
    assert a.review.model_fields_set is b.review.model_fields_set
    # Copies keep sharing it; setting a field (a copy's update, an assignment) changes nothing in it.
    c = a.model_copy(update={"status": PairStatus.passed})
    c.tags = ["x"]
    assert c.model_fields_set is a.model_fields_set and a.status == PairStatus.candidate and a.tags == []
    # The records serialise exactly as they were written (with or without exclude_unset).
    written = sorted(built, key=lambda p: p.id)
    assert [a.model_dump_json(), b.model_dump_json()] == [p.model_dump_json() for p in written]
    assert a.model_dump(exclude_unset=True) == a.model_dump()
    # A change that would reach every record sharing the set is refused.
    with pytest.raises(TypeError):
        a.model_fields_set.discard("tags")
    with pytest.raises(TypeError):
        a.model_fields_set.add("not_a_field")
    assert a.model_fields_set == set(QAPair.model_fields)
    # Deep copies and pickles are whole records of their own.
    import copy
    import pickle

    for other in (copy.deepcopy(a), pickle.loads(pickle.dumps(a))):
        assert other == a and other.model_dump_json() == a.model_dump_json()
        assert other.model_fields_set == set(QAPair.model_fields)


def test_verdicts_share_their_fields_set_and_reasons_however_built(tmp_path: Path) -> None:
    from goldset.filters.base import result
    from goldset.schema import CheckResult
    from goldset.schema.base import AllFields

    words = ["too", "short"]
    a, b = result(False, 0.5, " ".join(words)), result(False, 0.25, " ".join(words))  # two equal strings
    assert a.reason == "too short" and a.reason is b.reason  # interned: one string for every verdict saying it
    assert isinstance(a.model_fields_set, AllFields) and a.model_fields_set is b.model_fields_set
    c = a.model_copy(update={"input_hash": "h"})
    assert c.model_fields_set is a.model_fields_set and a.input_hash == "" and c.input_hash == "h"
    # Validated from JSON (a verdict read back) and built with only some fields: same value, own set when partial.
    read = CheckResult.model_validate_json(a.model_dump_json())
    assert read == a and read.reason is a.reason and read.model_fields_set is a.model_fields_set
    partial = CheckResult(passed=True, reason="ok")
    assert partial.model_fields_set == {"passed", "reason"} and not isinstance(partial.model_fields_set, AllFields)

"""The hashes a verdict is reused by: the same whether computed for one pair or for many at once."""

from __future__ import annotations

from goldset.filters.incremental import FIELDS, field_hashes, fields_read, input_hash, input_hasher
from goldset.filters.registry import CHECKS
from goldset.hashing import hash_obj, short_hash
from tests.helpers.filter_data import fixture_chunks, pair


def _pairs():
    return [
        pair("qa-1", "What does a path parameter declare?", "Its type.", chunks=("en-body-1",)),
        pair("qa-2", "路径参数是什么？", "「路径」里的 \"变量\"。", chunks=("zh-body-1",), quote='"x" 与 \\ 反斜杠'),
        pair("qa-3", "Two chunks?", "Both.", chunks=("en-body-1", "zh-body-1")),
        pair("qa-4", "A chunk the KB lacks?", "None.", chunks=("gone-1",)),
    ]


def test_field_hashes_with_a_memo_are_the_ones_without() -> None:
    chunks = fixture_chunks()
    memo: dict[tuple[str, ...], tuple[str, str]] = {}
    for p in _pairs() * 2:  # the second time from the memo
        assert field_hashes(p, chunks, FIELDS, memo) == field_hashes(p, chunks)
    assert len(memo) == 4


def test_the_evidence_hash_is_that_of_the_records_as_dumped() -> None:
    for p in _pairs():
        assert field_hashes(p, fixture_chunks())["evidence"] == hash_obj([e.model_dump() for e in p.evidence])


def test_an_input_hasher_hashes_the_fields_a_check_reads_and_its_extra() -> None:
    chunks = fixture_chunks()
    for spec in (s for s in CHECKS.values() if s.kind == "pair"):
        for p in _pairs():
            fields = field_hashes(p, chunks)
            names = [*spec.reads, *(["chunks"] if spec.uses_chunks else [])]
            assert set(names) == fields_read(spec)
            want = short_hash("\x1f".join([f"{n}={fields[n]}" for n in names] + ["a=1", "kb=k"]))
            assert input_hasher(spec, {"kb": "k", "a": 1})(fields) == want
            assert input_hash(spec, p, chunks, {"kb": "k", "a": 1}) == want

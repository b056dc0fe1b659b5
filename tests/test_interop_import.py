"""How an import turns rows into pairs: where a context is found (named chunk, verbatim, folded, ambiguous,
nowhere, nothing known), and bad files refused with one line naming the file and row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goldset.errors import InputError
from goldset.interop import import_pairs
from goldset.interop.base import Context, Row
from goldset.interop.fields import NOT_LOCATED, Locator, build_pairs
from tests.helpers.interop_data import chunks, make_chunk


def test_where_a_context_is_found() -> None:
    known = chunks()
    locate = Locator(known).locate
    ev, how = locate(Context("A port below 1024 needs root rights.", chunk_id="k-ports"))
    assert how == "named" and ev is not None and ev.doc_id == "guide/config.md"
    ev, how = locate(Context("A port below 1024 needs root rights.", chunk_id="k-elsewhere"))
    assert how == "found" and ev is not None and ev.chunk_id == "k-ports", "a wrong chunk id is corrected"
    ev, how = locate(Context("A  port below\n1024 needs root rights．"))
    assert how == "folded" and ev is not None and ev.quote == "A  port below\n1024 needs root rights．"
    ev, how = locate(Context("…below 1024 needs root rights...", doc_id="guide/config.md"))
    assert how == "folded" and ev is not None and ev.chunk_id == "k-ports", "an ellipsis at either end is ignored"
    ev, how = locate(Context("wombat purge"))
    assert how == "ambiguous" and ev is not None and ev.chunk_id == "k-cache", "several chunks hold it"
    ev, how = locate(Context("wombat purge", doc_id="zh/cache.md"))
    assert how == "found" and ev is not None and ev.chunk_id == "z-cache", "the file's document decides"
    assert locate(Context("Nothing like this is written anywhere.")) == (None, "not-found")
    nothing = Locator({}).locate
    assert nothing(Context("x", chunk_id="c", doc_id="d.md"))[1] == "unchecked"
    assert nothing(Context("x")) == (None, "no-corpus")


def test_a_context_found_nowhere_is_left_out_and_the_pair_marked() -> None:
    contexts = [Context("Wombat listens on port 7070 unless WOMBAT_PORT is set."), Context("It is made up.")]
    rows = [Row("f: row 2", "Which port does wombat use?", "7070.", "factual", None, None, contexts)]
    built = build_pairs(rows, chunks())
    (pair,) = built.pairs
    assert [e.chunk_id for e in pair.evidence] == ["k-ports"] and NOT_LOCATED in pair.tags
    assert built.unlocated == ["f: row 2: context 2 found in no known chunk ('It is made up.'): left out"]
    assert pair.language == "en" and pair.provenance.chunk_hashes == {"k-ports": make_chunk("k-ports").content_hash}
    alone = build_pairs(rows, {})
    assert alone.pairs[0].evidence == [] and "no chunk is known to look it up in" in alone.unlocated[0]


def _file(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("fmt", "name", "text", "message"),
    [
        ("ragas", "r.jsonl", '{"user_input": "q?", "reference": "a", "question_type": "factual"}\n{oops\n',
         r"r\.jsonl:2: not valid JSON"),
        ("ragas", "r.jsonl", '["not", "an", "object"]\n', r"r\.jsonl:1: expected a JSON object"),
        ("ragas", "r.jsonl", '{"user_input": [{"content": "hi", "type": "human"}], "reference": "a"}\n',
         r"r\.jsonl:1: a multi-turn sample"),
        ("ragas", "r.jsonl", '{"user_input": "q?", "reference": "a", "question_type": "factual", '
                             '"reference_contexts": ["x", "y"], "reference_context_ids": ["c"]}\n',
         r"r\.jsonl:1: reference_context_ids has 1 items for 2 contexts"),
        ("ragas", "r.jsonl", '{"user_input": "q?", "reference": 7, "question_type": "factual"}\n',
         r"r\.jsonl:1: invalid QAPair: answer"),
        ("deepeval", "d.json", '[{"input": "q?", "expected_output": "a"}, 3]',
         r"d\.json: row 2: expected a JSON object"),
        ("deepeval", "d.json", '[{"input": "q?", "expected_output": "a", "context": ["x"], '
                               '"additional_metadata": {"question_type": "factual", "evidence": []}}]',
         r"d\.json: row 1: additional_metadata\.evidence must list one \{chunk_id, doc_id\} object per context"),
        ("deepeval", "d.json", '[{"scenario": "a user", "turns": []}]', r"d\.json: row 1: a conversational golden"),
        ("deepeval", "d.json", '{"input": "q?"', r"d\.json:1: not valid JSON"),
        ("hf", "nothing-here", "", r"nothing-here: no data/test\.jsonl"),
    ],
)  # fmt: skip
def test_bad_files_are_refused_naming_the_file_and_row(
    tmp_path: Path, fmt: str, name: str, text: str, message: str
) -> None:
    path = tmp_path / name
    if fmt == "hf":
        path.mkdir()
    else:
        path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=message) as info:
        import_pairs(fmt, path, out=tmp_path / "out")
    assert "\n" not in str(info.value) and not (tmp_path / "out").exists()


def test_a_file_that_is_not_there_is_named(tmp_path: Path) -> None:
    for fmt in ("ragas", "deepeval", "csv", "labelstudio"):
        with pytest.raises(InputError, match=r"missing\.x: file not found"):
            import_pairs(fmt, tmp_path / "missing.x", out=tmp_path / "out")


def test_outputs_of_a_system_in_the_file_are_not_imported_and_said(tmp_path: Path) -> None:
    path = _file(tmp_path, "run.jsonl", json.dumps({
        "user_input": "Which port?", "reference": "7070.", "response": "8080", "retrieved_contexts": ["x"],
        "question_type": "factual", "language": "en"}) + "\n")  # fmt: skip
    report = import_pairs("ragas", path, out=tmp_path / "out")
    assert report.pairs[0].answer == "7070." and any("a run, not part of a pair" in n for n in report.notes)

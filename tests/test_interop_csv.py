"""CSV for spreadsheets: formula cells escaped and the escaping undone exactly, UTF-8 with a BOM, line breaks kept
inside quoted cells, a hand-written sheet imported, bad input refused naming the file and row."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from goldset.errors import InputError
from goldset.interop import export_pairs, import_pairs
from goldset.interop.csv import escape_cell, unescape_cell
from goldset.interop.fields import NOT_LOCATED, TYPE_GIVEN
from tests.helpers.interop_data import chunks, make_dataset, make_pairs

HOSTILE = ["=1+1", "+1", "-1", "@SUM(A1:A2)", " =x", "\t=HYPERLINK(\"http://x\")", "\r=x", "\n-2", "  \t @me",
           "'=already", "''+twice", "=", "-"]  # fmt: skip
HARMLESS = ["plain", "a=b", "'quoted text", "''", "", "1-2", "中文 =", "x\n=y", "'", "＝fullwidth"]
#: What a spreadsheet runs as a formula: =, +, - or @ first, after any leading whitespace.
RUNS_AS_FORMULA = re.compile(r"\s*[=+\-@]")


@pytest.mark.parametrize("cell", HOSTILE)
def test_a_formula_cell_is_escaped_and_unescaped_exactly(cell: str) -> None:
    escaped = escape_cell(cell)
    assert escaped == "'" + cell and not RUNS_AS_FORMULA.match(escaped)
    assert unescape_cell(escaped) == cell


@pytest.mark.parametrize("cell", HARMLESS)
def test_other_cells_are_left_as_they_are(cell: str) -> None:
    assert escape_cell(cell) == cell and unescape_cell(cell) == cell


@given(st.text(alphabet=st.sampled_from(list("'=+-@ \t\r\nab中")), max_size=8) | st.text(max_size=12))
def test_escaping_is_safe_and_undone_exactly_for_any_text(cell: str) -> None:
    escaped = escape_cell(cell)
    assert not RUNS_AS_FORMULA.match(escaped)
    assert unescape_cell(escaped) == cell


def _cells(path: Path) -> list[list[str]]:
    raw = path.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf"), "UTF-8 with a byte-order mark, for spreadsheet apps"
    return list(csv.reader(io.StringIO(raw[3:].decode("utf-8"), newline="")))


def test_the_file_is_safe_in_a_spreadsheet_and_keeps_line_breaks(tmp_path: Path) -> None:
    ds = make_dataset(tmp_path / "ds")
    out = tmp_path / "pairs.csv"
    export_pairs("csv", out, dataset=ds, status="all")
    rows = _cells(out)
    assert rows[0] == ["id", "question", "answer", "question_type", "language", "status", "tags", "evidence"]
    assert len(rows) == 1 + len(make_pairs())
    for row in rows[1:]:
        for cell in row:
            assert not RUNS_AS_FORMULA.match(cell), cell
    by_id = {r[0]: r for r in rows[1:]}
    assert by_id["p-en-reasoning"][1].startswith("'=Why")
    assert by_id["p-en-unanswerable"][2] == "'\t=The documents do not say."
    assert by_id["p-en-comparison"][6] == '["-flagged", "@team"]', "JSON cells start with [ and need no escape"
    assert "\n" in by_id["p-en-reasoning"][2]
    assert by_id["p-zh-comparison"][2] == "缓存保留十五分钟；\n每个客户端每秒最多十个请求。"
    assert b"\r\n" in out.read_bytes(), "rows end with CRLF (RFC 4180)"
    back = {p.id: p for p in import_pairs("csv", out, out=tmp_path / "back", corpus=ds).pairs}
    for pair in make_pairs():
        assert (back[pair.id].question, back[pair.id].answer, back[pair.id].tags) == (pair.question, pair.answer,
                                                                                      pair.tags)  # fmt: skip


def _write(path: Path, text: str, *, bom: bool = True) -> Path:
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))
    return path


def test_a_hand_written_sheet_is_imported(tmp_path: Path) -> None:
    from goldset.io import write_jsonl

    corpus = tmp_path / "chunks.jsonl"
    write_jsonl(corpus, chunks().values())
    sheet = _write(tmp_path / "mine.csv", (
        "Question,Answer,Question_Type,Evidence,Tags,Reviewer\r\n"
        '"\'=How do I empty the cache?","Run ""wombat purge"".",procedural,run wombat purge to drop them at once,'
        '"mine, sheet",ann\r\n'
        ",,,,,\r\n"
        '"Which port, by default?","7070",,"Wombat listens on port 7070 unless WOMBAT_PORT is set.\n'
        'A quote that is nowhere",,bob\r\n'
        '"袋熊需要哪个版本的 Python？","3.12 或更高。",factual,袋熊需要 Python 3.12 或更高版本。,,\r\n'
    ), bom=False)  # fmt: skip
    with pytest.raises(InputError, match=r"mine\.csv: row 4: no question type .*give question_type \("):
        import_pairs("csv", sheet, out=tmp_path / "a", corpus=corpus)
    report = import_pairs("csv", sheet, out=tmp_path / "b", corpus=corpus, question_type="factual")
    got = {p.question: p for p in report.pairs}
    purge = got["=How do I empty the cache?"]
    assert purge.answer == 'Run "wombat purge".' and purge.tags == ["mine", "sheet"]
    assert [(e.chunk_id, e.doc_id) for e in purge.evidence] == [("k-cache", "guide/config.md")]
    port = got["Which port, by default?"]
    assert port.question_type.value == "factual" and TYPE_GIVEN in port.tags and NOT_LOCATED in port.tags
    assert [e.chunk_id for e in port.evidence] == ["k-ports"]
    assert report.unlocated == [
        f"{sheet}: row 4: context 2 found in no known chunk ('A quote that is nowhere'): left out"
    ]
    zh = got["袋熊需要哪个版本的 Python？"]
    assert zh.language == "zh" and zh.evidence[0].chunk_id == "z-setup" and TYPE_GIVEN not in zh.tags
    assert any("reviewer" in n for n in report.notes), "columns not imported are named"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("question,answer\r\n\"a\",\"b\",\"c\"\r\n", r"row 2: 3 cells, the header has 2"),
        ("question,answer,question_type,evidence\r\nq?,a,factual,\"[{\"\"quote\"\": 1}]\"\r\n",
         r"row 2: evidence item 1 is not an object with a quote"),
        ("question,answer,question_type,evidence\r\nq?,a,factual,[not json\r\n", r"row 2: evidence is not valid JSON"),
        ("question,answer,question_type\r\nq?,a,factual\r\n\"x\n y\",b,factual\r\nq2?,,factual\r\n",
         r"row 4: invalid QAPair: answer"),
        ("question,answer,question_type\r\nq?,a,opinion\r\n", r"row 2: question type 'opinion' is not one of"),
        ("question,answer,question_type\r\nq?,a,factual\r\nq?,a,factual\r\n", r"row 3: the same pair as .*row 2"),
        ("question,text\r\nq?,a\r\n", r"row 1: no 'answer' column"),
        ("", r"empty file"),
    ],
)  # fmt: skip
def test_bad_input_is_refused_naming_the_file_and_row(tmp_path: Path, text: str, message: str) -> None:
    sheet = _write(tmp_path / "bad.csv", text)
    with pytest.raises(InputError, match=message) as info:
        import_pairs("csv", sheet, out=tmp_path / "out")
    assert str(info.value).startswith(f"{sheet}") and "\n" not in str(info.value)
    assert not (tmp_path / "out").exists(), "nothing is written"


def test_a_file_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    sheet = tmp_path / "latin1.csv"
    sheet.write_bytes("question,answer\r\nqué?,sí\r\n".encode("latin-1"))
    with pytest.raises(InputError, match="not UTF-8 text"):
        import_pairs("csv", sheet, out=tmp_path / "out")

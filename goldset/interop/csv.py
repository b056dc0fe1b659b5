"""CSV for spreadsheets: one row per pair, UTF-8 with a byte-order mark (so Excel reads it as UTF-8), RFC 4180
quoting (a cell with a comma, a quote or a line break is quoted; line breaks inside a cell are kept).

Columns: ``id``, ``question``, ``answer``, ``question_type``, ``language``, ``status``, ``tags`` (a JSON list),
``evidence`` (a JSON list of ``{chunk_id, doc_id, quote}``). ``status`` is written for reading and filtering, not
read back: imported pairs start as candidates. Not carried: ``provenance``, ``checks``, ``review``.

**Formula injection.** A spreadsheet runs a cell that starts with ``=``, ``+``, ``-`` or ``@`` (also after leading
spaces, tabs or line breaks) as a formula. Every such cell is written with a leading ``'`` (which spreadsheets read
as "text") and so is every cell that already starts with ``'`` followed by one of them, so the escaping can be
undone exactly: an import removes one leading ``'`` from a cell that matches ``'+ whitespace* [=+-@]`` and from no
other cell (:func:`escape_cell`, :func:`unescape_cell`).

**Import** reads such a file, or one written by hand: ``question`` and ``answer`` columns are required, the others
optional (a missing ``id`` is computed, a missing ``question_type`` needs ``question_type=``, a missing ``language``
is detected). ``evidence`` is the JSON list above or, in a hand-written file, one quote per line, located in the
known chunks; ``tags`` a JSON list or comma-separated. Rows are numbered as a spreadsheet shows them (the header is
row 1); an empty row is skipped; other columns are ignored and named in a note.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goldset.errors import InputError
from goldset.interop.base import Context, ExportJob, FieldMap, Format, Lost, ReadResult, Row
from goldset.interop.fields import read_text

if TYPE_CHECKING:
    from goldset.schema import QAPair

COLUMNS = ("id", "question", "answer", "question_type", "language", "status", "tags", "evidence")
REQUIRED = ("question", "answer")
_FORMULA = re.compile(r"'*\s*[=+\-@]")
_ESCAPED = re.compile(r"'+\s*[=+\-@]")

FIELDS = (
    FieldMap("id", "id"),
    FieldMap("question", "question"),
    FieldMap("answer", "answer"),
    FieldMap("question_type", "question_type"),
    FieldMap("language", "language"),
    FieldMap("tags", "tags", "a JSON list"),
    FieldMap("evidence", "evidence", "a JSON list of {chunk_id, doc_id, quote}"),
)
LOST = (
    Lost("status", "written, not read back: imported pairs start as candidates"),
    Lost("provenance", "not in the file; imported pairs get source 'import'"),
    Lost("checks", "not in the file; `goldset filter` checks imported pairs again"),
    Lost("review", "not in the file"),
)


def escape_cell(value: str) -> str:
    """``'`` before a cell a spreadsheet would run as a formula (and before one already escaped that way)."""
    return "'" + value if _FORMULA.match(value) else value


def unescape_cell(value: str) -> str:
    """Undo :func:`escape_cell` exactly."""
    return value[1:] if _ESCAPED.match(value) else value


def pair_cells(pair: QAPair) -> list[str]:
    """A pair's cells in :data:`COLUMNS` order, escaped."""
    values = [
        pair.id,
        pair.question,
        pair.answer,
        pair.question_type.value,
        pair.language,
        pair.status.value,
        json.dumps(list(pair.tags), ensure_ascii=False),
        json.dumps([e.model_dump(mode="json") for e in pair.evidence], ensure_ascii=False),
    ]
    return [escape_cell(v) for v in values]


def to_text(rows: list[list[str]]) -> str:
    buf = io.StringIO(newline="")
    writer = csv.writer(buf, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerows(rows)
    return buf.getvalue()


def write(job: ExportJob, out: Path) -> list[Path]:
    from goldset.io import atomic_write_bytes

    text = to_text([list(COLUMNS), *(pair_cells(p) for p in job.pairs)])
    atomic_write_bytes(out, text.encode("utf-8-sig"))
    return [out]


def _evidence(cell: str, where: str) -> list[Context]:
    if not cell.strip():
        return []
    if not cell.lstrip().startswith("["):  # a hand-written file: one quote per line
        return [Context(line) for line in cell.splitlines() if line.strip()]
    try:
        items: Any = json.loads(cell)
    except json.JSONDecodeError as exc:
        raise InputError(f"{where}: evidence is not valid JSON ({exc.msg}); give a JSON list of "
                         "{chunk_id, doc_id, quote} or one quote per line") from None  # fmt: skip
    if not isinstance(items, list):
        raise InputError(f"{where}: evidence must be a JSON list of {{chunk_id, doc_id, quote}}")
    out = []
    for i, item in enumerate(items, start=1):
        if not isinstance(item, dict) or not isinstance(item.get("quote"), str):
            raise InputError(f"{where}: evidence item {i} is not an object with a quote")
        cid, doc = item.get("chunk_id"), item.get("doc_id")
        out.append(Context(item["quote"], cid if isinstance(cid, str) else None, doc if isinstance(doc, str) else None))
    return out


def _tags(cell: str, where: str) -> list[str]:
    if not cell.strip():
        return []
    if cell.lstrip().startswith("["):
        try:
            tags = json.loads(cell)
        except json.JSONDecodeError as exc:
            raise InputError(f"{where}: tags is not valid JSON ({exc.msg}); give a JSON list or comma-separated "
                             "tags") from None  # fmt: skip
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            raise InputError(f"{where}: tags must be a list of texts")
        return tags
    return [t.strip() for t in cell.split(",") if t.strip()]


def read(path: Path) -> ReadResult:
    """Rows of a CSV file (module docstring)."""
    text = read_text(path, "CSV", "save the sheet as CSV UTF-8")
    try:
        records = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        raise InputError(f"{path}: not a readable CSV file ({exc})") from None
    if not records:
        raise InputError(f"{path}: empty file; the first row names the columns ({', '.join(COLUMNS)})")
    header = [unescape_cell(h).strip().lower() for h in records[0]]
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise InputError(f"{path}: row 1: no {missing[0]!r} column (the header has: {', '.join(header)})")
    doubled = sorted({h for h in header if h and header.count(h) > 1})
    if doubled:
        raise InputError(f"{path}: row 1: the column {doubled[0]!r} appears twice")
    notes = []
    ignored = [h for h in header if h not in COLUMNS]
    if ignored:
        notes.append(f"{path}: column(s) not imported: {', '.join(ignored)}")
    rows: list[Row] = []
    for n, record in enumerate(records[1:], start=2):
        if not any(cell.strip() for cell in record):
            continue
        where = f"{path}: row {n}"
        if len(record) != len(header):
            raise InputError(f"{where}: {len(record)} cells, the header has {len(header)}; fix the row's quoting")
        cells = {h: unescape_cell(v) for h, v in zip(header, record, strict=True)}
        rows.append(Row(
            where=where,
            question=cells["question"],
            answer=cells["answer"],
            question_type=cells.get("question_type", "").strip() or None,
            language=cells.get("language", "").strip() or None,
            id=cells.get("id", "").strip() or None,
            contexts=_evidence(cells.get("evidence", ""), where),
            tags=_tags(cells.get("tags", ""), where),
        ))  # fmt: skip
    return ReadResult(rows=rows, notes=notes)


FORMAT = Format(
    name="csv",
    summary="CSV for spreadsheets (UTF-8 with BOM, formula cells escaped)",
    default_out="pairs.csv",
    fields=FIELDS,
    lost=LOST,
    write=write,
    read=read,
)

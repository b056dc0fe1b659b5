"""Word reader (python-docx, the ``docx`` extra): headings as the heading path, lists and tables kept.

python-docx reads the document's XML as Word wrote it (pure Python over lxml), so paragraphs and tables come in
document order with their styles; mammoth, the other well-kept choice, converts to HTML and drops what it has no
mapping for. A Word file has no pages until it is laid out, so its chunks have none (like Markdown's).

- **Headings**: paragraphs whose style (or a style it is based on) is a heading style (``Heading 1``…, ``Title``
  as level 1, ``标题 1``…) or that carry an outline level, at that level (at most 6).
- **Lists**: consecutive list paragraphs (numbered by Word, or in a ``List …`` style) are one block, one line per
  item, ``- `` for bullets and ``1. `` for numbered items, indented two spaces per level; numbers go on across
  the document per list as Word counts them.
- **Tables**: one block, one ``| a | b |`` line per row (a merged cell once); never split.
- Left out: page headers and footers, footnotes, comments, text boxes and content controls (a table of contents
  is one), which are not the document's running text.
"""

from __future__ import annotations

import re
from io import BytesIO
from typing import Any

from goldset.kb.blocks import ParsedDocument, SourceBuilder
from goldset.kb.decoding import SkipFile

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_HEADING_STYLE_RE = re.compile(r"^(?:heading|标题)\s*([1-9])$", re.IGNORECASE)
_NUMBERED_FORMATS = frozenset(
    {"decimal", "decimalZero", "upperRoman", "lowerRoman", "upperLetter", "lowerLetter", "chineseCounting",
     "chineseCountingThousand", "ideographTraditional", "decimalEnclosedCircle", "japaneseCounting"}
)  # fmt: skip


def read_docx(data: bytes) -> tuple[str, ParsedDocument]:
    """(extracted text, its blocks) of a .docx file, or :class:`SkipFile` saying why it cannot be read."""
    try:
        import docx
        from docx.opc.exceptions import PackageNotFoundError
        from docx.table import Table
    except ImportError:
        raise SkipFile("Word files need the docx extra (pip install 'goldset[docx]'); skipped") from None
    import zipfile

    try:
        document = docx.Document(BytesIO(data))
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise SkipFile(f"not a readable Word (.docx) file ({type(exc).__name__}); skipped") from None
    styles = _Styles(document)
    numbering = _Numbering(document, styles)
    out = SourceBuilder()
    items: list[str] = []

    def flush_list() -> None:
        if items:
            out.add("text", "\n".join(items))
            items.clear()

    for part in document.iter_inner_content():
        if isinstance(part, Table):
            flush_list()
            out.add("table", _table_text(part))
            continue
        text = part.text.strip()
        if not text:
            continue
        level = _heading_level(part, styles.chain(part))
        if level is not None:
            flush_list()
            out.heading(text, level)
            continue
        item = numbering.marker(part)
        if item is not None:
            items.append(item + " ".join(text.split()))
            continue
        flush_list()
        out.add("text", text)
    flush_list()
    title = " ".join((document.core_properties.title or "").split())
    if not title:
        headings = [b for b in out.blocks if b.kind == "heading"]
        title = next((b.title for b in headings if b.level == 1), headings[0].title if headings else "")
    return out.text(), ParsedDocument(title=title, blocks=out.blocks)


class _Styles:
    """Each paragraph's style and the styles it is based on, nearest first, looked up once per style (python-docx
    finds a paragraph's style by scanning the styles part, for every paragraph)."""

    def __init__(self, document: Any) -> None:
        self._document = document
        self._chains: dict[str | None, list[Any]] = {}

    def chain(self, paragraph: Any) -> list[Any]:
        pPr = paragraph._p.pPr
        style_id = pPr.pStyle.val if pPr is not None and pPr.pStyle is not None else None
        if style_id not in self._chains:
            chain: list[Any] = []
            style = paragraph.style
            while style is not None and len(chain) < 10:
                chain.append(style)
                style = style.base_style
            self._chains[style_id] = chain
        return self._chains[style_id]


def _heading_level(paragraph: Any, chain: list[Any]) -> int | None:
    for pPr in [paragraph._p.pPr, *(s.element.pPr for s in chain)]:
        if pPr is not None and pPr.outlineLvl is not None and pPr.outlineLvl.val is not None and pPr.outlineLvl.val < 9:
            return min(int(pPr.outlineLvl.val) + 1, 6)
    for style in chain:
        name = (style.name or "").strip()
        if name.lower() == "title":
            return 1
        m = _HEADING_STYLE_RE.match(name)
        if m:
            return min(int(m.group(1)), 6)
    return None


def _w(name: str) -> str:
    return _W + name


class _Numbering:
    """List items: their numbering (from the paragraph or its style) and the numbers so far."""

    def __init__(self, document: Any, styles: _Styles) -> None:
        self._styles = styles
        self._formats: dict[tuple[str, int], str] = {}
        self._counts: dict[tuple[str, int], int] = {}
        try:
            root = document.part.numbering_part.element
        except (NotImplementedError, KeyError, AttributeError):
            return
        abstract: dict[str | None, dict[int, str]] = {}
        for node in root.iterchildren(_w("abstractNum")):
            levels = {}
            for lvl in node.iterchildren(_w("lvl")):
                fmt = lvl.find(_w("numFmt"))
                levels[int(lvl.get(_w("ilvl")) or 0)] = (fmt.get(_w("val")) if fmt is not None else None) or "bullet"
            abstract[node.get(_w("abstractNumId"))] = levels
        for num in root.iterchildren(_w("num")):
            ref = num.find(_w("abstractNumId"))
            for ilvl, fmt in abstract.get(ref.get(_w("val")) if ref is not None else None, {}).items():
                self._formats[(num.get(_w("numId")) or "", ilvl)] = fmt

    def marker(self, paragraph: Any) -> str | None:
        """``- `` or ``3. `` (indented by level) for a list item, None for any other paragraph."""
        chain = self._styles.chain(paragraph)
        num = _num_pr(paragraph, chain)
        if num is None:
            if not any((s.name or "").startswith("List") for s in chain):
                return None
            named_numbered = any("Number" in (s.name or "") for s in chain)
            num = ("style:" + (chain[0].name or ""), 0)
            self._formats.setdefault(num, "decimal" if named_numbered else "bullet")
        num_id, ilvl = num
        if num_id == "0":  # numbering switched off
            return None
        for key in [k for k in self._counts if k[0] == num_id and k[1] > ilvl]:
            del self._counts[key]  # a deeper list ends where a shallower item comes
        indent = "  " * ilvl
        if self._formats.get((num_id, ilvl), "bullet") not in _NUMBERED_FORMATS:
            return indent + "- "
        self._counts[(num_id, ilvl)] = self._counts.get((num_id, ilvl), 0) + 1
        return f"{indent}{self._counts[(num_id, ilvl)]}. "


def _num_pr(paragraph: Any, chain: list[Any]) -> tuple[str, int] | None:
    """(numId, level) of the paragraph's numbering, its own or its style's."""
    for pPr in [paragraph._p.pPr, *(s.element.pPr for s in chain)]:
        num_pr = pPr.numPr if pPr is not None else None
        if num_pr is not None and num_pr.numId is not None:
            ilvl = num_pr.ilvl.val if num_pr.ilvl is not None else 0
            return str(num_pr.numId.val), int(ilvl)
    return None


def _table_text(table: Any) -> str:
    rows = []
    for row in table.rows:
        cells: list[str] = []
        last = None
        for cell in row.cells:
            if cell._tc is last:  # a merged cell is listed once per column it spans
                continue
            last = cell._tc
            cells.append(" ".join(" ".join(p.text for p in cell.paragraphs).split()))
        if any(cells):
            rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)

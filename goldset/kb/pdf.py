"""PDF reader (pdfminer.six, the ``pdf`` extra): text per page in reading order, headings, no running headers.

pdfminer.six is pure Python and does layout analysis: it groups glyphs into lines and lines into boxes by their
positions and orders the boxes for reading, so a two-column page, text drawn out of order and Chinese set glyph
by glyph come out in reading order (a reader that follows the content stream, like pypdf's, does not). It also
gives each glyph its font size, which is where headings come from when the PDF has no outline.

- **Pages.** Every block carries its page (1-based); the chunker never joins two pages (see
  :mod:`goldset.kb.chunker`, rule 6), so a chunk's page is where its text is.
- **Headings.** From the PDF's outline (bookmarks) when it has one: an entry's title is looked for among the
  lines of the page it points to, and becomes a heading there at the entry's depth (at the top of the page when
  the title is not printed on it). Without an outline, from font sizes: a short line (or run of lines) set at
  least 1.08 times larger than the body text (the size most characters have) is a heading, the largest size
  level 1. Bold alone does not make a heading: a table's header row is bold too.
- **Running headers and footers.** A line near the top or bottom edge (10 % of the page), no larger than the
  body text, that repeats on at least 40 % of the pages (and on two at least) is left out: the same text, or
  the same but for a number that goes up with the page ("Page 3 of 9"; not "Step 1", "Step 2").
- **Lines** read left to right (glyphs drawn out of that order are put back in it); the lines of a paragraph
  are joined with a space, without one between two CJK characters; a word hyphenated at a line end is joined
  again (without the hyphen when the document uses the whole word elsewhere, with it when not: a compound such
  as "operation-decorators"); a line after one that ends short of the text's right edge, or starting with a
  bullet or a number, starts a new line (list items whose bullets are drawn, not written, stay apart).
- **Left out, and said so** (``ParsedDocument.left_out``): a page with images but no text (a scan without a text
  layer: OCR it first, e.g. with ocrmypdf) and a page whose text is (more than 20 % of it) in fonts without a
  Unicode map.
- **Title**: the PDF's metadata title unless it is a placeholder ("Untitled", "Microsoft Word - x.docx"), else
  its first heading.
"""

from __future__ import annotations

import itertools
import math
import re
import statistics
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from io import BytesIO
from typing import Any

from goldset.kb.blocks import ParsedDocument, SourceBuilder
from goldset.kb.decoding import SkipFile

#: Share of the page height, at the top and at the bottom, where running headers and footers are looked for.
MARGIN = 0.10
#: A line is a header or footer when it repeats in the margin of at least this share of the pages, and of two
#: pages at least (a one-page document keeps its header: nothing repeats to tell it from text).
REPEATED_SHARE = 0.4
MIN_REPEATS = 2
#: A heading is set at least this many times larger than the body text (Word's default Heading 3 is 12 pt over an
#: 11 pt body: 1.09).
HEADING_RATIO = 1.08
#: A page on which more than this share of the characters cannot be extracted is reported.
UNMAPPED_SHARE = 0.2
_HEADING_MAX_CHARS = 200
_HEADING_MAX_LINES = 3

_CID_RE = re.compile(r"\(cid:\d+\)")
_DIGITS_RE = re.compile(r"\d+")
_WIDE = "\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef\uac00-\ud7af\u3000-\u303f"
_WIDE_RE = re.compile(f"[{_WIDE}]")
_LETTER_RE = re.compile(rf"[^\W\d_]|[{_WIDE}]")
_BULLET_RE = re.compile(r"^(?:[•·▪◦●○■□►▸‣⁃*–-]\s|\(?\d{1,3}[.)]\s|[a-z][.)]\s|[（(]?[一二三四五六七八九十]+[、.)）])")
#: Titles producers write into a PDF's metadata that are not the document's title.
_PLACEHOLDER_TITLE_RE = re.compile(r"^(?:untitled\b|microsoft (?:word|powerpoint) - |document\d*$)", re.IGNORECASE)
_WORD_RE = re.compile(r"[^\W\d_]+")
_HYPHENATED_RE = re.compile(r"([^\W\d_]+)[-\u00ad]$")
_LIGATURES = str.maketrans({"ﬀ": "ff", "ﬁ": "fi", "ﬂ": "fl", "ﬃ": "ffi", "ﬄ": "ffl", "ﬅ": "st", "ﬆ": "st"})


@dataclass
class _Line:
    text: str
    size: float  # font size, the median of its glyphs', rounded to half a point
    top: float  # distance from the top edge of the page
    bottom: float  # distance from the bottom edge
    box: int  # index of its text box on the page
    chars: int
    #: ends short of its box's right edge (by a fifth of the width): a line break, not a wrap
    ends_early: bool = False


@dataclass
class _Page:
    number: int
    height: float = 0.0
    lines: list[_Line] = field(default_factory=list)
    images: int = 0
    unmapped: int = 0  # glyphs without a Unicode value


def read_pdf(data: bytes) -> tuple[str, ParsedDocument]:
    """(extracted text, its blocks) of a PDF file, or :class:`SkipFile` saying why it cannot be read."""
    pages, outline, title = _extract(data)
    if not any(p.lines for p in pages):
        scanned = sum(1 for p in pages if p.images)
        if scanned:
            raise SkipFile(
                f"no text layer on any of its {len(pages)} page(s) (a scan?); skipped (OCR it first, e.g. with "
                "ocrmypdf, to include it)"
            )
        if any(p.unmapped for p in pages):
            raise SkipFile("its text is in fonts without a Unicode map and cannot be extracted; skipped")
        raise SkipFile("no text on any page; skipped")
    body = _body_size(pages)
    _drop_running_lines(pages, body)
    out = SourceBuilder()
    left_out: list[str] = []
    levels = {} if outline else _font_levels(pages, body)
    words = frozenset(w.casefold() for p in pages for line in p.lines for w in _WORD_RE.findall(line.text))
    by_page: dict[int, list[tuple[int, str]]] = {}
    for level, entry_title, number in outline:
        by_page.setdefault(number, []).append((level, entry_title))
    for page in pages:
        if not page.lines:
            if page.images:
                left_out.append(
                    f"p. {page.number}: no text layer (a scanned page?); its content is left out (OCR the PDF, e.g. "
                    "with ocrmypdf, to include it)"
                )
            elif page.unmapped:
                left_out.append(
                    f"p. {page.number}: its text is in fonts without a Unicode map and cannot be extracted; left out"
                )
            continue
        if page.unmapped > UNMAPPED_SHARE * (page.unmapped + sum(line.chars for line in page.lines)):
            left_out.append(
                f"p. {page.number}: {page.unmapped} of its characters are in fonts without a Unicode map and cannot "
                "be extracted; the rest is kept"
            )
        if outline:
            _outline_blocks(out, page, by_page.get(page.number, []), words)
        else:
            _font_blocks(out, page, levels, words)
    if not title:
        title = next((b.title for b in out.blocks if b.kind == "heading"), "")
    return out.text(), ParsedDocument(title=title, blocks=out.blocks, left_out=left_out)


# ------------------------------------------------------------------------------------------------ extraction


def _extract(data: bytes) -> tuple[list[_Page], list[tuple[int, str, int]], str]:
    """(pages, outline as (level, title, page number), the document's title from its metadata)."""
    try:
        from pdfminer.converter import PDFPageAggregator
        from pdfminer.layout import LAParams
        from pdfminer.pdfdocument import PDFDocument, PDFEncryptionError
        from pdfminer.pdfinterp import PDFPageInterpreter, PDFResourceManager
        from pdfminer.pdfpage import PDFPage
        from pdfminer.pdfparser import PDFParser
        from pdfminer.psexceptions import PSException
    except ImportError:
        raise SkipFile("PDF files need the pdf extra (pip install 'goldset[pdf]'); skipped") from None

    try:
        doc = PDFDocument(PDFParser(BytesIO(data)))
        page_objects = list(PDFPage.create_pages(doc))
    except PDFEncryptionError:
        raise SkipFile("encrypted PDF (it needs a password to open); skipped (save a copy without one)") from None
    except (PSException, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise SkipFile(f"not a readable PDF ({type(exc).__name__}: {str(exc)[:80]}); skipped") from None
    numbers: dict[object, int] = {p.pageid: i for i, p in enumerate(page_objects, 1)}
    manager = PDFResourceManager()
    device = PDFPageAggregator(manager, laparams=LAParams(all_texts=True))
    interpreter = PDFPageInterpreter(manager, device)
    pages: list[_Page] = []
    for number, page_object in enumerate(page_objects, 1):
        try:
            interpreter.process_page(page_object)
        except (PSException, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise SkipFile(f"p. {number} is not readable ({type(exc).__name__}: {str(exc)[:80]}); skipped") from None
        pages.append(_page(number, device.get_result()))
    return pages, _outline(doc, numbers), _info_title(doc)


def _page(number: int, layout: Any) -> _Page:
    from pdfminer.layout import LTChar, LTImage, LTTextBox, LTTextLine

    _, y0, _, y1 = layout.bbox
    page = _Page(number, y1 - y0)
    box_index = 0

    def visit(item: Any) -> None:
        nonlocal box_index
        if isinstance(item, LTTextBox):
            box_index += 1
            for line in item:
                if isinstance(line, LTTextLine):
                    add(line, item)
            return
        if isinstance(item, LTImage):
            page.images += 1
            return
        if isinstance(item, LTChar):
            return  # a glyph outside any line (a figure's stray mark): not text
        if hasattr(item, "__iter__"):
            for child in item:
                visit(child)

    def add(line: Any, box: Any) -> None:
        raw = _line_text(line, LTChar)
        unmapped = len(_CID_RE.findall(raw))
        text = " ".join(_CID_RE.sub("", raw).translate(_LIGATURES).split())
        page.unmapped += unmapped
        if not text:
            return
        glyphs = [c for c in line if isinstance(c, LTChar) and not c.get_text().isspace()]
        size = round(statistics.median(c.size for c in glyphs) * 2) / 2 if glyphs else 0.0
        early = line.x1 < box.x1 - 0.2 * (box.x1 - box.x0)
        page.lines.append(_Line(text, size, y1 - line.y1, line.y0 - y0, box_index, len(text), early))

    for item in layout:
        visit(item)
    return page


def _line_text(line: Any, char_type: type) -> str:
    """A line's text; glyphs drawn out of their left-to-right order (some producers place them one by one, in
    any order) are put back in it, a space where the gap between two is wider than a quarter of their size."""
    chars: list[Any] = [c for c in line if isinstance(c, char_type)]
    if all(b.x0 >= a.x0 - 0.5 for a, b in itertools.pairwise(chars)):
        return str(line.get_text())
    chars.sort(key=lambda c: c.x0)
    parts = [chars[0].get_text()]
    for a, b in itertools.pairwise(chars):
        if b.x0 - a.x1 > 0.25 * min(a.size, b.size):
            parts.append(" ")
        parts.append(b.get_text())
    return "".join(parts)


def _outline(doc: Any, numbers: dict[object, int]) -> list[tuple[int, str, int]]:
    from pdfminer.pdfdocument import PDFNoOutlines
    from pdfminer.psexceptions import PSException

    entries: list[tuple[int, str, int]] = []
    try:
        for level, title, dest, action, _ in doc.get_outlines():
            page = _dest_page(doc, dest, action, numbers)
            title = " ".join(str(title).split())
            if page is not None and title:
                entries.append((min(max(level, 1), 6), title, page))
    except (PDFNoOutlines, PSException, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return entries
    return entries


def _dest_page(doc: Any, dest: Any, action: Any, numbers: dict[object, int]) -> int | None:
    from pdfminer.pdftypes import resolve1
    from pdfminer.psparser import PSLiteral

    try:
        if dest is None:
            action = resolve1(action)
            if isinstance(action, dict):
                dest = action.get("D")
        dest = resolve1(dest)
        if isinstance(dest, PSLiteral):
            dest = dest.name
        if isinstance(dest, str | bytes):
            dest = resolve1(doc.get_dest(dest))
        if isinstance(dest, dict):
            dest = resolve1(dest.get("D"))
        if isinstance(dest, list) and dest:
            return numbers.get(getattr(dest[0], "objid", -1))
    except Exception:  # a broken destination only costs that outline entry
        return None
    return None


def _info_title(doc: Any) -> str:
    from pdfminer.pdftypes import resolve1
    from pdfminer.utils import decode_text

    for info in getattr(doc, "info", []) or []:
        value = resolve1(info.get("Title")) if isinstance(info, dict) else None
        if isinstance(value, bytes):
            value = decode_text(value)
        if isinstance(value, str) and value.strip() and not _PLACEHOLDER_TITLE_RE.match(value.strip()):
            return " ".join(value.split())
    return ""


# ------------------------------------------------------------------------------------------------ structure


def _body_size(pages: list[_Page]) -> float:
    """The font size most characters have."""
    weights: Counter[float] = Counter()
    for page in pages:
        for line in page.lines:
            weights[line.size] += line.chars
    return weights.most_common(1)[0][0] if weights else 0.0


def _margin_key(line: _Line, height: float) -> tuple[str, str] | None:
    if line.top <= MARGIN * height:
        return "top", _DIGITS_RE.sub("#", line.text.casefold())
    if line.bottom <= MARGIN * height:
        return "bottom", _DIGITS_RE.sub("#", line.text.casefold())
    return None


def _drop_running_lines(pages: list[_Page], body: float) -> None:
    """Leave out running headers and footers (see the module docstring)."""
    seen: dict[tuple[str, str], dict[int, tuple[int, ...]]] = {}  # key → page → the numbers in its line there
    for page in pages:
        for line in page.lines:
            key = _margin_key(line, page.height) if line.size <= body + 0.5 else None
            if key is not None:
                numbers = tuple(int(n) for n in _DIGITS_RE.findall(line.text))
                seen.setdefault(key, {}).setdefault(page.number, numbers)
    least = max(MIN_REPEATS, math.ceil(REPEATED_SHARE * len(pages)))
    repeated = {k for k, where in seen.items() if len(where) >= least and _running(where)}
    if not repeated:
        return
    for page in pages:
        height = page.height
        page.lines = [
            line for line in page.lines if line.size > body + 0.5 or _margin_key(line, height) not in repeated
        ]


def _running(where: dict[int, tuple[int, ...]]) -> bool:
    """Lines repeated page after page are a header or footer when their numbers are the same on every page
    ("© 2024") or one of them goes up with the page ("Page 3 of 9"): "Step 1" and "Step 2" at the tops of two
    pages are not."""
    numbers = list(where.values())
    if all(n == numbers[0] for n in numbers):
        return True
    if len({len(n) for n in numbers}) != 1:
        return False
    return any(len({n[i] - page for page, n in where.items()}) == 1 for i in range(len(numbers[0])))


def _font_levels(pages: list[_Page], body: float) -> dict[float, int]:
    """Font size → heading level for the sizes headings are set in (the largest is level 1)."""
    sizes = {line.size for page in pages for line in page.lines if _heading_size(line.size, body)}
    return {size: min(i, 6) for i, size in enumerate(sorted(sizes, reverse=True), 1)}


def _heading_size(size: float, body: float) -> bool:
    return body > 0 and size >= HEADING_RATIO * body


def _runs(page: _Page) -> Iterator[list[_Line]]:
    """Consecutive lines of one text box in one font size."""
    run: list[_Line] = []
    for line in page.lines:
        if run and (line.box != run[-1].box or line.size != run[-1].size):
            yield run
            run = []
        run.append(line)
    if run:
        yield run


def _font_blocks(out: SourceBuilder, page: _Page, levels: dict[float, int], words: frozenset[str]) -> None:
    pending: list[_Line] = []

    def flush() -> None:
        if pending:
            out.add("text", _join(pending, words), page=page.number)
            pending.clear()

    for run in _runs(page):
        text = " ".join(line.text for line in run)
        level = levels.get(run[0].size)
        is_heading = (
            level is not None
            and len(run) <= _HEADING_MAX_LINES
            and len(text) <= _HEADING_MAX_CHARS
            and _LETTER_RE.search(text) is not None
        )
        if is_heading and level is not None:
            flush()
            out.heading(join_lines([line.text for line in run], words), level, page=page.number)
        else:
            if pending and pending[-1].box != run[0].box:
                flush()
            pending.extend(run)
    flush()


def _squash(text: str) -> str:
    return "".join(text.split()).casefold()


def _outline_blocks(out: SourceBuilder, page: _Page, entries: list[tuple[int, str]], words: frozenset[str]) -> None:
    """Blocks of a page of a PDF with an outline: its entries' titles are the headings."""
    headings: dict[int, tuple[int, int, str]] = {}  # first line index → (last line index, level, title)
    start = 0
    unmatched: list[tuple[int, str]] = []
    for level, title in entries:
        found = _find_title(page.lines, start, _squash(title))
        if found is None:
            unmatched.append((level, title))
            continue
        first, last = found
        headings[first] = (last, level, title)
        start = last + 1
    for level, title in unmatched:  # not printed on its page: a heading at the top of it
        out.heading(title, level, page=page.number)
    pending: list[_Line] = []

    def flush() -> None:
        if pending:
            out.add("text", _join(pending, words), page=page.number)
            pending.clear()

    i = 0
    while i < len(page.lines):
        if i in headings:
            flush()
            last, level, title = headings[i]
            out.heading(join_lines([line.text for line in page.lines[i : last + 1]], words), level, page=page.number)
            i = last + 1
            continue
        line = page.lines[i]
        if pending and pending[-1].box != line.box:
            flush()
        pending.append(line)
        i += 1
    flush()


def _find_title(lines: list[_Line], start: int, wanted: str) -> tuple[int, int] | None:
    """(first, last) index of the lines, from ``start`` on, that spell ``wanted`` (whitespace and case aside)."""
    if not wanted:
        return None
    for first in range(start, len(lines)):
        acc = ""
        for last in range(first, min(first + _HEADING_MAX_LINES, len(lines))):
            if last > first and lines[last].box != lines[first].box:
                break
            acc += _squash(lines[last].text)
            if acc == wanted:
                return first, last
            if not wanted.startswith(acc):
                break
    return None


def _join(lines: list[_Line], words: frozenset[str]) -> str:
    return join_lines([line.text for line in lines], words, [line.ends_early for line in lines])


def join_lines(lines: list[str], words: frozenset[str] = frozenset(), breaks: list[bool] | None = None) -> str:
    """The lines of one paragraph as its text (see the module docstring). A word cut by a hyphen at a line end
    is joined again without it when the whole word is in ``words`` (the document's own words) or the hyphen is
    a soft one, and with it otherwise ("operation-" + "decorators": a compound, not a cut word). ``breaks[i]``:
    line i ends short of the text's right edge, so the next one starts a new line (a list item, a short line)."""
    out = ""
    for i, line in enumerate(lines):
        cut = _HYPHENATED_RE.search(out) if out and line[:1].islower() else None
        if not out:
            out = line
        elif _BULLET_RE.match(line) or (breaks is not None and breaks[i - 1]):
            out += "\n" + line
        elif cut is not None:
            rest = _WORD_RE.match(line)
            whole = cut.group(1) + (rest.group(0) if rest else "")
            out = out[:-1] + line if out.endswith("\u00ad") or whole.casefold() in words else out + line
        elif _WIDE_RE.match(out[-1]) and _WIDE_RE.match(line[0]):
            out += line
        else:
            out += " " + line
    return out

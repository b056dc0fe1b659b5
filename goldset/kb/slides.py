"""PowerPoint reader (python-pptx, the ``pptx`` extra): one section per slide, its title, text, tables and notes.

python-pptx is the well-kept pure-Python reader of .pptx files (over lxml). Each slide is a level-1 heading (its
title; ``Slide 3`` when it has none) followed by the text of its shapes, top to bottom and left to right (groups
opened), its tables (one ``| a | b |`` line per row) and its speaker notes (``Notes: …``). Every block carries
the slide's number as its page, so chunks never join two slides (see :mod:`goldset.kb.chunker`, rule 6) and
evidence reads "deck.pptx, slide 3". Pictures and charts have no text to read and are left out.
"""

from __future__ import annotations

from collections.abc import Iterator
from io import BytesIO
from typing import Any

from goldset.kb.blocks import ParsedDocument, SourceBuilder
from goldset.kb.decoding import SkipFile

NOTES_PREFIX = "Notes: "


def read_pptx(data: bytes) -> tuple[str, ParsedDocument]:
    """(extracted text, its blocks) of a .pptx file, or :class:`SkipFile` saying why it cannot be read."""
    try:
        from pptx import Presentation
        from pptx.exc import PackageNotFoundError
    except ImportError:
        raise SkipFile("PowerPoint files need the pptx extra (pip install 'goldset[pptx]'); skipped") from None
    import zipfile

    try:
        deck = Presentation(BytesIO(data))
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise SkipFile(f"not a readable PowerPoint (.pptx) file ({type(exc).__name__}); skipped") from None
    out = SourceBuilder()
    titles: list[str] = []
    for number, slide in enumerate(deck.slides, 1):
        title_shape = slide.shapes.title
        title = " ".join(title_shape.text_frame.text.split()) if title_shape is not None else ""
        if title:
            titles.append(title)
        out.heading(title or f"Slide {number}", 1, page=number)
        for shape in _shapes([s for s in slide.shapes if title_shape is None or s.shape_id != title_shape.shape_id]):
            if getattr(shape, "has_table", False) and shape.has_table:
                out.add("table", _table_text(shape.table), page=number)
            elif getattr(shape, "has_text_frame", False) and shape.has_text_frame:
                out.add("text", _frame_text(shape.text_frame), page=number)
        if slide.has_notes_slide:
            frame = slide.notes_slide.notes_text_frame
            notes = _frame_text(frame) if frame is not None else ""
            if notes.strip():
                out.add("text", NOTES_PREFIX + notes, page=number)
    title = " ".join((deck.core_properties.title or "").split()) or (titles[0] if titles else "")
    return out.text(), ParsedDocument(title=title, blocks=out.blocks)


def _shapes(shapes: list[Any]) -> Iterator[Any]:
    """Shapes top to bottom, then left to right; a group's shapes in its place, in the same order."""
    for shape in sorted(shapes, key=lambda s: (s.top or 0, s.left or 0)):
        inner = getattr(shape, "shapes", None)
        if inner is not None and not getattr(shape, "has_text_frame", False):
            yield from _shapes(list(inner))
        else:
            yield shape


def _frame_text(frame: Any) -> str:
    """One line per paragraph, indented two spaces per outline level."""
    lines = []
    for paragraph in frame.paragraphs:
        text = " ".join(paragraph.text.split())
        if text:
            lines.append("  " * (paragraph.level or 0) + text)
    return "\n".join(lines)


def _table_text(table: Any) -> str:
    rows = []
    for row in table.rows:
        cells = [" ".join(cell.text.split()) for cell in row.cells if not cell.is_spanned]
        if any(cells):
            rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)

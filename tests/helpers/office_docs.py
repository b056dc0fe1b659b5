"""Small real PDF, Word and PowerPoint files, written by the libraries people make them with (reportlab,
python-docx, python-pptx), so the readers are tested on files with real layouts, fonts and XML.

PDFs are A4; :class:`PdfWriter` sets text top to bottom like a word processor (headings larger than the body, a
new page when one is full), can place text anywhere or glyph by glyph (out of reading order, as some producers
do), draw an image alone (a scanned page), add outline entries, and puts a running header and a footer with the
page number on each page.
Chinese text uses reportlab's built-in ``STSong-Light`` CID font (Adobe's Asian font pack names it; no font file
is needed to write it, and readers get the characters from its standard CMap).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

A4_WIDTH, A4_HEIGHT = 595.0, 842.0
SIZES = {0: 11.0, 1: 20.0, 2: 15.0, 3: 13.0, 4: 12.0}  # 4: Word's Heading 3 over its 11 pt body
CJK_FONT = "STSong-Light"


class PdfWriter:
    """A PDF written page by page; ``{n}`` in ``header``/``footer`` is the page number."""

    def __init__(
        self,
        path: Path,
        *,
        chinese: bool = False,
        header: str | None = None,
        footer: str | None = None,
        title: str | None = None,
    ) -> None:
        from reportlab.pdfgen import canvas

        self.path = path
        self.chinese = chinese
        if chinese:
            from reportlab.pdfbase import pdfmetrics
            from reportlab.pdfbase.cidfonts import UnicodeCIDFont

            pdfmetrics.registerFont(UnicodeCIDFont(CJK_FONT))
        self.header, self.footer = header, footer
        self.canvas = canvas.Canvas(str(path), pagesize=(A4_WIDTH, A4_HEIGHT))
        if title:
            self.canvas.setTitle(title)
        self.number = 1
        self.y = A4_HEIGHT - 90
        self._marks = 0
        self.pages = 0  # pages ended so far

    def _font(self, level: int) -> str:
        if self.chinese:
            return CJK_FONT
        return "Helvetica-Bold" if level else "Helvetica"

    def _wrap(self, text: str, size: float) -> list[str]:
        if self.chinese:
            per_line = int((A4_WIDTH - 144) // size)
            return [text[i : i + per_line] for i in range(0, len(text), per_line)]
        from reportlab.lib.utils import simpleSplit

        return simpleSplit(text, self._font(0), size, A4_WIDTH - 144)

    def _room(self, height: float) -> None:
        """A new page when ``height`` more points would run into the bottom margin."""
        if self.y - height < 72:
            self.page()

    def heading(self, text: str, level: int = 1, *, outline: bool = False) -> None:
        """A heading set in SIZES[level]; with ``outline``, an outline entry at that depth points at it."""
        size = SIZES[level]
        self._room(size * 4)
        self.y -= size
        if outline:
            self.outline(text, level)
        self.canvas.setFont(self._font(level), size)
        self.canvas.drawString(72, self.y, text)
        self.y -= size * 0.8

    def para(self, text: str) -> None:
        """A paragraph of body text, wrapped to the text width."""
        size = SIZES[0]
        self.canvas.setFont(self._font(0), size)
        for line in self._wrap(text, size):
            self._room(size)
            self.canvas.setFont(self._font(0), size)
            self.canvas.drawString(72, self.y, line)
            self.y -= size * 1.3
        self.y -= size * 0.7

    def at(self, x: float, y: float, text: str, size: float = SIZES[0]) -> None:
        """Text at a position (points from the bottom left), wherever the flow is."""
        self.canvas.setFont(self._font(0), size)
        self.canvas.drawString(x, y, text)

    def glyphs(self, x: float, y: float, text: str, *, reverse: bool = False) -> None:
        """One line drawn glyph by glyph, each placed on its own (last glyph first with ``reverse``)."""
        size = SIZES[0]
        self.canvas.setFont(self._font(0), size)
        advance = [self.canvas.stringWidth(text[:i], self._font(0), size) for i in range(len(text))]
        order = range(len(text) - 1, -1, -1) if reverse else range(len(text))
        for i in order:
            self.canvas.drawString(x + advance[i], y, text[i])

    def image(self) -> None:
        """A grey picture filling most of the page, as a scanner writes one (no text)."""
        from PIL import Image
        from reportlab.lib.utils import ImageReader

        picture = Image.new("L", (60, 80), color=180)
        self.canvas.drawImage(ImageReader(picture), 72, 120, width=A4_WIDTH - 144, height=A4_HEIGHT - 240)

    def outline(self, title: str, level: int = 1) -> None:
        """An outline (bookmark) entry at ``level`` (1 = top) pointing at the current position."""
        self._marks += 1
        key = f"m{self._marks}"
        self.canvas.bookmarkHorizontal(key, 0, self.y + 20)
        self.canvas.addOutlineEntry(title, key, level=level - 1)

    def page(self, *, furniture: bool = True) -> None:
        """End the page (with its header and footer unless ``furniture`` is False)."""
        if furniture:
            self.canvas.setFont(self._font(0), 9)
            if self.header:
                self.canvas.drawString(72, A4_HEIGHT - 40, self.header.format(n=self.number))
            if self.footer:
                self.canvas.drawString(A4_WIDTH / 2 - 30, 36, self.footer.format(n=self.number))
        self.canvas.showPage()
        self.pages += 1
        self.number += 1
        self.y = A4_HEIGHT - 90

    def save(self) -> Path:
        self.canvas.save()
        return self.path


def write_docx(path: Path, items: list[tuple[str, Any]], *, title: str | None = None) -> Path:
    """A Word file of ``items``: ("title" | "h1" | "h2" | "h3" | "p", text), ("bullets" | "numbers", [texts]) or
    ("table", [[cells]])."""
    import docx

    document = docx.Document()
    if title:
        document.core_properties.title = title
    for kind, value in items:
        if kind == "title":
            document.add_heading(value, 0)
        elif kind in ("h1", "h2", "h3"):
            document.add_heading(value, int(kind[1]))
        elif kind == "p":
            document.add_paragraph(value)
        elif kind in ("bullets", "numbers"):
            style = "List Bullet" if kind == "bullets" else "List Number"
            for text in value:
                document.add_paragraph(text, style=style)
        elif kind == "table":
            table = document.add_table(rows=len(value), cols=len(value[0]))
            for r, row in enumerate(value):
                for c, cell in enumerate(row):
                    table.cell(r, c).text = cell
        else:
            raise ValueError(kind)
    document.save(str(path))
    return path


def write_pptx(path: Path, slides: list[dict[str, Any]]) -> Path:
    """A presentation: each slide a dict of ``title`` (None: a blank slide), ``bullets`` ([text] or [(text,
    level)]), ``text`` (a text box), ``table`` ([[cells]]) and ``notes``."""
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    for spec in slides:
        has_title = spec.get("title") is not None
        layout = deck.slide_layouts[1 if spec.get("bullets") else 5 if has_title else 6]
        slide = deck.slides.add_slide(layout)
        if has_title:
            slide.shapes.title.text = spec["title"]
        if spec.get("bullets"):
            frame = slide.placeholders[1].text_frame
            for i, bullet in enumerate(spec["bullets"]):
                text, level = bullet if isinstance(bullet, tuple) else (bullet, 0)
                paragraph = frame.paragraphs[0] if i == 0 else frame.add_paragraph()
                paragraph.text, paragraph.level = text, level
        if spec.get("text"):
            box = slide.shapes.add_textbox(Inches(1), Inches(5.5), Inches(8), Inches(1))
            box.text_frame.text = spec["text"]
        if spec.get("table"):
            rows = spec["table"]
            shape = slide.shapes.add_table(len(rows), len(rows[0]), Inches(1), Inches(2), Inches(8), Inches(2))
            for r, row in enumerate(rows):
                for c, cell in enumerate(row):
                    shape.table.cell(r, c).text = cell
        if spec.get("notes"):
            slide.notes_slide.notes_text_frame.text = spec["notes"]
    deck.save(str(path))
    return path

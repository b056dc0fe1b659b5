"""The formats goldset reads, and the dispatch from a file's suffix to its reader.

Text formats: Markdown (.md, .markdown; :mod:`goldset.kb.markdown`), plain text (.txt; here), HTML (.html, .htm;
:mod:`goldset.kb.html`) and reStructuredText (.rst; :mod:`goldset.kb.rst`); how their bytes become text is
:mod:`goldset.kb.decoding`. Extracted formats, each with an optional extra: PDF (.pdf; :mod:`goldset.kb.pdf`,
``goldset[pdf]``), Word (.docx; :mod:`goldset.kb.word`, ``goldset[docx]``) and PowerPoint (.pptx;
:mod:`goldset.kb.slides`, ``goldset[pptx]``); ``goldset[office]`` installs all three. A file of a format whose
library is missing is skipped with a warning naming the extra. Which files are read is
:mod:`goldset.kb.discovery`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from goldset.kb.blocks import Block, ParsedDocument, clean_lines, line_spans
from goldset.kb.decoding import read_bytes, read_source
from goldset.kb.html import parse_html
from goldset.kb.markdown import parse_markdown
from goldset.kb.rst import parse_rst
from goldset.kb.settings import KBSettings

#: suffix → format
FORMATS: dict[str, str] = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".html": "html",
    ".htm": "html",
    ".rst": "rst",
    ".pdf": "pdf",
    ".docx": "docx",
    ".pptx": "pptx",
}


def _read_pdf(data: bytes) -> tuple[str, ParsedDocument]:
    from goldset.kb.pdf import read_pdf

    return read_pdf(data)


def _read_docx(data: bytes) -> tuple[str, ParsedDocument]:
    from goldset.kb.word import read_docx

    return read_docx(data)


def _read_pptx(data: bytes) -> tuple[str, ParsedDocument]:
    from goldset.kb.slides import read_pptx

    return read_pptx(data)


#: format → its reader: file bytes to (extracted text, its blocks), or SkipFile. Their libraries load on first use.
EXTRACTORS: dict[str, Callable[[bytes], tuple[str, ParsedDocument]]] = {
    "pdf": _read_pdf,
    "docx": _read_docx,
    "pptx": _read_pptx,
}


@dataclass
class SourceDocument:
    """One file read: the text its blocks' spans point into (decoded or extracted), and how it was read."""

    text: str
    #: the encoding of a text file (utf-8, gb18030, …), the format of an extracted one (pdf, docx, pptx)
    encoding: str
    data: bytes
    parsed: ParsedDocument
    #: for the ingest's warnings, without the path (e.g. "not UTF-8; decoded as GB18030")
    notes: list[str] = field(default_factory=list)


def read_document(path: Path, settings: KBSettings) -> SourceDocument:
    """Read and parse one file in the format its suffix names, or raise
    :class:`~goldset.kb.decoding.SkipFile` with the reason."""
    fmt = FORMATS.get(path.suffix.lower(), "text")
    extractor = EXTRACTORS.get(fmt)
    if extractor is not None:
        data = read_bytes(path, settings)
        text, parsed = extractor(data)
        return SourceDocument(text, fmt, data, parsed)
    text, encoding, data = read_source(path, settings)
    notes = [f"not UTF-8; decoded as {encoding.upper()}"] if encoding != "utf-8" else []
    return SourceDocument(text, encoding, data, parse_text(text, path.suffix.lower()), notes)


def parse_text(text: str, suffix: str) -> ParsedDocument:
    """Blocks of a document in the text format its suffix names (unknown suffixes read as plain text; PDF, Word
    and PowerPoint files are not text: :func:`read_document` reads them)."""
    fmt = FORMATS.get(suffix, "text")
    if fmt in EXTRACTORS:
        raise ValueError(f"{suffix} files are not text; read them with goldset.kb.readers.read_document")
    if fmt == "markdown":
        return parse_markdown(text)
    if fmt == "html":
        return parse_html(text)
    if fmt == "rst":
        return parse_rst(text)
    return parse_plain(text)


def parse_plain(text: str) -> ParsedDocument:
    """Plain text: paragraphs separated by blank lines, no headings."""
    blocks: list[Block] = []
    start = end = -1
    for s, e in [*line_spans(text), (len(text), len(text))]:
        if text[s:e].strip():
            if start < 0:
                start = s
            end = e
        elif start >= 0:
            blocks.append(Block("text", start, end, clean_lines(text[start:end]), cleaner=clean_lines))
            start = -1
    return ParsedDocument(title="", blocks=blocks)

"""The formats goldset reads, and the dispatch from a file's suffix to its reader.

Formats: Markdown (.md, .markdown; :mod:`goldset.kb.markdown`), plain text (.txt; here), HTML (.html, .htm;
:mod:`goldset.kb.html`) and reStructuredText (.rst; :mod:`goldset.kb.rst`). Which files are read is
:mod:`goldset.kb.discovery`; how their bytes become text is :mod:`goldset.kb.decoding`.
"""

from __future__ import annotations

from goldset.kb.blocks import Block, ParsedDocument, line_spans
from goldset.kb.html import parse_html
from goldset.kb.markdown import parse_markdown
from goldset.kb.rst import parse_rst

#: suffix → format
FORMATS: dict[str, str] = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".html": "html",
    ".htm": "html",
    ".rst": "rst",
}


def parse_text(text: str, suffix: str) -> ParsedDocument:
    """Blocks of a document in the format its suffix names (unknown suffixes read as plain text)."""
    fmt = FORMATS.get(suffix, "text")
    if fmt == "markdown":
        return parse_markdown(text)
    if fmt == "html":
        return parse_html(text)
    if fmt == "rst":
        return parse_rst(text)
    return parse_plain(text)


def _clean_plain(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.split("\n") if line.strip())


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
            blocks.append(Block("text", start, end, _clean_plain(text[start:end]), cleaner=_clean_plain))
            start = -1
    return ParsedDocument(title="", blocks=blocks)

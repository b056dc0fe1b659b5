"""The intermediate form every reader produces: a document as a flat list of blocks with source spans.

Readers know formats; the chunker knows sizes. A block is the smallest thing the chunker places: a heading,
a piece of prose, a code block or a table. Code blocks and tables are atomic (never split). Prose carries a
``cleaner`` so the chunker can cut an oversized paragraph at source positions and clean each piece itself,
which keeps every chunk's character span exact.

A block's *prose* is what its language is told from: its text without code. Code blocks have none; other
blocks leave out inline code, link targets and URLs (:func:`prose_text`), and a reader that knows more of its
format (HTML ``<code>``, reST code roles, Markdown indented code) gives the block a ``prose`` function.

Text formats point their spans into the decoded file. PDF, Word and PowerPoint readers have no such text: they
write one with :class:`SourceBuilder` (the blocks' texts, a blank line between two) and point into that, and give
each block of a paged format its ``page`` (the PDF page or slide, 1-based): the chunker never packs two pages into
one chunk.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

BlockKind = Literal["heading", "text", "code", "table"]

# Tags whose boundaries separate words (replaced by a space); every other tag is dropped outright.
_BLOCK_TAGS = (
    "address|article|aside|blockquote|br|caption|dd|details|div|dl|dt|figcaption|figure|footer|form|h[1-6]|header|"
    "hr|li|main|nav|ol|p|pre|section|summary|table|tbody|td|tfoot|th|thead|tr|ul"
)
_HTML_COMMENT_RE = re.compile(r"<!--.*?(?:-->|$)", re.DOTALL)
_BLOCK_TAG_RE = re.compile(rf"</?(?:{_BLOCK_TAGS})\b[^<>]*>", re.IGNORECASE)
_TAG_RE = re.compile(r"</?[A-Za-z][\w:-]*(?:\s[^<>]*)?/?>")
# Inline HTML elements that hold code (their content is not prose).
_CODE_ELEMENT_RE = re.compile(r"<(code|kbd|samp|tt)\b[^<>]*>.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_CODE_SPAN_RE = re.compile(r"(`+)(.+?)\1", re.DOTALL)
_LINK_TARGET_RE = re.compile(r"(\])\([^)\n]*\)")  # [text](target) and ![alt](target): the target
_URL_RE = re.compile(r"<?\b(?:[a-z][a-z0-9+.-]*://|www\.|mailto:)[^\s<>()\[\]`]*>?", re.IGNORECASE)


@dataclass(frozen=True)
class Block:
    """One block of a document. ``start``/``end`` are character offsets into the decoded source text."""

    kind: BlockKind
    start: int
    end: int
    text: str
    level: int = 0
    title: str = ""
    anchor: str = ""
    #: For prose: turns a source substring into chunk text (used when an oversized paragraph is cut).
    cleaner: Callable[[str], str] | None = field(default=None, compare=False, repr=False)
    #: Turns a source substring of this block into its prose (what its language is told from). None: the
    #: :func:`prose_text` of its text, or nothing for a code block.
    prose: Callable[[str], str] | None = field(default=None, compare=False, repr=False)
    #: The page (PDF) or slide (PowerPoint) the block is on, 1-based; None for formats without pages.
    page: int | None = None

    @property
    def key(self) -> str:
        """What a heading contributes to a heading path: its anchor when it has one (stable across
        retitling and translations), else its title."""
        return self.anchor or self.title


@dataclass
class ParsedDocument:
    title: str
    blocks: list[Block]
    #: Parts of the document left out, each "where: why" (e.g. "p. 3: no text layer …"), for the ingest record.
    left_out: list[str] = field(default_factory=list)


def clean_lines(text: str) -> str:
    """Lines without trailing whitespace, blank lines dropped: the cleaner of plain and extracted prose."""
    return "\n".join(line.rstrip() for line in text.split("\n") if line.strip())


class SourceBuilder:
    """The source text of a format that has none (PDF, Word, PowerPoint) and its blocks' spans into it.

    Each block's text is written once, a blank line after the one before, so a chunk's ``char_start``/``char_end``
    point into this extracted text exactly as they point into a Markdown file.
    """

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._length = 0
        self.blocks: list[Block] = []

    def add(self, kind: BlockKind, text: str, *, level: int = 0, title: str = "", page: int | None = None) -> None:
        """Append a block (nothing for blank text). Prose gets :func:`clean_lines` as its cleaner."""
        text = clean_lines(text) if kind in ("text", "heading") else text.strip("\n")
        if not text.strip():
            return
        if self._parts:
            self._parts.append("\n\n")
            self._length += 2
        start = self._length
        self._parts.append(text)
        self._length += len(text)
        cleaner = clean_lines if kind == "text" else None
        self.blocks.append(Block(kind, start, self._length, text, level=level, title=title, cleaner=cleaner, page=page))

    def heading(self, title: str, level: int, *, page: int | None = None) -> None:
        """A heading block, written as Markdown writes one (``## Title``) like the other readers do."""
        title = " ".join(title.split())
        if title:
            self.add("heading", f"{'#' * level} {title}", level=level, title=title, page=page)

    def text(self) -> str:
        return "".join(self._parts)


def strip_html(text: str) -> str:
    """Drop HTML comments and tags, keeping the text between them; block-level tags become a space."""
    if "<" not in text:
        return html.unescape(text) if "&" in text else text
    text = _HTML_COMMENT_RE.sub("", text)
    text = _BLOCK_TAG_RE.sub(" ", text)
    text = _TAG_RE.sub("", text)
    return html.unescape(text)


def drop_code_elements(text: str) -> str:
    """HTML source without its inline code elements (``<code>``, ``<kbd>``, ``<samp>``, ``<tt>``), content
    included; each becomes a space."""
    return _CODE_ELEMENT_RE.sub(" ", text) if "<" in text else text


def prose_text(text: str) -> str:
    """The prose of chunk text: inline code spans (`` `x` ``, ````x````), link and image targets and URLs left
    out; link text and image alt text kept."""
    if "`" in text:
        text = _CODE_SPAN_RE.sub(" ", text)
    if "](" in text:
        text = _LINK_TARGET_RE.sub(r"\1", text)
    if "/" in text or "www." in text or "mailto:" in text:
        text = _URL_RE.sub(" ", text)
    return text


def line_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every line, ``end`` excluding the newline (and a trailing ``\\r``).

    Only ``\\n`` ends a line (unlike str.splitlines, which also splits on form feeds and U+2028), so offsets
    always point into the original text.
    """
    spans: list[tuple[int, int]] = []
    pos = 0
    n = len(text)
    while pos <= n:
        nl = text.find("\n", pos)
        end = n if nl < 0 else nl
        stop = end - 1 if end > pos and text[end - 1] == "\r" else end
        spans.append((pos, stop))
        if nl < 0:
            break
        pos = nl + 1
    return spans

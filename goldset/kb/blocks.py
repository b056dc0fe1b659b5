"""The intermediate form every reader produces: a document as a flat list of blocks with source spans.

Readers know formats; the chunker knows sizes. A block is the smallest thing the chunker places: a heading,
a piece of prose, a code block or a table. Code blocks and tables are atomic (never split). Prose carries a
``cleaner`` so the chunker can cut an oversized paragraph at source positions and clean each piece itself,
which keeps every chunk's character span exact.

A block's *prose* is what its language is told from: its text without code. Code blocks have none; other
blocks leave out inline code, link targets and URLs (:func:`prose_text`), and a reader that knows more of its
format (HTML ``<code>``, reST code roles, Markdown indented code) gives the block a ``prose`` function.
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

    @property
    def key(self) -> str:
        """What a heading contributes to a heading path: its anchor when it has one (stable across
        retitling and translations), else its title."""
        return self.anchor or self.title


@dataclass
class ParsedDocument:
    title: str
    blocks: list[Block]


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

"""HTML reader (stdlib html.parser): headings with their ids, ``<pre>`` as code, tables, and prose between.

One module per format, like :mod:`goldset.kb.markdown` and :mod:`goldset.kb.rst`: a reader turns source text
into the blocks of :mod:`goldset.kb.blocks` with exact source spans, and knows nothing of chunk sizes.
Scripts, styles and other non-content elements are dropped; tags inside prose are dropped, their text kept.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from goldset.kb.blocks import Block, ParsedDocument, drop_code_elements, line_spans, prose_text, strip_html

_HTML_SKIP = frozenset({"script", "style", "noscript", "template", "svg", "head"})
_HTML_BREAKS = frozenset(
    {
        "p", "div", "li", "ul", "ol", "dl", "dt", "dd", "section", "article", "main", "header", "footer", "nav",
        "aside", "blockquote", "figure", "figcaption", "details", "summary", "form", "body", "br", "hr", "html",
    }
)  # fmt: skip
_HTML_WS_RE = re.compile(r"[ \t\r\f\v]+")


def _clean_html(text: str) -> str:
    """HTML source → text: tags dropped (their text kept), entities decoded, whitespace collapsed."""
    out = strip_html(text)
    lines = [_HTML_WS_RE.sub(" ", line).strip() for line in out.split("\n")]
    return " ".join(line for line in lines if line)


def _prose(text: str) -> str:
    """Prose of HTML source (see :mod:`goldset.kb.blocks`): inline ``<code>`` and the like left out."""
    return prose_text(_clean_html(drop_code_elements(text)))


class _HTMLBlocks(HTMLParser):
    """Collects headings (h1–h6, their ``id`` as anchor), <pre> as code, <table> rows, and prose between."""

    def __init__(self, source: str) -> None:
        super().__init__(convert_charrefs=True)
        self.source = source
        self.line_starts = [s for s, _ in line_spans(source)]
        self.blocks: list[Block] = []
        self.title = ""
        self._skip = 0
        self._in_title = False
        self._text_start = -1
        self._heading: tuple[int, int, str, list[str]] | None = None  # (start, level, anchor, parts)
        self._pre: tuple[int, list[str]] | None = None
        self._table: tuple[int, list[list[str]], int] | None = None  # (start, rows, depth)
        self._cell: list[str] | None = None
        self._pending_anchor = ""

    def _offset(self) -> int:
        line, col = self.getpos()
        return self.line_starts[line - 1] + col

    def _flush_text(self, end: int) -> None:
        if self._text_start >= 0:
            raw = self.source[self._text_start : end]
            text = _clean_html(raw)
            if text:
                self.blocks.append(Block("text", self._text_start, end, text, cleaner=_clean_html, prose=_prose))
            self._text_start = -1

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        pos = self._offset()
        if tag in _HTML_SKIP:
            self._flush_text(pos)
            self._skip += 1
            return
        if tag == "title":
            self._in_title = True
            return
        if self._skip:
            return
        if self._table is not None:
            start, rows, depth = self._table
            if tag == "table":
                self._table = (start, rows, depth + 1)
            elif tag == "tr":
                rows.append([])
            elif tag in ("td", "th"):
                self._cell = []
            return
        if self._pre is not None:
            return
        attr = dict(attrs)
        if self._heading is not None:
            if tag == "a" and not self._heading[2] and (attr.get("id") or attr.get("name")):
                start, level, _, parts = self._heading
                self._heading = (start, level, attr.get("id") or attr.get("name") or "", parts)
            return
        if re.fullmatch(r"h[1-6]", tag):
            self._flush_text(pos)
            # Sphinx and friends put the id on the enclosing <section>, or on an <a id> just before.
            anchor = attr.get("id") or self._pending_anchor
            self._pending_anchor = ""
            self._heading = (pos, int(tag[1]), anchor or "", [])
        elif tag == "pre":
            self._flush_text(pos)
            self._pre = (pos, [])
        elif tag == "table":
            self._flush_text(pos)
            self._table = (pos, [], 1)
        elif tag in _HTML_BREAKS:
            self._flush_text(pos)
        if tag in ("section", "a") and (attr.get("id") or (tag == "a" and attr.get("name"))):
            self._pending_anchor = attr.get("id") or attr.get("name") or ""

    def handle_endtag(self, tag: str) -> None:
        pos = self._offset()
        end = self.source.find(">", pos) + 1 or pos
        if tag in _HTML_SKIP:
            self._skip = max(0, self._skip - 1)
            return
        if tag == "title":
            self._in_title = False
            return
        if self._skip:
            return
        if self._table is not None:
            start, rows, depth = self._table
            if tag in ("td", "th") and self._cell is not None and rows:
                rows[-1].append(" ".join(" ".join(self._cell).split()))
                self._cell = None
            elif tag == "table":
                if depth > 1:
                    self._table = (start, rows, depth - 1)
                else:
                    text = "\n".join("| " + " | ".join(r) + " |" for r in rows if any(r))
                    if text:
                        self.blocks.append(Block("table", start, end, text, prose=_prose))
                    self._table = None
            return
        if self._pre is not None:
            if tag == "pre":
                start, parts = self._pre
                code = "".join(parts).strip("\n")
                if code.strip():
                    self.blocks.append(Block("code", start, end, code))
                self._pre = None
            return
        if self._heading is not None and re.fullmatch(r"h[1-6]", tag):
            start, level, anchor, parts = self._heading
            title = " ".join("".join(parts).replace("¶", " ").split())  # ¶ = Sphinx permalink
            if title:
                text = f"{'#' * level} {title}"
                self.blocks.append(
                    Block("heading", start, end, text, level=level, title=title, anchor=anchor, prose=_prose)
                )
            self._heading = None
        elif tag in _HTML_BREAKS:
            self._flush_text(pos)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _HTML_BREAKS and not self._skip and self._table is None and self._pre is None:
            self._flush_text(self._offset())

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
            return
        if self._skip:
            return
        if self._table is not None:
            if self._cell is not None:
                self._cell.append(data)
        elif self._pre is not None:
            self._pre[1].append(data)
        elif self._heading is not None:
            self._heading[3].append(data)
        elif data.strip():
            self._pending_anchor = ""  # text came between the anchor and any heading: not the heading's
            if self._text_start < 0:
                self._text_start = self._offset()

    def close_all(self) -> None:
        self.close()
        self._flush_text(len(self.source))


def parse_html(text: str) -> ParsedDocument:
    parser = _HTMLBlocks(text)
    parser.feed(text)
    parser.close_all()
    title = " ".join(parser.title.split())
    if not title:
        title = next((b.title for b in parser.blocks if b.kind == "heading"), "")
    return ParsedDocument(title=title, blocks=parser.blocks)

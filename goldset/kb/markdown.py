"""Markdown reader: blocks with source spans, with the markup that is not content left out.

Handled: ATX and setext headings with ``{ #anchor }`` ids, fenced code (never split), pipe tables (never
split), YAML front matter, HTML comments and tags (their text is kept), FastAPI/MkDocs directives: code
includes ``{* ../../docs_src/x.py hl[3] *}`` and ``{!> … !}``, admonition/tab markers ``/// note | Title`` …
``///`` (their content is kept), attribute lists such as ``{.internal-link target=_blank}``.

Indented code (CommonMark: four columns after a blank line, outside a list item or an MkDocs admonition or
tab) stays a text block, as it always was (chunk boundaries and ids do not depend on telling it apart), but
its prose is empty: it does not count towards the language.
"""

from __future__ import annotations

import re

from goldset.kb.blocks import Block, ParsedDocument, drop_code_elements, line_spans, prose_text, strip_html

_FENCE_RE = re.compile(r"^\s*(`{3,}|~{3,})\s*([^`\s]*)")
_ATX_RE = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_ANCHOR_RE = re.compile(r"\s*\{\s*#([^\s{}]+)[^{}]*\}\s*$")
_CLOSING_HASHES_RE = re.compile(r"(?:^|\s+)#+\s*$")
_SETEXT_RE = re.compile(r"^ {0,3}(=+|-+)\s*$")
_THEMATIC_RE = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_ADMONITION_RE = re.compile(r"^\s*/{3,}(?:\s.*)?$")
_INCLUDE_RE = re.compile(r"\{\*.*?\*\}|\{!.*?!\}")
_INCLUDE_LINE_RE = re.compile(r"^\s*(?:\{\*.*\*\}|\{!.*!\})\s*$")
_ATTR_LIST_RE = re.compile(r"\{\s*[.:][\w-][^{}\n]*\}")
_TABLE_SEP_RE = re.compile(r"^\s*\|?\s*:?-{1,}:?\s*(?:\|\s*:?-{1,}:?\s*)+\|?\s*$|^\s*\|\s*:?-{1,}:?\s*\|\s*$")
_CODE_SPAN_RE = re.compile(r"(`+)(.+?)\1", re.DOTALL)
_SPACES_RE = re.compile(r"[ \t]{2,}")
_TRAILING_WS_RE = re.compile(r"[ \t]+$", re.MULTILINE)
_MARKUP_CONSOLE_LANGS = frozenset({"console", "shell-session"})
_LIST_ITEM_RE = re.compile(r"^\s*(?:[*+-]|\d{1,9}[.)])(?:\s|$)")
_CONTAINER_RE = re.compile(r"^\s*(?:!!!|\?\?\?\+?|===)(?:\s|$)")  # MkDocs admonitions and tabs: bodies indented


def clean_inline(text: str) -> str:
    """Markdown prose without non-content markup; inline code spans are kept verbatim."""
    parts: list[str] = []
    pos = 0
    for m in _CODE_SPAN_RE.finditer(text):
        parts.append(_clean_prose(text[pos : m.start()]))
        parts.append(m.group(0))
        pos = m.end()
    parts.append(_clean_prose(text[pos:]))
    out = "".join(parts)
    lines = [line for line in _TRAILING_WS_RE.sub("", out).split("\n") if line.strip()]
    return "\n".join(lines).strip("\n")


def _clean_prose(text: str) -> str:
    if "{" in text:
        text = _INCLUDE_RE.sub("", text)
        text = _ATTR_LIST_RE.sub("", text)
    return strip_html(text)


def _prose(text: str) -> str:
    """Prose of Markdown source (see :mod:`goldset.kb.blocks`): inline HTML code elements left out as well."""
    return prose_text(clean_inline(drop_code_elements(text)))


def _no_prose(text: str) -> str:
    return ""


def _indent_width(line: str) -> int:
    expanded = line.expandtabs(4)
    return len(expanded) - len(expanded.lstrip(" "))


def _paragraph_context(lines: list[str], context: str) -> tuple[bool, str]:
    """(is it indented code, the context after it) of a paragraph, given the context before it.

    The context is what a paragraph indented four columns would continue: "list" (a list item), "container"
    (an MkDocs admonition ``!!!``/``???`` or tab ``===``, whose bodies are indented prose), "code", or "".
    """
    indents = [_indent_width(line) for line in lines]
    if min(indents) >= 4:
        return (False, context) if context in ("list", "container") else (True, "code")
    if any(indent < 4 and _LIST_ITEM_RE.match(line) for indent, line in zip(indents, lines, strict=True)):
        return False, "list"
    if _CONTAINER_RE.match(lines[0]):
        return False, "container"
    return False, context if indents[0] > 0 else ""


def _clean_table(text: str) -> str:
    """Row by row (a row must stay one line); tags inside cells leave runs of spaces, collapsed here."""
    rows = (_SPACES_RE.sub(" ", clean_inline(line)) for line in text.split("\n"))
    return "\n".join(row for row in rows if row.strip())


def parse_heading_title(raw: str) -> tuple[str, str]:
    """(display title, anchor) of a heading's text: ``Request Body { #request-body }`` → both parts."""
    anchor = ""
    m = _ANCHOR_RE.search(raw)
    if m:
        anchor = m.group(1)
        raw = raw[: m.start()]
    raw = _CLOSING_HASHES_RE.sub("", raw)
    return " ".join(clean_inline(raw).split()), anchor


def parse_markdown(text: str) -> ParsedDocument:
    """Split Markdown into blocks (headings, prose, code, tables) carrying exact source spans."""
    spans = line_spans(text)
    lines = [text[s:e] for s, e in spans]
    blocks: list[Block] = []
    para: list[int] = []  # indexes of the lines of the paragraph being collected
    context = ""  # see _paragraph_context

    def flush() -> None:
        nonlocal context
        if para:
            start, end = spans[para[0]][0], spans[para[-1]][1]
            cleaned = clean_inline(text[start:end])
            code, context = _paragraph_context([lines[k] for k in para], context)
            if cleaned:
                # Without a tag, prose_text of the cleaned text (the chunker's default) is the same, and cheaper.
                prose = _no_prose if code else _prose if "<" in text[start:end] else None
                blocks.append(Block("text", start, end, cleaned, cleaner=clean_inline, prose=prose))
            para.clear()

    def boundary(line: str) -> None:
        """A fence, table or marker line: it ends a list item or container unless it is indented inside one."""
        nonlocal context
        if _indent_width(line) < 2:
            context = ""

    i = _skip_front_matter(lines)
    n = len(lines)
    while i < n:
        line = lines[i]
        stripped = line.strip()
        if not stripped:
            flush()
            i += 1
            continue
        fence = _FENCE_RE.match(line)
        if fence:
            flush()
            boundary(line)
            i = _read_fence(text, spans, lines, i, fence.group(1), fence.group(2).lower(), blocks)
            continue
        atx = _ATX_RE.match(line)
        if atx:
            flush()
            context = ""
            title, anchor = parse_heading_title(atx.group(2) or "")
            level = len(atx.group(1))
            blocks.append(_heading(spans[i][0], spans[i][1], level, title, anchor))
            i += 1
            continue
        setext = _SETEXT_RE.match(line)
        if setext and len(para) == 1:
            title, anchor = parse_heading_title(lines[para[0]].strip())
            level = 1 if setext.group(1)[0] == "=" else 2
            blocks.append(_heading(spans[para[0]][0], spans[i][1], level, title, anchor))
            para.clear()
            context = ""
            i += 1
            continue
        if _ADMONITION_RE.match(line) or _INCLUDE_LINE_RE.match(line) or (not para and _THEMATIC_RE.match(line)):
            flush()  # markup only: a boundary, not content
            boundary(line)
            i += 1
            continue
        if stripped.startswith("<!--"):
            flush()
            while i < n and "-->" not in lines[i]:
                i += 1
            i += 1
            continue
        if _starts_table(lines, i):
            flush()
            boundary(line)
            j = i
            while j < n and lines[j].strip() and "|" in lines[j]:
                j += 1
            start, end = spans[i][0], spans[j - 1][1]
            cleaned = _clean_table(text[start:end])
            if cleaned.strip():
                blocks.append(Block("table", start, end, cleaned, prose=_prose if "<" in text[start:end] else None))
            i = j
            continue
        para.append(i)
        i += 1
    flush()
    title = next((b.title for b in blocks if b.kind == "heading" and b.level == 1), "")
    if not title:
        title = next((b.title for b in blocks if b.kind == "heading"), "")
    return ParsedDocument(title=title, blocks=blocks)


def _heading(start: int, end: int, level: int, title: str, anchor: str) -> Block:
    return Block("heading", start, end, f"{'#' * level} {title}".rstrip(), level=level, title=title, anchor=anchor)


def _skip_front_matter(lines: list[str]) -> int:
    """Index of the first line after a YAML front-matter block (0 when there is none)."""
    if lines and lines[0].strip() == "---":
        for j in range(1, min(len(lines), 200)):
            if lines[j].strip() in ("---", "..."):
                return j + 1
    return 0


def _starts_table(lines: list[str], i: int) -> bool:
    """A pipe table: a row followed by a separator row (``|---|---|``), or a row starting with ``|``
    inside a run of such rows."""
    if "|" not in lines[i]:
        return False
    if i + 1 < len(lines) and _TABLE_SEP_RE.match(lines[i + 1]):
        return True
    return lines[i].lstrip().startswith("|") and i + 1 < len(lines) and lines[i + 1].lstrip().startswith("|")


def _read_fence(
    text: str, spans: list[tuple[int, int]], lines: list[str], i: int, marker: str, lang: str, blocks: list[Block]
) -> int:
    """Append the fenced code block opening at line ``i``; return the index of the line after it.

    An unclosed fence runs to the end of the document, as in CommonMark.
    """
    char, size = marker[0], len(marker)
    j = i + 1
    while j < len(lines):
        s = lines[j].strip()
        if s.startswith(char * size) and not s.strip(char):
            break
        j += 1
    last = min(j, len(lines) - 1)
    start, end = spans[i][0], spans[last][1]
    body = text[start:end]
    if lang in _MARKUP_CONSOLE_LANGS and "<" in body:
        # FastAPI's terminal captures are coloured with <font>/<span> tags: markup, not content.
        body = strip_html(body)
    body = _TRAILING_WS_RE.sub("", body)
    blocks.append(Block("code", start, end, body))
    return j + 1

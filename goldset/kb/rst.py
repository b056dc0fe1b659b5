"""reStructuredText reader: headings by adornment, ``.. _label:`` anchors, literal and code blocks, tables.

One module per format, like :mod:`goldset.kb.markdown` and :mod:`goldset.kb.html`: a reader turns source text
into the blocks of :mod:`goldset.kb.blocks` with exact source spans, and knows nothing of chunk sizes. It is a
line-based reading of the common subset of reST, not a docutils parse (no dependency, exact spans).
"""

from __future__ import annotations

import re

from goldset.kb.blocks import Block, ParsedDocument, line_spans, prose_text

_RST_ADORN_RE = re.compile(r"^([=\-`:'\"~^_*+#<>.])\1{2,}\s*$")
_RST_LABEL_RE = re.compile(r"^\.\.\s+_([^:]+):\s*$")
_RST_DIRECTIVE_RE = re.compile(r"^\.\.\s+([\w:-]+)::(.*)$")
_RST_CODE_DIRECTIVES = frozenset({"code", "code-block", "sourcecode"})
_RST_DROP_DIRECTIVES = frozenset(
    {"image", "figure", "toctree", "include", "literalinclude", "raw", "contents", "meta", "only", "index"}
)
_RST_SIMPLE_TABLE_RE = re.compile(r"^=+(?:\s+=+)+\s*$")
_RST_ROLE_RE = re.compile(r":[\w:+-]+:`([^`<]*?)\s*(?:<[^`>]*>)?`")
_RST_LINK_RE = re.compile(r"`([^`<]+?)\s*<[^`>]*>`__?")
_RST_ANY_ROLE_RE = re.compile(r":([\w:+-]+):`[^`]*`")
_RST_REFERENCE_RE = re.compile(r"`([^`<]+)`__?")
#: Roles whose text is prose (a title, a term, a label); every other role (func, class, code, file, …) is code.
_RST_PROSE_ROLES = frozenset(
    {"ref", "doc", "numref", "term", "abbr", "dfn", "emphasis", "strong", "title-reference", "title", "t", "sub",
     "sup", "subscript", "superscript", "menuselection", "guilabel", "pep", "rfc"}
)  # fmt: skip


def _clean_rst(text: str) -> str:
    text = _RST_ROLE_RE.sub(r"\1", text)
    text = _RST_LINK_RE.sub(r"\1", text)
    lines = [line.strip() for line in text.split("\n")]
    return "\n".join(line for line in lines if line)


def _prose(text: str) -> str:
    """Prose of reST source (see :mod:`goldset.kb.blocks`): code roles (``:func:`f```) and inline literals
    left out, the text of other roles and of references kept."""
    if ":`" in text:
        text = _RST_ANY_ROLE_RE.sub(
            lambda m: m.group(0) if m.group(1).rsplit(":", 1)[-1].lower() in _RST_PROSE_ROLES else " ", text
        )
    return prose_text(_RST_REFERENCE_RE.sub(r"\1", _clean_rst(text)))


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def parse_rst(text: str) -> ParsedDocument:
    """reStructuredText: headings by adornment (levels in order of first use), ``.. _label:`` anchors,
    ``::`` literal blocks and ``.. code-block::`` as code, grid/simple tables, other directives' markers
    dropped (their content kept)."""
    spans = line_spans(text)
    lines = [text[s:e] for s, e in spans]
    n = len(lines)
    blocks: list[Block] = []
    styles: list[tuple[str, bool]] = []
    label = ""
    para: list[int] = []
    literal_next = False

    def flush() -> None:
        nonlocal literal_next
        if para:
            start, end = spans[para[0]][0], spans[para[-1]][1]
            raw = text[start:end]
            literal_next = raw.rstrip().endswith("::")
            cleaned = _clean_rst(re.sub(r"::\s*$", ":", raw.rstrip()).rstrip(":") + (":" if literal_next else ""))
            if cleaned:
                blocks.append(Block("text", start, end, cleaned, cleaner=_clean_rst, prose=_prose))
            para.clear()

    def indented_until(j: int, base: int) -> int:
        """Index after the block of lines indented deeper than ``base`` (blank lines included) from ``j``."""
        k = j
        last = j - 1
        while k < n:
            if lines[k].strip():
                if _indent(lines[k]) <= base:
                    break
                last = k
            k += 1
        return last + 1

    i = 0
    while i < n:
        line = lines[i]
        stripped = line.strip()
        if not stripped:
            flush()
            i += 1
            continue
        if literal_next and not para and _indent(line) > 0:
            end_i = indented_until(i, 0)
            blocks.append(Block("code", spans[i][0], spans[end_i - 1][1], _dedent(lines[i:end_i])))
            literal_next = False
            i = end_i
            continue
        literal_next = False
        # Heading with overline: adorn / title / adorn
        if (
            not para
            and _RST_ADORN_RE.match(line)
            and i + 2 < n
            and lines[i + 1].strip()
            and lines[i + 2].strip() == stripped
        ):
            i = _rst_heading(text, spans, lines[i + 1], (stripped[0], True), i, i + 2, styles, label, blocks)
            label = ""
            continue
        if not para and i + 1 < n and _RST_ADORN_RE.match(lines[i + 1]) and not _RST_ADORN_RE.match(line):
            adorn = lines[i + 1].strip()
            if len(adorn) >= min(len(stripped), 3) or len(adorn) >= 3:
                i = _rst_heading(text, spans, line, (adorn[0], False), i, i + 1, styles, label, blocks)
                label = ""
                continue
        m = _RST_LABEL_RE.match(stripped) if not para and _indent(line) == 0 else None
        if m:
            label = m.group(1).strip()
            i += 1
            continue
        d = _RST_DIRECTIVE_RE.match(stripped) if not para else None
        if d:
            name = d.group(1).lower()
            end_i = indented_until(i + 1, _indent(line))
            body = [ln for ln in lines[i + 1 : end_i]]
            content = [ln for ln in body if not re.match(r"^\s*:[\w-]+:", ln)]
            if name in _RST_CODE_DIRECTIVES:
                code = _dedent(content)
                if code.strip():
                    blocks.append(Block("code", spans[i][0], spans[end_i - 1][1], code))
                i = end_i
                continue
            if name in _RST_DROP_DIRECTIVES:
                i = end_i
                continue
            i += 1  # admonitions and the like: drop the marker, keep the (indented) content as prose
            while i < end_i and re.match(r"^\s*:[\w-]+:", lines[i]):
                i += 1
            continue
        if stripped.startswith("..") and not para and _indent(line) == 0:  # a comment
            i = indented_until(i + 1, 0)
            continue
        if not para and (_RST_SIMPLE_TABLE_RE.match(stripped) or re.match(r"^\+[-=+]+\+$", stripped)):
            j = _rst_table_end(lines, i)
            start, end = spans[i][0], spans[j - 1][1]
            blocks.append(Block("table", start, end, "\n".join(ln.rstrip() for ln in lines[i:j])))
            i = j
            continue
        para.append(i)
        i += 1
    flush()
    title = next((b.title for b in blocks if b.kind == "heading"), "")
    return ParsedDocument(title=title, blocks=blocks)


def _rst_table_end(lines: list[str], i: int) -> int:
    """Index after a table starting at line ``i``: a grid table runs to the next blank line; a simple table
    (``=====  =====`` borders) to the border line that is followed by a blank line or the end."""
    n = len(lines)
    if not _RST_SIMPLE_TABLE_RE.match(lines[i].strip()):
        j = i + 1
        while j < n and lines[j].strip():
            j += 1
        return j
    j = i + 1
    while j < n:
        if _RST_SIMPLE_TABLE_RE.match(lines[j].strip()) and (j + 1 >= n or not lines[j + 1].strip()):
            return j + 1
        j += 1
    return n


def _rst_heading(
    text: str,
    spans: list[tuple[int, int]],
    title_line: str,
    style: tuple[str, bool],
    first: int,
    last: int,
    styles: list[tuple[str, bool]],
    label: str,
    blocks: list[Block],
) -> int:
    if style not in styles:
        styles.append(style)
    level = min(styles.index(style) + 1, 6)
    title = _clean_rst(title_line.strip())
    anchor = label
    blocks.append(
        Block("heading", spans[first][0], spans[last][1], f"{'#' * level} {title}", level=level, title=title,
              anchor=anchor)
    )  # fmt: skip
    return last + 1


def _dedent(lines: list[str]) -> str:
    body = [ln.rstrip() for ln in lines]
    while body and not body[-1]:
        body.pop()
    while body and not body[0]:
        body.pop(0)
    indents = [_indent(ln) for ln in body if ln.strip()]
    cut = min(indents) if indents else 0
    return "\n".join(ln[cut:] for ln in body)

"""Reading a documents folder: which files, how they decode, and how each format becomes blocks.

Formats: Markdown (.md, .markdown), plain text (.txt), HTML (.html, .htm; stdlib html.parser) and
reStructuredText (.rst; underline/overline headings, ``.. _label:`` anchors, literal and code blocks).

Every problem with one file is a *skip* with a reason (``SkipFile``), collected as a warning naming the file;
only problems with the folder itself stop the run (see :mod:`goldset.kb.snapshot`).
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path, PurePosixPath

from goldset.kb.blocks import Block, ParsedDocument, line_spans, strip_html
from goldset.kb.markdown import parse_markdown
from goldset.kb.settings import KBSettings

#: suffix → format
FORMATS: dict[str, str] = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".html": "html",
    ".htm": "html",
    ".rst": "rst",
}
_SNIFF_BYTES = 8192


class SkipFile(Exception):
    """One file cannot be ingested; ``str(exc)`` says why and what to do."""


@dataclass(frozen=True)
class SourceFile:
    doc_id: str  # path relative to the KB root, POSIX separators
    path: Path


@dataclass
class Discovery:
    files: list[SourceFile] = field(default_factory=list)
    #: (relative path, reason) of files and folders left out, in walk order
    skipped: list[tuple[str, str]] = field(default_factory=list)
    unsupported: Counter[str] = field(default_factory=Counter)


# --------------------------------------------------------------------------------------------- discovery


def discover(root: Path, settings: KBSettings) -> Discovery:
    """Supported files under ``root``, sorted by path; hidden files and folders are left out.

    Symbolic links are followed; a link that leads back to one of its own parent folders (a loop), a broken
    link and a second path to an already listed file or folder are reported and skipped.
    """
    found = Discovery()
    root_real = root.resolve()
    _walk(root, PurePosixPath(), (str(root_real),), {str(root_real)}, {}, settings, found)
    found.files.sort(key=lambda f: f.doc_id)
    return found


def _walk(
    folder: Path,
    rel: PurePosixPath,
    ancestors: tuple[str, ...],
    seen_dirs: set[str],
    seen_files: dict[str, tuple[str, bool]],
    settings: KBSettings,
    found: Discovery,
) -> None:
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as exc:
        found.skipped.append((str(rel) if rel.parts else ".", f"cannot list folder ({exc.strerror}); skipped"))
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue
        rel_path = rel / entry.name
        doc_id = rel_path.as_posix()
        path = Path(entry.path)
        try:
            real = str(path.resolve(strict=True)) if entry.is_symlink() else str(path.absolute())
        except (OSError, RuntimeError) as exc:
            is_loop = isinstance(exc, RuntimeError) or getattr(exc, "errno", None) == 40  # ELOOP
            reason = "symlink loop; skipped" if is_loop else "broken symlink (its target does not exist); skipped"
            found.skipped.append((doc_id, reason))
            continue
        try:
            is_dir = entry.is_dir(follow_symlinks=True)
            is_file = entry.is_file(follow_symlinks=True)
        except OSError as exc:
            found.skipped.append((doc_id, f"cannot read ({exc.strerror}); skipped"))
            continue
        if is_dir:
            if entry.is_symlink():
                real = str(Path(real).resolve())
            if real in ancestors:
                found.skipped.append((doc_id, "symlink loop (links back to a parent folder); skipped"))
                continue
            if real in seen_dirs:
                found.skipped.append((doc_id, "same folder as another path already read (symlink); skipped"))
                continue
            seen_dirs.add(real)
            _walk(path, rel_path, (*ancestors, real), seen_dirs, seen_files, settings, found)
        elif is_file:
            suffix = PurePosixPath(entry.name).suffix.lower()
            if suffix not in FORMATS:
                found.unsupported[suffix or "(no suffix)"] += 1
                continue
            if not _selected(doc_id, settings):
                continue
            is_link = entry.is_symlink()
            if is_link or real in seen_files:
                real = str(Path(real).resolve())
            if real in seen_files:
                first, first_is_link = seen_files[real]
                if first_is_link and not is_link:
                    # Two paths to one file: keep the real one, whichever the walk met first.
                    found.files = [f for f in found.files if f.doc_id != first]
                    found.skipped.append((first, f"same file as {doc_id} (symlink); skipped"))
                    seen_files[real] = (doc_id, is_link)
                    found.files.append(SourceFile(doc_id, path))
                else:
                    found.skipped.append((doc_id, f"same file as {first} (symlink); skipped"))
                continue
            seen_files[real] = (doc_id, is_link)
            found.files.append(SourceFile(doc_id, path))
        else:
            found.skipped.append((doc_id, "not a regular file; skipped"))


def _selected(doc_id: str, settings: KBSettings) -> bool:
    if settings.include and not any(fnmatch.fnmatchcase(doc_id, pat) for pat in settings.include):
        return False
    return not any(fnmatch.fnmatchcase(doc_id, pat) for pat in settings.exclude)


# --------------------------------------------------------------------------------------------- decoding


def read_source(path: Path, settings: KBSettings) -> tuple[str, str, bytes]:
    """(text, encoding used, raw bytes) of one file, or :class:`SkipFile` with the reason.

    UTF-8 first (a BOM is dropped), then UTF-16 with a BOM, then GB18030 (a superset of GBK and GB2312,
    the encodings Chinese documents come in when they are not UTF-8).
    """
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise SkipFile(f"cannot read ({exc.strerror}); skipped") from None
    if size > settings.max_file_bytes:
        raise SkipFile(
            f"{size:,} bytes is over kb.max_file_bytes ({settings.max_file_bytes:,}); skipped "
            "(raise kb.max_file_bytes to include it)"
        )
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SkipFile(f"cannot read ({exc.strerror}); skipped") from None
    if not data.strip():
        raise SkipFile("empty file; skipped")
    text, encoding = decode(data)
    if not text.strip():
        raise SkipFile("empty file; skipped")
    return text, encoding, data


def decode(data: bytes) -> tuple[str, str]:
    """Decode document bytes, or raise :class:`SkipFile` (binary or undecodable)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16"), "utf-16"
        except UnicodeDecodeError:
            raise SkipFile("starts with a UTF-16 mark but does not decode as UTF-16; skipped") from None
    if b"\x00" in data[:_SNIFF_BYTES]:
        raise SkipFile("binary file (contains NUL bytes), not text; skipped")
    try:
        return data.decode("utf-8-sig"), "utf-8"
    except UnicodeDecodeError:
        pass
    try:
        text = data.decode("gb18030")
    except UnicodeDecodeError:
        raise SkipFile("not UTF-8 or GB18030/GBK text; skipped (convert it to UTF-8)") from None
    if _looks_binary(text):
        raise SkipFile("binary file (control characters), not text; skipped")
    return text, "gb18030"


def _looks_binary(text: str) -> bool:
    sample = text[:_SNIFF_BYTES]
    controls = sum(1 for c in sample if ord(c) < 32 and c not in "\t\n\r\f")
    return controls > max(8, len(sample) // 100)


# --------------------------------------------------------------------------------------------- parsers


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


# HTML ---------------------------------------------------------------------------------------------------

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
                self.blocks.append(Block("text", self._text_start, end, text, cleaner=_clean_html))
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
                        self.blocks.append(Block("table", start, end, text))
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
                self.blocks.append(
                    Block("heading", start, end, f"{'#' * level} {title}", level=level, title=title, anchor=anchor)
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


# reStructuredText ----------------------------------------------------------------------------------------

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


def _clean_rst(text: str) -> str:
    text = _RST_ROLE_RE.sub(r"\1", text)
    text = _RST_LINK_RE.sub(r"\1", text)
    lines = [line.strip() for line in text.split("\n")]
    return "\n".join(line for line in lines if line)


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
                blocks.append(Block("text", start, end, cleaned, cleaner=_clean_rst))
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

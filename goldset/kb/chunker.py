"""Structure-aware chunking: headings first, then blocks packed to a target size, code and tables never split.

Rules, in order:

1. The document is cut into sections at every heading; a section's heading path is the list of its
   ancestors' keys (the ``{ #anchor }`` when present, else the title).
2. Inside a section, blocks are packed greedily up to ``target_tokens``; a block that would overflow starts a
   new chunk, unless the chunk so far is smaller than ``min_tokens`` and the two fit in ``max_tokens``.
3. A prose block larger than ``max_tokens`` is cut at line, then sentence, then token boundaries of its
   source. A code block or table larger than ``max_tokens`` becomes one chunk of its own, flagged
   ``oversized``.
4. A heading with no text of its own is carried into the next section's first chunk; a section smaller than
   ``min_tokens`` joins the previous chunk when the two fit in ``max_tokens`` (the first section of a
   document joins the next one instead).
5. ``position`` counts chunks within one heading path, so the id of a chunk depends only on its document,
   its section and its place in that section: editing one section never renames chunks of another.
6. Pages (PDF pages and slides, :attr:`Block.page`) are hard boundaries: a chunk holds the text of one page
   (a heading at the foot of a page travels with the text under it on the next), the small-section rules of
   4 never join two pages, and ``position`` counts chunks within a page, the page taking the heading path's
   place in the id: editing one page never renames chunks of another, nor does retitling a chapter.

A chunk's language is told from its prose, code left out (see :mod:`goldset.kb.blocks`); a chunk with too
little prose to tell from (:data:`goldset.text.MIN_LANGUAGE_WORDS`) takes its document's language, which is
told from the prose of the whole document. Language is not part of a chunk's id or content hash.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from goldset.hashing import sha256_hex, short_hash
from goldset.kb.blocks import Block, ParsedDocument, prose_text
from goldset.kb.settings import KBSettings
from goldset.schema import Chunk
from goldset.text import count_tokens, detect_language, normalize

OVERSIZED = "oversized"
SPLIT = "split"  # a prose block larger than max_tokens was cut at sentence or token boundaries

_SENTENCE_END_RE = re.compile(r"(?<=[.!?;:。！？；：])[ \t]+|(?<=[。！？；])")
_TOKEN_BOUNDARY_RE = re.compile(r"\S+\s*")
_LINK_RE = re.compile(r"!?\[([^\]\n]*)\]\([^)\n]*\)")
_LINK_REF_RE = re.compile(r"\[([^\]\n]*)\]\[[^\]\n]*\]")
_SEPARATOR = "\n\n"


def content_text(text: str) -> str:
    """The form a content hash is taken over: links reduced to their text, then :func:`normalize`.

    ``[docs](a.md)`` → ``[docs](b.md)``, ``<a href=…>docs</a>`` → ``[docs](…)``, re-wrapped lines and case
    changes are therefore not content changes.
    """
    text = _LINK_RE.sub(r"\1", text)
    text = _LINK_REF_RE.sub(r"\1", text)
    return normalize(text)


def content_hash(text: str) -> str:
    return sha256_hex(content_text(text))


def chunk_id(doc_id: str, heading_path: list[str] | tuple[str, ...], position: int, page: int | None = None) -> str:
    """Stable id: document, heading path and position within the section. Never the text, never random.

    The path is joined with U+001E (not "/"), a character no title contains, so ["a/b"] and ["a", "b"]
    differ. A chunk of a paged format (``page`` given) is named by its page instead of its heading path, and
    ``position`` counts within the page (rule 6 of the module docstring).
    """
    if page is not None:
        return "c-" + short_hash(doc_id + "\x1f\x1dpage " + str(page) + "\x1f" + str(position))
    return "c-" + short_hash(doc_id + "\x1f" + "\x1e".join(heading_path) + "\x1f" + str(position))


@dataclass
class _Unit:
    """A placeable piece: one block, or one cut of an oversized prose block."""

    text: str
    start: int
    end: int
    tokens: int
    kind: str
    #: what the unit's language is told from: its text without code (see goldset.kb.blocks)
    prose: str


@dataclass
class _Piece:
    """A chunk under construction."""

    path: tuple[str, ...]
    titles: tuple[str, ...]
    units: list[_Unit] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    page: int | None = None

    @property
    def tokens(self) -> int:
        return sum(u.tokens for u in self.units)

    def add(self, unit: _Unit) -> None:
        self.units.append(unit)


@dataclass
class _Section:
    path: tuple[str, ...]
    titles: tuple[str, ...]
    heading: _Unit | None
    body: list[Block]
    #: the page of its body (of its heading while it has none); None for formats without pages
    page: int | None = None


def chunk_document(text: str, doc_id: str, settings: KBSettings | None = None) -> list[Chunk]:
    """Chunks of one document, read according to the suffix of ``doc_id`` (.md, .txt, .html, .rst).

    Pure: same text, id and settings give the same chunks, byte for byte.
    """
    from goldset.kb.readers import parse_text

    parsed = parse_text(text, PurePosixPath(doc_id).suffix.lower())
    return chunk_parsed(text, parsed, doc_id, settings or KBSettings())


def document_language(source: str, parsed: ParsedDocument) -> str:
    """The language of a whole document, told from its prose (code left out)."""
    return detect_language(" ".join(_block_prose(source, b) for b in parsed.blocks))


def chunk_parsed(
    source: str, parsed: ParsedDocument, doc_id: str, settings: KBSettings, *, doc_language: str | None = None
) -> list[Chunk]:
    """Chunks of an already parsed document (``source`` is the decoded text the block spans point into).

    ``doc_language``: the document's :func:`document_language`, when the caller has it already.
    """
    sections = _sections(source, parsed.blocks)
    if doc_language is None:
        doc_language = document_language(source, parsed)
    pieces: list[_Piece] = []
    carried: _Unit | None = None  # heading-only sections (or a small first section) waiting for the next text
    carried_from: _Section | None = None  # the first section in ``carried``
    for index, section in enumerate(sections):
        heading = section.heading
        if carried is not None:
            heading = _join_units(carried, heading) if heading is not None else carried
            carried = None
        else:
            carried_from = section
        if not section.body and heading is not None:
            carried = heading
            continue
        own = _pack(source, section, heading, settings)
        if not own:
            continue
        total = sum(p.tokens for p in own)
        if total < settings.min_tokens:
            if pieces and pieces[-1].page == section.page and pieces[-1].tokens + total <= settings.max_tokens:
                # A small section joins the chunk before it (its text keeps its heading line).
                for p in own:
                    pieces[-1].units.extend(p.units)
                continue
            if not pieces and index < len(sections) - 1 and sections[index + 1].page == section.page:
                # The first section of a document (title + short intro) joins the next section instead.
                carried = _merge_units([u for p in own for u in p.units])
                continue
        pieces.extend(own)
    if carried is not None:  # trailing headings (or a too-small only section): keep them as a chunk
        same_page = carried_from is None or (bool(pieces) and pieces[-1].page == carried_from.page)
        if pieces and same_page and pieces[-1].tokens + carried.tokens <= settings.max_tokens:
            pieces[-1].add(carried)
        elif carried_from is not None:
            pieces.append(_Piece(carried_from.path, carried_from.titles, [carried], page=carried_from.page))
    title = parsed.title or PurePosixPath(doc_id).stem
    return _to_chunks(source, pieces, doc_id, title, doc_language)


def _block_prose(source: str, block: Block) -> str:
    if block.kind == "code":
        return ""
    if block.prose is not None:
        return block.prose(source[block.start : block.end])
    return prose_text(block.text)


def _sections(source: str, blocks: list[Block]) -> list[_Section]:
    sections: list[_Section] = []
    stack: list[Block] = []
    current = _Section((), (), None, [])
    for block in blocks:
        if block.kind == "heading":
            if current.heading is not None or current.body:
                sections.append(current)
            while stack and stack[-1].level >= block.level:
                stack.pop()
            stack.append(block)
            unit = _Unit(
                block.text, block.start, block.end, count_tokens(block.text), "heading", _block_prose(source, block)
            )
            current = _Section(tuple(b.key for b in stack), tuple(b.title for b in stack), unit, [], block.page)
        else:
            if block.page != current.page:
                if current.body:  # the section goes on on another page: a section of its own there (rule 6)
                    sections.append(current)
                    current = _Section(current.path, current.titles, None, [], block.page)
                else:  # a heading with no text yet: it belongs with the text under it, on this page
                    current.page = block.page
            current.body.append(block)
    if current.heading is not None or current.body:
        sections.append(current)
    return sections


def _pack(source: str, section: _Section, heading: _Unit | None, settings: KBSettings) -> list[_Piece]:
    """Greedy packing of one section's blocks (rule 2 and 3 of the module docstring)."""
    pieces: list[_Piece] = []
    current = _Piece(section.path, section.titles, page=section.page)
    pending_heading = heading

    def flush() -> None:
        nonlocal current
        if current.units:
            pieces.append(current)
        current = _Piece(section.path, section.titles, page=section.page)

    for block in section.body:
        units = _units(source, block, settings)
        if pending_heading is not None:
            # A heading opens the chunk of the text under it (kept apart only if joining would pass max).
            joined = _join_units(pending_heading, units[0])
            if joined.tokens <= settings.max_tokens or units[0].kind in ("code", "table"):
                units[0] = joined
            else:
                units.insert(0, pending_heading)
            pending_heading = None
        for unit in units:
            atomic = unit.kind in ("code", "table")
            if atomic and unit.tokens > settings.max_tokens:
                # Oversized: a chunk of its own (only its heading line, if it has one, travels with it).
                flush()
                current.add(unit)
                current.flags.append(OVERSIZED)
                flush()
                continue
            size = current.tokens
            fits_target = size + unit.tokens <= settings.target_tokens
            # A chunk still under min_tokens may grow up to max_tokens rather than be left tiny.
            too_small = size < settings.min_tokens and size + unit.tokens <= settings.max_tokens
            if not current.units or fits_target or too_small:
                current.add(unit)
            else:
                flush()
                current.add(unit)
            if unit.kind == "split" and SPLIT not in current.flags:
                current.flags.append(SPLIT)
    if pending_heading is not None:
        current.add(pending_heading)
    flush()
    if len(pieces) >= 2:
        last, before = pieces[-1], pieces[-2]
        small = last.tokens < settings.min_tokens and before.tokens + last.tokens <= settings.max_tokens
        if small and OVERSIZED not in last.flags + before.flags:
            # A small tail (e.g. the rest of a cut paragraph) joins the chunk before it.
            before.units.extend(last.units)
            before.flags.extend(f for f in last.flags if f not in before.flags)
            pieces.pop()
    return pieces


def _units(source: str, block: Block, settings: KBSettings) -> list[_Unit]:
    tokens = count_tokens(block.text)
    if block.kind != "text" or tokens <= settings.max_tokens or block.cleaner is None:
        return [_Unit(block.text, block.start, block.end, tokens, block.kind, _block_prose(source, block))]
    return _split_prose(source, block, settings)


def _split_prose(source: str, block: Block, settings: KBSettings) -> list[_Unit]:
    """Cut an oversized prose block at source positions: lines, then sentences, then whitespace.

    Cutting the source (not the cleaned text) keeps each piece's character span exact; each piece is
    cleaned on its own.
    """
    cleaner = block.cleaner
    if cleaner is None:  # pragma: no cover - guarded by the caller
        return []
    limit = settings.target_tokens
    atoms: list[tuple[int, int]] = []
    for s, e in _cuts(source, block.start, block.end, "\n"):
        if count_tokens(source[s:e]) <= limit:
            atoms.append((s, e))
            continue
        for s2, e2 in _regex_cuts(source, s, e, _SENTENCE_END_RE):
            if count_tokens(source[s2:e2]) <= limit:
                atoms.append((s2, e2))
            else:
                atoms.extend(_token_cuts(source, s2, e2, limit))
    units: list[_Unit] = []
    start = end = -1
    size = 0
    for s, e in atoms:
        n = count_tokens(source[s:e])
        if start >= 0 and size + n > limit:
            units.append(_cut_unit(source, start, end, cleaner, block.prose))
            start, size = -1, 0
        if start < 0:
            start = s
        end, size = e, size + n
    if start >= 0:
        units.append(_cut_unit(source, start, end, cleaner, block.prose))
    return [u for u in units if u.text]


def _cut_unit(
    source: str, start: int, end: int, cleaner: Callable[[str], str], prose: Callable[[str], str] | None
) -> _Unit:
    raw = source[start:end]
    text = cleaner(raw)
    return _Unit(text, start, end, count_tokens(text), "split", prose(raw) if prose is not None else prose_text(text))


def _cuts(source: str, start: int, end: int, sep: str) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    pos = start
    while pos < end:
        k = source.find(sep, pos, end)
        stop = end if k < 0 else k
        if source[pos:stop].strip():
            out.append((pos, stop))
        pos = stop + len(sep) if k >= 0 else end
    return out


def _regex_cuts(source: str, start: int, end: int, pattern: re.Pattern[str]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    pos = start
    for m in pattern.finditer(source, start, end):
        if m.start() > pos and source[pos : m.start()].strip():
            out.append((pos, m.start()))
        pos = max(pos, m.end())
    if pos < end and source[pos:end].strip():
        out.append((pos, end))
    return out


def _token_cuts(source: str, start: int, end: int, limit: int) -> list[tuple[int, int]]:
    """Last resort: windows of at most ``limit`` tokens, cut at whitespace or between CJK characters."""
    out: list[tuple[int, int]] = []
    pos = start
    size = 0
    piece_start = start
    for m in _TOKEN_BOUNDARY_RE.finditer(source, start, end):
        word = m.group(0)
        n = count_tokens(word)
        if n > limit:  # one long CJK run without spaces: cut by characters
            if pos > piece_start:
                out.append((piece_start, pos))
            k = m.start()
            while k < m.end():
                j = _advance_tokens(source, k, m.end(), limit)
                out.append((k, j))
                k = j
            piece_start, pos, size = m.end(), m.end(), 0
            continue
        if size + n > limit and pos > piece_start:
            out.append((piece_start, pos))
            piece_start, size = pos, 0
        size += n
        pos = m.end()
    if pos > piece_start:
        out.append((piece_start, pos))
    return out


def _advance_tokens(source: str, start: int, end: int, limit: int) -> int:
    """The largest offset whose prefix from ``start`` holds at most ``limit`` tokens (always > ``start``).

    Galloping then bisecting, so the cost depends on the size of one piece, not on the whole run.
    """
    lo, step = start + 1, max(limit, 1)
    hi = min(end, start + step)
    while hi < end and count_tokens(source[start:hi]) <= limit:
        lo = hi
        step *= 2
        hi = min(end, start + step)
    if count_tokens(source[start:hi]) <= limit:
        return hi
    while lo < hi - 1:  # invariant: lo fits, hi does not
        mid = (lo + hi) // 2
        if count_tokens(source[start:mid]) <= limit:
            lo = mid
        else:
            hi = mid
    return lo


def _join_units(first: _Unit, second: _Unit) -> _Unit:
    return _Unit(
        first.text + _SEPARATOR + second.text,
        first.start,
        second.end,
        first.tokens + second.tokens,
        second.kind if second.kind != "heading" else first.kind,
        first.prose + _SEPARATOR + second.prose,
    )


def _merge_units(units: list[_Unit]) -> _Unit:
    merged = units[0]
    for unit in units[1:]:
        merged = _join_units(merged, unit)
    return merged


def _to_chunks(source: str, pieces: list[_Piece], doc_id: str, doc_title: str, doc_language: str) -> list[Chunk]:
    chunks: list[Chunk] = []
    positions: dict[tuple[str, ...] | int, int] = {}
    for piece in pieces:
        # Windows line ends inside a block are not content: chunk text always uses "\n".
        text = _SEPARATOR.join(u.text for u in piece.units).replace("\r\n", "\n").replace("\r", "\n")
        start, end = piece.units[0].start, piece.units[-1].end
        counter: tuple[str, ...] | int = piece.path if piece.page is None else piece.page
        position = positions.get(counter, 0)
        positions[counter] = position + 1
        language = detect_language(" ".join(u.prose for u in piece.units), fallback=doc_language)
        chunks.append(
            Chunk(
                id=chunk_id(doc_id, piece.path, position, piece.page),
                doc_id=doc_id,
                doc_title=doc_title,
                heading_path=list(piece.path),
                heading_titles=list(piece.titles),
                position=position,
                text=text,
                content_hash=content_hash(text),
                raw_hash=sha256_hex(source[start:end]),
                language=language,
                n_tokens=count_tokens(text),
                char_start=start,
                char_end=end,
                flags=sorted(set(piece.flags)),
                page=piece.page,
            )
        )
    return chunks

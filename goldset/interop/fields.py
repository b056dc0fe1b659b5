"""Field-mapping helpers every format shares: which pairs an export takes, the reference contexts of a pair, the
row a pair becomes in a table, reading JSON / JSON Lines files row by row, and turning rows read back into pairs.

**From rows to pairs** (:func:`build_pairs`), the same for every format:

- the question type is the row's; a row without one takes ``question_type`` when given, else it is refused (one
  line naming the file and row): goldset does not guess a type;
- the language is the row's, else detected from the question and answer (:func:`goldset.text.detect_language`);
- each context becomes evidence when it can be located in a known chunk (:class:`Locator`): in the chunk the file
  names if it holds the text, else in any known chunk that holds it verbatim, else once whitespace and Unicode width
  are folded (the way the ``evidence`` filter matches quotes), the file's document first. A context found nowhere is
  left out, the pair is tagged ``import:evidence-not-located`` and the report names the row and the context; a pair
  left with no evidence is then rejected by ``goldset filter``'s evidence check unless it is ``unanswerable``. With
  no known chunk at all (no workspace, no corpus), a context the file gives with its chunk id and document is kept
  as it is and the report says it was not checked;
- the id is the file's when it carries goldset's id, else :func:`goldset.schema.pair_id` of the located chunks, type
  and question; two rows giving one id are refused;
- ``provenance.source`` is ``"import"`` (with the located chunks' content hashes), the status ``candidate``: the
  filters and the review decide again whatever the file says.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goldset.errors import InputError
from goldset.interop.base import Context, ContextMode, Row

if TYPE_CHECKING:
    from goldset.dataset import Dataset
    from goldset.schema import Chunk, Evidence, QAPair

#: Tag on an imported pair some of whose contexts were found in no known chunk.
NOT_LOCATED = "import:evidence-not-located"
#: Tag on an imported pair whose type the file did not give (``question_type=`` was used).
TYPE_GIVEN = "import:type-given"
STATUS_CHOICES = ("golden", "all")


# ------------------------------------------------------------------------------------------------ exporting


def select_pairs(dataset: Dataset, status: str = "golden") -> tuple[list[QAPair], str]:
    """The pairs an export takes, sorted by id, and a phrase saying which.

    ``golden``: a release's golden set (``manifest.golden_ids``); in a working folder the passed and accepted
    pairs. ``all``: every pair. A status name (``accepted``, ``rejected`` …): the pairs with that status.
    """
    from goldset.schema import PairStatus

    allowed = (*STATUS_CHOICES, *(s.value for s in PairStatus))
    if status not in allowed:
        raise InputError(f"status {status!r}: expected one of {', '.join(allowed)}")
    where = dataset.path or "the dataset"
    if status == "all":
        chosen, what = list(dataset.pairs), "every pair, whatever its status"
    elif status == "golden":
        golden = dataset.golden_ids()
        chosen = [p for p in dataset.pairs if p.id in golden]
        manifest = dataset.manifest
        if manifest is not None and manifest.golden_ids:
            what = f"the golden set of release {manifest.version}" if manifest.version else "the golden set"
        else:
            what = "the golden set (passed and accepted pairs)"
        if not chosen:
            raise InputError(
                f"{where}: no golden pairs (passed or accepted) to export; run `goldset filter` first, or export "
                "every pair with status 'all'"
            )
    else:
        chosen = [p for p in dataset.pairs if p.status.value == status]
        what = f"the {status} pairs"
        if not chosen:
            raise InputError(f"{where}: no {status} pairs to export")
    return sorted(chosen, key=lambda p: p.id), what


def reference_contexts(
    pair: QAPair, chunks: Mapping[str, Chunk], mode: ContextMode, notes: list[str] | None = None
) -> list[tuple[str, str, str]]:
    """(text, chunk id, doc id) of each reference context of a pair: one per evidence quote, or (``chunks``) the
    whole text of each cited chunk once. A cited chunk the dataset lacks gives its quotes instead (noted)."""
    if mode == "quotes":
        return [(e.quote, e.chunk_id, e.doc_id) for e in pair.evidence]
    out: list[tuple[str, str, str]] = []
    for cid in dict.fromkeys(e.chunk_id for e in pair.evidence):
        chunk = chunks.get(cid)
        if chunk is not None:
            out.append((chunk.text, chunk.id, chunk.doc_id))
            continue
        out += [(e.quote, e.chunk_id, e.doc_id) for e in pair.evidence if e.chunk_id == cid]
        if notes is not None:
            notes.append(f"{pair.id}: chunk {cid} is not in the dataset; its quotes were written instead of its text")
    return out


def json_text(rows: Iterable[dict[str, Any]], *, ascii_only: bool = False) -> str:
    """JSON Lines text, one row per line."""
    return "".join(json.dumps(r, ensure_ascii=ascii_only) + "\n" for r in rows)


# ------------------------------------------------------------------------------------------------ reading files


def read_bytes(path: Path, what: str) -> bytes:
    """The bytes of the ``what`` file at ``path``; a missing file or a folder is refused naming it."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{path}: file not found") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a folder; give the {what} file") from None


def read_text(path: Path, what: str, fix: str = "re-save the file as UTF-8") -> str:
    """The text of the ``what`` file at ``path``, UTF-8 (a byte-order mark is fine); other bytes are refused naming
    the first bad byte and saying ``fix``."""
    try:
        return read_bytes(path, what).decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {exc.start + 1}); {fix}") from None


def read_json_records(path: Path, what: str) -> list[tuple[str, dict[str, Any]]]:
    """(where, object) of each record of a JSON array file or a JSON Lines file (``.jsonl``), UTF-8 (a byte-order
    mark is fine). ``where`` is ``file:line`` for JSON Lines and ``file: row N`` for an array. A record that is not
    a JSON object, or a file that is neither, is refused naming the file and row."""
    text = read_text(path, what)
    out: list[tuple[str, dict[str, Any]]] = []
    if path.suffix.lower() == ".jsonl" or not text.lstrip().startswith("["):
        for lineno, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}:{lineno}: not valid JSON ({exc.msg}); fix or remove the line") from None
            if not isinstance(obj, dict):
                raise InputError(f"{path}:{lineno}: expected a JSON object (one {what} record per line)")
            out.append((f"{path}:{lineno}", obj))
        return out
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno}); fix the file") from None
    for i, obj in enumerate(data, start=1):
        if not isinstance(obj, dict):
            raise InputError(f"{path}: row {i}: expected a JSON object (a {what} record)")
        out.append((f"{path}: row {i}", obj))
    return out


def optional_str(value: Any, where: str, name: str) -> str | None:
    """A text field that may be absent (None or ''); anything but text is refused."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise InputError(f"{where}: {name} must be text, not {type(value).__name__}")
    return value


def str_list(value: Any, where: str, name: str) -> list[str]:
    """A list of texts that may be absent; anything else is refused naming the row and field."""
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InputError(f"{where}: {name} must be a list of texts")
    return list(value)


def aligned(values: list[str], hints: Any, where: str, name: str) -> list[str | None]:
    """Per-context hints (chunk ids, doc ids) aligned with ``values``; absent → all None, a wrong length refused."""
    if hints is None:
        return [None] * len(values)
    listed = str_list(hints, where, name)
    if len(listed) != len(values):
        raise InputError(f"{where}: {name} has {len(listed)} items for {len(values)} contexts; give one per context")
    return [h or None for h in listed]


# ------------------------------------------------------------------------------------------------ importing


class _TextIndex:
    """The texts of the chunks joined into one string, to find every chunk holding a needle with ``str.find``
    (one pass in C over the corpus instead of a Python loop over its chunks)."""

    SEP = "\x00"

    def __init__(self, texts: list[str]) -> None:
        self.starts: list[int] = []
        pos = 0
        for t in texts:
            self.starts.append(pos)
            pos += len(t) + 1
        self.text = self.SEP.join(texts)

    def hits(self, needle: str) -> list[int]:
        """Indexes of the texts holding ``needle``, in order."""
        from bisect import bisect_right

        out: list[int] = []
        if not needle or self.SEP in needle:
            return out
        at = self.text.find(needle)
        while at >= 0:
            k = bisect_right(self.starts, at) - 1
            out.append(k)
            at = self.text.find(needle, self.starts[k + 1]) if k + 1 < len(self.starts) else -1
        return out


def fold(text: str, *, quote: bool = False) -> str:
    """Whitespace collapsed and NFKC-folded (a ``quote`` also loses a leading or trailing ellipsis): the form the
    evidence filter compares quotes in (:func:`goldset.filters.evidence.quote_found` confirms every match found
    this way)."""
    import re
    import unicodedata

    from goldset.text import normalize_ws

    if quote:
        text = re.sub(r"^(?:\.\.\.|…)\s*|\s*(?:\.\.\.|…)$", "", text.strip())
    return normalize_ws(unicodedata.normalize("NFKC", text))


class Locator:
    """Finds the known chunk a context comes from (module docstring). Pure lookups; no I/O. The chunks are
    searched through one joined text (built on first use), so a foreign file of thousands of rows is located
    against a KB of thousands of chunks in seconds."""

    def __init__(self, chunks: Mapping[str, Chunk]) -> None:
        self.chunks = chunks
        self._ordered = sorted(chunks.values(), key=lambda c: (c.doc_id, c.id))
        self._by_text: dict[tuple[str, str], Chunk] = {}
        for c in self._ordered:
            self._by_text.setdefault((c.doc_id, c.text), c)
        self._exact: _TextIndex | None = None
        self._folded: _TextIndex | None = None

    def _hits(self, text: str) -> tuple[list[Chunk], str]:
        from goldset.filters.evidence import quote_found

        if self._exact is None:
            self._exact = _TextIndex([c.text for c in self._ordered])
        hits = [self._ordered[k] for k in self._exact.hits(text.strip())]
        if hits:
            return hits, "found"
        if self._folded is None:
            self._folded = _TextIndex([fold(c.text) for c in self._ordered])
        found = [self._ordered[k] for k in self._folded.hits(fold(text, quote=True))]
        return [c for c in found if quote_found(text, c.text)], "folded"

    def locate(self, ctx: Context) -> tuple[Evidence | None, str]:
        """(evidence, how): how is ``named`` (in the chunk the file named, by id or by its whole text), ``found``
        (verbatim elsewhere), ``folded`` (after folding whitespace and width), ``ambiguous`` (several chunks hold
        it: the one in the file's document if it is the only one there, else the first by document and id),
        ``unchecked`` (no chunk known: the file's ids kept), ``not-found`` or ``no-corpus``."""
        from goldset.filters.evidence import quote_found
        from goldset.schema import Evidence

        text = ctx.text
        if not self.chunks:
            if ctx.chunk_id and ctx.doc_id:
                return Evidence(chunk_id=ctx.chunk_id, doc_id=ctx.doc_id, quote=text), "unchecked"
            return None, "no-corpus"
        named = self.chunks.get(ctx.chunk_id) if ctx.chunk_id else None
        if named is None and ctx.chunk_text is not None:
            named = self._by_text.get((ctx.doc_id or "", ctx.chunk_text))
        if named is not None and quote_found(text, named.text):
            return Evidence(chunk_id=named.id, doc_id=named.doc_id, quote=text), "named"
        hits, how = self._hits(text)
        if not hits:
            return None, "not-found"
        in_doc = [c for c in hits if ctx.doc_id is not None and c.doc_id == ctx.doc_id]
        chosen = (in_doc or hits)[0]
        if len(in_doc) > 1 or (not in_doc and len(hits) > 1):
            how = "ambiguous"
        return Evidence(chunk_id=chosen.id, doc_id=chosen.doc_id, quote=text), how


@dataclass
class Built:
    """Pairs made from rows, and what the report must say about them."""

    pairs: list[QAPair] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: "where: context N …" for each context left out of the evidence
    unlocated: list[str] = field(default_factory=list)
    located: dict[str, int] = field(default_factory=dict)


def build_pairs(
    rows: Iterable[Row],
    chunks: Mapping[str, Chunk],
    *,
    question_type: str | None = None,
    kb_snapshot_id: str | None = None,
) -> Built:
    """Rows read from a file → candidate pairs (module docstring). Raises :class:`InputError` naming the row on the
    first row that cannot be a pair."""
    from pydantic import ValidationError

    from goldset.io import invalid_record
    from goldset.schema import PairStatus, Provenance, QAPair, QuestionType, pair_id
    from goldset.text import detect_language

    types = [t.value for t in QuestionType]
    if question_type is not None and question_type not in types:
        raise InputError(f"question_type {question_type!r}: expected one of {', '.join(types)}")
    locator = Locator(chunks)
    built = Built()
    first_row: dict[str, str] = {}
    for row in rows:
        qtype = row.question_type or question_type
        tags = list(row.tags)
        if qtype is None:
            raise InputError(
                f"{row.where}: no question type (the file does not give one); give question_type "
                f"({', '.join(types)}) to import such rows with that type"
            )
        if qtype not in types:
            raise InputError(f"{row.where}: question type {qtype!r} is not one of {', '.join(types)}")
        if row.question_type is None:
            tags.append(TYPE_GIVEN)
        evidence: list[Evidence] = []
        for i, ctx in enumerate(row.contexts, start=1):
            if not ctx.text.strip():
                built.notes.append(f"{row.where}: context {i} is empty; left out")
                continue
            ev, how = locator.locate(ctx)
            built.located[how] = built.located.get(how, 0) + 1
            if ev is None:
                why = "no chunk is known to look it up in" if how == "no-corpus" else "found in no known chunk"
                built.unlocated.append(f"{row.where}: context {i} {why} ({ctx.text.strip()[:60]!r}): left out")
                if NOT_LOCATED not in tags:
                    tags.append(NOT_LOCATED)
                continue
            if how == "ambiguous":
                built.notes.append(
                    f"{row.where}: context {i} is in several chunks; cited {ev.chunk_id} ({ev.doc_id})"
                )
            evidence.append(ev)
        question, answer = row.question, row.answer
        language = row.language
        if language is None and isinstance(question, str) and isinstance(answer, str):
            language = detect_language(f"{question}\n{answer}")
        hashes = {e.chunk_id: chunks[e.chunk_id].content_hash for e in evidence if e.chunk_id in chunks}
        try:
            text = question if isinstance(question, str) else ""
            pair = QAPair(
                id=row.id or pair_id([e.chunk_id for e in evidence], qtype, text),
                question=question,  # type: ignore[arg-type]  # validated here: a non-text value is refused
                answer=answer,  # type: ignore[arg-type]
                question_type=QuestionType(qtype),
                language=language or "en",
                evidence=evidence,
                provenance=Provenance(source="import", kb_snapshot_id=kb_snapshot_id, chunk_hashes=hashes),
                status=PairStatus.candidate,
                tags=tags,
            )
        except ValidationError as exc:
            raise InputError(f"{row.where}: {invalid_record(exc, 'QAPair')}") from None
        if pair.id in first_row:
            raise InputError(
                f"{row.where}: the same pair as {first_row[pair.id]} (id {pair.id}); keep one row per pair"
            )
        first_row[pair.id] = row.where
        built.pairs.append(pair)
    unchecked = built.located.get("unchecked", 0)
    if unchecked:
        built.notes.append(
            f"{unchecked} evidence item(s) kept as the file gives them (chunk id, document, quote) without any known "
            "chunk to check them against; `goldset filter` checks them against the KB"
        )
    return built

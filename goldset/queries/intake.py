"""Real user questions in: a CSV, a JSON Lines file or one question per line becomes the workspace's store of real
questions (``.goldset/queries.jsonl``, one :class:`~goldset.schema.queries.RealQuestion` per distinct question).

Personal data is redacted (:func:`goldset.privacy.redact_personal`) the moment a row is read: nothing below the
reader, the store, an LLM prompt or a report, ever sees the raw text. Questions are normalised (whitespace, stray
quotes), exact duplicates (same tokens: case, width, punctuation and spacing aside) and near duplicates (token-set
Jaccard ≥ ``queries.near_duplicate``) are merged with their counts summed. Each copy's ``file:line`` is kept; a
row already imported (same ``file:line``) is not counted twice, so importing a file again changes nothing.
"""

from __future__ import annotations

import csv
import json
import math
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goldset.context import Context
from goldset.errors import InputError
from goldset.filters.textsim import canonical, token_set
from goldset.hashing import short_hash
from goldset.io import read_jsonl, write_jsonl
from goldset.privacy import redact_personal
from goldset.queries.settings import QueriesSettings
from goldset.schema.queries import RealQuestion
from goldset.text import detect_language, normalize_ws

if TYPE_CHECKING:
    from goldset.workspace import Workspace, WorkspaceLike

QUERIES_FILE = "queries.jsonl"
FORMATS = ("csv", "jsonl", "text")
_QUOTES = "\"'`“”‘’「」"


def queries_path(ws: Workspace) -> Path:
    """The workspace's store of real questions."""
    return ws.state_dir / QUERIES_FILE


def read_queries(ws: Workspace) -> list[RealQuestion]:
    """The stored real questions ([] before any import)."""
    path = queries_path(ws)
    return read_jsonl(path, RealQuestion) if path.exists() else []


def question_key(text: str) -> str:
    """What exact duplicates share: the question's tokens (case, width, punctuation and spacing aside)."""
    return canonical(text)


def question_id(text: str) -> str:
    """A real question's stable id."""
    return "rq-" + short_hash(question_key(text))


@dataclass(frozen=True)
class QueryRow:
    """One row of the file, already redacted."""

    question: str
    count: int
    origin: str
    redacted: dict[str, int]
    timestamp: str | None = None
    answer: str | None = None
    contexts: tuple[str, ...] = ()


@dataclass
class QueryImport:
    """What :func:`import_queries` did: rows read, distinct questions, merges, the redaction (kind → count; the
    values themselves are gone) and where the store is."""

    source: str
    #: What the file was decoded as: utf-8, or gb18030 for a Chinese Excel or WPS export (GBK is a subset).
    encoding: str = "utf-8"
    rows: int = 0
    blank: int = 0
    already_imported: int = 0
    merged_exact: int = 0
    merged_near: int = 0
    added: list[RealQuestion] = field(default_factory=list)
    questions: list[RealQuestion] = field(default_factory=list)
    redacted: dict[str, int] = field(default_factory=dict)
    path: Path | None = None

    @property
    def asked(self) -> int:
        """Times the imported questions were asked (their counts summed)."""
        return sum(q.count for q in self.questions)


def _clean(text: str) -> str:
    text = normalize_ws(text)
    while len(text) > 1 and text[0] in _QUOTES and text[-1] in _QUOTES:
        text = text[1:-1].strip()
    return text


def _redacted_row(
    question: str, origin: str, count: Any = 1, timestamp: Any = None, answer: Any = None, contexts: Any = None
) -> QueryRow:
    found: Counter[str] = Counter()

    def red(text: str) -> str:
        r = redact_personal(text)
        found.update(r.found)
        return r.text

    try:
        n = int(str(count).strip() or 1) if count is not None else 1
    except ValueError:
        raise InputError(f"{origin}: count {str(count)[:20]!r} is not a whole number") from None
    if n < 1:
        raise InputError(f"{origin}: count must be 1 or more, not {n}")
    if isinstance(contexts, str):
        try:
            contexts = json.loads(contexts) if contexts.strip().startswith("[") else [contexts]
        except json.JSONDecodeError:
            contexts = [contexts]
    ctx_list = tuple(red(normalize_ws(str(c))) for c in (contexts or []) if str(c).strip())
    question_text = red(_clean(question))
    answer_text = (red(normalize_ws(str(answer))) or None) if answer is not None else None
    return QueryRow(
        question=question_text,
        count=n,
        origin=origin,
        redacted=dict(sorted(found.items())),
        timestamp=(str(timestamp).strip() or None) if timestamp is not None else None,
        answer=answer_text,
        contexts=ctx_list,
    )


def detect_format(path: Path) -> str:
    """csv (``.csv``, ``.tsv``), jsonl (``.jsonl``, ``.ndjson``, ``.json``) or text (anything else)."""
    suffix = path.suffix.lower()
    if suffix in (".csv", ".tsv"):
        return "csv"
    if suffix in (".jsonl", ".ndjson", ".json"):
        return "jsonl"
    return "text"


def read_rows(path: Path, fmt: str | None = None, text: str | None = None) -> Iterator[QueryRow | None]:
    """The file's rows, each redacted as it is read (``None`` for a blank row); ``text``: the file's, already read
    (:func:`read_text`)."""
    fmt = fmt or detect_format(path)
    if fmt not in FORMATS:
        raise InputError(f"format {fmt!r}: a queries file is one of {', '.join(FORMATS)}")
    if text is None:
        if not path.is_file():
            raise InputError(f"{path}: no such file of questions")
        text, _ = read_text(path)
    if fmt == "text":
        for lineno, line in enumerate(text.splitlines(), start=1):
            if not line.strip() or line.lstrip().startswith("#"):
                yield None
                continue
            yield _redacted_row(line, f"{path}:{lineno}")
    elif fmt == "jsonl":
        for lineno, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                yield None
                continue
            where = f"{path}:{lineno}"
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{where}: not JSON ({exc.msg})") from None
            if isinstance(obj, str):
                obj = {"question": obj}
            if not isinstance(obj, dict):
                raise InputError(f"{where}: expected an object with a 'question' field (or a string)")
            yield _from_mapping(obj, where)
    else:
        lines = text.splitlines()
        reader = csv.DictReader(lines, delimiter=_delimiter(lines, tab=path.suffix.lower() == ".tsv"))
        names = {(n or "").strip().lower(): n for n in reader.fieldnames or []}
        if "question" not in names:
            raise InputError(f"{path}: no 'question' column (columns: {', '.join(names) or 'none'})")
        for lineno, row in enumerate(reader, start=2):
            yield _from_mapping({k: row.get(orig) for k, orig in names.items()}, f"{path}:{lineno}")


def read_text(path: Path) -> tuple[str, str]:
    """(text, encoding) of a queries file: UTF-8 (a BOM dropped, as Excel's "CSV UTF-8" writes), UTF-16 with a
    BOM, or GB18030 (what Excel and WPS on Chinese Windows save a CSV as); else an InputError saying what to do."""
    from goldset.kb.decoding import SkipFile, decode

    try:
        return decode(path.read_bytes())
    except SkipFile as exc:
        reason = str(exc).removesuffix("; skipped (convert it to UTF-8)").removesuffix("; skipped")
        raise InputError(f"{path}: {reason}; save it as UTF-8 text") from None


#: Column separators a questions table comes with: comma first, then what spreadsheet exports use in locales whose
#: decimal mark is a comma (semicolon), tab-separated exports saved as .csv, and pipes.
_DELIMITERS = (",", "\t", ";", "|")


def _delimiter(lines: list[str], *, tab: bool) -> str:
    """The separator of the header row that gives a ``question`` column (a ``.tsv``: tab first); comma if none."""
    header = next((line for line in lines if line.strip()), "")
    for sep in ("\t", *_DELIMITERS) if tab else _DELIMITERS:
        cells = next(csv.reader([header], delimiter=sep), [])
        if "question" in (c.strip().lower() for c in cells):
            return sep
    return "\t" if tab else ","


def _from_mapping(obj: dict[str, Any], where: str) -> QueryRow | None:
    lower = {str(k).strip().lower(): v for k, v in obj.items()}
    question = lower.get("question")
    if question is None or not str(question).strip():
        return None
    return _redacted_row(
        str(question), where, lower.get("count"), lower.get("timestamp"), lower.get("answer"), lower.get("contexts")
    )


class _Merger:
    """Groups questions: exact duplicates by key (a dict lookup), near duplicates by token-set Jaccard, found with
    the prefix filter of all-pairs similarity search: with the tokens in one global order (rarest first), two sets
    with Jaccard ≥ t share a token among the first ``|A| - ceil(t·|A|) + 1`` of each, so only questions sharing
    such a token are compared (near-linear on real logs instead of n²)."""

    def __init__(self, existing: Iterable[RealQuestion], threshold: float, texts: Iterable[str] = ()) -> None:
        self.threshold = threshold
        self.by_id: dict[str, RealQuestion] = {q.id: q for q in existing}
        self.by_key: dict[str, str] = {question_key(q.question): q.id for q in self.by_id.values()}
        for q in self.by_id.values():
            for v in q.variants:
                self.by_key.setdefault(question_key(v), q.id)
        self.sets: dict[str, frozenset[str]] = {}
        self.postings: dict[str, list[str]] = {}
        df: Counter[str] = Counter()
        for text in [*(q.question for q in self.by_id.values()), *texts]:
            df.update(token_set(text))
        self.rank = {t: i for i, (t, _) in enumerate(sorted(df.items(), key=lambda kv: (kv[1], kv[0])))}
        for qid, q in self.by_id.items():
            self.add_set(qid, token_set(q.question))
        self.origins = {o for q in self.by_id.values() for o in q.origins}

    def prefix(self, tokens: frozenset[str]) -> list[str]:
        ordered = sorted(tokens, key=lambda t: (self.rank.get(t, -1), t))
        return ordered[: len(ordered) - math.ceil(self.threshold * len(ordered) - 1e-9) + 1]

    def add_set(self, qid: str, tokens: frozenset[str]) -> None:
        self.sets[qid] = tokens
        for t in self.prefix(tokens):
            self.postings.setdefault(t, []).append(qid)

    def near(self, tokens: frozenset[str]) -> str | None:
        if not tokens:
            return None
        best, best_sim = None, self.threshold
        seen: set[str] = set()
        for t in self.prefix(tokens):
            for qid in self.postings.get(t, ()):
                if qid in seen:
                    continue
                seen.add(qid)
                other = self.sets[qid]
                sim = len(tokens & other) / len(tokens | other)
                if sim >= best_sim and (best is None or sim > best_sim or qid < best):
                    best, best_sim = qid, sim
        return best


def _merge(q: RealQuestion, row: QueryRow, *, variant: bool) -> RealQuestion:
    update: dict[str, Any] = {
        "count": q.count + row.count,
        "origins": [*q.origins, row.origin],
        "redacted": dict(sorted((Counter(q.redacted) + Counter(row.redacted)).items())),
    }
    if variant and row.question != q.question and row.question not in q.variants:
        update["variants"] = [*q.variants, row.question]
    if row.timestamp:
        update["first_seen"] = min(filter(None, [q.first_seen, row.timestamp]))
        update["last_seen"] = max(filter(None, [q.last_seen, row.timestamp]))
    if q.answer is None and row.answer:
        update["answer"] = row.answer
    if not q.contexts and row.contexts:
        update["contexts"] = list(row.contexts)
    return q.model_copy(update=update)


def import_queries(
    file: str | Path, ws: WorkspaceLike | Context = None, *, format: str | None = None, store: bool = True
) -> QueryImport:
    """Read real user questions from ``file`` into the workspace's store (``.goldset/queries.jsonl``).

    ``format``: ``csv`` (a ``question`` column; optional ``count``, ``timestamp``, ``answer``, ``contexts``),
    ``jsonl`` (objects with the same fields, or strings) or ``text`` (one question per line, ``#`` comments);
    by default from the file's suffix. Personal data is redacted as each row is read; exact and near-duplicate
    questions are merged, their counts summed. Rows already imported (same ``file:line``) are skipped.
    Then ``goldset generate --from-queries`` drafts their reference answers. ``store=False`` reads and merges the
    file alone and writes nothing (``goldset coverage``).
    """
    ctx = Context.of(ws)
    settings = ctx.section(QueriesSettings)
    path = Path(file)
    report = QueryImport(source=str(path))
    if format is not None and format not in FORMATS:
        raise InputError(f"format {format!r}: a queries file is one of {', '.join(FORMATS)}")
    if not path.is_file():
        raise InputError(f"{path}: no such file of questions")
    text, report.encoding = read_text(path)
    existing = read_queries(ctx.workspace) if store else []
    rows = list(read_rows(path, format, text))  # already redacted; read whole: the token order covers every question
    merger = _Merger(existing, settings.near_duplicate, (r.question for r in rows if r is not None))
    found: Counter[str] = Counter()
    added: dict[str, None] = {}
    for row in rows:
        report.rows += 1
        if row is None:
            report.blank += 1
            continue
        if row.origin in merger.origins:
            report.already_imported += 1
            continue
        merger.origins.add(row.origin)
        found.update(row.redacted)
        if not row.question.strip():
            report.blank += 1
            continue
        key = question_key(row.question)
        qid = merger.by_key.get(key)
        if qid is not None:
            report.merged_exact += 1
            merger.by_id[qid] = _merge(merger.by_id[qid], row, variant=False)
            continue
        tokens = token_set(row.question)
        qid = merger.near(tokens)
        if qid is not None:
            report.merged_near += 1
            merger.by_id[qid] = _merge(merger.by_id[qid], row, variant=True)
            merger.by_key[key] = qid
            continue
        new = RealQuestion(
            id=question_id(row.question),
            question=row.question,
            count=row.count,
            language=detect_language(row.question),
            origins=[row.origin],
            redacted=row.redacted,
            first_seen=row.timestamp,
            last_seen=row.timestamp,
            answer=row.answer,
            contexts=list(row.contexts),
        )
        merger.by_id[new.id] = new
        merger.by_key[key] = new.id
        merger.add_set(new.id, tokens)
        added[new.id] = None
    if report.rows == report.blank:
        raise InputError(f"{path}: no question in this file")
    report.redacted = dict(sorted(found.items()))
    report.questions = sorted(merger.by_id.values(), key=lambda q: (-q.count, q.id))
    report.added = [merger.by_id[qid] for qid in added]
    if not store:
        return report
    report.path = queries_path(ctx.workspace)
    report.path.parent.mkdir(parents=True, exist_ok=True)
    write_jsonl(report.path, merger.by_id.values())
    return report

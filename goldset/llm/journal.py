"""The persistent call journal and cache: SQLite in ``.goldset/calls.sqlite``.

Every completed call is committed here *before* its result is handed back, so a run killed at any moment
(even ``kill -9``) resumes without repeating a committed call: only the calls in flight at the kill (at most
the concurrency) can be sent again. SQLite in WAL mode with ``synchronous=NORMAL`` makes a commit durable
against a process crash (a power cut may lose the last commits, which are then simply re-sent).

The key is :func:`call_key` (model, rendered messages, schema, sampling parameters): an unchanged re-run is
all cache hits; any change to a prompt, a chunk, the schema or the temperature is a miss. Failed calls are
recorded in a separate table for the record and are never served as cache hits. No API key is ever stored:
the key is not part of anything written here, and error text is redacted before it arrives.
"""

from __future__ import annotations

import contextlib
import functools
import json
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

from goldset.errors import WorkspaceError
from goldset.hashing import canonical_json, sha256_hex

JOURNAL_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS calls (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    schema_name TEXT NOT NULL,
    reply TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    usage_estimated INTEGER NOT NULL DEFAULT 0,
    cost_usd REAL,
    attempts INTEGER NOT NULL,
    request TEXT,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS failures (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL,
    model TEXT NOT NULL,
    schema_name TEXT NOT NULL,
    error TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    attempts INTEGER NOT NULL,
    created REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS failures_key ON failures(key);
"""


def call_key(model: str, messages: Sequence[Mapping[str, Any]], schema_json: Mapping[str, Any],
             params: Mapping[str, Any]) -> str:
    """The cache key of one call: sha256 of the canonical JSON of what determines the reply.

    ``params`` holds sampling parameters (temperature, seed, max_tokens); ``None`` values are dropped so that
    "not given" and an explicit default that is not sent hash alike.
    """
    payload = {
        "v": JOURNAL_VERSION,
        "model": model,
        "messages": [dict(m) for m in messages],
        "schema": schema_json,
        "params": {k: v for k, v in params.items() if v is not None},
    }
    return sha256_hex(canonical_json(payload))


def call_key_from_json(model: str, messages_json: str, schema_json_text: str, params: Mapping[str, Any]) -> str:
    """:func:`call_key` from the canonical JSON of the messages (``canonical_json([dict(m) for m in messages])``)
    and of the schema, which the client has already: the same key, from the same text, without encoding the
    schema and the prompt again on every call."""
    kept = {k: v for k, v in params.items() if v is not None}
    payload = {"v": JOURNAL_VERSION, "model": model, "params": kept}
    return sha256_hex(canonical_json_with(payload, messages=messages_json, schema=schema_json_text))


def canonical_json_with(value: Mapping[str, Any], **encoded: str) -> str:
    """``canonical_json`` of ``value`` plus the keys of ``encoded``, whose values are given already encoded (as
    canonical JSON): the canonical JSON of a dict is its ``"key":value`` items sorted by key, so this is the same
    text as encoding the whole dict."""
    items = {k: canonical_json(v) for k, v in value.items()} | encoded
    return "{" + ",".join(f"{_key_json(k)}:{items[k]}" for k in sorted(items)) + "}"


@functools.lru_cache(maxsize=256)
def _key_json(key: str) -> str:
    """A key's canonical JSON: the same few keys on every call, encoded once."""
    return canonical_json(key)


@dataclass(frozen=True)
class JournalEntry:
    """A successful call as stored: ``reply`` is the validated JSON value."""

    key: str
    model: str
    schema_name: str
    reply: Any
    prompt_tokens: int
    completion_tokens: int
    usage_estimated: bool
    cost_usd: float | None
    attempts: int
    created: float


class CallJournal:
    """SQLite journal of LLM calls. Safe to use from many asyncio tasks (and threads) of one process, and from
    several processes at once (WAL, busy timeout)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=30.0, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
            self._db.execute(
                "INSERT OR IGNORE INTO meta(name, value) VALUES ('version', ?)", (str(JOURNAL_VERSION),)
            )
        except sqlite3.DatabaseError as exc:
            raise WorkspaceError(
                f"{self.path}: cannot open the LLM call journal ({exc}); delete the file to start a fresh cache"
            ) from None

    def close(self) -> None:
        """Close the database (everything is committed already)."""
        with self._lock:
            self._db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def _errors(self) -> Iterator[None]:
        """SQLite failures (disk full, read-only, locked for 30 s) become a one-line WorkspaceError."""
        try:
            yield
        except sqlite3.Error as exc:
            raise WorkspaceError(
                f"{self.path}: cannot use the LLM call journal ({exc}); check disk space and permissions, or "
                "delete the file to start a fresh cache"
            ) from None

    def get(self, key: str) -> JournalEntry | None:
        """The successful call stored under ``key``, or ``None``. Failures are never returned."""
        with self._lock, self._errors():
            row = self._db.execute(
                "SELECT key, model, schema_name, reply, prompt_tokens, completion_tokens, usage_estimated, "
                "cost_usd, attempts, created FROM calls WHERE key = ?",
                (key,),
            ).fetchone()
        if row is None:
            return None
        return JournalEntry(
            key=row[0], model=row[1], schema_name=row[2], reply=json.loads(row[3]), prompt_tokens=row[4],
            completion_tokens=row[5], usage_estimated=bool(row[6]), cost_usd=row[7], attempts=row[8],
            created=row[9],
        )

    def put(
        self,
        key: str,
        *,
        model: str,
        schema_name: str,
        reply: Any,
        prompt_tokens: int,
        completion_tokens: int,
        usage_estimated: bool = False,
        cost_usd: float | None = None,
        attempts: int = 1,
        request: Mapping[str, Any] | None = None,
        request_json: str | None = None,
    ) -> None:
        """Store a successful call; committed when this returns. ``request_json`` is ``canonical_json(request)``
        when the caller has it already."""
        if request_json is None and request is not None:
            request_json = canonical_json(request)
        with self._lock, self._errors():
            self._db.execute(
                "INSERT OR REPLACE INTO calls(key, model, schema_name, reply, prompt_tokens, completion_tokens, "
                "usage_estimated, cost_usd, attempts, request, created) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (
                    key, model, schema_name, canonical_json(reply), prompt_tokens, completion_tokens,
                    int(usage_estimated), cost_usd, attempts, request_json, time.time(),
                ),
            )

    def put_failure(
        self,
        key: str,
        *,
        model: str,
        schema_name: str,
        error: str,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        attempts: int = 1,
    ) -> None:
        """Record a failed call (for the record only; a later run tries it again)."""
        with self._lock, self._errors():
            self._db.execute(
                "INSERT INTO failures(key, model, schema_name, error, prompt_tokens, completion_tokens, attempts, "
                "created) VALUES (?,?,?,?,?,?,?,?)",
                (key, model, schema_name, error, prompt_tokens, completion_tokens, attempts, time.time()),
            )

    def fact(self, name: str) -> Any:
        """What an earlier run learnt about a server under ``name`` (e.g. the structured-output mode it takes), or
        ``None``. Stored as JSON in the ``meta`` table."""
        with self._lock, self._errors():
            row = self._db.execute("SELECT value FROM meta WHERE name = ?", (f"fact {name}",)).fetchone()
        return None if row is None else json.loads(row[0])

    def put_fact(self, name: str, value: Any) -> None:
        """Remember ``value`` (JSON) under ``name`` for later runs; committed when this returns."""
        with self._lock, self._errors():
            self._db.execute(
                "INSERT OR REPLACE INTO meta(name, value) VALUES (?, ?)", (f"fact {name}", canonical_json(value))
            )

    def count(self) -> int:
        """Successful calls stored."""
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM calls").fetchone()[0])

    def failures(self, key: str | None = None) -> list[tuple[str, str]]:
        """(key, error) of recorded failures, oldest first."""
        with self._lock:
            if key is None:
                rows = self._db.execute("SELECT key, error FROM failures ORDER BY id").fetchall()
            else:
                rows = self._db.execute("SELECT key, error FROM failures WHERE key = ? ORDER BY id", (key,)).fetchall()
        return [(r[0], r[1]) for r in rows]

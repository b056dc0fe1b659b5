"""Reading and writing records: JSON Lines sorted by id, written whole through a temp file and a rename.

A reader never drops a record silently: a malformed line raises :class:`RecordError` with the file and the
1-based line number, and nothing is rewritten.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import signal
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from goldset.errors import InputError, RecordError

if TYPE_CHECKING:
    from pydantic import BaseModel

M = TypeVar("M", bound="BaseModel")


def file_mode(path: Path) -> int:
    """Keep an existing file's permissions; a new file gets 0666 less the umask (mkstemp would give 0600)."""
    try:
        return path.stat().st_mode & 0o777
    except FileNotFoundError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the new one, never a half-written one."""
    atomic_write_parts(path, (data,))


def atomic_write_parts(path: Path, parts: Iterable[bytes]) -> None:
    """:func:`atomic_write_bytes` of ``parts`` written one after the other: a large file is never whole in memory."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            for data in parts:
                fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        Path(tmp).chmod(file_mode(path))
        Path(tmp).replace(path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            Path(tmp).unlink()
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def dump_record(record: BaseModel) -> str:
    """One record as one JSON line (no trailing newline). Unset defaults are written: files are explicit."""
    return record.model_dump_json()


def write_jsonl(path: Path, records: Iterable[BaseModel], key: str = "id") -> int:
    """Rewrite ``path`` with ``records`` sorted by ``key``; returns the number written."""
    rows = sorted(records, key=lambda r: getattr(r, key))
    if len(rows) >= _FORK_FROM and hasattr(os, "fork"):
        parts = _jsonl_in_two(rows, Path(path).parent)
    else:
        parts = _jsonl_batches(rows)
    atomic_write_parts(path, parts)
    return len(rows)


#: Records per write: the file's text is never held whole (50,000 pairs are ~50 MB of JSON).
_BATCH = 1000
#: From this many records on, a forked process serialises the second half while this one does the first (50,000
#: pairs take a second to serialise).
_FORK_FROM = 20_000


def _jsonl_batches(rows: list[BaseModel]) -> Iterator[bytes]:
    """The JSON lines of ``rows``, :data:`_BATCH` records at a time."""
    for i in range(0, len(rows), _BATCH):
        yield "".join(dump_record(r) + "\n" for r in rows[i : i + _BATCH]).encode("utf-8")


def _jsonl_in_two(rows: list[BaseModel], folder: Path) -> Iterator[bytes]:
    """:func:`_jsonl_batches` of ``rows``, its second half written by a forked child to a temp file in ``folder``
    meanwhile, then read back: the same bytes (if the child fails, this process serialises that half itself)."""
    half = len(rows) // 2
    fd, name = tempfile.mkstemp(prefix=".goldset-part.", suffix=".tmp", dir=folder)
    part, pid = Path(name), -1
    try:
        try:
            pid = os.fork()
        except OSError:  # no process to spare: all here
            os.close(fd)
            yield from _jsonl_batches(rows)
            return
        if pid == 0:  # the child: its half to the part file, then out without any of the parent's exit handlers
            code = 1
            try:
                gc.disable()  # a collection would walk (and copy) every inherited object's page
                with os.fdopen(fd, "wb") as fh:
                    for data in _jsonl_batches(rows[half:]):
                        fh.write(data)
                code = 0
            finally:
                os._exit(code)
        os.close(fd)
        yield from _jsonl_batches(rows[:half])
        _, status = os.waitpid(pid, 0)
        pid = -1
        if status != 0:
            yield from _jsonl_batches(rows[half:])
            return
        with part.open("rb") as fh:
            yield from iter(lambda: fh.read(1 << 20), b"")
    finally:
        if pid > 0:  # stopped early (the write failed): the child's half is not wanted
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        with contextlib.suppress(FileNotFoundError):
            part.unlink()


def iter_jsonl_numbered(path: Path, model: type[M]) -> Iterator[tuple[int, M]]:
    """Yield (1-based line number, validated record); raise :class:`RecordError` naming file and line on the first
    bad one: not UTF-8, not JSON, not the model, or an ``id`` already seen on an earlier line (two records with one
    id would silently become one when the file is rewritten). Blank lines and a UTF-8 byte-order mark are skipped.

    Lines are decoded one by one (not the whole file as text) so a bad byte is reported on its own line.
    """
    from pydantic import ValidationError

    path = Path(path)
    try:
        fh = path.open("rb")
    except FileNotFoundError:
        raise InputError(f"{path}: file not found") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a folder, not a JSON Lines file") from None
    seen: dict[str, int] = {}
    with fh:
        for lineno, raw in enumerate(fh, start=1):
            if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            if not raw.strip():
                continue
            try:  # pydantic's own JSON parser: one pass over the bytes, ~2x faster than json.loads + validate
                record = model.model_validate_json(raw)
            except ValidationError as exc:
                raise line_error(path, lineno, raw, exc, model.__name__) from None
            rid = getattr(record, "id", None)
            if isinstance(rid, str):
                first = seen.setdefault(rid, lineno)
                if first != lineno:
                    raise RecordError(
                        str(path), lineno, f"duplicate id {rid!r} (also on line {first}); give each record its own id"
                    )
            yield lineno, record


def line_error(path: Path, lineno: int, raw: bytes, exc: Exception, model_name: str) -> RecordError:
    """What is wrong with a line pydantic refused, said the way a person fixes it: not UTF-8, not JSON, or not the
    record (the slow path runs only for the one bad line)."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        detail = f"not UTF-8 text (byte {err.start + 1} of the line); re-save the file as UTF-8"
        return RecordError(str(path), lineno, detail)
    try:
        json.loads(line)
    except json.JSONDecodeError as err:
        return RecordError(str(path), lineno, f"not valid JSON ({err.msg}); fix or remove the line")
    return RecordError(str(path), lineno, invalid_record(exc, model_name))


def iter_jsonl(path: Path, model: type[M]) -> Iterator[M]:
    """Yield validated records; raise :class:`RecordError` naming file and line on the first bad one."""
    for _, record in iter_jsonl_numbered(path, model):
        yield record


def read_jsonl(path: Path, model: type[M]) -> list[M]:
    """Every record of a JSON Lines file, as :func:`iter_jsonl` gives them. The file is read whole and parsed in one
    loop (~10% faster on a release's thousands of pairs); on any problem :func:`iter_jsonl` reads it again to report
    it (file:line)."""
    from pydantic import ValidationError

    try:
        data = Path(path).read_bytes()
        out: list[M] = []
        seen: set[str] = set()
        for line in data.removeprefix(b"\xef\xbb\xbf").split(b"\n"):
            if not line.strip():
                continue
            record = model.model_validate_json(line)
            rid = getattr(record, "id", None)
            if isinstance(rid, str):
                if rid in seen:
                    raise ValueError(rid)
                seen.add(rid)
            out.append(record)
    except (OSError, ValidationError, ValueError):
        return list(iter_jsonl(path, model))
    return out


def read_json(path: Path, model: type[M]) -> M:
    from pydantic import ValidationError

    path = Path(path)
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: file not found") from None
    try:
        return model.model_validate_json(raw)
    except ValidationError as exc:
        raise RecordError(str(path), None, invalid_record(exc, model.__name__)) from None


def write_json(path: Path, record: BaseModel) -> None:
    atomic_write_text(path, record.model_dump_json(indent=2) + "\n")


def describe_validation_error(exc: Exception, limit: int = 3) -> str:
    """A pydantic ValidationError as one line: ``field.path: message; …`` for the first ``limit`` errors."""
    errors = getattr(exc, "errors", None)
    if not callable(errors):
        return str(exc)
    found = errors()
    parts = [
        f"{'.'.join(str(p) for p in e.get('loc', ())) or '(record)'}: {e.get('msg', 'invalid')}" for e in found[:limit]
    ]
    if len(found) > limit:
        parts.append(f"and {len(found) - limit} more")
    return "; ".join(parts)


def invalid_record(exc: Exception, model_name: str) -> str:
    """'invalid QAPair: answer: must not be empty; …': the wording every records file uses for a bad record."""
    return f"invalid {model_name}: {describe_validation_error(exc)}"

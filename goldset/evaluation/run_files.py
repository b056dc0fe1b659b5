"""Reading a run file: JSON Lines of :class:`~goldset.schema.RunSample` that the user's system wrote (plain,
zstd-compressed like a run folder's ``samples.jsonl.zst``, or gzip-compressed), checked against the dataset it
claims to answer.

The reader behaves as :func:`goldset.io.iter_jsonl_numbered` does (file:line errors, a UTF-8 byte-order mark
accepted, a bad byte reported on its own line) but is built for run files of hundreds of megabytes:

- each line is validated straight from its bytes by pydantic's JSON parser (the stdlib parser plus validation
  takes twice as long); the slower, detailed path runs only on a line that fails, to word the error;
- retrieved texts recur (a system retrieves from a fixed index), so identical context texts share one string:
  10,000 questions × 10 contexts drawn from a few thousand chunks hold a few thousand strings, not 100,000;
- and they are decoded once: a context text whose raw JSON bytes were read before (in a line that validated) is
  replaced in the line by a one-letter string before pydantic reads it, and put back after. Decoding the texts
  was two thirds of the time (1.4 s of CPU for a 170 MB run, 0.6 s with this). It cannot change what is read: the
  raw content of a JSON string read before is a string again wherever it stands, so the line is valid exactly
  when it was; the k-th ``"text"`` key of a valid line is the k-th context's (no other part of a RunSample may
  have one), checked by their count; a line that fails is read again as written, for the error it gets then;
- the raw line is handed on as it is read (as given, or with the question filled in), so the run folder stores the
  sample without serialising it again (:class:`~goldset.evaluation.runs.SampleStore` compresses it meanwhile).
"""

from __future__ import annotations

import gzip
import io
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from goldset.dataset import Dataset
from goldset.errors import InputError, RecordError
from goldset.schema import QAPair, RunSample

_BOM = b"\xef\xbb\xbf"
#: A ``text`` key and the opening quote of its value (a context's text: no other part of a RunSample has one).
_TEXT_KEY = re.compile(rb'"text"\s*:\s*"')
#: Raw bytes of context texts remembered at most (a run whose texts never recur would otherwise keep them all).
_KNOWN_LIMIT = 1 << 26
#: File name suffix → the compression a run file (or a run folder's samples) is read with.
COMPRESSIONS = {".zst": "zstd", ".gz": "gzip"}
_BUFFER = 1 << 22


def zstd() -> ModuleType:
    """The Zstandard module: the standard library's ``compression.zstd`` (Python 3.14+), else its backport
    ``backports.zstd`` (the same code and API, a dependency below 3.14)."""
    try:
        from compression import zstd as module  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        from backports import zstd as module  # type: ignore[no-redef,unused-ignore]
    return module  # type: ignore[no-any-return,unused-ignore]


@dataclass
class RunFile:
    """A run file read and checked: its samples by pair id, and notes for the reader."""

    samples: dict[str, RunSample]
    notes: list[str] = field(default_factory=list)


def open_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """(1-based line number, raw line as read, line break included) of a JSON Lines file, zstd-compressed when its
    name ends in ``.zst``, gzip-compressed when in ``.gz``; a UTF-8 byte-order mark on the first line is dropped.
    Blank lines are skipped.

    Lines are not stripped: JSON allows the trailing whitespace, and a copy of every line of a 200 MB file costs."""
    try:
        # Large buffers: every refill is a system call that lets another thread take the GIL (the sample store's
        # compressor), and taking it back waits; with 8 KiB buffers a 200 MB file paid that 25,000 times.
        raw_fh = path.open("rb", buffering=_BUFFER)
        kind = COMPRESSIONS.get(path.suffix)
        damaged: tuple[type[Exception], ...] = (OSError, EOFError)
        if kind == "zstd":
            damaged += (zstd().ZstdError,)
            fh: Any = io.BufferedReader(zstd().ZstdFile(raw_fh, mode="rb"), _BUFFER)
        elif kind == "gzip":
            fh = io.BufferedReader(gzip.GzipFile(fileobj=raw_fh, mode="rb"), _BUFFER)
        else:
            fh = raw_fh
    except FileNotFoundError:
        raise InputError(f"{path}: file not found") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a folder, not a JSON Lines file") from None
    with raw_fh, fh:
        try:
            for lineno, raw in enumerate(fh, start=1):
                if lineno == 1 and raw.startswith(_BOM):
                    raw = raw[len(_BOM) :]
                if raw and not raw.isspace():
                    yield lineno, raw
        except damaged as exc:  # a damaged or truncated compressed file
            raise InputError(f"{path}: cannot be read as {kind} ({exc}); write the run file again") from None


def _text_values(raw: bytes) -> list[tuple[int, int]]:
    """(start, end) of the raw content of every ``"text": "..."`` string of a JSON line, in order: the contexts'
    texts when the line is a valid RunSample (no other object of it may hold a ``text`` key)."""
    out: list[tuple[int, int]] = []
    m = _TEXT_KEY.search(raw)
    while m is not None:
        start = i = m.end()
        while True:  # the closing quote: the first one not escaped by an odd number of backslashes
            j = raw.find(b'"', i)
            if j < 0:
                return out  # not closed: the parser says what is wrong
            k = j
            while raw[k - 1] == 0x5C:  # the opening quote stops this before ``start``
                k -= 1
            if (j - k) % 2 == 0:
                break
            i = j + 1
        out.append((start, j))
        m = _TEXT_KEY.search(raw, j + 1)
    return out


def iter_samples(path: Path) -> Iterator[tuple[int, bytes, RunSample]]:
    """(line number, raw line, sample) of every line of a run file; the first bad line (or blank retrieved text)
    raises a file:line :class:`RecordError`. Identical context texts come back as one shared string, and are
    decoded once (module docstring)."""
    from pydantic import ValidationError

    from goldset.io import line_error  # the wording every records file uses

    validate = RunSample.model_validate_json
    texts: dict[str, str] = {}
    known: dict[bytes, str] = {}  # raw JSON content of a context text already read → that text
    known_size = 0
    for lineno, raw in open_lines(path):
        spans = _text_values(raw)
        parts: list[bytes] = []
        reused: list[tuple[int, str]] = []
        fresh: list[tuple[int, bytes]] = []
        at = 0
        for k, (a, b) in enumerate(spans):
            content = raw[a:b]
            text = known.get(content)
            if text is None:
                fresh.append((k, content))
            else:
                parts += (raw[at:a], b"-")
                at = b
                reused.append((k, text))
        try:
            sample = validate(b"".join((*parts, raw[at:])) if reused else raw)
            if reused and len(spans) != len(sample.contexts):  # a text key the count cannot place: read it whole
                reused = []
                sample = validate(raw)
        except ValidationError as first:
            error = first
            if reused:  # the error of the line as written (the texts put back do not change whether it is valid)
                try:
                    validate(raw)
                except ValidationError as whole:
                    error = whole
            raise line_error(path, lineno, raw, error, "RunSample") from None
        contexts = sample.contexts
        for k, text in reused:
            contexts[k].__dict__["text"] = text  # validated already, where it was first read
        for i, ctx in enumerate(contexts):
            text = texts.get(ctx.text)
            if text is None:
                text = texts[ctx.text] = ctx.text
                if not text or text.isspace():
                    raise RecordError(
                        str(path), lineno, f"contexts[{i}].text is empty; give the retrieved text or drop the context"
                    )
            ctx.__dict__["text"] = text  # the same value, validated already: plain attribute storage
        if fresh and len(spans) == len(contexts) and known_size < _KNOWN_LIMIT:
            for k, content in fresh:
                if content not in known:
                    known[content] = contexts[k].text
                    known_size += len(content)
        yield lineno, raw, sample


def _sidecar_meta(path: Path) -> tuple[Path, dict[str, Any]] | None:
    """``<run>.meta.json`` or ``meta.json`` beside the run file, read loosely (only the version keys matter)."""
    stem = path.name.removesuffix(path.suffix if path.suffix in COMPRESSIONS else "").removesuffix(".jsonl")
    for candidate in (path.with_name(stem + ".meta.json"), path.with_name("meta.json")):
        if candidate.is_file():
            try:
                data = json.loads(candidate.read_text(encoding="utf-8-sig"))
            except (json.JSONDecodeError, UnicodeDecodeError):
                raise InputError(f"{candidate}: not valid JSON; fix it or remove it") from None
            if not isinstance(data, dict):
                raise InputError(f"{candidate}: expected a JSON object with dataset_version and/or manifest_hash")
            return candidate, data
    return None


def _check_sidecar(path: Path, dataset: Dataset, fingerprint: str | None) -> None:
    side = _sidecar_meta(path)
    if side is None:
        return
    meta_path, meta = side
    want_version = dataset.manifest.version if dataset.manifest else None
    got_version = meta.get("dataset_version")
    if got_version and want_version and got_version != want_version:
        raise InputError(
            f"{meta_path}: the run was made against dataset version {got_version}, not {want_version}; "
            f"evaluate it against {got_version} or re-run your system"
        )
    got_hash = meta.get("manifest_hash")
    if got_hash and fingerprint and got_hash != fingerprint:
        raise InputError(
            f"{meta_path}: the run was made against a dataset with hash {got_hash}, not {fingerprint}; "
            f"evaluate it against that dataset or re-run your system"
        )


def with_question(raw: bytes, question: str) -> bytes:
    """A sample's JSON line with ``question`` added (the line must be an object without a question key)."""
    body = raw.lstrip()
    return b'{"question":' + json.dumps(question, ensure_ascii=False).encode("utf-8") + b"," + body[1:]


def read_run_file(
    path: Path,
    dataset: Dataset,
    *,
    fingerprint: str | None = None,
    questions: dict[str, str] | None = None,
    keep: Callable[[str, bytes], None] | None = None,
    ahead: Callable[[dict[str, RunSample]], None] | None = None,
    ahead_at: float = 0.55,
) -> RunFile:
    """Read a run file (JSONL of RunSample, or its zstd or gzip) and check it belongs to ``dataset``.

    Errors: a sidecar meta.json naming another dataset version or hash (checked first), malformed lines
    (file:line), a blank retrieved context (file:line), the same pair twice, pair ids the dataset does not have (a
    few listed). Pairs the file lacks are *not* an error here: the caller scores them as failed samples.

    ``questions`` (pair id → question): the pairs evaluated. Their samples get their question filled in when they
    lack it, and ``keep(pair_id, line)`` receives each one's JSON line as it is read (the raw line, with the
    question added when it was missing), so the run folder can store it without serialising it again.

    ``ahead(samples)`` is called once, with the samples read so far, when ``ahead_at`` of an uncompressed file's
    bytes are read (:class:`goldset.evaluation.scoring.ScoringAhead` scores those meanwhile). The samples it gets
    are final: nothing later changes them, and a later bad line still raises (the caller then cancels).
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: run file not found")
    _check_sidecar(path, dataset, fingerprint)
    samples: dict[str, RunSample] = {}
    first_line: dict[str, int] = {}
    notes: list[str] = []
    no_contexts = 0
    ahead_bytes = int(path.stat().st_size * ahead_at) if ahead is not None and path.suffix not in COMPRESSIONS else -1
    read_bytes = 0
    for lineno, raw, sample in iter_samples(path):
        if ahead_bytes >= 0:
            read_bytes += len(raw)
            if read_bytes >= ahead_bytes and ahead is not None:
                ahead(samples)  # the samples before this line: this one is not checked against them yet
                ahead_bytes = -1
        pid = sample.pair_id
        if pid in samples:
            raise RecordError(
                str(path), lineno, f"pair {pid} appears twice (also on line {first_line[pid]}); keep one line per pair"
            )
        if not sample.contexts and not sample.error:
            no_contexts += 1
        samples[pid] = sample
        first_line[pid] = lineno
        if questions is not None and pid in questions:
            line = raw
            if not sample.question:
                absent = "question" not in sample.model_fields_set and raw.lstrip().startswith(b"{")
                sample.__dict__["question"] = questions[pid]
                sample.model_fields_set.add("question")
                line = with_question(raw, questions[pid]) if absent else sample.model_dump_json().encode("utf-8")
            if keep is not None:
                keep(pid, line)
    if not samples:
        raise InputError(f"{path}: the run file holds no samples; write one JSON line per question")

    known = {p.id for p in dataset.pairs}
    unknown = sorted(set(samples) - known)
    if unknown:
        shown = ", ".join(unknown[:5]) + (f" (+{len(unknown) - 5} more)" if len(unknown) > 5 else "")
        raise InputError(
            f"{path}: {len(unknown)} pair id(s) not in dataset {dataset.path or ''}: {shown}; "
            f"was the run made against another dataset version?"
        )
    if no_contexts:
        notes.append(f"{no_contexts} sample(s) in {path.name} have no retrieved contexts (nothing retrieved)")
    return RunFile(samples=samples, notes=notes)


def missing_sample(pair: QAPair, reason: str) -> RunSample:
    """A failed sample standing in for a pair the run lacks: it counts against the system, it is not dropped."""
    return RunSample(pair_id=pair.id, question=pair.question, error=reason)


def renamed_run(run: str | Path | None, run_file: str | Path | None, where: str) -> str | Path | None:
    """``run``, or the value of its deprecated old name ``run_file`` (with a DeprecationWarning)."""
    if run_file is None:
        return run
    import warnings

    warnings.warn(f"{where}(run_file=...) is deprecated: the run file is now run= (as --run)", DeprecationWarning,
                  stacklevel=3)  # fmt: skip
    if run is not None:
        from goldset.errors import UsageError

        raise UsageError("give the run file as run, not as run_file too (run_file is its old name)")
    return run_file

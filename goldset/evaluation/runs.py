"""Evaluation folders: ``runs/<run-id>/`` with ``meta.json``, ``samples.jsonl.zst``, ``scores.jsonl``,
``summary.json``.

A folder is written under a hidden temporary name and renamed into place when all four files are there, so a
crash never leaves a half-written run that ``compare`` or ``report`` would later read as complete.

The samples (answers and every retrieved context: the bulk of a run, 100 MB and more for 10,000 questions) are
stored zstd-compressed (:class:`SampleStore`); folders written before hold ``samples.jsonl.gz`` or ``samples.jsonl``
and read the same.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from goldset.errors import InputError
from goldset.hashing import short_hash
from goldset.io import file_mode, read_json, read_jsonl, write_json, write_jsonl
from goldset.schema import RunMeta, RunSample, RunSummary, SampleScores
from goldset.schema.base import utcnow
from goldset.workspace import Workspace

META_FILE = "meta.json"
SAMPLES_FILE = "samples.jsonl.zst"
#: Older forms of the samples a run folder may hold, read as well: gzip-compressed, and before that plain.
OLDER_SAMPLES_FILES = ("samples.jsonl.gz", "samples.jsonl")
SCORES_FILE = "scores.jsonl"
SUMMARY_FILE = "summary.json"
RUN_FILES = (META_FILE, SAMPLES_FILE, SCORES_FILE, SUMMARY_FILE)

if TYPE_CHECKING:
    import pandas

    from goldset.evaluation.gate import GateResult
    from goldset.evaluation.settings import EvalSettings

_SLUG_RE = re.compile(r"[^a-z0-9]+")


@dataclass
class StoredRun:
    """One evaluation folder read back."""

    folder: Path
    meta: RunMeta
    samples: dict[str, RunSample]
    scores: list[SampleScores]
    summary: RunSummary
    notes: list[str] = field(default_factory=list)

    @property
    def run_id(self) -> str:
        """The run's id (``meta.run_id``)."""
        return self.meta.run_id

    def scores_by_id(self) -> dict[str, SampleScores]:
        """The per-sample scores keyed by pair id."""
        return {s.pair_id: s for s in self.scores}

    def to_pandas(self) -> pandas.DataFrame:
        """One row per question: pair id, type, language, failed, error and one column per metric.

        For analysis in a notebook (``run.to_pandas().groupby("question_type")["recall@5"].mean()``); pandas is
        imported only here, so reading runs never pays for it.
        """
        import pandas

        rows = [
            {
                "pair_id": s.pair_id,
                "question_type": s.question_type,
                "language": s.language,
                "doc_ids": s.doc_ids,
                "failed": s.failed,
                "error": s.error,
                **s.metrics,
            }
            for s in self.scores
        ]
        return pandas.DataFrame(rows).set_index("pair_id")


def slugify(text: str, max_len: int = 24) -> str:
    """``goldset.baselines.bm25:answer`` → ``bm25-answer``: short, lower-case, safe in a folder name."""
    slug = _SLUG_RE.sub("-", text.lower()).strip("-")
    return (slug[-max_len:].strip("-") if len(slug) > max_len else slug) or "run"


def make_run_id(label: str, fingerprint: str, now: datetime | None = None) -> str:
    """``<UTC timestamp>-<slug>-<short hash>``: sorts by time, says what ran, and differs between runs.

    The hash covers the label, the dataset fingerprint and the time to the microsecond, so two runs of the same
    target in the same second still get different folders.
    """
    now = now or utcnow()
    stamp = now.strftime("%Y%m%dT%H%M%SZ")
    salt = datetime.now(UTC).isoformat()
    return f"{stamp}-{slugify(label)}-{short_hash(label + fingerprint + salt, 6)}"


def git_revision(root: Path) -> str | None:
    """The commit of the repository around ``root`` (+ ``-dirty`` with local changes); None outside git."""
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=5, check=False
        )
        if rev.returncode != 0:
            return None
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
        return rev.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None


class SampleStore:
    """The samples of a run being written, compressed as they come in, into a temporary file beside the runs.

    Zstandard at level 3 (its default), not gzip: on a 170 MB run of 10,000 questions it takes 0.2 s of CPU
    for a 10 MB file, where gzip at level 1 took 1.7 s for 56 MB (retrieved texts recur, and zstd's larger window
    finds them again). zstd compresses in a worker thread of its own (``nb_workers``: native code, no GIL) while the
    samples are read and scored; without threading support in the zstd library, it compresses in line. Lines are
    handed over in blocks of about a megabyte. Samples are stored in the order they arrive: the run file's order
    for run files, then the stand-ins for missing pairs; readers key them by pair id.
    """

    BLOCK = 1 << 20
    LEVEL = 3

    def __init__(self, folder: Path, level: int = LEVEL) -> None:
        import tempfile

        from goldset.evaluation.run_files import zstd

        z = zstd()
        folder.mkdir(parents=True, exist_ok=True)
        try:
            self._zip = z.ZstdCompressor(
                options={z.CompressionParameter.compression_level: level, z.CompressionParameter.nb_workers: 1}
            )
        except (z.ZstdError, ValueError):  # a zstd library built without threads
            self._zip = z.ZstdCompressor(level=level)
        self._end = z.ZstdCompressor.FLUSH_FRAME
        fd, name = tempfile.mkstemp(prefix=".samples-", suffix=".zst.tmp", dir=folder)
        self.path = Path(name)
        self._fh = os.fdopen(fd, "wb")
        self._block: list[bytes] = []
        self._size = 0
        self._ids: set[str] = set()

    def _flush_block(self) -> None:
        if self._block:
            self._fh.write(self._zip.compress(b"".join(self._block)))
            self._block, self._size = [], 0

    def add_line(self, pair_id: str, line: bytes) -> None:
        """Store one sample given as its JSON line (a line break is added when it has none)."""
        self._ids.add(pair_id)
        self._block.append(line)
        if not line.endswith(b"\n"):
            self._block.append(b"\n")
        self._size += len(line) + 1
        if self._size >= self.BLOCK:
            self._flush_block()

    def add(self, sample: RunSample) -> None:
        """Store one sample."""
        self.add_line(sample.pair_id, sample.model_dump_json().encode("utf-8"))

    def __contains__(self, pair_id: object) -> bool:
        return pair_id in self._ids

    def finish(self, path: Path) -> None:
        """Compress what is left, end the zstd frame and move the file to ``path``."""
        self._flush_block()
        self._fh.write(self._zip.compress(b"", self._end))
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self._fh.close()
        self.path.chmod(file_mode(path))  # as the folder's other files (mkstemp makes it private)
        self.path.replace(path)

    def close(self) -> None:
        """Remove the temporary file (nothing left to do after :meth:`finish`)."""
        if not self._fh.closed:
            self._fh.close()
        self.path.unlink(missing_ok=True)


def write_run(
    folder: Path,
    meta: RunMeta,
    samples: SampleStore | Iterable[RunSample],
    scores: list[SampleScores],
    summary: RunSummary,
) -> Path:
    """Write the four files into ``folder`` (which must not exist yet) all at once."""
    folder = Path(folder)
    if folder.exists():
        raise InputError(f"{folder}: run folder already exists; write the run to another folder or remove this one")
    if isinstance(samples, SampleStore):
        store, owned = samples, False
    else:
        store, owned = SampleStore(folder.parent), True
        for sample in sorted(samples, key=lambda s: s.pair_id):
            store.add(sample)
    tmp = folder.parent / f".{folder.name}.tmp"
    if tmp.exists():
        shutil.rmtree(tmp)
    try:
        tmp.mkdir(parents=True)
        store.finish(tmp / SAMPLES_FILE)
        write_jsonl(tmp / SCORES_FILE, scores, key="pair_id")
        write_json(tmp / SUMMARY_FILE, summary)
        write_json(tmp / META_FILE, meta)
        tmp.rename(folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        if owned:
            store.close()
    return folder


def resolve_run_folder(spec: str | Path, ws: Workspace | None = None, runs_dir: Path | None = None) -> Path:
    """A run given as a folder path, or as a run id under the workspace's runs folder."""
    path = Path(spec)
    if path.is_dir():
        return path
    base = runs_dir or (ws.runs_dir if ws else None)
    if base is not None and (base / str(spec)).is_dir():
        return base / str(spec)
    where = f" or a run id under {base}" if base is not None else ""
    raise InputError(f"{spec}: no such run; give a run folder (runs/<run-id>){where}")


def read_run(spec: str | Path, ws: Workspace | None = None, runs_dir: Path | None = None) -> StoredRun:
    """Read an evaluation folder written by :func:`write_run`."""
    from goldset.collector import paused_gc
    from goldset.evaluation.run_files import iter_samples

    folder = resolve_run_folder(spec, ws, runs_dir)
    samples_file = folder / SAMPLES_FILE
    for older in OLDER_SAMPLES_FILES:
        if not samples_file.is_file() and (folder / older).is_file():
            samples_file = folder / older
    missing = [name for name in RUN_FILES if not (folder / name).is_file() and name != SAMPLES_FILE]
    if not samples_file.is_file():
        missing.insert(1, SAMPLES_FILE)
    if missing:
        raise InputError(
            f"{folder}: not a goldset run folder (missing {', '.join(missing)}); run `goldset eval` to create one"
        )
    meta = read_json(folder / META_FILE, RunMeta)
    with paused_gc():
        samples = {s.pair_id: s for _, _, s in iter_samples(samples_file)}
        scores = read_jsonl(folder / SCORES_FILE, SampleScores)
    summary = read_json(folder / SUMMARY_FILE, RunSummary)
    return StoredRun(folder=folder, meta=meta, samples=samples, scores=scores, summary=summary)


@dataclass
class EvalResult:
    """What :func:`evaluate` produced: the run folder written and its contents, the gate result (None when no
    thresholds were given) and the notes a reader of the numbers must see (also stored in the summary)."""

    run_id: str
    folder: Path
    meta: RunMeta
    summary: RunSummary
    scores: list[SampleScores]
    samples: dict[str, RunSample]
    gate: GateResult | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """True unless thresholds were given and one of them was not met."""
        return self.gate is None or self.gate.passed


def runs_folder(ws: Workspace | None, settings: EvalSettings) -> Path:
    """Where run folders go: ``eval.runs_dir`` (relative to the workspace), else the workspace's ``runs/``, else
    ``runs`` in the current folder."""
    if not settings.runs_dir:
        return ws.runs_dir if ws else Path("runs")
    runs_dir = Path(settings.runs_dir)
    return ws.root / runs_dir if ws is not None and not runs_dir.is_absolute() else runs_dir


def judge_journal_path(ws: Workspace | None, runs_dir: Path) -> Path:
    """The call journal judge calls go through: the workspace's (shared with generation and the filters), else one
    beside the run folders (evaluation also works outside a workspace)."""
    return ws.cache_path if ws is not None else runs_dir / ".calls.sqlite"

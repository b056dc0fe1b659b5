"""Evaluation folders: ``runs/<run-id>/`` with ``meta.json``, ``samples.jsonl``, ``scores.jsonl``, ``summary.json``.

A folder is written under a hidden temporary name and renamed into place when all four files are there, so a
crash never leaves a half-written run that ``compare`` or ``report`` would later read as complete.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from goldset.errors import InputError
from goldset.hashing import short_hash
from goldset.io import read_json, read_jsonl, write_json, write_jsonl
from goldset.schema import RunMeta, RunSample, RunSummary, SampleScores
from goldset.schema.base import utcnow
from goldset.workspace import Workspace

META_FILE = "meta.json"
SAMPLES_FILE = "samples.jsonl"
SCORES_FILE = "scores.jsonl"
SUMMARY_FILE = "summary.json"
RUN_FILES = (META_FILE, SAMPLES_FILE, SCORES_FILE, SUMMARY_FILE)

if TYPE_CHECKING:
    import pandas

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
        return self.meta.run_id

    def scores_by_id(self) -> dict[str, SampleScores]:
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


def write_run(
    folder: Path,
    meta: RunMeta,
    samples: list[RunSample],
    scores: list[SampleScores],
    summary: RunSummary,
) -> Path:
    """Write the four files into ``folder`` (which must not exist yet) all at once."""
    folder = Path(folder)
    if folder.exists():
        raise InputError(f"{folder}: run folder already exists; choose another --out or remove it")
    tmp = folder.parent / f".{folder.name}.tmp"
    if tmp.exists():
        shutil.rmtree(tmp)
    try:
        tmp.mkdir(parents=True)
        write_jsonl(tmp / SAMPLES_FILE, samples, key="pair_id")
        write_jsonl(tmp / SCORES_FILE, scores, key="pair_id")
        write_json(tmp / SUMMARY_FILE, summary)
        write_json(tmp / META_FILE, meta)
        tmp.rename(folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
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
    folder = resolve_run_folder(spec, ws, runs_dir)
    missing = [name for name in RUN_FILES if not (folder / name).is_file()]
    if missing:
        raise InputError(
            f"{folder}: not a goldset run folder (missing {', '.join(missing)}); run `goldset eval` to create one"
        )
    meta = read_json(folder / META_FILE, RunMeta)
    samples = {s.pair_id: s for s in read_jsonl(folder / SAMPLES_FILE, RunSample)}
    scores = read_jsonl(folder / SCORES_FILE, SampleScores)
    summary = read_json(folder / SUMMARY_FILE, RunSummary)
    return StoredRun(folder=folder, meta=meta, samples=samples, scores=scores, summary=summary)

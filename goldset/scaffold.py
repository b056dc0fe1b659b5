"""`goldset init` and `goldset status`: make a folder a workspace, and say what it holds.

A workspace is a git repository (or a folder inside one) with DVC initialised, a goldset.yaml, prompts/ and
labeling/ seeded from the package defaults, and a .gitignore that keeps working state (.goldset/) and secrets
(.env) out of git. Init is idempotent: a second run changes nothing and says so.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from goldset.errors import WorkspaceError
from goldset.prompts import defaults_dir
from goldset.workspace import CONFIG_FILE, GITIGNORE_LINES, Workspace, require_workspace

TEMPLATE = Path(__file__).resolve().parent / "_templates" / "goldset.yaml"
DVC_YAML = "dvc.yaml"

#: The pipeline `goldset init` writes for teams that drive everything from DVC (`dvc repro`). data/ is versioned by
#: `goldset release` (data.dvc), and DVC refuses an output inside a tracked folder, so each stage's declared output
#: is its log under .goldset/ (git-ignored, not cached): it orders the stages and lets DVC skip an unchanged one.
DVC_PIPELINE = """\
# `dvc repro` runs goldset's pipeline: ingest -> generate -> filter (written by `goldset init`; edit freely).
# data/ is versioned by `goldset release` (data.dvc) and DVC refuses outputs inside a tracked folder, so each stage
# declares its log under .goldset/ as its output: that orders the stages and lets DVC skip one whose inputs
# (documents, prompts, its section of goldset.yaml) did not change. Release with `goldset release` afterwards.
stages:
  ingest:
    cmd: goldset ingest {docs}
    deps:
      - {docs}
    params:
      - goldset.yaml:
          - kb
    outs:
      - .goldset/kb/chunks.jsonl:
          cache: false
          persist: true
      - .goldset/kb/snapshot.json:
          cache: false
          persist: true
  generate:
    cmd: goldset generate > .goldset/generate.log
    deps:
      - .goldset/kb/snapshot.json
      - prompts/generate.md
      - prompts/generate_multi_hop.md
    params:
      - goldset.yaml:
          - generate
    outs:
      - .goldset/generate.log:
          cache: false
  filter:
    cmd: goldset filter > .goldset/filter.log
    deps:
      - .goldset/generate.log
      - prompts/judge_groundedness.md
      - prompts/filter_duplicate.md
    params:
      - goldset.yaml:
          - filter
    outs:
      - .goldset/filter.log:
          cache: false
"""


@dataclass
class InitReport:
    root: Path
    actions: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.actions)


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)


def git_toplevel(path: Path) -> Path | None:
    if shutil.which("git") is None:
        raise WorkspaceError("git is not installed; install git, then run `goldset init` again")
    res = _git(path, "rev-parse", "--show-toplevel")
    return Path(res.stdout.strip()).resolve() if res.returncode == 0 else None


def _copy_missing(src: Path, dst: Path, report: InitReport, label: str) -> None:
    added = 0
    for file in sorted(src.rglob("*")):
        if file.is_file():
            target = dst / file.relative_to(src)
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(file, target)
                added += 1
    if added:
        report.actions.append(f"seeded {label}/ with {added} default file(s)")


def _ensure_gitignore(root: Path, report: InitReport) -> None:
    path = root / ".gitignore"
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    missing = [line for line in GITIGNORE_LINES if line not in lines]
    if missing:
        text = "\n".join([*lines, *missing]) + "\n"
        path.write_text(text, encoding="utf-8")
        report.actions.append(f"added {', '.join(missing)} to .gitignore")


def _ensure_dvc(root: Path, git_root: Path, remote: str, report: InitReport) -> None:
    """dvc init (``--subdir`` inside a larger repo), analytics off, autostage on, a local default remote."""
    from dvc.exceptions import DvcException
    from dvc.repo import Repo

    if not (root / ".dvc").is_dir():
        dvc_logger = logging.getLogger("dvc")
        level = dvc_logger.level
        dvc_logger.setLevel(logging.WARNING)  # DVC logs its own "Initialized DVC repository" banner
        try:
            Repo.init(str(root), subdir=root != git_root).close()
        except DvcException as exc:
            raise WorkspaceError(f"{root}: `dvc init` failed: {str(exc).splitlines()[0]}") from None
        finally:
            dvc_logger.setLevel(level)
        report.actions.append("initialised DVC" + (" (--subdir)" if root != git_root else ""))
    # Re-open after init: an open Repo does not see config edits made through another handle.
    with Repo(str(root)) as repo:
        conf = repo.config.read("repo")
        wanted_core = {"analytics": "false", "autostage": "true"}
        core = conf.get("core", {})
        needs_core = {k: v for k, v in wanted_core.items() if str(core.get(k, "")).lower() != v}
        needs_remote = not core.get("remote")
        if needs_core or needs_remote:
            with repo.config.edit("repo") as edit:
                for key, value in needs_core.items():
                    edit["core"][key] = value == "true"
                if needs_remote:
                    # DVC reads a relative local path against the cwd and stores it relative to .dvc/
                    # (../.dvc-remote), so the workspace and its clones can move.
                    url = remote if "://" in remote else os.path.relpath(root / remote, Path.cwd())
                    edit["remote"]["local"] = {"url": url}
                    edit["core"]["remote"] = "local"
            if needs_core:
                report.actions.append("set DVC core." + ", core.".join(sorted(needs_core)))
            if needs_remote:
                if "://" not in remote:
                    (root / remote).mkdir(parents=True, exist_ok=True)
                report.actions.append(f"set DVC default remote 'local' → {remote}")


def init_workspace(path: Path, *, dvc: bool = True) -> InitReport:
    """Make ``path`` a goldset workspace. Safe to run again: it only adds what is missing."""
    root = Path(path).resolve()
    if root.exists() and not root.is_dir():
        raise WorkspaceError(f"{root}: exists and is not a folder; choose another path for the workspace")
    report = InitReport(root=root)
    if not root.exists():
        root.mkdir(parents=True)
        report.actions.append(f"created {root}")
    if not (root / CONFIG_FILE).exists():
        shutil.copy2(TEMPLATE, root / CONFIG_FILE)
        report.actions.append(f"wrote {CONFIG_FILE}")
    _copy_missing(defaults_dir("prompts"), root / "prompts", report, "prompts")
    _copy_missing(defaults_dir("labeling"), root / "labeling", report, "labeling")
    _ensure_gitignore(root, report)
    git_root = git_toplevel(root)
    if git_root is not None and git_root != root and _git(git_root, "check-ignore", "-q", str(root)).returncode == 0:
        # The folder is ignored by the enclosing repository (e.g. a scratch workspace inside a project):
        # it gets a repository of its own, since neither git nor DVC could track anything there.
        git_root = None
    if git_root is None:
        res = _git(root, "init", "-q")
        if res.returncode != 0:
            raise WorkspaceError(f"{root}: `git init` failed: {res.stderr.strip()}")
        git_root = root
        report.actions.append("initialised git")
    if dvc:
        from goldset.context import Context
        from goldset.kb.settings import KBSettings
        from goldset.versioning.settings import VersioningSettings

        ctx = Context.open(Workspace(root))
        _ensure_dvc(root, git_root, ctx.section(VersioningSettings).remote, report)
        if not (root / DVC_YAML).exists():
            (root / DVC_YAML).write_text(DVC_PIPELINE.format(docs=ctx.section(KBSettings).path), encoding="utf-8")
            report.actions.append(f"wrote {DVC_YAML} (ingest → generate → filter, for `dvc repro`)")
    return report


@dataclass
class Status:
    root: Path
    kb_snapshot_id: str | None = None
    n_documents: int = 0
    n_chunks: int = 0
    pairs_by_status: dict[str, int] = field(default_factory=dict)
    pairs_by_type: dict[str, int] = field(default_factory=dict)
    last_release: str | None = None


def workspace_status(path: Path | None = None) -> Status:
    """What the workspace holds: the KB snapshot, pairs by status and type, the last release tag."""
    from goldset.data import WorkspaceData

    ws = require_workspace(path)
    data = WorkspaceData(ws)
    status = Status(root=ws.root)
    snapshot = data.kb_snapshot()
    if snapshot is not None:
        status.kb_snapshot_id = snapshot.id
        status.n_documents = len(snapshot.documents)
        status.n_chunks = snapshot.n_chunks
    if data.has_pairs():
        by_status: Counter[str] = Counter()
        by_type: Counter[str] = Counter()
        for pair in data.pairs():
            by_status[pair.status.value] += 1
            by_type[pair.question_type.value] += 1
        status.pairs_by_status = dict(sorted(by_status.items()))
        status.pairs_by_type = dict(sorted(by_type.items()))
    status.last_release = _last_release(ws.root)
    return status


def _last_release(root: Path) -> str | None:
    """The newest release (name and date) found in the workspace's tags and release commits; git only, no DVC."""
    from goldset.errors import GoldsetError
    from goldset.versioning.load import list_versions, open_repo

    try:
        with open_repo(root) as ref:
            found = list_versions(ref)
    except GoldsetError:
        return None
    if not found:
        return None
    last = found[-1]
    return f"{last.name} ({last.record.created_at.date().isoformat()}, {last.record.n_golden} golden pairs)"

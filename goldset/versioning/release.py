"""`goldset release`: freeze the dataset folder as an immutable, named version.

A release writes the dataset folder whole — ``pairs.jsonl`` (every pair: the audit trail), ``corpus/`` (every chunk
of the pinned KB snapshot, one shard per document), ``snapshot.json`` (that snapshot's record), ``CHANGELOG.md``
and ``manifest.json`` (the golden set, counts, prompt hashes, review figures, the sha256 of every other file) —
then ``dvc add data`` (→ ``data.dvc``, which also gets the release record: see :mod:`goldset.versioning.record`),
pushes exactly this version's objects to the default remote, commits ``data.dvc`` (and the ignore files and DVC
config it needs) and tags the commit. The working copy's ``chunks.jsonl`` (the cited chunks, which generate and
filter keep up to date) stays out of releases through ``.dvcignore``: the corpus holds those chunks and all others.

The commit holds only what the release owns (:meth:`Git.commit_entries`): ``data.dvc``, DVC's config (the remote
the data was pushed to, which a clone needs) and, of ``.gitignore`` and ``.dvcignore``, the committed version plus
the lines goldset and DVC own (``goldset init``'s, ``/data``, ``/data/chunks.jsonl``, whatever ``dvc add`` added):
anything else the user changed there, staged or not, stays as it was and out of the commit. (Staging a blob of
HEAD's version plus those lines rather than refusing: an unrelated edit of ``.gitignore`` is common and none of
the release's business.)

Everything that can be checked is checked before anything is written: the version is new (no tag, no release
record of that name), the repository is a git repository with DVC and a default remote, git knows who commits
(user.name, user.email), ``data/`` holds nothing edited by hand, every golden pair's evidence is in the pinned
snapshot as it was when the pair was written, and something changed since the previous release. If a later step
fails (DVC, the push, the commit, the tag) every file is put back, the commit is undone and no tag is made: a tag
always names pushed data.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from goldset.context import Context
from goldset.corpus import is_shard
from goldset.data import (
    CHUNKS_FILE,
    MANIFEST_FILE,
    PAIRS_FILE,
    SNAPSHOT_FILE,
    dataset_from_files,
    json_bytes,
    release_files,
)
from goldset.dataset import golden_ids
from goldset.errors import GoldsetError, InputError, UsageError, WorkspaceError
from goldset.hashing import sha256_hex
from goldset.io import atomic_write_bytes
from goldset.progress import Progress, ProgressCallback
from goldset.schema import Chunk, Manifest, PairStatus, QAPair, ReviewSampleStats
from goldset.versioning.calibration import calibration_markdown, calibration_notes
from goldset.versioning.changelog import VersionDiff, diff_datasets, to_markdown
from goldset.versioning.git import Git, NoIdentity
from goldset.versioning.load import RepoRef, Version, fetch_files, list_versions, version_number
from goldset.versioning.record import DVC_FILE, ReleaseRecord, with_record
from goldset.workspace import GITIGNORE_LINES

if TYPE_CHECKING:
    from goldset.dataset import Dataset, GoldenRule
    from goldset.review.settings import ReviewSettings
    from goldset.workspace import WorkspaceLike

CHANGELOG_FILE = "CHANGELOG.md"
#: the files a release folder holds (besides corpus/ shards); chunks.jsonl is the working copy's, kept out of releases
RELEASE_FILES = (PAIRS_FILE, MANIFEST_FILE, CHANGELOG_FILE, SNAPSHOT_FILE)
WORKING_FILES = (CHUNKS_FILE,)
DVCIGNORE_LINE = f"/data/{CHUNKS_FILE}"
Bump = Literal["major", "minor", "patch"]


class VersionExists(WorkspaceError):
    """The version name is taken: releases are immutable."""


class NothingToRelease(InputError):
    """The dataset is the same as the previous release's (pass ``allow_empty=True`` to release it anyway)."""


class ManualEdit(InputError):
    """``data/`` holds a file goldset does not write, or a release file changed by hand since the last release."""


@dataclass
class ReleaseReport:
    version: str
    commit: str
    manifest: Manifest
    previous: str | None
    diff: VersionDiff
    pushed: int
    remote: str
    changelog: str
    seconds: float
    files_written: int = 0
    notes: list[str] = field(default_factory=list)


# ------------------------------------------------------------------------------------------------ names


def _semver(number: str) -> tuple[int, int, int] | None:
    match = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)", number)
    return (int(match.group(1)), int(match.group(2)), int(match.group(3))) if match else None


def bump_version(previous: str | None, bump: Bump) -> str:
    """The next version number: 'minor' after '1.2.3' is '1.3.0'; the first release bumps from 0.0.0."""
    parts = _semver(version_number(previous)) if previous else (0, 0, 0)
    if parts is None:
        raise UsageError(f"bump: the previous release {previous} is not MAJOR.MINOR.PATCH; give the version instead")
    major, minor, patch = parts
    if bump == "major":
        return f"{major + 1}.0.0"
    if bump == "minor":
        return f"{major}.{minor + 1}.0"
    if bump == "patch":
        return f"{major}.{minor}.{patch + 1}"
    raise UsageError(f"bump={bump!r}: expected major, minor or patch")


def tag_name(version: str, pattern: str) -> str:
    """The release name (git tag) for ``version``, which may be given as the number ('1.2.0') or the name ('v1.2.0')."""
    prefix, _, suffix = pattern.partition("{version}")
    number = version.strip()
    if prefix and number.startswith(prefix) and len(number) > len(prefix) + len(suffix) and number.endswith(suffix):
        number = number[len(prefix) : len(number) - len(suffix)]
    if not re.fullmatch(r"[0-9A-Za-z][0-9A-Za-z._+-]*", number) or ".." in number or number.endswith("."):
        raise UsageError(f"version {version!r}: use a version number such as 1.2.0 (letters, digits, . _ + -)")
    return pattern.format(version=number)


# ------------------------------------------------------------------------------------------------ checks


def select_golden(pairs: Iterable[QAPair], rule: GoldenRule) -> tuple[list[str], list[str]]:
    """(golden ids, unreviewed ids), sorted: the pairs :func:`goldset.dataset.golden_ids` keeps under ``rule``
    (``versioning.golden``), and those of them no expert accepted (passed by the filters alone)."""
    ordered = sorted(pairs, key=lambda p: p.id)
    golden = golden_ids(ordered, rule=rule)
    chosen = [p for p in ordered if p.id in golden]
    return [p.id for p in chosen], [p.id for p in chosen if p.status is PairStatus.passed]


def check_evidence(pairs: list[QAPair], golden: set[str], chunks: dict[str, Chunk], snapshot_id: str) -> None:
    """Every golden pair's evidence chunk is in the corpus, with the content it had when the pair was written."""
    problems: list[str] = []
    for p in pairs:
        if p.id not in golden:
            continue
        for ev in p.evidence:
            chunk = chunks.get(ev.chunk_id)
            if chunk is None:
                problems.append(f"{p.id}: chunk {ev.chunk_id} of {ev.doc_id} is gone")
            elif p.provenance.chunk_hashes.get(ev.chunk_id, chunk.content_hash) != chunk.content_hash:
                problems.append(f"{p.id}: chunk {ev.chunk_id} of {ev.doc_id} changed")
    if problems:
        raise InputError(
            f"{len(problems)} golden pair evidence(s) do not match the KB snapshot {snapshot_id} (e.g. {problems[0]}); "
            "run `goldset refresh DOCS_DIR` to retire or re-check those pairs, then release"
        )


def check_manual_edits(data_dir: Path, project_root: Path, git: Git) -> None:
    """``data/`` holds only goldset's files, and the release files goldset alone writes (corpus, snapshot,
    changelog) are as the last release left them (compared with DVC's record of it, when the cache has it)."""
    from goldset.versioning.dvc import Project, outs_md5

    if not data_dir.is_dir():
        return
    present: dict[str, Path] = {}
    for path in sorted(data_dir.rglob("*")):
        if path.is_dir():
            continue
        rel = path.relative_to(data_dir).as_posix()
        if rel in RELEASE_FILES or rel in WORKING_FILES or is_shard(rel):
            present[rel] = path
            continue
        raise ManualEdit(
            f"{path}: not a file goldset writes (data/ is released whole); move it out of data/ or delete it, "
            "then release again"
        )
    dvc_file = project_root / DVC_FILE
    if not dvc_file.is_file():
        return
    md5 = outs_md5(dvc_file.read_text(encoding="utf-8"))
    project = Project(project_root)
    listing = project.read_object(md5, None) if md5 else None
    if listing is None:
        return
    import hashlib
    import json

    recorded = {str(e["relpath"]): str(e["md5"]) for e in json.loads(listing)}
    for rel, path in present.items():
        if not (is_shard(rel) or rel in (SNAPSHOT_FILE, CHANGELOG_FILE)):
            continue
        before = recorded.get(rel)
        if before is None and is_shard(rel):
            raise ManualEdit(
                f"{path}: a corpus shard the last release did not have; the corpus is written from the KB snapshot, "
                "so remove it (`dvc checkout data` restores the last release's files)"
            )
        if before is not None and hashlib.md5(path.read_bytes()).hexdigest() != before:
            raise ManualEdit(
                f"{path}: edited since the last release; goldset writes it (the corpus from the KB snapshot), so "
                "edits would be lost: restore it with `dvc checkout data` (change documents, then `goldset refresh`)"
            )


def review_figures(
    pairs: list[QAPair], settings: ReviewSettings, base: ReviewSampleStats | None, golden: list[str]
) -> ReviewSampleStats | None:
    """The review sample's figures over the release's own pairs, as ``goldset review status`` gives them
    (:func:`goldset.review.estimate.review_stats`: the estimate from the random part still in the set, weights
    derived from what is left of each stratum, and the share of ``golden`` it speaks for), else ``base`` when no
    pair was sampled. The risk part is drawn for being risky, so counting it would bias the estimate down."""
    from goldset.review.estimate import review_stats

    if not any(p.review.sampled for p in pairs):
        return base
    rounds = base.rounds if base is not None else ()
    return review_stats(pairs, settings, rounds=rounds, golden=golden)


# ------------------------------------------------------------------------------------------------ files


class _Transaction:
    """File writes that can be undone: each file's first prior state (bytes, or absent) is kept."""

    def __init__(self) -> None:
        self._saved: dict[Path, bytes | None] = {}

    def _save(self, path: Path) -> None:
        if path not in self._saved:
            self._saved[path] = path.read_bytes() if path.is_file() else None

    def write(self, path: Path, data: bytes) -> bool:
        """Write unless the file already holds exactly ``data``; True when written."""
        if path.is_file() and path.read_bytes() == data:
            return False
        self._save(path)
        atomic_write_bytes(path, data)
        return True

    def delete(self, path: Path) -> None:
        self._save(path)
        path.unlink()

    def remember(self, path: Path) -> None:
        """Keep ``path``'s current state to restore (a file another tool is about to change, e.g. DVC)."""
        self._save(path)

    def rollback(self) -> None:
        for path, data in reversed(list(self._saved.items())):
            try:
                if data is None:
                    path.unlink(missing_ok=True)
                else:
                    atomic_write_bytes(path, data)
            except OSError:  # pragma: no cover - best effort; the error being handled is the one reported
                continue
        for path in self._saved:
            parent = path.parent
            while parent.name and parent.is_dir() and not any(parent.iterdir()):
                parent.rmdir()
                parent = parent.parent


def _previous_dataset(ref: RepoRef, version: Version) -> tuple[Dataset, dict[str, bytes]]:
    files = fetch_files(ref, version)
    return dataset_from_files(files, version.name), files


def _ensure_line(path: Path, line: str, txn: _Transaction) -> None:
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    if line not in text.splitlines():
        txn.write(path, (text + ("" if not text or text.endswith("\n") else "\n") + line + "\n").encode("utf-8"))


#: ignore file (at the workspace root) -> the lines goldset owns in it (DVC's own are the ones a release adds)
IGNORE_FILES = {".gitignore": GITIGNORE_LINES, ".dvcignore": (DVCIGNORE_LINE,)}


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8") if path.is_file() else ""


def release_lines(base: str, before: str, now: str, own: Iterable[str]) -> str:
    """The ignore file a release commits: ``base`` (what git holds) plus the lines of ``now`` goldset or DVC own:
    ``own`` and the ones added since ``before`` (by this release: ``dvc add``'s ``/data``). Other lines of ``now``
    (the user's, not committed yet) stay out."""
    have, earlier, owned = set(base.splitlines()), set(before.splitlines()), set(own)
    extra = [ln for ln in now.splitlines() if ln.strip() and (ln in owned or ln not in earlier) and ln not in have]
    if not extra:
        return base
    return base + ("" if not base or base.endswith("\n") else "\n") + "\n".join(dict.fromkeys(extra)) + "\n"


def _entry(ls_files_line: str | None) -> str | None:
    """``mode sha`` of a ``git ls-files -s`` line."""
    return " ".join(ls_files_line.split("\t")[0].split()[:2]) if ls_files_line else None


def _commit(
    git: Git, root: Path, git_paths: list[str], ignore_before: dict[str, str], index_before: dict[str, str],
    head_before: str | None, message: str,
) -> str:  # fmt: skip
    """Commit what the release owns (module doc) and set the index to it where the user had nothing staged (a
    staged ignore file keeps its staged lines, plus the release's); returns the commit."""
    head_entries = git.tree_entries(head_before, git_paths)

    def blob(entry: str | None) -> str:
        data = git.cat_many([entry.split()[1]]).get(entry.split()[1]) if entry else None
        return (data or b"").decode("utf-8")

    blobs: dict[str, bytes] = {}
    for name, own in IGNORE_FILES.items():
        if not (root / name).is_file():
            continue
        rel = git.rel(root / name)
        base = blob(head_entries.get(rel) or _entry(index_before.get(rel)))  # new to git: as staged
        blobs[rel] = release_lines(base, ignore_before[name], _text(root / name), own).encode("utf-8")
    files = [p for p in git_paths if p not in blobs and (git.root / p).exists()]
    committed = git.commit_entries(blobs, files, message)
    index: dict[str, str] = {}
    for path, meta in committed.items():
        staged = _entry(index_before.get(path))
        if staged == head_entries.get(path) or path not in blobs:
            index[path] = meta
        else:  # the user staged an edit of this ignore file: it stays staged, with the release's lines
            name = next(n for n in IGNORE_FILES if git.rel(root / n) == path)
            text = release_lines(blob(staged), ignore_before[name], _text(root / name), IGNORE_FILES[name])
            index[path] = f"100644 {git.hash_blob(text.encode('utf-8'))}"
    git.set_index(index)
    commit = git.head()
    if commit is None:  # pragma: no cover - a commit that succeeded has a HEAD
        raise WorkspaceError(f"{git.root}: commit made but HEAD is unreadable")
    return commit


def _commit_message(name: str, message: str, manifest: Manifest) -> str:
    first, _, rest = message.strip().partition("\n")
    body = [
        f"goldset release {name}: {first.strip()}",
        "",
        *([rest.strip(), ""] if rest.strip() else []),
        f"golden pairs {len(manifest.golden_ids)} ({len(manifest.unreviewed_ids)} unreviewed) of {manifest.n_pairs}; "
        f"corpus {manifest.n_documents} documents, {manifest.n_chunks} chunks ({manifest.kb_snapshot_id})",
    ]
    return "\n".join(body) + "\n"


# ------------------------------------------------------------------------------------------------ release


def release(
    version: str | None = None,
    *,
    message: str,
    bump: Bump | None = None,
    allow_empty: bool = False,
    ws: WorkspaceLike | Context = None,
    progress: ProgressCallback | None = None,
) -> ReleaseReport:
    """Release the workspace's dataset folder as ``version`` (e.g. '1.2.0'; or ``bump`` the last release's number)
    with ``message``. See the module docstring for what is written and checked. Raises
    :class:`VersionExists`, :class:`NothingToRelease` (unless ``allow_empty``), :class:`ManualEdit`, or another
    :class:`~goldset.errors.GoldsetError` naming what to fix; a failure leaves the workspace as it was."""
    from goldset.review.settings import ReviewSettings
    from goldset.versioning import dvc
    from goldset.versioning.settings import VersioningSettings

    started = time.monotonic()
    steps = 5

    def tick(done: int, what: str) -> None:
        if progress is not None:
            progress(Progress("release", done, steps, {"step": what}))

    ctx = Context.of(ws)
    workspace = ctx.workspace
    settings = ctx.section(VersioningSettings)
    if not message or not message.strip():
        raise UsageError("message: a release needs a message saying what changed (goldset release -m '…')")
    if (version is None) == (bump is None):
        raise UsageError("give either a version (e.g. 1.2.0) or bump (major, minor, patch), not both or neither")

    # 1. The repository: git, DVC, the remote, the versions already made (no progress shown until they pass).
    root = workspace.root
    git = Git.around(root)
    if git is None:
        raise WorkspaceError(f"{root}: not a git repository; run `goldset init` (releases are git commits and tags)")
    problem = git.identity_problem()
    if problem is not None:
        raise NoIdentity(problem)
    project = dvc.Project(root)
    project.require()
    ref = RepoRef(dvc_root=root, git=git)
    existing = list_versions(ref)
    previous = max(existing, key=lambda v: (v.record.created_at, v.name)) if existing else None
    number = bump_version(previous.name if previous else None, bump) if bump is not None else str(version)
    name = tag_name(number, settings.tag_pattern)
    if any(v.name == name for v in existing):
        raise VersionExists(f"{name}: already released (releases are immutable); choose a new version or --bump")
    if git.tag_exists(name):
        raise VersionExists(f"{name}: a git tag of that name exists; choose a new version (releases are immutable)")
    if git.run("check-ref-format", f"refs/tags/{name}", check=False).returncode != 0:
        raise UsageError(f"version {number!r}: {name!r} is not a valid git tag name; choose another version")
    remote = project.require_remote()

    # 2. The records: pairs, the pinned KB snapshot, nothing edited by hand in data/.
    data = workspace.data_dir
    pairs = ctx.data.require_pairs("no pairs to release; run `goldset generate` (or `dvc pull` in a fresh clone)")
    snapshot = ctx.data.kb_snapshot()
    chunks = ctx.data.kb_chunks()
    if snapshot is None or not chunks:
        raise InputError(
            f"{workspace.kb_dir}: no KB snapshot; run `goldset ingest DOCS_DIR` (a release pins the corpus its pairs "
            "were written against)"
        )
    check_manual_edits(data, root, git)
    golden, unreviewed = select_golden(pairs, settings.golden)
    if not golden:
        what = "accepted" if settings.golden == "accepted" else "accepted or passed"
        raise InputError(
            f"{ctx.data.pairs_path}: no {what} pairs, so the golden set would be empty; run `goldset filter` "
            "(and review)" + (", or set versioning.golden: accepted+passed" if settings.golden == "accepted" else "")
        )
    by_id = {c.id: c for c in chunks}
    check_evidence(pairs, set(golden), by_id, snapshot.id)

    # 3. The files of the release, in memory; the previous release for the changelog and the "nothing changed" check.
    tick(0, "files")
    files = release_files(pairs, chunks, snapshot)
    prev_dataset: Dataset | None = None
    prev_files: dict[str, bytes] = {}
    if previous is not None:
        prev_dataset, prev_files = _previous_dataset(ref, previous)
        before = prev_dataset.manifest.files if prev_dataset.manifest else {}
        same = {n: sha256_hex(b) for n, b in files.items()} == {n: h for n, h in before.items() if n != CHANGELOG_FILE}
        if same and not allow_empty:
            raise NothingToRelease(
                f"{data}: nothing changed since {previous.name} (same pairs, corpus and snapshot); "
                "pass --allow-empty to release it under a new name anyway"
            )
    from goldset.dataset import Dataset, build_manifest

    try:
        base = ctx.data.manifest()
    except GoldsetError:
        base = None  # the working manifest is rebuilt here anyway
    golden_set = set(golden)
    golden_pairs = [p for p in pairs if p.id in golden_set]
    from collections import Counter

    manifest = build_manifest(
        pairs, chunks, files={}, version=name, kb_snapshot_id=snapshot.id, base=None
    ).model_copy(
        update={
            "message": message.strip(),
            "previous_version": previous.name if previous else None,
            "golden_ids": golden,
            "unreviewed_ids": unreviewed,
            "golden_counts_by_type": dict(sorted(Counter(p.question_type.value for p in golden_pairs).items())),
            "golden_counts_by_language": dict(sorted(Counter(p.language for p in golden_pairs).items())),
            "n_documents": len(snapshot.documents),
            "golden_rule": settings.golden,
            "review": review_figures(pairs, ctx.section(ReviewSettings), base.review if base else None, golden),
            "calibration": base.calibration if base else None,
        }
    )
    draft = manifest.model_copy(update={"files": {n: sha256_hex(b) for n, b in sorted(files.items())}})
    new_dataset = Dataset(pairs=pairs, chunks=by_id, manifest=draft)
    diff = diff_datasets(prev_dataset, new_dataset, previous.name if previous else None, name)
    notes = calibration_notes(manifest, pairs, ctx)
    section = to_markdown(diff) + calibration_markdown(manifest, notes)
    older = prev_files.get(CHANGELOG_FILE, b"").decode("utf-8")
    header = "# Changelog\n\n"
    changelog = header + section + ("\n" + older.removeprefix(header) if older.strip() else "")
    files[CHANGELOG_FILE] = changelog.encode("utf-8")
    manifest = manifest.model_copy(update={"files": {n: sha256_hex(b) for n, b in sorted(files.items())}})
    files[MANIFEST_FILE] = json_bytes(manifest)

    # 4. Write, dvc add, record, push, commit, tag; undo everything on any failure.
    txn = _Transaction()
    dvc_file = root / DVC_FILE
    git_paths = [git.rel(root / p) for p in (DVC_FILE, ".gitignore", ".dvcignore", ".dvc/config", ".dvc/.gitignore")]
    if remote.path is not None and remote.path.is_relative_to(git.root) and not git.ignored(git.rel(remote.path)):
        # A remote folder the repository versions itself (e.g. an offline example): the release commit carries the
        # objects it names, so the tag is complete on its own.
        git_paths.append(git.rel(remote.path))
    index_before = git.index_entries(git_paths)
    head_before = git.head()
    ignore_before = {name: _text(root / name) for name in IGNORE_FILES}
    written = 0
    try:
        tick(1, "write")
        for rel, blob in files.items():
            written += txn.write(data / rel, blob)
        for path in sorted(data.rglob("*")):
            rel = path.relative_to(data).as_posix()
            if path.is_file() and rel not in files and rel not in WORKING_FILES:
                txn.delete(path)  # a shard of a document no longer in the KB, an older release's file
        for folder in sorted((p for p in data.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
            if not any(folder.iterdir()):
                folder.rmdir()  # emptied by those deletions (a rollback's writes create folders again)
        _ensure_line(root / ".dvcignore", DVCIGNORE_LINE, txn)
        txn.remember(dvc_file)
        txn.remember(root / ".gitignore")
        tick(2, "dvc add")
        data_md5 = dvc.add(root, data)
        record = ReleaseRecord(
            version=name, created_at=manifest.created_at, message=message.strip(),
            previous=previous.name if previous else None, data_md5=data_md5,
            manifest_sha256=sha256_hex(files[MANIFEST_FILE]), n_pairs=len(pairs), n_golden=len(golden),
            n_unreviewed=len(unreviewed), n_chunks=len(chunks), n_documents=len(snapshot.documents),
            kb_snapshot_id=snapshot.id,
        )  # fmt: skip
        atomic_write_bytes(dvc_file, with_record(dvc_file.read_text(encoding="utf-8"), record).encode("utf-8"))
        tick(3, "push")
        pushed = dvc.push(root, dvc_file, remote)
        tick(4, "commit")
        commit = _commit(git, root, git_paths, ignore_before, index_before, head_before,
                         _commit_message(name, message, manifest))  # fmt: skip
        git.tag(name, message.strip(), commit)
    except BaseException:
        if git.head() != head_before:  # committed (whatever failed after)
            git.undo_commit(head_before)
        txn.rollback()
        git.restore_index(index_before, git_paths)
        raise
    tick(5, "done")
    return ReleaseReport(
        version=name,
        commit=commit,
        manifest=manifest,
        previous=previous.name if previous else None,
        diff=diff,
        pushed=pushed,
        remote=f"{remote.name} ({remote.url})",
        changelog=section,
        seconds=time.monotonic() - started,
        files_written=written,
        notes=notes,
    )

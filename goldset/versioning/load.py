"""Finding and loading released versions: ``goldset.load``, ``goldset.load_dataset``, ``resolve_dataset_version``.

A version is found by its tag, else by the release records in ``data.dvc``'s history (a clone without tags, or a
shallow CI checkout, still has the commit it checked out and its ``data.dvc``). Its files are read from DVC's
storage at the release commit — the local cache or a local remote folder directly, any other remote through
``dvc.api`` — and checked: the manifest's sha256 must be the one the release commit recorded, and every file's
sha256 the one the manifest lists. The files are then kept in a local folder (``.goldset/versions/`` of the
workspace, else ``$GOLDSET_CACHE_DIR`` or ``~/.cache/goldset/versions``) named by version and manifest hash, so a
second load reads that folder (and checks it again).
"""

from __future__ import annotations

import contextlib
import re
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goldset.context import Context
from goldset.data import MANIFEST_FILE
from goldset.errors import InputError, WorkspaceError
from goldset.hashing import sha256_hex
from goldset.versioning.dvc import DVC_DIR, Project
from goldset.versioning.git import Git
from goldset.versioning.record import DVC_FILE, ReleaseRecord, parse_record

if TYPE_CHECKING:
    import pandas as pd

    from goldset.dataset import Dataset
    from goldset.schema import Manifest, QAPair
    from goldset.workspace import WorkspaceLike

DATA_DIR = "data"
COMPLETE_MARKER = ".goldset-version"


class UnknownVersion(InputError):
    """No release of that name in the repository (the message lists the ones there are, or how to fetch them)."""


class IntegrityError(InputError):
    """A released file does not have the hash its release recorded."""


@dataclass(frozen=True)
class Version:
    """A release found in a repository."""

    name: str
    commit: str
    record: ReleaseRecord
    tagged: bool

    @property
    def number(self) -> str:
        return version_number(self.name)


def version_number(name: str) -> str:
    """The version number inside a release name: 'v1.2.0' → '1.2.0', 'dataset-2.0.1' → '2.0.1'."""
    match = re.search(r"\d+(?:\.\d+)*(?:[-+][0-9A-Za-z.-]+)?$", name)
    return match.group(0) if match else name


# ------------------------------------------------------------------------------------------------ repositories


@dataclass(frozen=True)
class RepoRef:
    """A DVC project inside a git repository: where versions are looked up and read."""

    dvc_root: Path
    git: Git
    #: the git URL it was cloned from (None for a local folder)
    url: str | None = None

    @property
    def dvc_file(self) -> str:
        """``data.dvc`` relative to the git root (the DVC project may be a sub-folder of the repository)."""
        return self.git.rel(self.dvc_root / DVC_FILE)

    @property
    def label(self) -> str:
        return self.url or str(self.dvc_root)


def _is_url(spec: str) -> bool:
    return "://" in spec or bool(re.match(r"^[\w.-]+@[\w.-]+:", spec))


def _dvc_root_around(path: Path) -> Path | None:
    path = path.resolve()
    for folder in (path, *path.parents):
        if (folder / DVC_DIR).is_dir():
            return folder
        if (folder / ".git").exists():
            return None  # the repository's top and no .dvc/ on the way
    return None


@contextlib.contextmanager
def open_repo(repo: str | Path | None = None, ws: WorkspaceLike = None) -> Iterator[RepoRef]:
    """The DVC project ``repo`` names: a local folder (or one inside it), a git URL (cloned into a temporary folder
    for the duration), or None for the workspace ``ws`` / the project around the current folder."""
    if repo is not None and _is_url(str(repo)):
        with tempfile.TemporaryDirectory(prefix="goldset-repo-") as tmp:
            dest = Path(tmp) / "repo"
            res = Git(Path(tmp)).run("clone", "-q", str(repo), str(dest), check=False)
            if res.returncode != 0:
                first = res.stderr.decode("utf-8", "replace").strip().splitlines()
                why = first[-1].removeprefix("fatal: ") if first else f"exit code {res.returncode}"
                raise WorkspaceError(f"{repo}: cannot clone the repository ({why}); check the URL and your access")
            yield RepoRef(dvc_root=dest, git=Git(dest.resolve()), url=str(repo))
        return
    if repo is None:
        if ws is not None:
            from goldset.workspace import resolve_workspace

            start = resolve_workspace(ws).root
        else:
            start = Path.cwd()
    else:
        start = Path(repo)
        if not start.exists():
            raise InputError(f"{repo}: no such folder; give a repository folder or a git URL")
    git = Git.around(start)
    if git is None:
        raise WorkspaceError(
            f"{start}: not a git repository, so it holds no releases (`goldset release` makes them, in a workspace "
            "made by `goldset init`)"
        )
    root = _dvc_root_around(start)
    if root is None:
        raise WorkspaceError(
            f"{start}: not a DVC project (no {DVC_DIR}/ up to {git.root}), so it holds no releases; "
            "run `goldset init`, then `goldset release`"
        )
    yield RepoRef(dvc_root=root, git=git)


# ------------------------------------------------------------------------------------------------ versions


def list_versions(ref: RepoRef) -> list[Version]:
    """Every release the repository knows, oldest first: from the release records in ``data.dvc``'s history on
    every local ref (and HEAD's, for a detached or shallow checkout), with the tags that point at them."""
    git, rel = ref.git, ref.dvc_file
    commits = git.commits_touching(rel)
    head = git.head()
    if head is not None and head not in commits:
        commits.insert(0, head)
    tags = git.tags()
    texts = git.cat_many([f"{c}:{rel}" for c in commits] + [f"{c}:{rel}" for c in tags.values() if c not in commits])
    found: dict[str, Version] = {}
    for spec, text in texts.items():
        if text is None:
            continue
        record = parse_record(text)
        if record is None:
            continue
        commit = spec.split(":", 1)[0]
        if record.version not in found:
            found[record.version] = Version(record.version, commit, record, tagged=False)
    for tag, commit in tags.items():
        version = found.get(tag)
        if version is not None and texts.get(f"{commit}:{rel}") is not None:
            record = parse_record(texts[f"{commit}:{rel}"] or b"")
            if record is not None and record.version == tag:
                found[tag] = Version(tag, commit, record, tagged=True)
    return sorted(found.values(), key=lambda v: (v.record.created_at, v.name))


def find_version(spec: str, ref: RepoRef, versions: list[Version] | None = None) -> Version:
    """The release ``spec`` names: its name (the tag, e.g. 'v1.2.0') or its number ('1.2.0')."""
    spec = str(spec).strip()
    versions = list_versions(ref) if versions is None else versions
    exact = [v for v in versions if v.name == spec]
    if not exact:
        number = version_number(spec)
        exact = [v for v in versions if v.number == number and (spec == number or spec.lstrip("vV") == number)]
    if len(exact) == 1:
        return exact[0]
    if len(exact) > 1:
        names = ", ".join(v.name for v in exact)
        raise UnknownVersion(f"{spec}: matches several releases ({names}) in {ref.label}; give the full name")
    raise UnknownVersion(_unknown_message(spec, ref, versions))


def _unknown_message(spec: str, ref: RepoRef, versions: list[Version]) -> str:
    known = ", ".join(v.name for v in versions[-8:]) if versions else "none"
    git = ref.git
    if git.is_shallow():
        return (
            f"{spec}: not among the releases this shallow clone of {ref.label} can see ({known}); "
            "fetch its history and tags with `git fetch --unshallow --tags` and try again"
        )
    if not git.tags() and git.has_remote():
        return (
            f"{spec}: not among the releases in {ref.label} ({known}), and this clone has no tags; "
            "fetch them with `git fetch --tags` and try again"
        )
    if not versions:
        return (
            f"{spec}: {ref.label} has no releases yet (no release record in {ref.dvc_file}); "
            "make one with `goldset release`"
        )
    return (
        f"{spec}: no such release in {ref.label} (releases: {known}); list them with `goldset versions`, "
        "make one with `goldset release`"
    )


# ------------------------------------------------------------------------------------------------ files


def fetch_files(ref: RepoRef, version: Version, *, use_dvc: bool = False) -> dict[str, bytes]:
    """The released folder's files (relpath → bytes), checked against the release's hashes.

    Objects are read from the local DVC cache or a local remote folder when they are there (no ``import dvc``);
    otherwise, or with ``use_dvc``, through ``dvc.api`` (any remote). A missing object, or data that does not hash
    to what the release recorded, is an error naming the version.
    """
    from goldset.versioning import dvc

    files = None if use_dvc else Project(ref.dvc_root).read_tree_local(version.record.data_md5)
    if files is None:
        try:
            files = dvc.read_tree(str(ref.dvc_root), version.commit, DATA_DIR)
        except dvc.DataMissing as exc:
            remote = _remote_label(ref)
            raise dvc.DataMissing(
                f"{version.name}: its data is neither in the DVC cache nor on the remote {remote}; push it from a "
                f"repository that has it (`git checkout {version.name} && dvc push`) ({exc})"
            ) from None
    verify_files(files, version.record, version.name)
    return files


def _remote_label(ref: RepoRef) -> str:
    try:
        remote = Project(ref.dvc_root).default_remote()
    except WorkspaceError:
        remote = None
    return f"{remote.name!r} ({remote.url})" if remote else "(none configured)"


def verify_files(files: dict[str, bytes], record: ReleaseRecord, name: str) -> Manifest:
    """The manifest hashes to ``record.manifest_sha256`` and lists every other file with its sha256."""
    from goldset.schema import Manifest

    raw = files.get(MANIFEST_FILE)
    if raw is None:
        raise IntegrityError(f"{name}: the released folder has no {MANIFEST_FILE}; the release is damaged")
    if sha256_hex(raw) != record.manifest_sha256:
        raise IntegrityError(
            f"{name}: {MANIFEST_FILE} does not have the hash the release commit recorded; the data was changed after "
            "the release (or the cache is damaged: remove .dvc/cache and load again)"
        )
    manifest = Manifest.model_validate_json(raw)
    expected = set(manifest.files)
    present = set(files) - {MANIFEST_FILE}
    for missing in sorted(expected - present):
        raise IntegrityError(f"{name}: {missing} is listed in the manifest but missing from the released folder")
    for extra in sorted(present - expected):
        raise IntegrityError(f"{name}: {extra} is in the released folder but not in its manifest")
    for relpath, digest in manifest.files.items():
        if sha256_hex(files[relpath]) != digest:
            raise IntegrityError(f"{name}: {relpath} does not match its sha256 in the manifest; the release is damaged")
    return manifest


def cache_root(ctx: Context) -> Path:
    """Where materialised versions are kept: $GOLDSET_CACHE_DIR (environment or the workspace's .env), the
    workspace's .goldset/versions, else $XDG_CACHE_HOME/goldset/versions (~/.cache/goldset/versions)."""
    env = ctx.getenv("GOLDSET_CACHE_DIR")
    if env:
        return Path(env).expanduser() / "versions"
    if ctx.ws is not None:
        return ctx.ws.state_dir / "versions"
    base = Path(ctx.getenv("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "goldset" / "versions"


def materialise(ref: RepoRef, version: Version, root: Path, *, use_dvc: bool = False) -> Path:
    """A local folder holding the version's released files (a dataset folder :func:`goldset.data.read_dataset`
    reads, its chunks from ``corpus/``). Reused when it is already there and still hashes right."""

    folder = Path(root) / f"{version.name}-{version.record.manifest_sha256[:12]}"
    if (folder / COMPLETE_MARKER).is_file():
        files = {
            p.relative_to(folder).as_posix(): p.read_bytes()
            for p in folder.rglob("*")
            if p.is_file() and p.name != COMPLETE_MARKER
        }
        try:
            verify_files(files, version.record, version.name)
            return folder
        except IntegrityError:
            shutil.rmtree(folder, ignore_errors=True)  # damaged copy: fetch again
    files = fetch_files(ref, version, use_dvc=use_dvc)
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        for relpath, data in files.items():
            target = tmp / relpath
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        (tmp / COMPLETE_MARKER).write_text(f"{version.name} {version.commit}\n", encoding="utf-8")
        try:
            tmp.rename(folder)
        except OSError:  # another process put it there meanwhile
            if not (folder / COMPLETE_MARKER).is_file():
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return folder


# ------------------------------------------------------------------------------------------------ public API


def _context_for(ws: WorkspaceLike | Context, repo: str | Path | None) -> Context:
    """The context of a call: ``ws``'s (given), the workspace around the current folder's (no ``repo`` given: it may
    be the repository), else the environment's alone."""
    if ws is not None:
        return Context.of(ws)
    return Context.optional(None) if repo is None else Context.open(None)


def resolve_dataset_version(
    spec: str, ws: WorkspaceLike | Context = None, repo: str | Path | None = None, *, use_dvc: bool = False
) -> Path:
    """A local folder holding release ``spec`` (e.g. 'v1.2.0' or '1.2.0') of ``repo`` (a folder or git URL; default:
    the workspace ``ws``, else the DVC project around the current folder), materialised from DVC when needed and
    checked against the release's hashes. The folder has the released files (``pairs.jsonl``, ``manifest.json``,
    ``CHANGELOG.md``, ``snapshot.json``, ``corpus/``): a dataset folder whose chunks are the whole corpus."""
    ctx = _context_for(ws, repo)
    with open_repo(repo, ctx.ws) as ref:
        version = find_version(spec, ref)
        return materialise(ref, version, cache_root(ctx), use_dvc=use_dvc)


def load_dataset(version: str, repo: str | Path | None = None, *, ws: WorkspaceLike | Context = None) -> Dataset:
    """Release ``version`` as a :class:`~goldset.dataset.Dataset`: every pair (``manifest.golden_ids`` says which
    form the golden set), the whole corpus as ``chunks``, the release manifest, and ``path``, the local folder it
    was read from."""
    from goldset.data import read_dataset

    return read_dataset(resolve_dataset_version(version, ws=ws, repo=repo))


def golden_pairs(dataset: Dataset) -> list[QAPair]:
    """The pairs of a loaded release that form its golden set (:meth:`~goldset.dataset.Dataset.golden_ids`)."""
    ids = dataset.golden_ids()
    return [p for p in dataset.pairs if p.id in ids]


def load(
    version: str,
    repo: str | Path | None = None,
    *,
    status: str = "golden",
    ws: WorkspaceLike | Context = None,
) -> pd.DataFrame:
    """Release ``version`` of ``repo`` (a folder or git URL; default: the project around the current folder) as a
    pandas DataFrame, one row per pair: the golden pairs (``status="golden"``, default), every pair
    (``status="all"``), or the pairs of one status (``"accepted"``, ``"retired"``, …).

    Columns: id, question, answer, question_type, language, status, golden, reviewed, evidence (list of
    {chunk_id, doc_id, quote}), chunk_ids, doc_ids, tags, version. Files are checked against the release's hashes.
    """

    from goldset.data import read_manifest, read_pairs
    from goldset.dataset import PAIR_COLUMNS, golden_ids, pair_row
    from goldset.schema import PairStatus

    allowed = {"golden", "all", *(s.value for s in PairStatus)}
    if status not in allowed:
        raise InputError(f"status={status!r}: expected one of {', '.join(sorted(allowed))}")
    folder = resolve_dataset_version(version, ws=ws, repo=repo)
    manifest = read_manifest(folder)  # the release's: its hashes were checked
    pairs = read_pairs(folder)
    golden = golden_ids(pairs, manifest)
    unreviewed = set(manifest.unreviewed_ids) if manifest is not None else set()
    rows: list[dict[str, Any]] = []
    for pair in pairs:
        is_golden = pair.id in golden
        if (status == "golden" and not is_golden) or (status not in ("golden", "all") and pair.status.value != status):
            continue
        rows.append(pair_row(pair, manifest, golden, unreviewed))
    import pandas as pd

    return pd.DataFrame(rows, columns=list(PAIR_COLUMNS))


def versions(repo: str | Path | None = None, *, ws: WorkspaceLike | Context = None) -> list[Version]:
    """Every release of ``repo`` (default: the workspace / the project around the current folder), oldest first."""
    with open_repo(repo, _context_for(ws, repo).ws) as ref:
        return list_versions(ref)


def read_version(
    spec: str, repo: str | Path | None = None, *, ws: WorkspaceLike | Context = None
) -> tuple[Version, Dataset]:
    """A release and its dataset (pairs, corpus chunks, manifest), for `goldset show` and `goldset diff`."""
    from goldset.data import read_dataset

    ctx = _context_for(ws, repo)
    with open_repo(repo, ctx.ws) as ref:
        version = find_version(spec, ref)
        folder = materialise(ref, version, cache_root(ctx))
    return version, read_dataset(folder)

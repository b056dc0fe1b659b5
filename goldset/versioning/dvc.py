"""Everything goldset does with DVC, in one place: the only module that imports ``dvc``.

- checks: is the folder a DVC project, which remote is the default, can it be reached;
- ``add`` (the dataset folder → ``data.dvc``), ``push`` (this version's objects to the remote);
- reading a tracked folder at a revision: straight from DVC's content-addressed storage when the objects are in the
  local cache or a local remote folder (no ``import dvc``: it costs ~0.8 s), else through ``dvc.api.DVCFileSystem``
  (any remote type, and repositories given by git URL).

DVC's failures are not all ``DvcException``\\ s: a missing directory object raises ``DataIndexDirError`` (from
dvc_data), a missing file ``FileNotFoundError``, a remote under a file ``NotADirectoryError``, a remote type whose
plugin is missing ``ImportError``. :func:`translate` turns each into one goldset error line. ``repo.add`` resolves
paths against the process's working folder, so every call runs with absolute paths inside :func:`session`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from goldset.errors import GoldsetError, InputError, WorkspaceError

if TYPE_CHECKING:
    from dvc.repo import Repo

DVC_DIR = ".dvc"
_LOGGERS = ("dvc", "dvc_data", "dvc_objects", "dvc_http", "scmrepo", "fsspec")


class RemoteError(WorkspaceError):
    """The DVC remote is missing, misconfigured or cannot be reached."""


class DataMissing(InputError):
    """A version's data is neither in the local DVC cache nor on the remote."""


# ------------------------------------------------------------------------------------------------ configuration


def _parse_config(text: str) -> dict[str, dict[str, str]]:
    """DVC's config file (configobj INI: ``[core]``, ``['remote "name"']``, ``key = value``) as plain strings."""
    sections: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            name = line.strip("[]").strip()
            if len(name) > 1 and name[0] == name[-1] and name[0] in "'\"":
                name = name[1:-1]
            match = re.fullmatch(r'(\w+)\s+"(.+)"', name)
            key = f"{match.group(1)} {match.group(2)}" if match else name
            current = sections.setdefault(key, {})
            continue
        if current is not None and "=" in line:
            k, v = line.split("=", 1)
            current[k.strip()] = v.strip().strip("'\"")
    return sections


@dataclass(frozen=True)
class Remote:
    name: str
    url: str
    #: the folder of a local remote (a path or file:// URL), absolute; None for other remote types
    path: Path | None


@dataclass(frozen=True)
class Project:
    """A DVC project (the folder holding ``.dvc/``); reading its config needs no ``import dvc``."""

    root: Path

    @property
    def dvc_dir(self) -> Path:
        return self.root / DVC_DIR

    def require(self) -> None:
        if not self.dvc_dir.is_dir():
            raise WorkspaceError(
                f"{self.root}: DVC is not initialised here (no {DVC_DIR}/); run `goldset init` (or `dvc init`)"
            )

    def config(self) -> dict[str, dict[str, str]]:
        """The repository config with ``config.local`` over it (the per-user global config is not consulted)."""
        merged: dict[str, dict[str, str]] = {}
        for name in ("config", "config.local"):
            path = self.dvc_dir / name
            if path.is_file():
                for section, values in _parse_config(path.read_text(encoding="utf-8")).items():
                    merged.setdefault(section, {}).update(values)
        return merged

    def default_remote(self) -> Remote | None:
        conf = self.config()
        name = conf.get("core", {}).get("remote")
        if not name:
            return None
        url = conf.get(f"remote {name}", {}).get("url")
        if url is None:
            raise RemoteError(
                f"{self.dvc_dir / 'config'}: the default remote {name!r} has no url; "
                f"set it with `dvc remote add -d -f {name} URL`"
            )
        return Remote(name, url, self._local_path(url))

    def _local_path(self, url: str) -> Path | None:
        if url.startswith("file://"):
            return Path(url.removeprefix("file://")).resolve()
        if "://" in url or re.match(r"^[\w.-]+@[\w.-]+:", url):  # s3://, ssh://, user@host:path
            return None
        path = Path(url).expanduser()
        return path if path.is_absolute() else (self.dvc_dir / path).resolve()

    def cache_dir(self) -> Path | None:
        """The local cache folder, or None when the config moves it somewhere goldset does not interpret
        (a shared cache set elsewhere still works, through DVC itself)."""
        conf = self.config().get("cache", {})
        if "dir" in conf:
            path = Path(conf["dir"]).expanduser()
            return path if path.is_absolute() else (self.dvc_dir / path).resolve()
        return self.dvc_dir / "cache"

    def require_remote(self) -> Remote:
        """The default remote, checked as far as can be done without sending data: a local folder must be (or be
        creatable as) a writable folder; another type must have its DVC plugin installed."""
        remote = self.default_remote()
        if remote is None:
            raise RemoteError(
                f"{self.root}: no default DVC remote, so the release could not be pushed; "
                "add one with `dvc remote add -d NAME URL` (a folder or s3://…, gs://…, ssh://…)"
            )
        if remote.path is not None:
            probe = remote.path
            while not probe.exists() and probe != probe.parent:
                probe = probe.parent
            if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
                raise RemoteError(
                    f"DVC remote {remote.name!r} ({remote.url}) cannot be reached: {probe} is not a writable folder; "
                    f"fix the path with `dvc remote modify {remote.name} url PATH`"
                )
            return remote
        with session(self.root) as repo:
            try:
                repo.cloud.get_remote_odb(remote.name)
            except BaseException as exc:
                raise translate(exc, f"DVC remote {remote.name!r} ({remote.url})") from None
        return remote

    # -------------------------------------------------------------------------------- content-addressed reads

    def object_paths(self, md5: str, remote: Remote | None) -> list[Path]:
        """Where an object may sit: the local cache, then a local remote folder (DVC 3 layout ``files/md5/ab/…``)."""
        bases = [b for b in (self.cache_dir(), remote.path if remote else None) if b is not None]
        return [b / "files" / "md5" / md5[:2] / md5[2:] for b in bases]

    def read_object(self, md5: str, remote: Remote | None) -> bytes | None:
        for path in self.object_paths(md5, remote):
            try:
                return path.read_bytes()
            except (FileNotFoundError, NotADirectoryError, IsADirectoryError, PermissionError):
                continue
        return None

    def read_tree_local(self, dir_md5: str) -> dict[str, bytes] | None:
        """The files of a tracked folder (relpath → bytes) from the local cache or a local remote, without DVC;
        None when any object is missing there (the caller then asks DVC, which knows every remote type)."""
        try:
            remote = self.default_remote()
        except RemoteError:
            remote = None
        listing = self.read_object(dir_md5, remote)
        if listing is None:
            return None
        try:
            entries = json.loads(listing)
        except ValueError:
            return None
        files: dict[str, bytes] = {}
        for entry in entries:
            data = self.read_object(str(entry["md5"]), remote)
            if data is None:
                return None
            files[str(entry["relpath"])] = data
        return files


def outs_md5(dvc_file_text: str) -> str | None:
    """The ``md5`` of the first output of a ``.dvc`` file (``<hash>.dir`` for a folder)."""
    import yaml

    try:
        data = yaml.safe_load(dvc_file_text) or {}
        return str(data["outs"][0]["md5"])
    except (yaml.YAMLError, KeyError, IndexError, TypeError):
        return None


# ------------------------------------------------------------------------------------------------ DVC itself


@contextlib.contextmanager
def quiet() -> Iterator[list[str]]:
    """DVC's loggers silenced (their hints and progress are not ours to print); yields the error lines they logged,
    for the one-line message."""
    errors: list[str] = []

    class _Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.levelno >= logging.ERROR:
                errors.append(record.getMessage())

    handler = _Collect()
    saved = []
    caught = warnings.catch_warnings()
    caught.__enter__()
    warnings.simplefilter("ignore", DeprecationWarning)  # DVC's own internals (pygtrie) warn on every call
    for name in _LOGGERS:
        logger = logging.getLogger(name)
        saved.append((logger, logger.level, logger.propagate, list(logger.handlers)))
        logger.handlers = [handler]
        logger.propagate = False
        logger.setLevel(logging.ERROR)
    try:
        yield errors
    finally:
        caught.__exit__(None, None, None)
        for logger, level, propagate, handlers in saved:
            logger.handlers = handlers
            logger.propagate = propagate
            logger.setLevel(level)


@contextlib.contextmanager
def session(root: Path) -> Iterator[Repo]:
    """An open DVC repository at ``root``, with the working folder set to it (``repo.add`` resolves paths against
    the process's working folder) and DVC's loggers quiet."""
    from dvc.repo import Repo

    before = Path.cwd()
    os.chdir(root)
    try:
        with quiet():
            try:
                repo = Repo(str(root))
            except BaseException as exc:
                raise translate(exc, f"{root}: DVC") from None
            with repo:
                yield repo
    finally:
        os.chdir(before)


def translate(exc: BaseException, where: str) -> GoldsetError:
    """One goldset error line for whatever DVC raised (see the module docstring for the classes seen)."""
    if isinstance(exc, GoldsetError):
        return exc
    if isinstance(exc, KeyboardInterrupt | SystemExit):
        raise exc
    text = " ".join(str(exc).split()) or type(exc).__name__
    name = type(exc).__name__
    if "already tracked by SCM" in text:
        return WorkspaceError(
            f"{where}: the dataset folder is tracked by git, so DVC cannot track it; "
            "run `git rm -r --cached data` and commit, then release again"
        )
    if isinstance(exc, ImportError):
        return RemoteError(f"{where}: {text}; install it (`pip install dvc-s3`, `dvc-gs`, …) or use another remote")
    if name in ("NoRemoteError", "RemoteNotFoundError"):
        return RemoteError(f"{where}: {text.splitlines()[0]}; add one with `dvc remote add -d NAME URL`")
    if name in ("UploadError", "FileTransferError") or isinstance(exc, NotADirectoryError | PermissionError):
        return RemoteError(f"{where}: cannot be reached or written ({text}); check the remote's URL and access")
    if name in ("DataIndexDirError", "FileMissingError", "PathMissingError", "CheckoutError") or isinstance(
        exc, FileNotFoundError
    ):
        return DataMissing(f"{where}: data not found in the DVC cache nor on the remote ({text})")
    if name == "NotDvcRepoError":
        return WorkspaceError(f"{where}: not a DVC project; run `goldset init` (or `dvc init`)")
    return WorkspaceError(f"{where}: {name}: {text}")


def add(root: Path, folder: Path) -> str:
    """``dvc add`` the folder (absolute path) and return the ``md5`` of its new ``.dvc`` file."""
    with session(root) as repo, quiet() as errors:
        try:
            repo.add(str(Path(folder).resolve()))
        except BaseException as exc:
            raise translate(exc, f"{folder}: `dvc add`" + (f" ({errors[0]})" if errors else "")) from None
    dvc_file = Path(folder).with_name(Path(folder).name + ".dvc")
    md5 = outs_md5(dvc_file.read_text(encoding="utf-8"))
    if md5 is None:  # pragma: no cover - DVC just wrote it
        raise WorkspaceError(f"{dvc_file}: DVC wrote no output hash; run `dvc add {folder}` to see why")
    return md5


def push(root: Path, dvc_file: Path, remote: Remote) -> int:
    """Push the objects ``dvc_file`` names (this version only) to ``remote``; returns how many were sent."""
    with session(root) as repo, quiet() as errors:
        try:
            return int(repo.push(targets=[str(Path(dvc_file).resolve())], remote=remote.name) or 0)
        except BaseException as exc:
            detail = f" ({errors[0]})" if errors else ""
            raise translate(exc, f"DVC remote {remote.name!r} ({remote.url}){detail}") from None


def read_tree(repo: str, rev: str, path: str) -> dict[str, bytes]:
    """The files under ``path`` (a tracked folder) at ``rev`` of ``repo`` (a local folder or a git URL), through
    ``dvc.api.DVCFileSystem``: from the cache, else streamed from the remote configured at that revision."""
    from dvc.api import DVCFileSystem

    where = f"{repo} at {rev[:12]}"
    with quiet() as errors:
        try:
            fs = DVCFileSystem(repo, rev=rev)
            files: dict[str, bytes] = {}
            prefix = path.rstrip("/") + "/"
            for name in sorted(fs.find(path, detail=False)):
                files[name.removeprefix("/").removeprefix(prefix)] = fs.read_bytes(name)
        except BaseException as exc:
            detail = f" ({errors[0]})" if errors else ""
            raise translate(exc, where + detail) from None
    return files


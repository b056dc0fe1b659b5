"""The git side of releases, through the ``git`` command (always run in the repository, with absolute paths).

scmrepo (DVC's git layer) stages nothing when given paths relative to another working directory, and reads its
config once per open repository; the plain ``git`` command has neither trap and is needed anyway.

A release commit holds exactly the entries the release gives (:meth:`Git.commit_entries`): it is made from a
temporary index (HEAD's tree plus those entries) through ``git commit``, so hooks and signing apply as usual, and
neither what the user staged nor what they left unstaged in other files (or in the same files) goes in.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from goldset.errors import WorkspaceError


class GitError(WorkspaceError):
    """A git command failed; the message holds the command and git's first line of explanation."""


class NoIdentity(GitError):
    """git cannot tell who commits (no user.name / user.email for the repository): a release could not commit."""


def _require_git() -> str:
    exe = shutil.which("git")
    if exe is None:
        raise WorkspaceError("git is not installed; install git (releases are git commits and tags)")
    return exe


@dataclass(frozen=True)
class Git:
    """One repository: ``root`` is its top-level folder."""

    root: Path

    @classmethod
    def around(cls, path: Path) -> Git | None:
        """The repository holding ``path`` (None when it is not in one)."""
        exe = _require_git()
        folder = Path(path)
        while not folder.exists() and folder != folder.parent:
            folder = folder.parent
        res = subprocess.run(
            [exe, "rev-parse", "--show-toplevel"], cwd=folder, capture_output=True, text=True, check=False
        )
        if res.returncode != 0 or not res.stdout.strip():
            return None
        return cls(Path(res.stdout.strip()).resolve())

    # ------------------------------------------------------------------------------------------------ running

    def run(
        self, *args: str, check: bool = True, input: bytes | None = None, env: Mapping[str, str] | None = None
    ) -> subprocess.CompletedProcess[bytes]:
        res = subprocess.run([_require_git(), *args], cwd=self.root, capture_output=True, input=input, check=False,
                             env={**os.environ, **env} if env else None)  # fmt: skip
        if check and res.returncode != 0:
            detail = res.stderr.decode("utf-8", "replace").strip().splitlines()
            first = next((line for line in detail if line.strip()), f"exit code {res.returncode}")
            raise GitError(f"{self.root}: `git {' '.join(args[:2])}` failed: {first.removeprefix('fatal: ')}")
        return res

    def out(self, *args: str, check: bool = True) -> str:
        return self.run(*args, check=check).stdout.decode("utf-8", "replace").strip()

    # ------------------------------------------------------------------------------------------------ reading

    def rel(self, path: Path) -> str:
        """``path`` relative to the repository root, POSIX style (what ``rev:path`` expressions take)."""
        return Path(path).resolve().relative_to(self.root).as_posix()

    def head(self) -> str | None:
        res = self.run("rev-parse", "--verify", "-q", "HEAD^{commit}", check=False)
        return res.stdout.decode().strip() or None if res.returncode == 0 else None

    def resolve(self, rev: str) -> str | None:
        """The commit a revision (tag, branch, sha) names, or None."""
        res = self.run("rev-parse", "--verify", "-q", f"{rev}^{{commit}}", check=False)
        return res.stdout.decode().strip() or None if res.returncode == 0 else None

    def tag_exists(self, tag: str) -> bool:
        return self.run("rev-parse", "--verify", "-q", f"refs/tags/{tag}", check=False).returncode == 0

    def tags(self) -> dict[str, str]:
        """tag name → commit it points at (annotated tags peeled)."""
        text = self.out("for-each-ref", "--format=%(refname:short)%00%(*objectname)%00%(objectname)", "refs/tags")
        out: dict[str, str] = {}
        for line in text.splitlines():
            name, peeled, obj = line.split("\x00")
            out[name] = peeled or obj
        return out

    def has_remote(self) -> bool:
        """The repository has a remote (a clone): tags and history may be there and not here."""
        return bool(self.out("remote", check=False).strip())

    def is_shallow(self) -> bool:
        return self.out("rev-parse", "--is-shallow-repository", check=False) == "true"

    def show(self, rev: str, relpath: str) -> bytes | None:
        """The bytes of ``relpath`` at ``rev`` (None when the file is not there)."""
        res = self.run("show", f"{rev}:{relpath}", check=False)
        return res.stdout if res.returncode == 0 else None

    def commits_touching(self, relpath: str, *, all_refs: bool = True) -> list[str]:
        """Commits (newest first) that changed ``relpath``, on every local ref (or HEAD's history)."""
        refs = ["--all"] if all_refs else ["HEAD"]
        res = self.run("log", *refs, "--format=%H", "--", relpath, check=False)
        if res.returncode != 0:
            return []
        return res.stdout.decode().split()

    def cat_many(self, specs: list[str]) -> dict[str, bytes | None]:
        """``rev:path`` → bytes (None when missing), read in one ``git cat-file --batch`` process."""
        if not specs:
            return {}
        res = self.run("cat-file", "--batch", input=("\n".join(specs) + "\n").encode())
        data, pos = res.stdout, 0
        out: dict[str, bytes | None] = {}
        for spec in specs:
            end = data.index(b"\n", pos)
            header = data[pos:end].decode()
            pos = end + 1
            if header.endswith(" missing") or header.endswith(" ambiguous"):
                out[spec] = None
                continue
            size = int(header.split()[2])
            out[spec] = data[pos : pos + size]
            pos += size + 1
        return out

    def git_dir(self) -> Path:
        return Path(self.out("rev-parse", "--absolute-git-dir"))

    def tree_entries(self, rev: str | None, relpaths: list[str]) -> dict[str, str]:
        """``path -> "mode sha"`` of the files under ``relpaths`` in commit ``rev`` (empty when there is none)."""
        if rev is None or not relpaths:
            return {}
        text = self.out("ls-tree", "-r", "--full-tree", rev, "--", *relpaths, check=False)
        out: dict[str, str] = {}
        for line in text.splitlines():
            meta, _, path = line.partition("\t")
            mode, _, sha = meta.split(" ")
            out[path] = f"{mode} {sha}"
        return out

    def identity_problem(self) -> str | None:
        """None when git can name the author and committer of a commit here from a name and an email someone set
        (``user.name`` / ``user.email`` in any git config, or git's environment variables); else a one-line
        explanation saying which ``git config`` to set. Stricter than git, which guesses a name from the account
        and an email from the host name when it can: a release commit should not carry ``root@host``."""
        env = os.environ.get
        given = {
            "user.name": bool(env("GIT_AUTHOR_NAME") and env("GIT_COMMITTER_NAME")),
            "user.email": bool(env("GIT_AUTHOR_EMAIL") and env("GIT_COMMITTER_EMAIL")) or bool(env("EMAIL")),
        }
        missing = [k for k, ok in given.items() if not ok and not self.out("config", "--get", k, check=False)]
        idents = ("GIT_AUTHOR_IDENT", "GIT_COMMITTER_IDENT")  # what `git commit` and `git tag -a` will use
        if not missing and all(self.run("var", v, check=False).returncode == 0 for v in idents):
            return None
        what = " and ".join(missing) if missing else "user.name and user.email"
        example = {
            "user.name": 'git config user.name "Your Name"',
            "user.email": "git config user.email you@example.com",
        }
        todo = " and ".join(f"`{example[k]}`" for k in (missing or ["user.name", "user.email"]))
        return (
            f"{self.root}: git has no identity to commit with ({what} not set); run {todo} (add --global for every "
            "repository), then release again"
        )

    # ------------------------------------------------------------------------------------------------ writing

    def hash_blob(self, data: bytes) -> str:
        """Store ``data`` as a blob in the object database; its sha."""
        return self.run("hash-object", "-w", "--stdin", input=data).stdout.decode().strip()

    def commit_entries(self, blobs: Mapping[str, bytes], files: list[str], message: str) -> dict[str, str]:
        """Commit HEAD's tree with ``blobs`` (path -> content) and ``files`` (paths, folders too, taken as they are
        in the working tree) and nothing else, through a temporary index; the real index is left alone. Returns
        ``path -> "mode sha"`` of every committed entry under those paths."""
        index = self.git_dir() / f"goldset-release-index-{os.getpid()}"
        index.unlink(missing_ok=True)
        env = {"GIT_INDEX_FILE": str(index)}
        try:
            head = self.head()
            self.run("read-tree", *([head] if head else ["--empty"]), env=env)
            if files:
                self.run("add", "--", *files, env=env)
            info = "".join(f"100644 {self.hash_blob(data)}\t{path}\n" for path, data in blobs.items())
            if info:
                self.run("update-index", "--add", "--index-info", input=info.encode(), env=env)
            self.run("commit", "-q", "-m", message, env=env)
        finally:
            index.unlink(missing_ok=True)
        return self.tree_entries("HEAD", [*blobs, *files])

    def set_index(self, entries: Mapping[str, str]) -> None:
        """Set index entries (``path -> "mode sha"``), leaving every other entry as it is."""
        if entries:
            info = "".join(f"{meta}\t{path}\n" for path, meta in entries.items())
            self.run("update-index", "--add", "--index-info", input=info.encode())

    def ignored(self, relpath: str) -> bool:
        return self.run("check-ignore", "-q", "--", relpath, check=False).returncode == 0

    def tag(self, name: str, message: str, commit: str) -> None:
        self.run("tag", "-a", name, "-m", message, commit)

    def undo_commit(self, previous_head: str | None) -> None:
        """Move the branch back to ``previous_head`` (or to no commit at all); the index is left to the caller."""
        if previous_head is None:
            self.run("update-ref", "-d", "HEAD", check=False)
        else:
            self.run("reset", "-q", "--soft", previous_head, check=False)

    def index_entries(self, relpaths: list[str]) -> dict[str, str]:
        """The index entries of ``relpaths`` (``git ls-files -s`` lines, the format ``update-index`` reads back)."""
        text = self.out("ls-files", "-s", "--", *relpaths)
        return {line.split("\t", 1)[1]: line for line in text.splitlines() if "\t" in line}

    def restore_index(self, saved: dict[str, str], relpaths: list[str]) -> None:
        """Put the index entries of ``relpaths`` (files or folders) back to ``saved`` (from :meth:`index_entries`)."""
        gone = [p for p in self.index_entries(relpaths) if p not in saved]
        if gone:
            self.run("update-index", "--force-remove", "--", *gone, check=False)
        if saved:
            self.run("update-index", "--index-info", input=("\n".join(saved.values()) + "\n").encode(), check=False)

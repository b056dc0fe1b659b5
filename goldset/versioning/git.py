"""The git side of releases, through the ``git`` command (always run in the repository, with absolute paths).

scmrepo (DVC's git layer) stages nothing when given paths relative to another working directory, and reads its
config once per open repository; the plain ``git`` command has neither trap and is needed anyway.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from goldset.errors import WorkspaceError


class GitError(WorkspaceError):
    """A git command failed; the message holds the command and git's first line of explanation."""


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

    def run(self, *args: str, check: bool = True, input: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
        res = subprocess.run([_require_git(), *args], cwd=self.root, capture_output=True, input=input, check=False)
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

    # ------------------------------------------------------------------------------------------------ writing

    def add(self, *relpaths: str) -> None:
        self.run("add", "--", *relpaths)

    def commit_only(self, relpaths: list[str], message: str) -> str:
        """Commit exactly ``relpaths`` (their working-tree state), leaving anything else staged as it was."""
        self.run("commit", "-q", "-m", message, "--", *relpaths)
        head = self.head()
        if head is None:  # pragma: no cover - a commit that succeeded has a HEAD
            raise GitError(f"{self.root}: commit made but HEAD is unreadable")
        return head

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

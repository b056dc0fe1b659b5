"""Builders for the versioning tests: real git + DVC workspaces in temp folders with a local remote outside them
(like a team's shared remote), hand-made pairs quoting real chunks, clones."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from goldset.io import read_jsonl, write_jsonl
from goldset.kb import ingest, load_chunks
from goldset.scaffold import init_workspace
from goldset.schema import Chunk, Evidence, PairStatus, Provenance, QAPair, QuestionType, pair_id
from goldset.workspace import Workspace

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
KB = FIXTURES / "kb"
REPO_ROOT = Path(__file__).resolve().parents[2]

GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "goldset tests",
    "GIT_AUTHOR_EMAIL": "tests@goldset.invalid",
    "GIT_COMMITTER_NAME": "goldset tests",
    "GIT_COMMITTER_EMAIL": "tests@goldset.invalid",
}


def release_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The environment of a release test: a git identity, and a goldset cache inside ``tmp_path``."""
    for name, value in GIT_IDENTITY.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("GOLDSET_CACHE_DIR", str(tmp_path / "goldset-cache"))


def git(cwd: Path, *args: str) -> str:
    res = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed in {cwd}: {res.stderr.strip()}")
    return res.stdout.strip()


def dvc(cwd: Path, *args: str) -> str:
    res = subprocess.run([sys.executable, "-m", "dvc", *args], cwd=cwd, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise AssertionError(f"dvc {' '.join(args)} failed in {cwd}: {res.stderr.strip()}")
    return res.stdout.strip()


def copy_docs(dest: Path, files: dict[str, Path]) -> Path:
    """A documents folder holding ``files`` (name → source file); replaces what was there."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for name, source in files.items():
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
    return dest


def make_workspace(root: Path, docs: Path, remote: Path) -> Workspace:
    """``goldset init`` + a default DVC remote at ``remote`` (absolute, outside the repository) + ingest ``docs``."""
    init_workspace(root)
    dvc(root, "remote", "add", "-f", "-d", "shared", str(remote))
    ws = Workspace(root)
    ingest(docs, ws)
    return ws


def _first_sentence(text: str) -> str | None:
    for sentence in re.split(r"(?<=[.!?])\s+", text):
        s = sentence.strip()
        if len(s.split()) >= 6 and "`" not in s and "{" not in s and "<" not in s and "|" not in s:
            return s
    return None


def hand_pairs(chunks: list[Chunk], n: int, *, status: PairStatus = PairStatus.accepted, doc: str | None = None):
    """``n`` pairs on chunks with a quotable sentence (one per chunk), like a careful human writes them."""
    pairs: list[QAPair] = []
    for chunk in sorted(chunks, key=lambda c: (c.doc_id, c.position, c.id)):
        if doc is not None and chunk.doc_id != doc:
            continue
        quote = _first_sentence(chunk.text)
        if quote is None:
            continue
        question = f"What does the {chunk.doc_title} page say in the section {' / '.join(chunk.heading_titles)}?"
        pairs.append(
            QAPair(
                id=pair_id([chunk.id], "factual", question),
                question=question,
                answer=f"It explains that {quote[0].lower()}{quote[1:]}",
                question_type=QuestionType.factual,
                language="en",
                evidence=[Evidence(chunk_id=chunk.id, doc_id=chunk.doc_id, quote=quote)],
                provenance=Provenance(source="human", chunk_hashes={chunk.id: chunk.content_hash}),
                status=status,
            )
        )
        if len(pairs) == n:
            break
    return pairs


def write_pairs(ws: Workspace, pairs: list[QAPair]) -> None:
    write_jsonl(ws.pairs_path, pairs)


def read_pairs(ws: Workspace) -> list[QAPair]:
    return read_jsonl(ws.pairs_path, QAPair)


def kb_chunks(ws: Workspace) -> list[Chunk]:
    return load_chunks(ws)


def clone_like_ci(dest: Path) -> Path:
    """This repository at the commit under test, cloned into ``dest`` the way CI clones it: without tags (the test
    is skipped when this is not a git checkout)."""
    if not (REPO_ROOT / ".git").exists():
        pytest.skip("not a git checkout of goldset (an sdist?): nothing to clone")
    head = git(REPO_ROOT, "rev-parse", "HEAD")
    git(dest.parent, "clone", "-q", "--no-tags", "--no-checkout", str(REPO_ROOT), str(dest))
    if subprocess.run(["git", "cat-file", "-e", head], cwd=dest, capture_output=True).returncode != 0:
        git(dest, "fetch", "-q", "--no-tags", "origin", head)  # a detached HEAD no branch points at
    git(dest, "checkout", "-q", head)
    return dest


def clone(src: Path, dest: Path, *args: str) -> Path:
    git(src.parent, "clone", "-q", *args, str(src) if "--depth" not in args else src.as_uri(), str(dest))
    return dest


def snapshot_state(ws: Workspace) -> dict[str, object]:
    """What a failed release must leave as it was: the commit, the tags, the index and every file outside .git
    and the DVC cache."""
    files = {}
    for path in sorted(ws.root.rglob("*")):
        rel = path.relative_to(ws.root)
        if path.is_file() and rel.parts[0] not in (".git", ".goldset") and rel.parts[:2] != (".dvc", "cache") and (
            rel.parts[:2] != (".dvc", "tmp")
        ):
            files[rel.as_posix()] = path.read_bytes()
    head = subprocess.run(["git", "rev-parse", "-q", "--verify", "HEAD"], cwd=ws.root, capture_output=True, text=True)
    return {
        "head": head.stdout.strip(),
        "tags": git(ws.root, "tag", "-l"),
        "index": git(ws.root, "ls-files", "-s"),
        "files": files,
    }


def decide(pairs: list[QAPair], outcomes: dict[str, str]) -> list[QAPair]:
    """Expert decisions on ``pairs`` (id → 'accepted' or 'rejected'), with the status review gives them."""
    from goldset.schema import ReviewDecision
    from goldset.schema.base import utcnow

    out = []
    for p in pairs:
        outcome = outcomes.get(p.id)
        if outcome is not None:
            verdict = "accept" if outcome == "accepted" else "reject"
            decision = ReviewDecision(reviewer="expert@example.com", at=utcnow(), verdict=verdict)
            review = p.review.model_copy(update={"outcome": outcome, "decisions": [*p.review.decisions, decision]})
            status = PairStatus.accepted if outcome == "accepted" else PairStatus.rejected
            p = p.model_copy(update={"review": review, "status": status})
        out.append(p)
    return out


def no_git_identity(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No git identity anywhere: HOME and the global config point at an empty config, no system config, and
    none of the environment variables git takes a name or email from."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / ".gitconfig").write_text("")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    for name in (*GIT_IDENTITY, "EMAIL"):
        monkeypatch.delenv(name, raising=False)

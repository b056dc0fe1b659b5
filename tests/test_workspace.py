"""`goldset init` on real git + DVC repositories in temporary folders."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from goldset.errors import WorkspaceError
from goldset.scaffold import init_workspace, workspace_status


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def tree_state(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not str(p.relative_to(root)).startswith(".git/")
    }


def test_init_creates_everything_and_is_idempotent(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    report = init_workspace(root)
    assert report.changed
    for rel in ("goldset.yaml", "labeling/review.xml", "prompts/generate.md", "prompts/judge_groundedness.md",
                ".dvc/config", ".gitignore"):
        assert (root / rel).is_file(), rel
    assert (root / ".git").is_dir()
    config = (root / ".dvc" / "config").read_text()
    assert "analytics = False" in config and "autostage = True" in config
    assert "url = ../.dvc-remote" in config, "the default remote is a local folder, stored relative"
    gitignore = (root / ".gitignore").read_text().splitlines()
    assert ".goldset/" in gitignore and ".env" in gitignore

    before = tree_state(root)
    again = init_workspace(root)
    assert not again.changed, again.actions
    assert tree_state(root) == before


def test_init_inside_a_larger_repo_uses_dvc_subdir(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    root = tmp_path / "golden"
    init_workspace(root)
    assert (root / ".dvc").is_dir()
    assert not (tmp_path / ".dvc").exists()
    assert not (root / ".git").exists(), "no nested git repository inside an existing one"


def test_init_keeps_user_edits(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    init_workspace(root)
    (root / "goldset.yaml").write_text("kb:\n  path: manuals\n", encoding="utf-8")
    (root / "labeling" / "review.xml").write_text("<View/>", encoding="utf-8")
    init_workspace(root)
    assert (root / "goldset.yaml").read_text() == "kb:\n  path: manuals\n"
    assert (root / "labeling" / "review.xml").read_text() == "<View/>"


def test_init_on_a_file_fails_clearly(tmp_path: Path) -> None:
    target = tmp_path / "file.txt"
    target.write_text("x")
    with pytest.raises(WorkspaceError, match="not a folder"):
        init_workspace(target)


def test_status_of_a_fresh_workspace(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    init_workspace(root, dvc=False)
    st = workspace_status(root)
    assert st.kb_snapshot_id is None and st.pairs_by_status == {} and st.last_release is None


def test_init_in_a_folder_ignored_by_the_enclosing_repo_makes_its_own_repo(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    (tmp_path / ".gitignore").write_text("/scratch/\n")
    root = tmp_path / "scratch" / "ws"
    report = init_workspace(root)
    assert "initialised git" in report.actions
    assert (root / ".git").is_dir() and (root / ".dvc").is_dir()

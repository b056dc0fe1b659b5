"""Bad input and faults of releases and loading: one clear line each, and the workspace as it was (no commit, no tag,
no file changed; never a tag without pushed data)."""

from __future__ import annotations

import shutil
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from goldset.cli import app
from goldset.errors import GoldsetError, InputError, UsageError, WorkspaceError
from goldset.scaffold import init_workspace
from goldset.schema import PairStatus
from goldset.versioning.dvc import DataMissing, RemoteError
from goldset.versioning.load import UnknownVersion, load
from goldset.versioning.release import ManualEdit, VersionExists, release
from goldset.workspace import Workspace
from tests.helpers.versioning_data import (
    KB,
    clone,
    dvc,
    git,
    hand_pairs,
    kb_chunks,
    make_workspace,
    read_pairs,
    release_env,
    snapshot_state,
    write_pairs,
)

runner = CliRunner()


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    release_env(tmp_path, monkeypatch)


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    ws = make_workspace(tmp_path / "ws", KB / "en", tmp_path / "remote")
    write_pairs(ws, hand_pairs(kb_chunks(ws), 6))
    return ws


def _one_line(exc: BaseException) -> str:
    text = str(exc)
    assert "\n" not in text and text.strip() == text and len(text) < 400, text
    return text


def _cli_error(*args: str) -> str:
    res = runner.invoke(app, list(args))
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert res.exit_code == 2, res.output
    assert len(lines) == 1 and lines[0].startswith("error: "), res.output
    return lines[0]


def _change(ws: Workspace) -> None:
    pairs = read_pairs(ws)
    write_pairs(ws, [pairs[0].model_copy(update={"answer": pairs[0].answer + " More."}), *pairs[1:]])


def test_not_a_git_repository(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    (root / "goldset.yaml").write_text("")
    with pytest.raises(WorkspaceError, match="not a git repository") as err:
        release("1.0.0", message="m", ws=root)
    _one_line(err.value)
    line = _cli_error("release", "1.0.0", "-m", "m", "-w", str(root))
    assert "not a git repository" in line
    with pytest.raises(WorkspaceError, match="not a git repository"):
        load("v1.0.0", repo=root)


def test_dvc_not_initialised(tmp_path: Path) -> None:
    init_workspace(tmp_path / "ws", dvc=False)
    with pytest.raises(WorkspaceError, match=r"DVC is not initialised here .*run `goldset init`") as err:
        release("1.0.0", message="m", ws=tmp_path / "ws")
    _one_line(err.value)
    with pytest.raises(WorkspaceError, match="not a DVC project"):
        load("v1.0.0", repo=tmp_path / "ws")


def test_no_default_remote(ws: Workspace) -> None:
    dvc(ws.root, "remote", "default", "--unset")
    state = snapshot_state(ws)
    with pytest.raises(RemoteError, match=r"no default DVC remote.*dvc remote add -d") as err:
        release("1.0.0", message="m", ws=ws)
    _one_line(err.value)
    assert snapshot_state(ws) == state


def test_remote_that_is_not_a_folder_fails_before_anything_is_written(ws: Workspace, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    dvc(ws.root, "remote", "modify", "shared", "url", str(blocker / "remote"))
    state = snapshot_state(ws)
    with pytest.raises(RemoteError, match=r"DVC remote 'shared' .* cannot be reached") as err:
        release("1.0.0", message="m", ws=ws)
    _one_line(err.value)
    assert snapshot_state(ws) == state


def test_unreachable_remote_at_push_leaves_no_commit_no_tag_and_every_file_as_it_was(ws: Workspace) -> None:
    release("1.0.0", message="one", ws=ws)
    _change(ws)
    dvc(ws.root, "remote", "add", "-f", "-d", "down", "http://127.0.0.1:9/remote")
    git(ws.root, "add", ".dvc/config")
    git(ws.root, "commit", "-q", "-m", "remote moved")
    state = snapshot_state(ws)
    with pytest.raises(RemoteError, match=r"DVC remote 'down' \(http://127.0.0.1:9/remote\).*cannot be reached") as e:
        release("1.0.1", message="two", ws=ws)
    _one_line(e.value)
    assert snapshot_state(ws) == state, "no commit, no tag, data/ and data.dvc as they were"
    line = _cli_error("release", "1.0.1", "-m", "two", "-w", str(ws.root))
    assert "cannot be reached" in line
    assert snapshot_state(ws) == state


def test_a_failing_commit_after_the_push_is_undone_and_no_tag_is_made(ws: Workspace) -> None:
    hook = ws.root / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text("#!/bin/sh\necho 'policy: no commits today' >&2\nexit 1\n")
    hook.chmod(hook.stat().st_mode | stat.S_IEXEC)
    state = snapshot_state(ws)
    with pytest.raises(GoldsetError, match="git commit") as err:
        release("1.0.0", message="one", ws=ws)
    _one_line(err.value)
    assert snapshot_state(ws) == state
    assert not (ws.root / "data.dvc").exists() and git(ws.root, "tag", "-l") == ""
    hook.unlink()
    assert release("1.0.0", message="one", ws=ws).version == "v1.0.0"


def test_a_file_goldset_does_not_write_in_data(ws: Workspace) -> None:
    (ws.data_dir / "notes.txt").write_text("my notes")
    state = snapshot_state(ws)
    with pytest.raises(ManualEdit, match=r"data/notes.txt: not a file goldset writes") as err:
        release("1.0.0", message="m", ws=ws)
    _one_line(err.value)
    assert snapshot_state(ws) == state


def test_a_corpus_shard_edited_by_hand_since_the_last_release(ws: Workspace) -> None:
    release("1.0.0", message="one", ws=ws)
    shard = next((ws.data_dir / "corpus").rglob("*.jsonl"))
    shard.chmod(0o644)
    shard.write_text(shard.read_text().replace("FastAPI", "FastAPY", 1))
    _change(ws)
    with pytest.raises(ManualEdit, match=r"edited since the last release.*dvc checkout data") as err:
        release("1.0.1", message="two", ws=ws)
    _one_line(err.value)


def test_a_tag_that_exists_and_an_unknown_version(ws: Workspace) -> None:
    # A new workspace (no remote, no releases): nothing to fetch, so the message says there is no release yet.
    with pytest.raises(UnknownVersion, match=r"v1\.0\.0: .* has no releases yet .*make one with `goldset release`"):
        load("v1.0.0", repo=ws.root)
    git(ws.root, "commit", "-q", "--allow-empty", "-m", "code")
    git(ws.root, "tag", "v1.0.0")
    with pytest.raises(VersionExists, match=r"v1\.0\.0: a git tag of that name exists") as err:
        release("1.0.0", message="m", ws=ws)
    _one_line(err.value)
    release("1.1.0", message="m", ws=ws)
    with pytest.raises(UnknownVersion, match=r"v9.9.9: no such release .*\(releases: v1.1.0\)") as err:
        load("v9.9.9", repo=ws.root)
    _one_line(err.value)
    with pytest.raises(UnknownVersion, match=r"v1\.0\.0: no such release"):  # a tag, but not a release
        load("v1.0.0", repo=ws.root)
    assert "v9.9.9" in _cli_error("show", "v9.9.9", "-w", str(ws.root))


def test_bad_version_names_and_options(ws: Workspace) -> None:
    with pytest.raises(UsageError, match=r"version '1\.\.0'"):
        release("1..0", message="m", ws=ws)
    with pytest.raises(UsageError, match="message"):
        release("1.0.0", message="  ", ws=ws)
    with pytest.raises(UsageError, match="not both"):
        release("1.0.0", message="m", bump="minor", ws=ws)
    assert "--bump" in _cli_error("release", "1.0.0", "--bump", "huge", "-m", "m", "-w", str(ws.root))
    # the library's own checks, in its words, from the CLI too
    both = _cli_error("release", "1.0.0", "--bump", "minor", "-m", "m", "-w", str(ws.root))
    assert both == "error: give either a version (e.g. 1.2.0) or bump (major, minor, patch), not both or neither"
    assert "a release needs a message" in _cli_error("release", "1.0.0", "-w", str(ws.root))


def test_empty_golden_set_and_missing_kb(ws: Workspace, tmp_path: Path) -> None:
    write_pairs(ws, [p.model_copy(update={"status": PairStatus.candidate}) for p in read_pairs(ws)])
    with pytest.raises(InputError, match="golden set would be empty"):
        release("1.0.0", message="m", ws=ws)
    shutil.rmtree(ws.kb_dir)
    with pytest.raises(InputError, match="no KB snapshot"):
        release("1.0.0", message="m", ws=ws)


def test_evidence_that_changed_since_the_pair_was_written(ws: Workspace) -> None:
    pairs = read_pairs(ws)
    ev = pairs[0].provenance.model_copy(update={"chunk_hashes": dict.fromkeys(pairs[0].chunk_ids, "0" * 64)})
    write_pairs(ws, [pairs[0].model_copy(update={"provenance": ev}), *pairs[1:]])
    with pytest.raises(InputError, match=r"do not match the KB snapshot .*goldset refresh") as err:
        release("1.0.0", message="m", ws=ws)
    _one_line(err.value)


def test_data_missing_from_cache_and_remote(ws: Workspace, tmp_path: Path) -> None:
    release("1.0.0", message="one", ws=ws)
    shutil.rmtree(tmp_path / "remote")  # the remote lost it; a fresh clone has no cache
    copy = clone(ws.root, tmp_path / "clone")
    with pytest.raises(DataMissing, match=r"v1.0.0: its data is neither in the DVC cache nor on the remote") as err:
        load("v1.0.0", repo=copy)
    _one_line(err.value)

"""Releases with real git and DVC in temp folders and a local remote: v1, a change, v2; loading both by tag from the
repository and from fresh clones (empty cache, no tags, shallow, by git URL); immutability; the changelog."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from goldset.cli import app
from goldset.data import read_dataset
from goldset.errors import GoldsetError, InputError
from goldset.schema import PairStatus, QuestionType
from goldset.versioning.load import (
    IntegrityError,
    UnknownVersion,
    golden_pairs,
    load,
    load_dataset,
    resolve_dataset_version,
    versions,
)
from goldset.versioning.release import NothingToRelease, VersionExists, release
from goldset.workspace import Workspace
from tests.helpers.versioning_data import (
    KB,
    clone,
    decide,
    git,
    hand_pairs,
    kb_chunks,
    make_workspace,
    no_git_identity,
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
    pairs = hand_pairs(kb_chunks(ws), 8)
    pairs[-1] = pairs[-1].model_copy(update={"status": PairStatus.passed})  # passed, never reviewed
    pairs.append(pairs[0].model_copy(update={"id": "qa-rejected", "status": PairStatus.rejected}))
    write_pairs(ws, pairs)
    return ws


def _v2_changes(ws: Workspace) -> dict[str, str]:
    """Edit one answer, change one type, retire one pair, add one: returns the ids by role."""
    pairs = read_pairs(ws)
    golden = [p for p in pairs if p.status in (PairStatus.accepted, PairStatus.passed)]
    edited, typed, retired = golden[0], golden[1], golden[2]
    extra = hand_pairs(kb_chunks(ws), 12)[-1]
    assert extra.id not in {p.id for p in pairs}
    out = []
    for p in pairs:
        if p.id == edited.id:
            p = p.model_copy(update={"answer": p.answer + " It also says more."})
        elif p.id == typed.id:
            p = p.model_copy(update={"question_type": QuestionType.reasoning})
        elif p.id == retired.id:
            p = p.model_copy(update={"status": PairStatus.retired})
        out.append(p)
    write_pairs(ws, [*out, extra])
    return {"edited": edited.id, "typed": typed.id, "retired": retired.id, "added": extra.id}


def test_release_v1_change_v2_and_load_both_by_tag(ws: Workspace) -> None:
    r1 = release("1.0.0", message="First golden set", ws=ws)
    assert r1.version == "v1.0.0" and r1.previous is None and r1.pushed > 0
    data = ws.data_dir
    manifest = json.loads((data / "manifest.json").read_text())
    chunks = kb_chunks(ws)
    docs = sorted({c.doc_id for c in chunks})
    # the release folder: every pair, the whole corpus sharded by document, the snapshot, changelog, manifest
    assert sorted(p.relative_to(data).as_posix() for p in (data / "corpus").rglob("*.jsonl")) == [
        f"corpus/{d}.jsonl" for d in docs
    ]
    assert manifest["version"] == "v1.0.0" and manifest["n_chunks"] == len(chunks) and manifest["n_documents"] == 6
    assert len(manifest["golden_ids"]) == 8 and len(manifest["unreviewed_ids"]) == 1
    assert "qa-rejected" not in manifest["golden_ids"] and manifest["counts_by_status"]["rejected"] == 1
    shards = {f"corpus/{d}.jsonl" for d in docs}
    assert set(manifest["files"]) == {"pairs.jsonl", "CHANGELOG.md", "snapshot.json", *shards}
    # the git side: one commit holding only data.dvc and the files DVC needs, a tag, the record in data.dvc
    assert git(ws.root, "tag", "-l") == "v1.0.0"
    committed = git(ws.root, "show", "--name-only", "--format=", "v1.0.0^{commit}").split()
    assert set(committed) <= {"data.dvc", ".gitignore", ".dvcignore", ".dvc/config", ".dvc/.gitignore"}
    assert "data.dvc" in committed and "goldset.yaml" not in committed
    meta = yaml.safe_load((ws.root / "data.dvc").read_text())["meta"]["goldset"]
    assert meta["version"] == "v1.0.0" and meta["n_golden"] == 8 and meta["message"] == "First golden set"
    assert "/data/chunks.jsonl" in (ws.root / ".dvcignore").read_text()

    roles = _v2_changes(ws)
    r2 = release(None, bump="minor", message="Second", ws=ws)
    assert r2.version == "v1.1.0" and r2.previous == "v1.0.0"
    assert [p.id for p in r2.diff.added] == [roles["added"]]
    assert [p.id for p in r2.diff.retired] == [roles["retired"]] and r2.diff.retired[0].reason == "retired"
    assert [e.id for e in r2.diff.edited] == [roles["edited"]]
    assert [(t.id, t.old_type, t.new_type) for t in r2.diff.type_changes] == [(roles["typed"], "factual", "reasoning")]
    assert r2.pushed < r1.pushed, "unchanged corpus shards are the same DVC objects: only new files are pushed"
    changelog = (data / "CHANGELOG.md").read_text()
    assert changelog.index("## v1.1.0") < changelog.index("## v1.0.0"), "newest first, history kept"

    found = versions(ws.root)
    assert [(v.name, v.tagged) for v in found] == [("v1.0.0", True), ("v1.1.0", True)]
    v1 = load("v1.0.0", repo=ws.root)
    v2 = load("1.1.0", repo=ws.root)  # the number works too
    assert sorted(v1["id"]) == sorted(manifest["golden_ids"])
    assert roles["added"] in set(v2["id"]) and roles["retired"] not in set(v2["id"])
    assert roles["retired"] in set(v1["id"]) and roles["added"] not in set(v1["id"])
    assert v1.loc[v1["id"] == roles["edited"], "answer"].item() + " It also says more." == (
        v2.loc[v2["id"] == roles["edited"], "answer"].item()
    )
    assert list(v1.columns[:6]) == ["id", "question", "answer", "question_type", "language", "status"]
    assert v1["reviewed"].sum() == 7 and (~v1["reviewed"]).sum() == 1
    everything = load("v1.1.0", repo=ws.root, status="all")
    assert len(everything) == len(read_pairs(ws)) and set(everything["status"]) >= {"retired", "rejected"}
    assert list(load("v1.1.0", repo=ws.root, status="retired")["id"]) == [roles["retired"]]
    ds = load_dataset("v1.0.0", repo=ws.root)
    assert len(ds.chunks) == len(chunks), "the dataset carries the whole pinned corpus, not only cited chunks"
    assert sorted(p.id for p in golden_pairs(ds)) == sorted(v1["id"]) and len(ds.pairs) == 9
    assert ds.manifest is not None and ds.manifest.version == "v1.0.0"
    folder = resolve_dataset_version("v1.0.0", repo=ws.root)
    assert (folder / "corpus").is_dir() and (folder / "pairs.jsonl").is_file()
    assert read_dataset(folder).whole_corpus and len(read_dataset(folder).chunks) == len(chunks)
    with pytest.raises(InputError, match="status="):
        load("v1.0.0", repo=ws.root, status="golden-ish")


def test_fresh_clone_with_an_empty_cache_loads_both_versions(ws: Workspace, tmp_path: Path) -> None:
    release("1.0.0", message="one", ws=ws)
    _v2_changes(ws)
    release("1.1.0", message="two", ws=ws)
    expected = {v: set(load(v, repo=ws.root)["id"]) for v in ("v1.0.0", "v1.1.0")}
    copy = clone(ws.root, tmp_path / "clone")
    assert not (copy / ".dvc" / "cache").exists() and not (copy / "data").exists()
    for version in ("v1.0.0", "v1.1.0"):
        assert set(load(version, repo=copy)["id"]) == expected[version]


def test_dvc_api_path_reads_a_clone_with_an_empty_cache(ws: Workspace, tmp_path: Path) -> None:
    """The path any remote type takes (S3, ssh…): dvc.api streams the objects from the remote."""
    release("1.0.0", message="one", ws=ws)
    _v2_changes(ws)
    release("1.1.0", message="two", ws=ws)
    copy = clone(ws.root, tmp_path / "clone")
    for version in ("v1.0.0", "v1.1.0"):
        folder = resolve_dataset_version(version, repo=copy, use_dvc=True)
        assert json.loads((folder / "manifest.json").read_text())["version"] == version
        assert len(read_dataset(folder).chunks) == len(kb_chunks(ws))


def test_a_clone_without_tags_finds_versions_from_the_release_commits(ws: Workspace, tmp_path: Path) -> None:
    release("1.0.0", message="one", ws=ws)
    _v2_changes(ws)
    release("1.1.0", message="two", ws=ws)
    copy = clone(ws.root, tmp_path / "notags", "--no-tags")
    assert git(copy, "tag", "-l") == ""
    found = versions(copy)
    assert [(v.name, v.tagged) for v in found] == [("v1.0.0", False), ("v1.1.0", False)]
    assert set(load("v1.0.0", repo=copy)["id"]) == set(load("v1.0.0", repo=ws.root)["id"])

    shallow = clone(ws.root, tmp_path / "shallow", "--depth", "1", "--no-tags")
    assert set(load("v1.1.0", repo=shallow)["id"]) == set(load("v1.1.0", repo=ws.root)["id"])
    with pytest.raises(UnknownVersion, match=r"git fetch --unshallow --tags") as err:
        load("v1.0.0", repo=shallow)
    assert "\n" not in str(err.value)
    git(shallow, "fetch", "-q", "--unshallow", "--tags")
    assert len(load("v1.0.0", repo=shallow)) == 8


def test_load_from_a_git_url(ws: Workspace) -> None:
    release("1.0.0", message="one", ws=ws)
    frame = load("v1.0.0", repo=ws.root.as_uri())
    assert len(frame) == 8


def test_releases_are_immutable(ws: Workspace) -> None:
    release("1.0.0", message="one", ws=ws)
    state = snapshot_state(ws)
    with pytest.raises(VersionExists, match=r"v1\.0\.0: already released"):
        release("1.0.0", message="again", ws=ws)
    with pytest.raises(VersionExists):
        release("v1.0.0", message="again", ws=ws)
    with pytest.raises(NothingToRelease, match=r"nothing changed since v1\.0\.0"):
        release("1.0.1", message="same data", ws=ws)
    assert snapshot_state(ws) == state
    git(ws.root, "tag", "v2.0.0")  # a tag someone made by hand
    pairs = read_pairs(ws)
    write_pairs(ws, [pairs[0].model_copy(update={"answer": "Changed."}), *pairs[1:]])
    with pytest.raises(VersionExists, match=r"v2\.0\.0: a git tag of that name exists"):
        release("2.0.0", message="taken", ws=ws)
    r = release("1.0.1", message="empty ok", ws=ws, allow_empty=True)
    assert r.version == "v1.0.1"
    assert release("1.0.2", message="same again, on purpose", ws=ws, allow_empty=True).version == "v1.0.2"


def test_a_damaged_cache_object_is_refused_on_load(ws: Workspace, tmp_path: Path) -> None:
    release("1.0.0", message="one", ws=ws)
    cache = ws.root / ".dvc" / "cache" / "files" / "md5"
    pairs_md5 = next(
        e["md5"] for d in cache.rglob("*.dir") for e in json.loads(d.read_text()) if e["relpath"] == "pairs.jsonl"
    )
    obj = cache / pairs_md5[:2] / pairs_md5[2:]
    obj.chmod(0o644)
    obj.write_bytes(obj.read_bytes().replace(b"It explains", b"It claims"))
    with pytest.raises(IntegrityError, match=r"v1.0.0: pairs.jsonl does not match its sha256"):
        load("v1.0.0", repo=ws.root)


def test_cli_release_versions_show_and_diff(ws: Workspace, tmp_path: Path) -> None:
    res = runner.invoke(app, ["release", "1.0.0", "-m", "First", "-w", str(ws.root)])
    assert res.exit_code == 0, res.output
    assert "released v1.0.0" in res.output and "golden pairs  8 (1 unreviewed)" in res.output
    roles = _v2_changes(ws)
    res = runner.invoke(app, ["release", "--bump", "patch", "-m", "Second", "-w", str(ws.root)])
    assert res.exit_code == 0 and "released v1.0.1" in res.output, res.output
    res = runner.invoke(app, ["versions", "-w", str(ws.root)])
    assert res.exit_code == 0 and res.output.index("v1.0.1") < res.output.index("v1.0.0"), res.output
    res = runner.invoke(app, ["show", "v1.0.1", "-w", str(ws.root)])
    assert res.exit_code == 0 and "golden pairs  8 (1 unreviewed" in res.output, res.output
    out = tmp_path / "changes.md"
    res = runner.invoke(app, ["diff", "v1.0.0", "v1.0.1", "-o", str(out), "-w", str(ws.root)])
    assert res.exit_code == 0, res.output
    text = out.read_text()
    assert text in res.output.replace("\r", "") or "### Added (1)" in res.output
    assert f"`{roles['added']}`" in text.split("### Added (1)")[1].split("###")[0]
    assert f"`{roles['retired']}`" in text.split("### Retired (1)")[1].split("###")[0]
    edited = text.split("### Edited (1)")[1].split("###")[0]
    assert f"`{roles['edited']}`" in edited and "**It also says more.**" in edited
    assert f"`{roles['typed']}` factual → reasoning" in text
    assert "| golden pairs | 8 | 8 |" in text and "| review sample | no review sample | no review sample |" in text
    res = runner.invoke(app, ["release", "1.0.1", "-m", "again", "-w", str(ws.root)])
    assert res.exit_code == 2 and res.output.count("\n") == 1 and res.output.startswith("error: v1.0.1")


def test_review_figures_are_in_the_manifest_and_the_changelog(ws: Workspace) -> None:
    pairs = read_pairs(ws)
    reviewed = []
    risky = None
    for i, p in enumerate(pairs):
        if p.status is PairStatus.accepted and i < 5:  # the random part of the sample: 4 of 5 accepted
            outcome = "rejected" if i == 0 else "accepted"
            review = p.review.model_copy(update={"sampled": True, "random": True, "outcome": outcome})
            p = p.model_copy(update={"review": review, "status": PairStatus.rejected if i == 0 else p.status})
        elif p.status is PairStatus.accepted and risky is None:  # drawn for its risk, and rejected
            risky = p.id
            review = p.review.model_copy(update={"sampled": True, "risk": ["type:multi_hop"], "outcome": "rejected"})
            p = p.model_copy(update={"review": review, "status": PairStatus.rejected})
        reviewed.append(p)
    assert risky is not None
    write_pairs(ws, reviewed)
    r = release("1.0.0", message="reviewed", ws=ws)
    stats = r.manifest.review
    assert stats is not None and (stats.sampled, stats.reviewed, stats.accepted, stats.rejected) == (6, 6, 4, 2)
    # the estimate rests on the random part only (4/5), as `goldset review status` gives it: the risk part is
    # drawn for being risky and would bias it down (4/6)
    assert stats.acceptance_rate == pytest.approx(0.8) and stats.ci_low < 0.8 < stats.ci_high
    assert (stats.random, stats.random_reviewed) == (5, 5) and stats.by_language
    assert "6/6 sampled pairs reviewed, 4 accepted, 2 rejected; quality 80%" in r.changelog


def test_subdir_workspace_in_a_larger_repository(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q")
    (project / "README.md").write_text("a project\n")
    git(project, "add", "README.md")
    git(project, "commit", "-q", "-m", "init")
    ws = make_workspace(project / "golden", KB / "en", tmp_path / "remote")
    write_pairs(ws, hand_pairs(kb_chunks(ws), 4))
    r = release("0.1.0", message="in a subfolder", ws=ws)
    assert git(project, "show", "--name-only", "--format=", "v0.1.0^{commit}").splitlines()[0].startswith("golden/")
    copy = clone(project, tmp_path / "clone")
    assert len(load("v0.1.0", repo=copy / "golden")) == 4 and r.version == "v0.1.0"
    shutil.rmtree(ws.data_dir)
    subprocess.run(["git", "status"], cwd=project, check=True, capture_output=True)


def test_a_remote_folder_the_repository_versions_is_committed_with_the_release(ws: Workspace, tmp_path: Path) -> None:
    """Like this repository's example: the tag carries its objects, so a clone loads it with no other remote."""
    from tests.helpers.versioning_data import dvc

    dvc(ws.root, "remote", "add", "-f", "-d", "in-repo", str(ws.root / "store"))
    release("1.0.0", message="one", ws=ws)
    committed = git(ws.root, "show", "--name-only", "--format=", "v1.0.0^{commit}").split()
    assert any(p.startswith("store/files/md5/") for p in committed)
    assert git(ws.root, "status", "--porcelain", "--", "store", "data.dvc") == ""
    shutil.rmtree(tmp_path / "remote", ignore_errors=True)
    copy = clone(ws.root, tmp_path / "clone", "--no-tags")
    assert len(load("v1.0.0", repo=copy)) == 8


def _pct(x: float | None) -> str:
    return f"{x:.0%}" if x is not None else "-"


def _expected_rate(pairs: list, golden: set[str]) -> tuple[float, int, int]:
    """The estimate worked out by hand from the pairs: per (round, stratum), the rate of its decided random pairs
    still in the set, weighted by the pairs of its remainder still in the set; and (covered, golden) counts."""
    from collections import defaultdict

    groups: dict[tuple, list] = defaultdict(list)
    live = [p for p in pairs if p.status not in (PairStatus.retired, PairStatus.stale)]
    for p in live:
        if p.review.round is not None and not (p.review.sampled and not p.review.random):
            groups[(p.review.round, p.review.stratum)].append(p)
    num = den = 0.0
    covered = {p.id for p in live if p.id in golden and p.review.outcome is not None}
    for members in groups.values():
        decided = [p for p in members if p.review.random and p.review.outcome is not None]
        if decided:
            num += len(members) * sum(p.review.outcome == "accepted" for p in decided) / len(decided)
            den += len(members)
            covered |= {p.id for p in members if p.id in golden}
    return num / den, len(covered), len(golden)


def test_a_release_estimate_describes_its_own_pairs(tmp_path: Path) -> None:
    """v1.0.0 is reviewed; by v1.1.0 refresh retired a reviewed random pair and an unsampled one of its stratum and
    four new pairs came in, never sampled: v1.1.0's estimate is recomputed over its own pairs (the retired ones gone,
    their stratum reweighted) and says it speaks for fewer golden pairs; the changelog and the release output say
    the estimate is older than the new pairs."""
    from collections import Counter

    from goldset.review.sampling import sample

    ws = make_workspace(tmp_path / "ws", KB / "en", tmp_path / "remote")
    pool = hand_pairs(kb_chunks(ws), 24, status=PairStatus.passed)
    write_pairs(ws, pool[:20])
    drawn = sample(ws, size=8, seed=3, random_share=1.0)
    assert drawn.random == 8
    pairs = read_pairs(ws)
    randoms = sorted(p.id for p in pairs if p.review.random)
    outcomes = {pid: "accepted" for pid in randoms}
    outcomes[randoms[0]] = outcomes[randoms[1]] = "rejected"
    write_pairs(ws, decide(pairs, outcomes))
    r1 = release("1.0.0", message="reviewed", ws=ws)
    s1 = r1.manifest.review
    assert s1 is not None
    rate, covered, golden = _expected_rate(read_pairs(ws), set(r1.manifest.golden_ids))
    assert s1.acceptance_rate == pytest.approx(rate, abs=1e-4)
    assert (s1.covered, s1.golden) == (covered, golden) == (18, 18)
    assert "Quality estimate:" in r1.changelog and "speaks for all 18 golden pairs." in r1.changelog

    # refresh retires an accepted random pair of a stratum that keeps other draws, and an unsampled pair of it
    pairs = read_pairs(ws)
    draws = Counter(p.review.stratum for p in pairs if p.review.random)
    unsampled = {p.review.stratum: p for p in pairs if not p.review.sampled}
    gone_draw = next(p for p in pairs if p.review.outcome == "accepted" and draws[p.review.stratum] > 1
                     and p.review.stratum in unsampled)  # fmt: skip
    gone = {gone_draw.id, unsampled[gone_draw.review.stratum].id}
    pairs = [p.model_copy(update={"status": PairStatus.retired}) if p.id in gone else p for p in pairs]
    write_pairs(ws, [*pairs, *pool[20:]])
    r2 = release("1.1.0", message="after refresh", ws=ws)
    s2 = r2.manifest.review
    assert s2 is not None
    rate2, covered2, golden2 = _expected_rate(read_pairs(ws), set(r2.manifest.golden_ids))
    assert golden2 == 18 - 2 + 4 and covered2 == 18 - 2
    assert s2.acceptance_rate == pytest.approx(rate2, abs=1e-4)
    assert (s2.golden, s2.covered, s2.outside, s2.unsampled) == (golden2, covered2, 4, 4)
    assert (s2.retired_since, s2.random_retired, s2.random, s2.random_reviewed) == (2, 1, 7, 7)
    line = next(ln for ln in r2.changelog.splitlines() if ln.startswith("Quality estimate:"))
    assert "speaks for 16 of 20 golden pairs (80%); 4 new pairs unreviewed since v1.0.0" in line
    assert "2 pairs of the sample rounds left the set since they were drawn (1 of the random part)" in line
    assert "older than these pairs" in line
    assert "speaks for 16/20 golden" in r2.changelog  # the figures table

    res = runner.invoke(app, ["review", "status", "--no-server", "-w", str(ws.root)])
    assert res.exit_code == 0, res.output
    assert "coverage      speaks for 16 of 20 golden pairs (80%); 4 outside it: 4 in no round yet" in res.output
    write_pairs(ws, [*read_pairs(ws), *hand_pairs(kb_chunks(ws), 25, status=PairStatus.passed)[24:]])
    res = runner.invoke(app, ["release", "1.2.0", "-m", "one more", "-w", str(ws.root)])
    assert res.exit_code == 0, res.output
    assert f"  estimate      {_pct(s2.acceptance_rate)} [" in res.output
    assert "speaks for 16 of 21 golden pairs (76%); 1 new pair unreviewed since v1.1.0; 4 more outside it" in res.output


def test_hand_edits_are_edits_in_the_diff_and_the_changelog(ws: Workspace, tmp_path: Path) -> None:
    """Someone edits data/pairs.jsonl in an editor between releases: a question, an answer, an evidence quote, and
    a stale pair fixed and put back. Each is an edit in the release's changelog and in `goldset diff`."""
    pairs = read_pairs(ws)
    stale = pairs[3].id
    write_pairs(ws, [p.model_copy(update={"status": PairStatus.stale}) if p.id == stale else p for p in pairs])
    release("1.0.0", message="one", ws=ws)
    golden = sorted(p.id for p in read_pairs(ws) if p.status in (PairStatus.accepted, PairStatus.passed))
    q_id, a_id, e_id = golden[0], golden[1], golden[2]
    lines = []
    for line in ws.pairs_path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec["id"] == q_id:
            rec["question"] = rec["question"].replace("What does", "What exactly does")
        elif rec["id"] == a_id:
            rec["answer"] = rec["answer"] + " See the example."
        elif rec["id"] == e_id:
            rec["evidence"][0]["quote"] = rec["evidence"][0]["quote"].rstrip(".")
        elif rec["id"] == stale:
            rec["answer"], rec["status"] = rec["answer"] + " Fixed by hand.", "accepted"
        lines.append(json.dumps(rec, ensure_ascii=False))
    ws.pairs_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    r = release("1.1.0", message="hand edits", ws=ws)
    assert sorted(e.id for e in r.diff.edited) == sorted([q_id, a_id, e_id, stale])
    assert [p.id for p in r.diff.added] == [stale], "back in the golden set, and edited"
    assert sorted(r.diff.edited_unreviewed) == sorted([q_id, a_id, e_id, stale]), "no review decision since v1.0.0"
    section = r.changelog.split("### Edited (4)")[1].split("###")[0]
    assert "question: What **exactly** does" in section and "answer: " in section and "**See the example.**" in section
    assert "  - evidence: " in section
    out = tmp_path / "changes.md"
    res = runner.invoke(app, ["diff", "v1.0.0", "v1.1.0", "-o", str(out), "-w", str(ws.root)])
    assert res.exit_code == 0, res.output
    assert "### Edited (4)" in out.read_text() and f"`{e_id}`" in out.read_text().split("### Edited (4)")[1]


def test_a_release_without_a_git_identity_stops_before_writing_or_pushing(
    ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    no_git_identity(tmp_path, monkeypatch)
    remote = tmp_path / "remote"
    before = sorted(p.relative_to(remote) for p in remote.rglob("*")) if remote.exists() else []
    state = snapshot_state(ws)
    with pytest.raises(GoldsetError, match=r"user\.name and user\.email not set.*`git config user\.email you@"):
        release("1.0.0", message="one", ws=ws)
    res = runner.invoke(app, ["release", "1.0.0", "-m", "one", "-w", str(ws.root)])
    assert res.exit_code == 2 and res.output.count("\n") == 1 and "git config user.name" in res.output, res.output
    after = sorted(p.relative_to(remote) for p in remote.rglob("*")) if remote.exists() else []
    assert after == before and not [p for p in after if (remote / p).is_file()], "nothing pushed"
    assert snapshot_state(ws) == state, "no file, index entry, commit or tag changed"
    git(ws.root, "config", "user.email", "expert@example.com")
    with pytest.raises(GoldsetError, match=r"\(user\.name not set\); run `git config user\.name"):
        release("1.0.0", message="one", ws=ws)
    git(ws.root, "config", "user.name", "An Expert")
    assert release("1.0.0", message="one", ws=ws).version == "v1.0.0"
    assert git(ws.root, "log", "-1", "--format=%an <%ae>") == "An Expert <expert@example.com>"


def test_a_release_commits_only_what_it_owns(ws: Workspace) -> None:
    """Unrelated edits stay where the user left them: a line added to .gitignore (before the first release and
    before the second), an edit of a tracked file, a staged change; the release commit holds its own files, with
    the ignore lines goldset and DVC add."""
    (ws.root / "notes.txt").write_text("notes\n")
    (ws.root / "staged.txt").write_text("one\n")
    git(ws.root, "add", "notes.txt", "staged.txt")
    git(ws.root, "commit", "-q", "-m", "the team's files")
    with (ws.root / ".gitignore").open("a") as f:
        f.write("*.log\n")
    release("1.0.0", message="one", ws=ws)
    committed = git(ws.root, "show", "v1.0.0:.gitignore").splitlines()
    assert "/data" in committed and ".env" in committed and "*.log" not in committed
    assert "*.log" in (ws.root / ".gitignore").read_text().splitlines(), "the working copy keeps the user's line"
    assert "/data/chunks.jsonl" in git(ws.root, "show", "v1.0.0:.dvcignore").splitlines()
    assert git(ws.root, "diff", "--name-only").split() == [".gitignore"]
    assert git(ws.root, "diff", "--cached", "--name-only") == ""

    with (ws.root / ".gitignore").open("a") as f:
        f.write("*.bak\n")
    git(ws.root, "add", ".gitignore")  # staged by the user: it stays staged, and out of the release commit
    with (ws.root / ".gitignore").open("a") as f:
        f.write("*.tmp\n")
    (ws.root / "notes.txt").write_text("notes, edited\n")
    (ws.root / "staged.txt").write_text("two\n")
    git(ws.root, "add", "staged.txt")
    pairs = read_pairs(ws)
    write_pairs(ws, [pairs[0].model_copy(update={"answer": pairs[0].answer + " More."}), *pairs[1:]])
    release("1.1.0", message="two", ws=ws)
    files = set(git(ws.root, "show", "--name-only", "--format=", "v1.1.0^{commit}").split())
    assert files <= {"data.dvc", ".gitignore", ".dvcignore", ".dvc/config", ".dvc/.gitignore"} and "data.dvc" in files
    committed = git(ws.root, "show", "v1.1.0:.gitignore").splitlines()
    assert "/data" in committed and not {"*.log", "*.bak", "*.tmp"} & set(committed)
    assert git(ws.root, "show", "v1.1.0:notes.txt") == "notes" and git(ws.root, "show", "v1.1.0:staged.txt") == "one"
    assert git(ws.root, "diff", "--name-only").split() == [".gitignore", "notes.txt"], "unstaged as they were"
    assert git(ws.root, "diff", "--cached", "--name-only").split() == [".gitignore", "staged.txt"], "staged as it was"

    def changed(*args: str) -> list[str]:
        diff = git(ws.root, "diff", *args, "--", ".gitignore").splitlines()
        return [ln for ln in diff if ln[:1] in "+-" and ln[:3] not in ("+++", "---")]

    assert changed("--cached") == ["+*.log", "+*.bak"] and changed() == ["+*.tmp"]

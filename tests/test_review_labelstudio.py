"""Push, pull, status and the offline round trip against a real Label Studio server (see tests/helpers/labelstudio.py).

Annotations are posted through the API as the annotators (users made for the test), the way the web UI posts a
reviewer's work: accept, reject, edit, skip, two annotators disagreeing, a result the config does not allow.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from goldset.data import read_chunk_sources, write_dataset
from goldset.errors import EndpointError, GateFailed, InputError
from goldset.io import read_jsonl
from goldset.progress import Progress
from goldset.review import export, import_results, pull, push, sample, status
from goldset.schema import PairStatus, QAPair, ReviewDecision
from goldset.workspace import Workspace
from tests.helpers.labelstudio import (
    Server,
    annotate,
    choices,
    make_user,
    project_id,
    require_server,
    tasks_by_pair,
    textarea,
    ui_project,
)
from tests.helpers.review_data import make_workspace


@pytest.fixture(scope="module")
def server() -> Server:
    return require_server()


@pytest.fixture(scope="module")
def ls(server: Server) -> Any:
    return server.client()


def pairs_of(ws: Workspace) -> dict[str, QAPair]:
    return {p.id: p for p in read_jsonl(ws.pairs_path, QAPair)}


def title_of(ws: Workspace) -> str:
    return ws.config_path.read_text().split("project_title: ")[1].split()[0]


def rewrite(ws: Workspace, pairs: dict[str, QAPair]) -> None:
    write_dataset(ws.data_dir, pairs.values(), read_chunk_sources(ws).kept.values())


class Stop(Exception):
    pass


def test_push_is_idempotent_and_an_interrupted_push_resumes_without_duplicates(
    tmp_path: Path, server: Server, ls: Any
) -> None:
    ws = make_workspace(tmp_path / "ws", 60, review="    batch_size: 5\n")
    sample(ws, size=24, seed=1)

    def stop_after_first_batch(p: Progress) -> None:
        if p.done >= 5:
            raise Stop

    with pytest.raises(Stop):
        push(ws, progress=stop_after_first_batch)
    pid = project_id(ls, title_of(ws))
    assert sum(len(v) for v in tasks_by_pair(ls, pid).values()) == 5, "the first batch landed, nothing more"

    r = push(ws)
    assert (r.imported, r.unchanged, r.project, r.created) == (19, 5, pid, False)
    tasks = tasks_by_pair(ls, pid)
    sampled = {p.id for p in pairs_of(ws).values() if p.review.sampled}
    assert set(tasks) == sampled and all(len(v) == 1 for v in tasks.values()), "one task per sampled pair"
    again = push(ws)
    assert (again.imported, again.updated, again.unchanged) == (0, 0, 24)

    project = ls.projects.get(id=pid)
    assert project.show_collab_predictions and project.maximum_annotations == 1
    assert "Reviewing question" in project.expert_instruction and "问答对审核指南" in project.expert_instruction
    one = ls.tasks.get(id=str(next(iter(tasks.values()))[0].id))
    names = {r["from_name"] for p in one.predictions for r in (p.result if hasattr(p, "result") else p["result"])}
    assert {"edited_question", "edited_answer"} <= names


def test_a_changed_pair_updates_its_task_and_older_annotations_are_not_applied(
    tmp_path: Path, server: Server, ls: Any
) -> None:
    ws = make_workspace(tmp_path / "ws", 40)
    sample(ws, size=10, seed=2)
    push(ws)
    pid = project_id(ls, title_of(ws))
    pairs = pairs_of(ws)
    target = sorted(p.id for p in pairs.values() if p.review.sampled and p.evidence)[0]
    task = tasks_by_pair(ls, pid)[target][0]
    annotate(ls, task.id, [choices("verdict", "accept")])  # on the old text
    pairs[target] = pairs[target].model_copy(update={"answer": "A repaired answer, in other words."})
    rewrite(ws, pairs)

    r = push(ws)
    assert (r.imported, r.updated, r.unchanged) == (0, 1, 9)
    fresh = ls.tasks.get(id=str(task.id))
    assert fresh.data["answer"] == "A repaired answer, in other words."
    preds = list(ls.predictions.list(task=task.id))
    assert len(preds) == 1 and any(x["value"]["text"] == ["A repaired answer, in other words."]
                                   for x in preds[0].result if x["from_name"] == "edited_answer")  # fmt: skip
    got = pull(ws)
    assert not got.written and [p.pair_id for p in got.problems] == [target]
    assert "earlier text" in str(got.problems[0]), got.problems
    assert pairs_of(ws)[target].review.outcome is None
    annotate(ls, task.id, [choices("verdict", "accept")])  # on the new text
    again = pull(ws)
    assert again.changed == {"accepted": 1}
    assert not again.problems and any("superseded" in n for n in again.notes), "the reviewer's later one counts"


def test_pull_applies_accept_reject_edit_skip_and_resolves_disagreement(
    tmp_path: Path, server: Server, ls: Any
) -> None:
    ws = make_workspace(tmp_path / "ws", 60, review="    annotators_per_task: 2\n")
    sample(ws, size=30, seed=3)
    push(ws)
    pid = project_id(ls, title_of(ws))
    alice, bob = make_user(ls, "alice"), make_user(ls, "bob")
    tasks = {k: v[0] for k, v in tasks_by_pair(ls, pid).items()}
    pairs = pairs_of(ws)
    ids = sorted(pid_ for pid_ in tasks if pairs[pid_].evidence)
    acc, rej, edit, skip, split, agree, bad, copy, gone = ids[:9]

    annotate(ls, tasks[acc].id, [choices("verdict", "accept"), choices("criteria", "question_clear")], user=alice)
    annotate(ls, tasks[rej].id, [choices("verdict", "reject"), choices("criteria", "question_clear"),
                                 textarea("comment", "the answer adds a claim", "question")], user=alice)  # fmt: skip
    annotate(ls, tasks[edit].id, [choices("verdict", "edit"),
                                  textarea("edited_answer", "You declare the model before any parameter uses it.",
                                           "answer")], user=alice)  # fmt: skip
    annotate(ls, tasks[skip].id, [], user=alice, cancelled=True)
    annotate(ls, tasks[split].id, [choices("verdict", "accept")], user=alice)
    annotate(ls, tasks[split].id, [choices("verdict", "reject")], user=bob)
    annotate(ls, tasks[agree].id, [choices("verdict", "accept")], user=alice)
    annotate(ls, tasks[agree].id, [choices("verdict", "accept")], user=bob)
    annotate(ls, tasks[bad].id, [choices("verdict", "maybe")], user=alice)  # the server stores it anyway
    quote = pairs[copy].evidence[0].quote
    annotate(ls, tasks[copy].id, [choices("verdict", "edit"), textarea("edited_answer", quote, "answer")], user=bob)
    annotate(ls, tasks[gone].id, [choices("verdict", "accept")], user=bob)
    del pairs[gone]
    rewrite(ws, pairs)

    r = pull(ws)
    after = pairs_of(ws)
    assert after[acc].status == PairStatus.accepted and after[acc].review.outcome == "accepted"
    d = after[acc].review.decisions[0]
    assert d.reviewer == "alice@example.com" and d.source.startswith(f"label-studio:project {pid} task ")
    assert after[rej].status == PairStatus.rejected
    assert after[rej].review.decisions[0].reason.endswith("the answer adds a claim")
    assert "answer_supported" in after[rej].review.decisions[0].reason
    e = after[edit]
    assert e.answer == "You declare the model before any parameter uses it." and e.review.outcome == "edited"
    assert e.status == PairStatus.accepted, "the edited text passes the pair checks"
    rev = e.provenance.revisions[-1]
    assert (rev.answer, rev.reason, rev.by) == (pairs[edit].answer, "review-edit", "alice@example.com")
    assert "verbatim" in e.checks and e.checks["verbatim"].passed
    assert after[skip] == pairs[skip], "a skip changes nothing"
    assert after[split].status == PairStatus.rejected and after[split].review.outcome == "rejected"
    assert [x.pair_id for x in r.disagreements] == [split] and r.disagreements[0].resolved == "reject"
    assert r.disagreements[0].votes == ["alice@example.com:accept", "bob@example.com:reject"]
    applied = [x for x in after[split].review.decisions if x.resolved_from]
    assert len(applied) == 1 and applied[0].verdict == "reject" and applied[0].resolved_from == r.disagreements[0].votes
    assert after[agree].status == PairStatus.accepted
    assert r.agreement is not None and r.agreement.fleiss_items == 2 and r.agreement.raters_per_item == 2
    k, n = r.agreement.cohen[("alice@example.com", "bob@example.com")]
    assert n == 2 and k == 0.0, "one agreement, one split, all 'accept' by alice: kappa 0"
    assert after[bad] == pairs[bad]
    assert [p.pair_id for p in r.problems] == sorted([bad, gone])
    assert "'maybe' is not one of its choices" in str(next(p for p in r.problems if p.pair_id == bad))
    assert str(next(p for p in r.problems if p.pair_id == gone)).startswith(f"{gone}: the pair is not in the set")
    assert after[copy].status == PairStatus.rejected and copy in r.edits_failing
    assert "verbatim" in r.edits_failing[copy]
    assert r.cancelled == 1 and r.per_reviewer == {"alice@example.com": 5, "bob@example.com": 3}
    assert r.written

    again = pull(ws)
    assert not again.written and again.decisions_new == 0 and again.already_applied == 8

    # a decision made later in goldset is not replaced by an older one from Label Studio
    later = ReviewDecision(reviewer="lead@example.com", at=datetime(2100, 1, 1, tzinfo=UTC), verdict="reject",
                           source="goldset", reason="out of scope")  # fmt: skip
    cur = pairs_of(ws)
    cur[agree] = cur[agree].model_copy(update={
        "status": PairStatus.rejected,
        "review": cur[agree].review.model_copy(update={"decisions": [*cur[agree].review.decisions, later],
                                                       "outcome": "rejected"}),
    })  # fmt: skip
    rewrite(ws, cur)
    carol = make_user(ls, "carol")
    annotate(ls, tasks[agree].id, [choices("verdict", "accept")], user=carol)
    third = pull(ws)
    final = pairs_of(ws)[agree]
    assert final.status == PairStatus.rejected and final.review.outcome == "rejected"
    assert len(final.review.decisions) == 4 and third.later_stands and agree in third.later_stands[0]

    st = status(ws)
    assert st.server is not None and st.server.project == pid and st.server.tasks == 30
    assert st.server.per_reviewer["alice@example.com"] == 6 and st.server.skipped == 1
    assert st.decisions_per_reviewer["carol@example.com"] == 1


def test_unreachable_server_or_wrong_token_is_one_line_and_writes_nothing(
    tmp_path: Path, server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = make_workspace(tmp_path / "ws", 30)
    sample(ws, size=6)
    before = ws.pairs_path.read_bytes(), (ws.data_dir / "manifest.json").read_bytes()
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    monkeypatch.setenv("LABEL_STUDIO_URL", f"http://user:pw@127.0.0.1:{closed}")
    with pytest.raises(EndpointError) as err:
        pull(ws)
    msg = str(err.value)
    assert msg.startswith(f"Label Studio at http://127.0.0.1:{closed}: cannot connect") and "\n" not in msg
    assert "pw" not in msg
    monkeypatch.setenv("LABEL_STUDIO_URL", server.url)
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", "not-the-token-0000")
    with pytest.raises(EndpointError, match=r"refused the API token \(HTTP 401\)") as err:
        push(ws)
    assert "not-the-token" not in str(err.value)
    assert (ws.pairs_path.read_bytes(), (ws.data_dir / "manifest.json").read_bytes()) == before
    st = status(ws)
    assert st.server is None and st.server_error is not None and "refused the API token" in st.server_error


def test_offline_round_trip_through_a_server_elsewhere(tmp_path: Path, server: Server, ls: Any) -> None:
    ws = make_workspace(tmp_path / "ws", 40)
    sample(ws, size=8, seed=4)
    out = tmp_path / "handoff" / "review.json"
    r = export(out, ws)
    assert r.tasks == 8 and r.config_path.name == "review.xml" and r.instructions_path.is_file()
    # the other team: a project with the exported config and instructions, the file imported, reviewed
    project = ls.projects.create(title=f"elsewhere-{tmp_path.name}", label_config=r.config_path.read_text(),
                                 expert_instruction=r.instructions_path.read_text(),
                                 show_collab_predictions=True, model_version="goldset")  # fmt: skip
    ls.projects.import_tasks(id=project.id, request=json.loads(out.read_text()))
    tasks = {k: v[0] for k, v in tasks_by_pair(ls, project.id).items()}
    first, second, third = sorted(tasks)[:3]
    annotate(ls, tasks[first].id, [choices("verdict", "accept")])
    annotate(ls, tasks[second].id, [choices("verdict", "reject"), textarea("comment", "wrong premise", "question")])
    annotate(ls, tasks[third].id, [], cancelled=True)
    raw = b"".join(ls.projects.exports.download_sync(project.id, export_type="JSON", download_all_tasks=True))
    exported = tmp_path / "export.json"
    exported.write_bytes(raw)

    got = import_results(exported, ws)
    after = pairs_of(ws)
    assert after[first].status == PairStatus.accepted and after[second].status == PairStatus.rejected
    assert after[second].review.decisions[0].reason.endswith("wrong premise")
    assert after[first].review.decisions[0].reviewer == "user 1", "an export names users by id"
    assert got.cancelled == 1 and got.written
    assert not import_results(exported, ws).written, "importing twice adds nothing"

    minimal = b"".join(ls.projects.exports.download_sync(project.id, export_type="JSON_MIN"))
    (tmp_path / "min.json").write_bytes(minimal)
    with pytest.raises(InputError, match="export the project as JSON"):
        import_results(tmp_path / "min.json", ws)

    st = status(ws, server=False)
    assert st.stats.reviewed == 2 and st.waiting == 6
    if st.stats.random_reviewed:
        assert st.stats.ci_low is not None
    with pytest.raises((GateFailed, InputError)):
        st.gate(0.999)


def test_a_dropped_answer_to_creating_the_project_makes_no_second_project(
    tmp_path: Path, server: Server, ls: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server creates the project but the connection drops before its answer (as under load): the SDK's
    automatic retry would create a second project with the same title, and every later push would then refuse the
    ambiguous title. goldset sends such a POST once and finds the project the server did make."""
    from tests.helpers.dropping_proxy import DroppingProxy

    ws = make_workspace(tmp_path / "ws", 20)
    sample(ws, size=4, seed=1)
    with DroppingProxy(server.url, "POST", "/api/projects", drops=1) as proxy:
        monkeypatch.setenv("LABEL_STUDIO_URL", proxy.url)
        r = push(ws)
    creates = [s for s in proxy.seen if s[:2] == ("POST", "/api/projects")]
    assert creates == [("POST", "/api/projects", 201)], "one create, answered by the server, dropped on the way"
    matching = [p.id for p in ls.projects.list(title=title_of(ws)) if p.title == title_of(ws)]
    assert matching == [r.project] and r.imported == 4


def test_pull_applies_choices_posted_by_their_displayed_text_and_lists_the_rest_by_pair(
    tmp_path: Path, server: Server, ls: Any
) -> None:
    """Annotations written through the API with the text the UI shows ("Accept") or another case are applied;
    the ones that cannot be are listed by pair, the command exits 2, and what could be applied was written."""
    from typer.testing import CliRunner

    from goldset.cli import app

    ws = make_workspace(tmp_path / "ws", 30)
    sample(ws, size=6, seed=5)
    push(ws)
    pid = project_id(ls, title_of(ws))
    tasks = {k: v[0] for k, v in tasks_by_pair(ls, pid).items()}
    ids = sorted(tasks)
    for pair_id, verdict in zip(ids, ["Accept", "ACCEPT", "accept", "Edit", "Reject", "Maybe"], strict=True):
        annotate(ls, tasks[pair_id].id, [choices("verdict", verdict)])

    r = CliRunner().invoke(app, ["review", "pull", "-w", str(ws.root)])
    assert r.exit_code == 2, r.output
    after = pairs_of(ws)
    assert [after[i].status for i in ids[:5]] == [PairStatus.accepted] * 4 + [PairStatus.rejected], r.output
    assert after[ids[3]].review.outcome == "accepted", "Edit without any change counts as accept"
    assert after[ids[4]].review.outcome == "rejected" and after[ids[5]].review.outcome is None
    lines = [line.strip() for line in r.output.splitlines()]
    assert any(line.startswith(f"{ids[5]}: does not match the labeling config") and "'Maybe'" in line
               for line in lines), r.output  # fmt: skip
    assert "written: data/pairs.jsonl" in r.output and "1 annotation(s) of 1 pair(s) could not be applied" in r.output


PUSH_ON_GO = """
import sys, time
from pathlib import Path
import goldset.config, goldset.review.project, goldset.review.store, goldset.review.tasks, label_studio_sdk.base_client
from goldset.cli import main  # everything imported: both processes start pushing at once
go = Path(sys.argv[1])
while not go.exists():
    time.sleep(0.005)
sys.argv = ["goldset", "review", "push", "-w", sys.argv[2]]
main()
"""


def push_together(ws: Workspace, tmp: Path) -> list[str]:
    """Two `goldset review push` processes released at the same moment; their outputs."""
    import os
    import subprocess
    import sys

    go = tmp / f"go-{len(list(tmp.glob('go-*')))}"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    procs = [subprocess.Popen([sys.executable, "-c", PUSH_ON_GO, str(go), str(ws.root)], env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]  # fmt: skip
    import time

    time.sleep(4)  # both have imported everything and wait for the file (waiting longer changes nothing)
    go.touch()
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    return [out for out, _ in outs]


def test_pushes_started_together_make_one_project_and_one_task_per_pair(
    tmp_path: Path, server: Server, ls: Any
) -> None:
    """Two pushes released at the same moment: without the workspace's lock both found no project and each made
    one; into an existing project both imported every pair (1,000 tasks for 500 pairs)."""
    ws = make_workspace(tmp_path / "ws", 80)
    sample(ws, size=20, seed=6)
    outs = push_together(ws, tmp_path)
    found = [p.id for p in ls.projects.list(title=title_of(ws)) if p.title == title_of(ws)]
    assert len(found) == 1, (found, outs)
    assert sorted("created" in o for o in outs) == [False, True], outs
    tasks = tasks_by_pair(ls, found[0])
    sampled = {p.id for p in pairs_of(ws).values() if p.review.sampled}
    assert set(tasks) == sampled and all(len(v) == 1 for v in tasks.values()), outs

    first = sampled
    sample(ws, size=20, seed=7, redraw=True)  # other pairs, pushed into the project that exists now
    sampled = {p.id for p in pairs_of(ws).values() if p.review.sampled}
    assert len(sampled - first) >= 5  # the risk part is the same whatever the seed; the random part is not
    outs = push_together(ws, tmp_path)
    tasks = tasks_by_pair(ls, found[0])
    assert set(tasks) == first | sampled and all(len(v) == 1 for v in tasks.values()), outs
    assert sorted(int(o.split(" imported")[0].split()[-1]) for o in outs) == [0, len(sampled - first)], outs


def test_push_into_a_project_made_in_the_ui(tmp_path: Path, server: Server, ls: Any) -> None:
    """A project made in the UI has no model_version and no predictions; the server refuses to set a model_version
    none of its predictions has (HTTP 400), so goldset sets it only once its predictions are there."""
    made = ui_project(server, f"made-in-the-ui-{tmp_path.name}")
    ws = make_workspace(tmp_path / "ws", 30, review=f"    project_id: {made}\n")
    sample(ws, size=5, seed=8)
    r = push(ws)
    assert (r.project, r.created, r.imported) == (made, False, 5)
    project = ls.projects.get(id=made)
    assert project.model_version == "goldset" and project.show_collab_predictions
    assert "verdict" in project.label_config
    one = next(iter(tasks_by_pair(ls, made).values()))[0]
    assert [p.model_version for p in ls.predictions.list(task=one.id)] == ["goldset"]
    again = push(ws)
    assert (again.project_changes, again.imported, again.unchanged) == ([], 0, 5)

    ws2 = make_workspace(tmp_path / "ws2", 30)  # found by its title
    by_title = ui_project(server, title_of(ws2))
    sample(ws2, size=4, seed=9)
    r = push(ws2)
    assert (r.project, r.created, r.imported) == (by_title, False, 4)
    assert ls.projects.get(id=by_title).model_version == "goldset"
    first = sorted(tasks_by_pair(ls, by_title).items())[0]
    annotate(ls, first[1][0].id, [choices("verdict", "Accept")])
    assert pull(ws2).changed == {"accepted": 1}

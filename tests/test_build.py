"""`goldset build` against the fake LLM server: the loop in one command, a build that stops mid-generation and
resumes without repeating a call, the dry run, the no-LLM path and the one-line errors.

(The full loop with the real Label Studio server, expert annotations and a release is in test_build_labelstudio.py.)
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from goldset.cli import app
from goldset.io import read_json, read_jsonl
from goldset.schema import QAPair
from goldset.schema.build import BuildState
from tests.helpers.build_data import BreaksAfter, generation_prompts
from tests.helpers.duplicate_responders import no_duplicates
from tests.helpers.fake_openai import FakeOpenAI
from tests.helpers.judge_responders import groundedness_responder, marker_judge
from tests.helpers.responders import never_valid_responder, qa_responder

DOCS = Path(__file__).parent / "fixtures" / "generate" / "docs"
runner = CliRunner()


def invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


def run(*args: str) -> str:
    code, out = invoke(*args)
    assert code == 0, f"goldset {' '.join(args)} failed:\n{out}"
    return out


def line_of(output: str, stage: str) -> str:
    return next(line for line in output.splitlines() if line.startswith(f"{stage} "))


def pairs_of(ws: Path) -> dict[str, tuple[str, str, str]]:
    return {p.id: (p.question, p.answer, p.status.value) for p in read_jsonl(ws / "data" / "pairs.jsonl", QAPair)}


def state_of(ws: Path) -> BuildState:
    return read_json(ws / ".goldset" / "build.json", BuildState)


@pytest.fixture
def llm(fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> FakeOpenAI:
    fake_llm.add_responder("qa_pairs", qa_responder)
    fake_llm.add_responder("groundedness", groundedness_responder)
    fake_llm.add_responder("duplicate_judge", no_duplicates)
    monkeypatch.delenv("LABEL_STUDIO_URL", raising=False)  # these builds export the review tasks
    return fake_llm


def test_a_build_runs_every_stage_and_says_where_each_output_went(tmp_path: Path, llm: FakeOpenAI) -> None:
    ws = tmp_path / "ws"
    run("init", str(ws))
    plan = run("build", str(DOCS), "-w", str(ws), "--dry-run")
    assert llm.calls == 0 and not (ws / ".goldset" / "kb").exists() and not (ws / "data" / "pairs.jsonl").exists()
    planned = int(plan.split("call(s) to pay")[0].split()[-1])
    assert planned > 0 and "Nothing was changed" in plan

    out = run("build", str(DOCS), "-w", str(ws))
    assert len(generation_prompts(llm)) == planned, "the dry run predicts the generation calls a build makes"
    pairs = pairs_of(ws)
    passed = [pid for pid, (_, _, status) in pairs.items() if status == "passed"]
    assert pairs and passed
    assert line_of(out, "generate").split()[1] == "done" and f"{len(pairs)} pairs kept" in line_of(out, "generate")
    assert f"{len(pairs)} pairs (" in line_of(out, "filter")
    tasks = json.loads((ws / "review" / "tasks.json").read_text(encoding="utf-8"))
    sampled = [p.id for p in read_jsonl(ws / "data" / "pairs.jsonl", QAPair) if p.review.sampled]
    assert sampled and sorted(t["data"]["pair_id"] for t in tasks) == sorted(sampled)
    assert f"{len(tasks)} review task(s) exported" in line_of(out, "review")
    assert str(ws / "review" / "tasks.json") in out and str(ws / "data" / "pairs.jsonl") in out
    assert line_of(out, "release").split()[1] == "skipped"
    state = state_of(ws)
    assert [s.name for s in state.stages] == ["ingest", "generate", "filter", "sample", "review", "release"]
    assert state.stopped_at is None and state.docs_dir == str(DOCS.resolve())

    # a rerun without the folder reads the same documents (kb.path does not exist here) and redoes nothing
    calls = llm.calls
    again = run("build", "-w", str(ws), "--export")
    assert llm.calls == calls, "nothing changed: no call"
    for stage in ("ingest", "generate", "filter", "sample", "review"):
        assert line_of(again, stage).split()[1] == "unchanged", again
    assert f"still waits for {len(sampled)} decision(s)" in line_of(again, "sample")
    assert pairs_of(ws) == pairs


def test_a_build_stopped_in_generation_resumes_without_repeating_a_call(tmp_path: Path, llm: FakeOpenAI) -> None:
    whole = tmp_path / "whole"
    run("init", str(whole))
    run("build", str(DOCS), "-w", str(whole), "--export", "-j", "1")
    prompts_whole = set(generation_prompts(llm))
    n_chunks = len(prompts_whole)
    assert n_chunks > 4

    ws = tmp_path / "ws"
    run("init", str(ws))
    broken = BreaksAfter(4)
    llm.add_responder("qa_pairs", broken)
    start = len(llm.chat_requests())
    code, out = invoke("build", str(DOCS), "-w", str(ws), "--export", "-j", "1")
    assert code == 3, out
    assert line_of(out, "generate").split()[1] == "incomplete"
    assert f"{n_chunks - 4} of {n_chunks} chunk(s) failed" in out and "run the build again" in out
    assert "not run   filter, sample, review, release" in out
    state = state_of(ws)
    assert state.stopped_at == "generate" and [s.status for s in state.stages] == ["done", "incomplete"]
    kept = pairs_of(ws)
    assert kept and not (ws / "review").exists(), "no review sample is drawn from a half-generated set"

    llm.add_responder("qa_pairs", qa_responder)  # the model works again
    resumed_from = len(llm.chat_requests())
    out = run("build", "-w", str(ws), "--export", "-j", "1")
    second = generation_prompts(llm, resumed_from)
    assert not set(second) & set(broken.answered), "a chunk answered before is not asked again"
    assert len(set(second)) == n_chunks - 4
    assert set(generation_prompts(llm, start)) == prompts_whole, "the same calls as the uninterrupted build"
    assert f"resumed at chunk 5 of {n_chunks}" in line_of(out, "generate"), out
    assert line_of(out, "ingest").split()[1] == "unchanged"
    assert state_of(ws).stopped_at is None
    assert pairs_of(ws) == pairs_of(whole), "the resumed build ends with the pairs of an uninterrupted one"
    assert set(kept) <= set(pairs_of(ws))


def test_without_an_endpoint_build_says_how_to_configure_one_and_writes_nothing(
    tmp_path: Path, no_llm_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LABEL_STUDIO_URL", raising=False)
    ws = tmp_path / "ws"
    run("init", str(ws))
    result = CliRunner().invoke(app, ["build", str(DOCS), "-w", str(ws)])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: no LLM endpoint configured") and "OPENAI" in lines[0]
    assert not (ws / ".goldset" / "kb").exists() and not (ws / ".goldset" / "build.json").exists()

    # --no-llm runs what needs no model: the KB is ingested, generation is skipped and says what waits
    out = run("build", str(DOCS), "-w", str(ws), "--no-llm")
    assert line_of(out, "ingest").split()[1] == "done"
    generate = line_of(out, "generate")
    assert generate.split()[1] == "skipped" and "9 chunk(s) without pairs wait" in generate
    assert all(line_of(out, s).split()[1] == "skipped" for s in ("filter", "sample", "review", "release"))


def test_bad_input_gets_one_line_and_exit_2(tmp_path: Path, llm: FakeOpenAI) -> None:
    ws = tmp_path / "ws"
    run("init", str(ws))
    cases = [
        (["build", str(tmp_path / "nope"), "-w", str(ws)], f"{tmp_path / 'nope'}: documents folder not found"),
        (["build", "-w", str(ws)], f"{ws / 'docs'}: documents folder not found"),  # kb.path, no earlier build
        (["build", str(DOCS / "debugging.md"), "-w", str(ws)], "not a folder"),
        (["build", str(DOCS), "-w", str(ws), "--release", "1.0.0"], "message: a release needs a message"),
        (["build", str(DOCS), "-w", str(ws), "-m", "x"], "message is the release's: give release too"),
        (["build", str(DOCS), "-w", str(ws), "--release", "1..0", "-m", "x"], "use a version number"),
        (["build", str(DOCS), "-w", str(ws), "--no-review", "--export"], "--no-review cannot go with"),
        (["build", str(DOCS), "-w", str(ws), "--label-studio"], "no Label Studio address: set LABEL_STUDIO_URL"),
    ]
    for args, expected in cases:
        result = CliRunner().invoke(app, args)
        lines = result.output.strip().splitlines()
        assert result.exit_code == 2 and len(lines) == 1 and expected in lines[0], (args, result.output)
    assert llm.calls == 0 and not (ws / ".goldset" / "kb").exists()


def test_a_failed_stage_stops_the_loop_with_its_own_error_and_the_summary_says_what_ran(
    tmp_path: Path, llm: FakeOpenAI
) -> None:
    ws = tmp_path / "ws"
    run("init", str(ws))
    llm.add_responder("qa_pairs", never_valid_responder)
    result = CliRunner().invoke(app, ["build", str(DOCS), "-w", str(ws), "--export"])
    assert result.exit_code == 3, result.output  # RunFailed's code: the input was fine, the work failed
    errors = [line for line in result.output.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and errors[0].startswith("error: build stopped at generate: all 9 generation calls failed")
    assert line_of(result.output, "ingest").split()[1] == "done"
    assert line_of(result.output, "generate").split()[1] == "failed"
    assert "not run   filter, sample, review, release" in result.output
    state = state_of(ws)
    assert state.stopped_at == "generate" and [s.status for s in state.stages] == ["done", "failed"]
    assert state.stages[1].error is not None and "all 9 generation calls failed" in state.stages[1].error


def test_the_library_entry_point_feeds_one_progress_and_raises_build_stopped(
    tmp_path: Path, llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    import goldset
    from goldset.errors import ConfigError
    from goldset.loop import BuildStopped
    from goldset.progress import Progress

    ws = tmp_path / "ws"
    run("init", str(ws))
    with pytest.raises(ConfigError, match="no Label Studio address"):  # checked before any stage runs
        goldset.build(ws, docs=DOCS, review="label-studio")
    assert llm.calls == 0 and not (ws / ".goldset" / "build.json").exists()

    monkeypatch.setenv("LABEL_STUDIO_URL", "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", "not-a-real-token")
    updates: list[Progress] = []
    with pytest.raises(BuildStopped) as stopped:  # the push cannot connect: the loop stops there
        goldset.build(ws, docs=DOCS, progress=updates.append)  # review="auto": an address is set, so push
    exc = stopped.value
    assert exc.stage == "review" and exc.exit_code == 2 and "cannot connect while" in str(exc), str(exc)
    assert "not-a-real-token" not in str(exc) and "not-a-real-token" not in (ws / ".goldset" / "build.json").read_text()
    assert [s.name for s in exc.report.stages] == ["ingest", "generate", "filter", "sample", "review"]
    assert exc.report.stages[-1].status == "failed" and exc.report.stopped_at == "review"
    assert exc.report.generation is not None and exc.report.generation.pairs_kept > 0
    names = {u.stage for u in updates}
    assert {"build", "generate"} <= names and any(n.startswith("filter · ") for n in names), names
    loop = [u for u in updates if u.stage == "build"]
    assert loop[0].done == 0 and loop[-1].counters["stage"] == "review" and max(u.done for u in loop) == 4

    monkeypatch.delenv("LABEL_STUDIO_URL")
    report = goldset.build(ws, review="export", export_path=tmp_path / "out" / "tasks.json")
    sampled = [p.id for p in read_jsonl(ws / "data" / "pairs.jsonl", QAPair) if p.review.sampled]
    assert report.export is not None and report.export.tasks == len(sampled) > 0
    assert report.outputs["review tasks"] == str(tmp_path / "out" / "tasks.json")
    assert [s.status for s in report.stages] == ["unchanged", "unchanged", "unchanged", "unchanged", "done",
                                                 "skipped"]  # fmt: skip


def test_docs_loop_md_describes_every_option_of_goldset_build() -> None:
    import typer.main

    command = typer.main.get_command(app).commands["build"]  # type: ignore[attr-defined]
    text = (Path(__file__).parents[1] / "docs" / "loop.md").read_text(encoding="utf-8")
    names = [name for param in command.params for name in (*param.opts, *param.secondary_opts) if name[0] == "-"]
    assert "--release" in names and "--export" in names and "-m" in names
    missing = [name for name in names if not re.search(rf"`{re.escape(name)}[` ]", text)]
    assert not missing, f"docs/loop.md does not describe {missing}"
    assert "`DOCS_DIR`" in text


def test_after_a_documentation_update_the_build_refreshes_the_pairs(tmp_path: Path, llm: FakeOpenAI) -> None:
    import shutil

    llm.add_responder("groundedness", marker_judge)  # supports every answer: most pairs pass
    docs = tmp_path / "docs"
    shutil.copytree(DOCS, docs)
    ws = tmp_path / "ws"
    run("init", str(ws))
    run("build", str(docs), "-w", str(ws), "--export")
    before = {p.id: p for p in read_jsonl(ws / "data" / "pairs.jsonl", QAPair)}
    # every pair citing the removed page is retired, whatever its status (a rejected one too: refresh #16)
    gone = {pid for pid, p in before.items()
            if p.status.value != "retired" and any(e.doc_id == "debugging.md" for e in p.evidence)}  # fmt: skip
    assert gone and any(before[pid].status.value == "passed" for pid in gone)

    (docs / "debugging.md").unlink()  # a page removed: its pairs lose their evidence
    (docs / "new-page.md").write_text(
        "# Background tasks\n\nA background task runs after the response is sent. Declare a parameter of type "
        "BackgroundTasks and add the function to it with add_task. The client does not wait for the task.\n",
        encoding="utf-8",
    )
    code, out = invoke("build", str(docs), "-w", str(ws), "--export", "--no-llm")
    assert code == 2 and "refreshing them needs the LLM" in out, out  # a plain ingest would hide the change
    calls = len(generation_prompts(llm))
    out = run("build", str(docs), "-w", str(ws), "--export")
    ingest = line_of(out, "ingest")
    assert ingest.split()[1] == "done" and f"{len(gone)} retired (evidence gone)" in ingest, out
    after = {p.id: p for p in read_jsonl(ws / "data" / "pairs.jsonl", QAPair)}
    assert all(after[pid].status.value == "retired" for pid in gone)
    new = [p for p in after.values() if any(e.doc_id == "new-page.md" for e in p.evidence)]
    assert new and len(generation_prompts(llm)) > calls, "the new page was asked about"
    assert line_of(out, "generate").split()[1] == "unchanged", "refresh already asked about the new chunks"
    # and the next build finds nothing to do
    again = run("build", str(docs), "-w", str(ws), "--export")
    assert line_of(again, "ingest").split()[1] == "unchanged" and line_of(again, "filter").split()[1] == "unchanged"


def test_a_build_interrupted_mid_generation_keeps_what_it_received_and_resumes(tmp_path: Path, llm: FakeOpenAI) -> None:
    import goldset
    from goldset.progress import Progress

    ws = tmp_path / "ws"
    run("init", str(ws))

    def ctrl_c_after_three_chunks(update: Progress) -> None:
        if update.stage == "generate" and update.done >= 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        goldset.build(ws, docs=DOCS, concurrency=1, review="none", progress=ctrl_c_after_three_chunks)
    state = state_of(ws)
    assert [(s.name, s.status) for s in state.stages] == [("ingest", "done"), ("generate", "interrupted")]
    assert state.stopped_at == "generate"
    first = generation_prompts(llm)
    kept = pairs_of(ws)
    # three chunks were answered; one more request may have left before the interrupt (its reply never came)
    assert len(first) in (3, 4) and kept, "the pairs of the answered chunks are kept"

    report = goldset.build(ws, concurrency=1, review="none")
    second = generation_prompts(llm, 0)[len(first) :]
    assert not set(second) & set(first[:3]), "no answered chunk is asked again"
    generate = report.stage("generate")
    assert generate is not None and generate.status == "resumed"
    done = generate.counts["already_done"]
    assert done >= 3 and generate.summary.startswith(f"resumed at chunk {done + 1} of "), generate.summary
    assert set(kept) <= set(pairs_of(ws)) and report.stopped_at is None

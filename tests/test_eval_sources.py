"""The three run sources: a run file (and every bad input of one), a Python callable, an HTTP endpoint."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from goldset.errors import InputError, RecordError, UsageError
from goldset.evaluation.asking import to_sample
from goldset.evaluation.callables import run_callable
from goldset.evaluation.endpoints import redact_url, response_to_output
from goldset.evaluation.evaluator import evaluate
from goldset.evaluation.runs import read_run
from goldset.evaluation.settings import SystemEndpointSettings
from goldset.workspace import Workspace
from tests.helpers.eval_data import (
    CHUNK_TEXTS,
    evaluated_pairs,
    make_dataset,
    perfect_sample,
    write_run_file,
)


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return make_dataset(tmp_path / "data", version="v1")


def perfect_samples() -> list[Any]:
    return [perfect_sample(p) for p in evaluated_pairs()]


# --------------------------------------------------------------------------------------------------- run files


def test_a_perfect_run_file_scores_perfect_retrieval(data: Path, tmp_path: Path) -> None:
    run = write_run_file(tmp_path / "run.jsonl", perfect_samples())
    result = evaluate(data, run=run, out_dir=tmp_path / "out")
    assert result.summary.n_failed == 0
    assert result.summary.overall["recall@5"] == pytest.approx(1.0)
    assert result.summary.overall["correct_refusal"] == pytest.approx(1.0)
    stored = read_run(tmp_path / "out")
    assert stored.meta.dataset_version == "v1"
    assert stored.meta.manifest_hash == result.meta.manifest_hash
    assert stored.meta.target == f"file:{run}"
    assert set(stored.samples) == {p.id for p in evaluated_pairs()}
    # questions are filled in from the dataset so the run folder reads on its own
    assert all(s.question for s in stored.samples.values())


def test_missing_pairs_count_as_failures_not_dropped(data: Path, tmp_path: Path) -> None:
    samples = perfect_samples()
    run = write_run_file(tmp_path / "run.jsonl", samples[:-3])
    result = evaluate(data, run=run, out_dir=tmp_path / "out")
    n = len(samples)
    assert result.summary.n_samples == n
    assert result.summary.n_failed == 3
    assert result.summary.system["error_rate"] == pytest.approx(3 / n)
    assert any("missing from the run file" in note for note in result.notes)
    # recall averages over every answerable pair, the missing ones at 0 (not left out)
    answerable = [p for p in evaluated_pairs() if p.question_type.value != "unanswerable"]
    missing_answerable = [p for p in evaluated_pairs()[-3:] if p.question_type.value != "unanswerable"]
    expected = (len(answerable) - len(missing_answerable)) / len(answerable)
    assert result.summary.overall["recall@5"] == pytest.approx(expected)
    stored = read_run(tmp_path / "out")
    assert len(stored.samples) == n
    assert sum(1 for s in stored.samples.values() if s.error) == 3


def test_malformed_line_names_file_and_line(data: Path, tmp_path: Path) -> None:
    run = tmp_path / "run.jsonl"
    run.write_text(perfect_samples()[0].model_dump_json() + "\n{not json\n", encoding="utf-8")
    with pytest.raises(RecordError, match=r"run\.jsonl:2: not valid JSON"):
        evaluate(data, run=run, out_dir=tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_schema_error_names_the_field(data: Path, tmp_path: Path) -> None:
    run = write_run_file(tmp_path / "run.jsonl", [{"pair_id": "qa-port", "answer": "8080", "contexts": "oops"}])
    with pytest.raises(RecordError, match=r"run\.jsonl:1: invalid RunSample: contexts"):
        evaluate(data, run=run)


def test_unknown_pair_ids_are_listed(data: Path, tmp_path: Path) -> None:
    samples = [*perfect_samples(), {"pair_id": "qa-nope-1", "answer": "x"}, {"pair_id": "qa-nope-2", "answer": "y"}]
    run = write_run_file(tmp_path / "run.jsonl", samples)
    with pytest.raises(InputError, match=r"2 pair id\(s\) not in dataset.*qa-nope-1, qa-nope-2"):
        evaluate(data, run=run)


def test_empty_context_text_is_an_error(data: Path, tmp_path: Path) -> None:
    bad = {"pair_id": "qa-port", "answer": "8080", "contexts": [{"text": "ok"}, {"text": "   "}]}
    run = write_run_file(tmp_path / "run.jsonl", [bad])
    with pytest.raises(RecordError, match=r"run\.jsonl:1: contexts\[1\]\.text is empty"):
        evaluate(data, run=run)


def test_samples_without_contexts_are_noted(data: Path, tmp_path: Path) -> None:
    samples = perfect_samples()
    samples[0] = samples[0].model_copy(update={"contexts": []})
    run = write_run_file(tmp_path / "run.jsonl", samples)
    result = evaluate(data, run=run, out_dir=tmp_path / "out")
    assert any("no retrieved contexts" in n for n in result.notes)
    assert result.summary.overall["recall@5"] < 1.0


def test_duplicate_pair_is_an_error(data: Path, tmp_path: Path) -> None:
    s = perfect_samples()[0]
    run = write_run_file(tmp_path / "run.jsonl", [s, s])
    with pytest.raises(RecordError, match="appears twice"):
        evaluate(data, run=run)


def test_empty_run_file_is_an_error(data: Path, tmp_path: Path) -> None:
    run = tmp_path / "run.jsonl"
    run.write_text("\n", encoding="utf-8")
    with pytest.raises(InputError, match="holds no samples"):
        evaluate(data, run=run)


def test_sidecar_meta_of_another_version_is_refused(data: Path, tmp_path: Path) -> None:
    run = write_run_file(tmp_path / "run.jsonl", perfect_samples())
    (tmp_path / "run.meta.json").write_text(json.dumps({"dataset_version": "v0"}), encoding="utf-8")
    with pytest.raises(InputError, match="dataset version v0, not v1"):
        evaluate(data, run=run)
    (tmp_path / "run.meta.json").write_text(json.dumps({"manifest_hash": "0123456789abcdef"}), encoding="utf-8")
    with pytest.raises(InputError, match="hash 0123456789abcdef"):
        evaluate(data, run=run)


def test_a_stored_run_can_be_rescored(data: Path, tmp_path: Path) -> None:
    """runs/<id>/samples.jsonl.zst with its meta.json beside it is a valid run file for the same dataset."""
    run = write_run_file(tmp_path / "run.jsonl", perfect_samples()[:-1])
    first = evaluate(data, run=run, out_dir=tmp_path / "first")
    again = evaluate(data, run=tmp_path / "first" / "samples.jsonl.zst", out_dir=tmp_path / "again")
    assert again.summary.overall == first.summary.overall
    assert again.summary.n_failed == first.summary.n_failed == 1
    assert (tmp_path / "again" / "scores.jsonl").read_bytes() == (tmp_path / "first" / "scores.jsonl").read_bytes()


def test_a_damaged_compressed_run_file_is_an_input_error(data: Path, tmp_path: Path) -> None:
    from goldset.evaluation.run_files import zstd

    body = "".join(s.model_dump_json() + "\n" for s in perfect_samples()).encode()
    packed = zstd().compress(body)
    for name, raw in (("cut.jsonl.zst", packed[: len(packed) // 2]), ("junk.jsonl.zst", b"not zstd at all" * 9)):
        (tmp_path / name).write_bytes(raw)
        with pytest.raises(InputError, match=f"{name}: cannot be read as zstd"):
            evaluate(data, run=tmp_path / name, out_dir=tmp_path / "out")
        assert not (tmp_path / "out").exists()


def test_run_folders_store_the_samples_compressed_and_read_every_form(data: Path, tmp_path: Path) -> None:
    import gzip

    from goldset.evaluation.run_files import zstd
    from goldset.schema import RunSample

    run = write_run_file(tmp_path / "run.jsonl", perfect_samples())
    evaluate(data, run=run, out_dir=tmp_path / "out")
    folder = tmp_path / "out"
    assert sorted(f.name for f in folder.iterdir() if f.name.startswith("samples")) == ["samples.jsonl.zst"]
    lines = zstd().decompress((folder / "samples.jsonl.zst").read_bytes()).decode("utf-8").splitlines()
    stored = [RunSample.model_validate_json(line) for line in lines]
    assert sorted(s.pair_id for s in stored) == sorted(p.id for p in evaluated_pairs())  # one line per pair
    assert all(s.question for s in stored)  # filled in from the dataset: the folder reads on its own
    compressed = read_run(folder)
    # folders written before: gzip-compressed samples (samples.jsonl.gz), and before that plain (samples.jsonl)
    (folder / "samples.jsonl.zst").unlink()
    (folder / "samples.jsonl.gz").write_bytes(gzip.compress(("\n".join(lines) + "\n").encode("utf-8")))
    assert read_run(folder).samples == compressed.samples
    (folder / "samples.jsonl.gz").unlink()
    (folder / "samples.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert read_run(folder).samples == compressed.samples


def test_a_run_file_with_a_byte_order_mark_is_read(data: Path, tmp_path: Path) -> None:
    run = tmp_path / "run.jsonl"
    run.write_bytes(b"\xef\xbb\xbf" + "".join(s.model_dump_json() + "\n" for s in perfect_samples()).encode())
    (tmp_path / "run.meta.json").write_bytes(b'\xef\xbb\xbf{"dataset_version": "v1"}')  # Windows editors add one
    result = evaluate(data, run=run, out_dir=tmp_path / "out")
    assert result.summary.n_failed == 0 and result.summary.overall["recall@5"] == pytest.approx(1.0)


def test_a_bad_byte_is_reported_on_its_own_line(data: Path, tmp_path: Path) -> None:
    good = [s.model_dump_json().encode() for s in perfect_samples()[:4]]
    bad = perfect_samples()[4].model_copy(update={"answer": "caf\u00e9"}).model_dump_json().encode()
    bad = bad.replace("caf\u00e9".encode(), b"caf\xe9")  # Latin-1, not UTF-8
    run = tmp_path / "run.jsonl"
    run.write_bytes(b"\n".join([*good[:2], bad, *good[2:]]) + b"\n")
    with pytest.raises(RecordError, match=r"run\.jsonl:3: not UTF-8 text"):
        evaluate(data, run=run, out_dir=tmp_path / "out")
    assert not (tmp_path / "out").exists()
    assert not list(tmp_path.glob(".*"))  # the samples compressed before the bad line are not left behind


#: The one wording of a wrong choice of source, from the library and from `goldset eval` (tests/test_cli_eval.py).
ONE_SOURCE = "give exactly one of run (a run file), target (module:function), endpoint (a URL) or baseline (bm25)"


def test_exactly_one_source(data: Path, tmp_path: Path) -> None:
    with pytest.raises(UsageError) as none:
        evaluate(data)
    assert str(none.value) == f"{ONE_SOURCE} (got none)"
    with pytest.raises(UsageError) as two:
        evaluate(data, run=tmp_path / "x.jsonl", baseline="bm25")
    assert str(two.value) == f"{ONE_SOURCE} (got run and baseline)"
    with pytest.raises(UsageError, match=r"\(got run and target\)$"):
        evaluate(data, run=tmp_path / "x.jsonl", target="bm25")
    with pytest.raises(UsageError, match=r"^baseline 'dense': the built-in baseline is bm25$"):
        evaluate(data, baseline="dense")
    with pytest.raises(UsageError, match=r"^kb is the corpus of the bm25 baseline; give it with baseline bm25$"):
        evaluate(data, run=tmp_path / "x.jsonl", kb=tmp_path)
    assert not (tmp_path / "runs").exists()


def test_the_bm25_baseline_by_its_keyword(data: Path, tmp_path: Path) -> None:
    result = evaluate(data, baseline="bm25", out_dir=tmp_path / "out")
    assert result.meta.target is not None and result.meta.target.startswith("target:goldset.baselines.bm25:answer")
    assert "bm25-baseline" in result.run_id


def test_run_file_is_the_deprecated_name_of_run(data: Path, tmp_path: Path) -> None:
    run = write_run_file(tmp_path / "run.jsonl", perfect_samples())
    with pytest.warns(DeprecationWarning, match=r"evaluate\(run_file=...\) is deprecated"):
        old = evaluate(data, run_file=run, out_dir=tmp_path / "old")
    assert old.meta.target == f"file:{run}" and old.summary.n_samples == len(evaluated_pairs())
    with pytest.warns(DeprecationWarning), pytest.raises(UsageError, match="not as run_file too"):
        evaluate(data, run=run, run_file=run)


# --------------------------------------------------------------------------------------------------- callables


def answer_from_chunks(question: str) -> dict[str, Any]:
    """A tiny 'RAG system': keyword lookup over the test chunks, contexts as plain strings."""
    words = {w.strip("?").lower() for w in question.split()}
    hits = [text for _, text in CHUNK_TEXTS.values() if words & {w.strip(".").lower() for w in text.split()}]
    return {"answer": hits[0] if hits else "I cannot find this.", "contexts": hits[:3], "tokens_out": 7}


def test_sync_callable_target(data: Path, tmp_path: Path) -> None:
    result = evaluate(data, target=answer_from_chunks, out_dir=tmp_path / "out")
    assert result.summary.n_failed == 0
    assert result.summary.overall["hit@5"] > 0
    assert "latency_p50_ms" in result.summary.system
    stored = read_run(tmp_path / "out")
    assert all(s.latency.total_ms is not None and s.latency.total_ms >= 0 for s in stored.samples.values())
    assert all(s.tokens_out == 7 for s in stored.samples.values())
    assert result.meta.target.startswith("target:") and "answer_from_chunks" in result.meta.target


def test_async_callable_target_and_reported_stage_latency(data: Path, tmp_path: Path) -> None:
    async def system(question: str) -> dict[str, Any]:
        await asyncio.sleep(0.01)
        out = answer_from_chunks(question)
        return {**out, "retrieval_ms": 3.5, "contexts": [{"text": t, "score": 0.5} for t in out["contexts"]]}

    result = evaluate(data, target=system, out_dir=tmp_path / "out")
    assert result.summary.n_failed == 0
    stored = read_run(tmp_path / "out")
    one = next(iter(stored.samples.values()))
    assert one.latency.retrieval_ms == 3.5
    assert one.latency.total_ms is not None and one.latency.total_ms >= 10
    assert result.summary.system["retrieval_latency_p50_ms"] == pytest.approx(3.5)


def test_target_given_as_module_path(data: Path, tmp_path: Path) -> None:
    result = evaluate(data, target="tests.test_eval_sources:answer_from_chunks", out_dir=tmp_path / "out")
    assert result.summary.n_failed == 0
    with pytest.raises(UsageError, match=r"^target 'no_colon_here': expected package\.module:function"):
        evaluate(data, target="no_colon_here")
    with pytest.raises(UsageError, match="cannot import"):
        evaluate(data, target="not_a_module_xyz:fn")


def test_raising_and_hanging_targets_become_failed_samples(data: Path, tmp_path: Path) -> None:
    release = threading.Event()

    def flaky(question: str) -> dict[str, Any]:
        if "default port" in question:
            raise RuntimeError("index not loaded")
        if "cache" in question:
            release.wait(30)  # hangs until the test ends
        return answer_from_chunks(question)

    start = time.monotonic()
    try:
        result = evaluate(data, target=flaky, out_dir=tmp_path / "out", timeout_s=0.5)
    finally:
        release.set()
    assert time.monotonic() - start < 10
    errors = {pid: s.error for pid, s in result.samples.items() if s.error}
    assert errors["qa-port"] == "RuntimeError: index not loaded"
    assert errors["qa-clear"].startswith("timeout after 0.5")
    assert set(errors) == {"qa-port", "qa-clear"}
    assert result.summary.n_failed == 2
    assert result.summary.system["n_errors"] == 2


def test_bad_target_output_is_a_per_sample_error(data: Path, tmp_path: Path) -> None:
    result = evaluate(data, target=lambda q: {"answr": "typo"}, out_dir=tmp_path / "out")
    assert result.summary.n_failed == len(evaluated_pairs())
    assert all("unknown field(s) answr" in (s.error or "") for s in result.samples.values())


def test_concurrency_is_bounded() -> None:
    lock = threading.Lock()
    state = {"now": 0, "max": 0}

    def slow(question: str) -> str:
        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
        time.sleep(0.05)
        with lock:
            state["now"] -= 1
        return "an answer"

    seen: list[int] = []
    samples = run_callable(slow, evaluated_pairs(), concurrency=3, timeout_s=5, progress=lambda p: seen.append(p.done))
    assert len(samples) == len(evaluated_pairs())
    assert 1 < state["max"] <= 3
    assert seen == list(range(1, len(evaluated_pairs()) + 1))
    assert all(s.answer == "an answer" and s.contexts == [] for s in samples.values())


def test_to_sample_accepts_strings_dicts_and_objects() -> None:
    pair = evaluated_pairs()[0]
    s = to_sample(pair, {"answer": "a", "contexts": ["x", {"text": "y", "doc_id": "d"}]}, 12.0)
    assert [c.text for c in s.contexts] == ["x", "y"] and s.contexts[1].doc_id == "d"
    assert s.latency.total_ms == 12.0 and s.question == pair.question
    with pytest.raises(ValueError, match="return a dict"):
        to_sample(pair, 42, 1.0)


# --------------------------------------------------------------------------------------------------- endpoint


class _Handler(BaseHTTPRequestHandler):
    seen_auth: list[str] = []  # noqa: RUF012 - shared on purpose between requests of one test

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen_auth.append(self.headers.get("Authorization", ""))
        question = body["query"]
        if "default port" in question:
            self.send_response(500)
            self.end_headers()  # a careless server that echoes the request headers in its error
            self.wfile.write(f"internal failure; you sent Authorization: {self.headers.get('Authorization')}".encode())
            return
        out = answer_from_chunks(question)
        reply = {
            "data": {"text": out["answer"]},
            "docs": [{"content": t, "source": "kb", "relevance": 1.0} for t in out["contexts"]],
            "timing": {"retrieval": 2.0},
            "echo_pid": body.get("pid"),
        }
        raw = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def service() -> Iterator[str]:
    _Handler.seen_auth = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/ask"
    server.shutdown()
    server.server_close()


def test_endpoint_with_field_mapping_from_config(
    data: Path, tmp_path: Path, service: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws_root = tmp_path
    (ws_root / "goldset.yaml").write_text(
        "eval:\n"
        "  endpoint:\n"
        "    request_field: query\n"
        "    pair_id_field: pid\n"
        "    answer_field: data.text\n"
        "    contexts_field: docs\n"
        "    context_text_field: content\n"
        "    context_doc_id_field: source\n"
        "    context_score_field: relevance\n"
        "    retrieval_ms_field: timing.retrieval\n"
        "    api_key_env: RAG_TEST_KEY\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("RAG_TEST_KEY", "sk-secret-value-123")
    result = evaluate(data, endpoint=service + "?token=abc", ws=Workspace(ws_root), out_dir=tmp_path / "out")
    echoed = "RuntimeError: HTTP 500: internal failure; you sent Authorization: Bearer ***"
    assert result.samples["qa-port"].error == echoed
    assert result.summary.n_failed == 1
    ok = result.samples["qa-clear"]
    assert ok.error is None and ok.contexts and ok.contexts[0].doc_id == "kb" and ok.contexts[0].score == 1.0
    assert ok.latency.retrieval_ms == 2.0 and ok.latency.total_ms is not None
    assert "Bearer sk-secret-value-123" in _Handler.seen_auth
    # the key and the query string never reach the run folder
    from goldset.evaluation.run_files import zstd

    for name in ("meta.json", "samples.jsonl.zst", "scores.jsonl", "summary.json"):
        raw = (tmp_path / "out" / name).read_bytes()
        text = (zstd().decompress(raw) if name.endswith(".zst") else raw).decode("utf-8")
        assert "sk-secret-value-123" not in text and "token=abc" not in text
    assert result.meta.target == "endpoint:" + service


def test_endpoint_unreachable_and_missing_secret(data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = evaluate(data, endpoint="http://127.0.0.1:9/ask", out_dir=tmp_path / "out", timeout_s=2)
    assert result.summary.n_failed == len(evaluated_pairs())
    assert all((s.error or "").startswith("RuntimeError: HTTP request failed") for s in result.samples.values())
    (tmp_path / "goldset.yaml").write_text("eval:\n  endpoint:\n    api_key_env: NOT_SET_KEY_X\n", encoding="utf-8")
    monkeypatch.delenv("NOT_SET_KEY_X", raising=False)
    from goldset.errors import ConfigError

    with pytest.raises(ConfigError, match="NOT_SET_KEY_X is not set"):
        evaluate(data, endpoint="http://127.0.0.1:9/ask", ws=Workspace(tmp_path))


def test_response_mapping_errors_are_clear() -> None:
    cfg = SystemEndpointSettings()
    with pytest.raises(ValueError, match="no 'answer' field"):
        response_to_output({"text": "x"}, cfg)
    with pytest.raises(ValueError, match="not a list"):
        response_to_output({"answer": "x", "contexts": "y"}, cfg)
    assert redact_url("https://user:pw@host:8443/a/b?key=1") == "https://host:8443/a/b"


def test_the_example_run_file_is_valid() -> None:
    from goldset.io import read_jsonl
    from goldset.schema import RunSample

    examples = Path(__file__).parents[1] / "examples"
    samples = read_jsonl(examples / "run.jsonl", RunSample)
    assert samples[0].contexts[0].chunk_id and samples[0].latency.ttft_ms == 210.0
    assert samples[3].error and not samples[3].answer
    golden = {line.split('"id":"')[1].split('"')[0] for line in (examples / "golden" / "pairs.jsonl").open()}
    assert {s.pair_id for s in samples} == golden, "the example run answers every pair of the example golden set"


def test_the_workspace_is_taken_as_everywhere(data: Path, tmp_path: Path) -> None:
    """``ws`` may be a Workspace or a folder inside one (its goldset.yaml applies); a folder outside is an error."""
    from goldset.errors import WorkspaceError

    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "goldset.yaml").write_text("eval:\n  ks: [2]\n", encoding="utf-8")
    (tmp_path / "ws" / "sub").mkdir()
    run = write_run_file(tmp_path / "run.jsonl", perfect_samples())
    result = evaluate(data, run=run, ws=tmp_path / "ws" / "sub", out_dir=tmp_path / "out")
    assert result.meta.metric_config["ks"] == [2] and "recall@2" in result.summary.overall
    (tmp_path / "elsewhere").mkdir()
    with pytest.raises(WorkspaceError, match="not inside a goldset workspace"):
        evaluate(data, run=run, ws=tmp_path / "elsewhere")


def test_a_target_module_in_the_current_folder_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`goldset eval --target my_rag.pipeline:answer` from the folder that holds my_rag/ (as pytest and uvicorn
    find modules), without PYTHONPATH=."""
    import sys

    from goldset.evaluation.callables import load_target

    package = tmp_path / "my_rag_here"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "pipeline.py").write_text("def answer(q):\n    return {'answer': 'local ' + q}\n", encoding="utf-8")
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    monkeypatch.chdir(tmp_path)
    fn = load_target("my_rag_here.pipeline:answer")
    assert fn("q")["answer"] == "local q"
    with pytest.raises(UsageError, match="run from the folder that holds it"):
        load_target("not_here_at_all.pipeline:answer")

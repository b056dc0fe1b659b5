"""The call journal: keys, storage, and resuming after kill -9 without repeating a committed call."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from goldset.errors import WorkspaceError
from goldset.llm import CallJournal, call_key
from tests.helpers.fake_openai import FakeOpenAI

ROOT = Path(__file__).resolve().parent.parent


def test_call_key_depends_on_what_shapes_the_reply() -> None:
    msgs = [{"role": "user", "content": "hi"}]
    base = call_key("m", msgs, {"type": "object"}, {"temperature": 0.2, "seed": None})
    assert base == call_key("m", [dict(msgs[0])], {"type": "object"}, {"seed": None, "temperature": 0.2})
    assert base == call_key("m", msgs, {"type": "object"}, {"temperature": 0.2})  # None = not sent
    assert base != call_key("m2", msgs, {"type": "object"}, {"temperature": 0.2})
    assert base != call_key("m", [{"role": "user", "content": "hi!"}], {"type": "object"}, {"temperature": 0.2})
    assert base != call_key("m", msgs, {"type": "array"}, {"temperature": 0.2})
    assert base != call_key("m", msgs, {"type": "object"}, {"temperature": 0.3})
    assert len(base) == 64


def test_put_get_and_failures_are_not_hits(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    with CallJournal(path) as journal:
        assert journal.get("k1") is None
        journal.put_failure("k1", model="m", schema_name="s", error="boom")
        assert journal.get("k1") is None
        journal.put("k1", model="m", schema_name="s", reply={"a": [1, "二"]}, prompt_tokens=5, completion_tokens=7,
                    cost_usd=0.5, attempts=2)
    with CallJournal(path) as journal:  # persisted
        entry = journal.get("k1")
        assert entry is not None
        assert (entry.reply, entry.prompt_tokens, entry.completion_tokens, entry.cost_usd, entry.attempts) == (
            {"a": [1, "二"]}, 5, 7, 0.5, 2
        )
        assert journal.failures() == [("k1", "boom")]
        assert journal.count() == 1


def test_corrupt_journal_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "calls.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(WorkspaceError) as err:
        CallJournal(path)
    assert "calls.sqlite" in str(err.value) and "delete" in str(err.value)


CLIENT = """
import asyncio, sys
from pydantic import BaseModel
from goldset.llm import CallJournal, LLMClient, resolve_endpoint

class Echo(BaseModel):
    text: str

async def main(n):
    endpoint = resolve_endpoint(None, overrides={"concurrency": 4})
    with CallJournal(sys.argv[1]) as journal:
        async with LLMClient(endpoint, journal) as llm:
            results = await asyncio.gather(*(
                llm.complete_json([{"role": "user", "content": f"item {i}"}], Echo, schema_name="echo")
                for i in range(n)))
    print(sum(r.cached for r in results), sum(r.ok for r in results), llm.stats.calls)

asyncio.run(main(int(sys.argv[2])))
"""


def _echo(body: dict) -> dict:
    return {"text": body["messages"][-1]["content"]}


def _committed_contents(path: Path) -> set[str]:
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT reply FROM calls").fetchall()
    return {json.loads(r[0])["text"] for r in rows}


def test_kill_9_resume_repeats_no_committed_call(tmp_path: Path) -> None:
    n, concurrency = 40, 4
    journal = tmp_path / "calls.sqlite"
    with FakeOpenAI(latency_s=0.03) as fake:
        fake.add_responder("echo", _echo)
        env = {**os.environ, "OPENAI_BASE_URL": fake.base_url, "OPENAI_API_KEY": fake.api_key,
               "GOLDSET_MODEL": "fake-model", "PYTHONPATH": str(ROOT)}
        cmd = [sys.executable, "-c", CLIENT, str(journal), str(n)]
        proc = subprocess.Popen(cmd, env=env, cwd=tmp_path, stdout=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 30
            while fake.calls < 12 and time.monotonic() < deadline and proc.poll() is None:
                time.sleep(0.005)
            os.kill(proc.pid, signal.SIGKILL)
        finally:
            proc.wait(timeout=10)
        assert proc.returncode == -signal.SIGKILL
        first_run = [r.body["messages"][-1]["content"] for r in fake.chat_requests()]
        committed = _committed_contents(journal)
        assert 0 < len(committed) < n
        assert committed <= set(first_run)
        in_flight = set(first_run) - committed
        assert len(in_flight) <= concurrency  # only calls in flight at the kill were lost

        done = subprocess.run(cmd, env=env, cwd=tmp_path, stdout=subprocess.PIPE, text=True, timeout=60, check=True)
        cached, ok, calls = map(int, done.stdout.split())
        second_run = [r.body["messages"][-1]["content"] for r in fake.chat_requests()][len(first_run):]
        assert ok == n and cached == len(committed) and calls == n - len(committed)
        assert not set(second_run) & committed  # no committed call was sent again
        assert set(second_run) == {f"item {i}" for i in range(n)} - committed
        assert len(second_run) == len(set(second_run))

        again = subprocess.run(cmd, env=env, cwd=tmp_path, stdout=subprocess.PIPE, text=True, timeout=60, check=True)
        assert again.stdout.split() == [str(n), str(n), "0"]  # an unchanged re-run makes zero calls


def test_journal_errors_are_one_line_workspace_errors(tmp_path: Path) -> None:
    path = tmp_path / "calls.sqlite"
    journal = CallJournal(path)
    journal.put("k", model="m", schema_name="s", reply={}, prompt_tokens=1, completion_tokens=1)
    journal.close()
    with pytest.raises(WorkspaceError) as err:  # SQLite refuses a closed database: not a raw sqlite3 error
        journal.put("k2", model="m", schema_name="s", reply={}, prompt_tokens=1, completion_tokens=1)
    assert "calls.sqlite" in str(err.value) and "\n" not in str(err.value)

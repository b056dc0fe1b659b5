"""The context a command resolves once and hands down: goldset.yaml and .env are read once per command, however
many stages it runs; variables in .env (GOLDSET_CACHE_DIR among them) count like the environment's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from goldset.context import Context
from goldset.errors import ConfigError
from goldset.generation.settings import GenerateSettings
from goldset.kb import ingest
from goldset.scaffold import init_workspace
from goldset.workspace import Workspace
from tests.helpers.fake_openai import FakeOpenAI
from tests.helpers.responders import parse_prompt, qa_responder
from tests.helpers.versioning_data import KB, copy_docs, hand_pairs, kb_chunks, make_workspace, release_env, write_pairs

#: Runs the CLI with an audit hook that counts every open of the workspace's goldset.yaml and .env, printed as JSON
#: on stderr's last line when the command ends (however it ends).
COUNTING = """
import atexit, json, sys
from pathlib import Path
root = Path(sys.argv[1]).resolve()
watched = {str(root / "goldset.yaml"): 0, str(root / ".env"): 0}
def hook(event, args):
    if event == "open" and isinstance(args[0], (str, bytes, Path)):
        name = str(Path(str(args[0] if not isinstance(args[0], bytes) else args[0].decode())).resolve())
        if name in watched:
            watched[name] += 1
sys.addaudithook(hook)
atexit.register(lambda: print(json.dumps(watched), file=sys.stderr))
sys.argv = ["goldset", *sys.argv[2:]]
from goldset.cli import main
main()
"""


def _opens(ws: Path, *args: str) -> tuple[int, dict[str, int], str]:
    cmd = [sys.executable, "-c", COUNTING, str(ws), *args, "-w", str(ws)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=os.environ.copy())
    counts = json.loads(done.stderr.strip().splitlines()[-1])
    return done.returncode, {Path(k).name: v for k, v in counts.items()}, done.stdout + done.stderr


def test_a_command_reads_goldset_yaml_and_dotenv_once(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    """`goldset generate` resolves the workspace, settings, endpoint, estimate and journal: one read of each file
    (it used to load the settings four times, through four channels). `goldset build` runs six stages: still one."""
    fake_llm.add_responder("qa_pairs", qa_responder)
    root = tmp_path / "ws"
    init_workspace(root, dvc=False)
    (root / ".env").write_text("GOLDSET_GENERATE__PAIRS_PER_CHUNK=2\n", encoding="utf-8")
    docs = copy_docs(tmp_path / "docs", {"query-params.md": KB / "en" / "query-params.md"})
    ingest(docs, Workspace(root))
    code, counts, out = _opens(root, "generate", "--limit", "2")
    assert code == 0, out
    assert counts == {"goldset.yaml": 1, ".env": 1}, out
    asked = [len(parse_prompt(r.body)[2]) for r in fake_llm.chat_requests()]
    assert asked == [2, 2], "pairs_per_chunk from .env reached the prompts"
    code, counts, out = _opens(root, "build", str(docs), "--no-review")
    assert code == 0, out
    assert counts == {"goldset.yaml": 1, ".env": 1}, out


def test_a_setting_in_dotenv_reaches_the_parts_through_the_context(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    init_workspace(root, dvc=False)
    (root / ".env").write_text("GOLDSET_GENERATE__PAIRS_PER_CHUNK=5\nMY_SECRET=from-dotenv\n", encoding="utf-8")
    ctx = Context.of(root)
    assert ctx.section(GenerateSettings).pairs_per_chunk == 5
    assert ctx.section(GenerateSettings) is ctx.section(GenerateSettings), "a section is validated once"
    assert ctx.getenv("MY_SECRET") == "from-dotenv"
    assert ctx.with_options(generate={"pairs_per_chunk": 7}).section(GenerateSettings).pairs_per_chunk == 7
    assert Context.of(ctx) is ctx, "a context handed down is used as it is"
    (root / ".env").write_text("GOLDSET_GENERATE__PAIRS_PER_CHUNK=many\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"\.env: GOLDSET_GENERATE__PAIRS_PER_CHUNK: generate.pairs_per_chunk"):
        Context.of(root).section(GenerateSettings)


def test_goldset_cache_dir_in_dotenv_is_where_releases_are_materialised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GOLDSET_CACHE_DIR set in the workspace's .env (not the environment) is where `goldset.load` puts a release
    (it was read from os.environ only)."""
    from goldset.versioning.load import load
    from goldset.versioning.release import release

    release_env(tmp_path, monkeypatch)
    monkeypatch.delenv("GOLDSET_CACHE_DIR")
    docs = copy_docs(tmp_path / "docs", {"query-params.md": KB / "en" / "query-params.md"})
    ws = make_workspace(tmp_path / "ws", docs, tmp_path / "remote")
    write_pairs(ws, hand_pairs(kb_chunks(ws), 3))
    release("1.0.0", message="first", ws=ws)
    cache = tmp_path / "cache-from-dotenv"
    ws.env_file.write_text(f"GOLDSET_CACHE_DIR={cache}\n", encoding="utf-8")
    frame = load("v1.0.0", ws=ws)
    assert len(frame) == 3
    assert (cache / "versions").is_dir() and any((cache / "versions").rglob("pairs.jsonl"))
    assert not (ws.state_dir / "versions").exists()

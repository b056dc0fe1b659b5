"""`goldset review` on the command line: sample, export, import of a Label Studio JSON export, status and its gate
(exit 1 below it, 2 with nothing to estimate from), annotations it cannot apply (exit 2, by pair), and a plain
install without label-studio-sdk. No server needed: the export file is what Label Studio writes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from goldset.cli import app
from goldset.io import read_json, read_jsonl
from goldset.schema import Manifest, PairStatus, QAPair
from tests.helpers.review_data import make_workspace

runner = CliRunner()


def label_studio_export(tasks: list[dict[str, Any]], verdict_of: dict[str, str]) -> list[dict[str, Any]]:
    """What a JSON export of a project holding ``tasks`` looks like after review (one annotation per task)."""
    out = []
    for i, t in enumerate(tasks, start=1):
        pid = t["data"]["pair_id"]
        verdict = verdict_of.get(pid)
        anns = [] if verdict is None else [{
            "id": 100 + i, "completed_by": {"id": 2, "email": "expert@example.com"}, "was_cancelled": verdict == "skip",
            "result": [] if verdict == "skip" else [{"from_name": "verdict", "to_name": "question", "type": "choices",
                                                     "value": {"choices": [verdict]}}],
            "created_at": "2026-02-01T10:00:00.000000Z", "updated_at": "2026-02-01T10:00:00.000000Z",
        }]  # fmt: skip
        out.append({"id": i, "project": 9, "data": t["data"], "meta": {}, "annotations": anns})
    return out


def test_sample_export_import_status_and_gate(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws", 80)
    w = ["-w", str(ws.root)]
    for args, message in [
        (["--size", "30", "--fraction", "0.5"], "give fraction or size, not both"),
        (["--size", "0"], "size must be a positive number of pairs, got 0"),
    ]:  # the library's words
        r = runner.invoke(app, ["review", "sample", *args, *w])
        assert r.exit_code == 2 and r.output == f"error: {message}\n", r.output
    r = runner.invoke(app, ["review", "sample", "--size", "30", "--seed", "3", *w])
    assert r.exit_code == 0, r.output
    assert "round 1 (seed 3): 30 of 80 pairs" in r.output and "random part" in r.output

    r = runner.invoke(app, ["review", "status", "--gate", "0.9", "--no-server", *w])
    assert r.exit_code == 2 and "no reviewed pair of the random part" in r.output

    r = runner.invoke(app, ["review", "export", str(tmp_path / "out" / "review.json"), *w])
    assert r.exit_code == 0, r.output
    tasks = json.loads((tmp_path / "out" / "review.json").read_text())
    assert len(tasks) == 30 and (tmp_path / "out" / "review.xml").is_file()

    pairs = {p.id: p for p in read_jsonl(ws.pairs_path, QAPair)}
    randoms = sorted(pid for pid, p in pairs.items() if p.review.random)
    risky = sorted(pid for pid, p in pairs.items() if p.review.sampled and not p.review.random)
    verdicts = {pid: "accept" for pid in randoms}
    verdicts[randoms[0]] = "reject"
    verdicts.update({pid: "reject" for pid in risky})  # the risk part is bad: it must not drag the estimate down
    verdicts[risky[0]] = "skip"
    export = tmp_path / "export.json"
    export.write_text(json.dumps(label_studio_export(tasks, verdicts)))

    r = runner.invoke(app, ["review", "import", str(export), *w])
    assert r.exit_code == 0, r.output
    assert "1 skipped" in r.output and "written" in r.output
    after = {p.id: p for p in read_jsonl(ws.pairs_path, QAPair)}
    assert after[randoms[1]].status == PairStatus.accepted and after[risky[1]].status == PairStatus.rejected
    assert after[risky[0]].review.outcome is None
    assert after[randoms[1]].review.decisions[0].reviewer == "expert@example.com"

    manifest = read_json(ws.data_dir / "manifest.json", Manifest)
    assert manifest.review is not None
    n = len(randoms)
    weights = {pid: pairs[pid].review.weight or 0 for pid in randoms}
    expected = sum(w for pid, w in weights.items() if pid != randoms[0]) / sum(weights.values())
    assert manifest.review.random_reviewed == n and manifest.review.acceptance_rate == round(expected, 4)

    r = runner.invoke(app, ["review", "status", "--gate", "0.5", "--no-server", *w])
    assert r.exit_code == 0, r.output
    assert f"rests on {n} reviewed of {n} random pairs" in r.output and "gate          passed" in r.output
    r = runner.invoke(app, ["review", "status", "--gate", "0.95", "--no-server", *w])
    assert r.exit_code == 1 and "below 0.95" in r.output

    r = runner.invoke(app, ["review", "import", str(export), *w])
    assert r.exit_code == 0 and "nothing changed, nothing written" in r.output

    bad = tmp_path / "min.json"
    bad.write_text(json.dumps([{"question": "q", "verdict": "accept"}]))
    r = runner.invoke(app, ["review", "import", str(bad), *w])
    assert r.exit_code == 2 and "export the project as JSON" in r.output


def test_push_without_a_server_configured_says_what_to_set(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.delenv("LABEL_STUDIO_URL", raising=False)
    ws = make_workspace(tmp_path / "ws", 20)
    w = ["-w", str(ws.root)]
    r = runner.invoke(app, ["review", "push", *w])
    assert r.exit_code == 2 and "no review sample yet" in r.output
    runner.invoke(app, ["review", "sample", *w])
    r = runner.invoke(app, ["review", "push", *w])
    assert r.exit_code == 2 and "set LABEL_STUDIO_URL" in r.output and len(r.output.strip().splitlines()) == 1


def test_import_applies_what_it_can_and_exits_2_listing_the_rest_by_pair(tmp_path: Path) -> None:
    """Choices given by their displayed text ("Accept") or in another case are applied; a choice the config does
    not have is listed with its pair and makes the command exit 2, after the others were written."""
    ws = make_workspace(tmp_path / "ws", 40)
    w = ["-w", str(ws.root)]
    assert runner.invoke(app, ["review", "sample", "--size", "8", "--seed", "1", *w]).exit_code == 0
    assert runner.invoke(app, ["review", "export", str(tmp_path / "review.json"), *w]).exit_code == 0
    tasks = json.loads((tmp_path / "review.json").read_text())
    ids = sorted(t["data"]["pair_id"] for t in tasks)
    given = dict(zip(ids, ["Accept", "ACCEPT", "accept", "Reject", "Maybe", "maybe?"], strict=False))
    export = tmp_path / "export.json"
    export.write_text(json.dumps(label_studio_export(tasks, given)))

    r = runner.invoke(app, ["review", "import", str(export), *w])
    assert r.exit_code == 2, r.output
    after = {p.id: p for p in read_jsonl(ws.pairs_path, QAPair)}
    assert [after[i].status for i in ids[:4]] == [PairStatus.accepted] * 3 + [PairStatus.rejected]
    assert after[ids[4]].review.outcome is None and after[ids[5]].review.outcome is None
    assert "written: data/pairs.jsonl" in r.output and "2 annotations not applied, by pair:" in r.output
    lines = [line.strip() for line in r.output.splitlines()]
    assert any(line.startswith(f"{ids[4]}: does not match the labeling config") and "'Maybe'" in line
               for line in lines), r.output  # fmt: skip
    assert any(line.startswith(f"{ids[5]}: ") and "'maybe?'" in line for line in lines), r.output
    assert "error: 2 annotation(s) of 2 pair(s) could not be applied (the others were)" in r.output

    r = runner.invoke(app, ["review", "import", str(export), *w])
    assert r.exit_code == 2 and "nothing changed, nothing written" in r.output, "still reported, nothing rewritten"


#: Runs the CLI in a fresh interpreter where label-studio-sdk cannot be imported, as after a plain
#: `pip install goldset`: a finder ahead of the others answers for it as the import system does for a missing module.
WITHOUT_SDK = """
import sys
class NoSDK:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "label_studio_sdk":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, NoSDK())
sys.argv = ["goldset", *sys.argv[1:]]
from goldset.cli import main
main()
"""


def test_without_label_studio_sdk_the_server_commands_say_which_extra_to_install(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws", 20)
    assert runner.invoke(app, ["review", "sample", "--size", "4", "-w", str(ws.root)]).exit_code == 0
    env = {**os.environ, "LABEL_STUDIO_URL": "http://127.0.0.1:9", "LABEL_STUDIO_API_KEY": "k",
           "PYTHONPATH": str(Path(__file__).resolve().parents[1])}  # fmt: skip

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        cmd = [sys.executable, "-c", WITHOUT_SDK, *args, "-w", str(ws.root)]
        return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)

    for command in (["review", "push"], ["review", "pull"], ["review", "status", "--server"]):
        done = cli(*command)
        assert done.returncode == 2, (command, done.stdout, done.stderr)
        assert done.stderr.strip().splitlines() == [done.stderr.strip()], done.stderr
        assert "needs label-studio-sdk" in done.stderr and "pip install 'goldset[review]'" in done.stderr, done.stderr
    done = cli("review", "status")  # the local status still works; the server's part says what is missing
    assert done.returncode == 0 and "needs label-studio-sdk" in done.stdout, done.stdout + done.stderr
    assert "pip install 'goldset[review]'" in done.stdout, done.stdout  # printed as text, not as rich markup
    before = ws.pairs_path.read_bytes()
    assert cli("review", "pull").returncode == 2 and ws.pairs_path.read_bytes() == before
    done = cli("review", "export", str(tmp_path / "review.json"))  # reviewing without a server needs no SDK
    assert done.returncode == 0 and (tmp_path / "review.json").is_file(), done.stderr

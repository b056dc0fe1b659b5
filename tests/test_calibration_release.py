"""A release carries the judge calibration and says when the judge's agreement is below review.calibration.min_kappa
(real git + DVC in a temp folder, the judge answered by the fake OpenAI server's marker judge)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from goldset.cli import app
from goldset.context import Context
from goldset.io import read_json
from goldset.review.calibration import calibrate
from goldset.schema import Manifest, PairStatus, QAPair, Review, ReviewDecision
from goldset.versioning.calibration import calibration_notes
from goldset.versioning.load import load_dataset
from goldset.workspace import Workspace
from tests.helpers.calibration_data import ALL
from tests.helpers.fake_openai import FakeOpenAI
from tests.helpers.judge_responders import marker_judge
from tests.helpers.versioning_data import (
    KB,
    hand_pairs,
    kb_chunks,
    make_workspace,
    read_pairs,
    release_env,
    write_pairs,
)

runner = CliRunner()


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    release_env(tmp_path, monkeypatch)


def _decided(pair: QAPair, n: int, *, grounded: bool, judge_doubts: bool) -> QAPair:
    """``pair`` reviewed: accepted with every criterion ticked (grounded) or rejected with only 'question clear'
    ticked (not grounded); its answer carries the marker judge's doubt word when ``judge_doubts``."""
    decision = ReviewDecision(
        reviewer="expert@example.com", at=datetime(2026, 1, 2, 3, n, tzinfo=UTC),
        verdict="accept" if grounded else "reject", criteria=list(ALL if grounded else ("question_clear",)),
        source=f"label-studio:project 1 task {n} annotation {n}",
    )  # fmt: skip
    return pair.model_copy(update={
        "answer": pair.answer + (" It reportedly needs a restart." if judge_doubts else ""),
        "status": PairStatus.accepted if grounded else PairStatus.rejected,
        "review": Review(sampled=True, decisions=[decision], outcome="accepted" if grounded else "rejected"),
    })  # fmt: skip


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    """12 reviewed pairs: 6 grounded, 6 not, and the judge doubts 3 of each: accuracy 50%, kappa 0."""
    ws = make_workspace(tmp_path / "ws", KB / "en", tmp_path / "remote")
    pairs = hand_pairs(kb_chunks(ws), 12)
    assert len(pairs) == 12
    write_pairs(ws, [_decided(p, i, grounded=i < 6, judge_doubts=i % 2 == 0) for i, p in enumerate(pairs)])
    return ws


def test_a_release_below_min_kappa_says_so_in_its_output_and_changelog(ws: Workspace, fake_llm: FakeOpenAI) -> None:
    fake_llm.add_responder("groundedness", marker_judge)
    cal = calibrate(ws).calibration
    assert cal.overall.pairs == 12 and cal.overall.kappa == pytest.approx(0.0) and cal.status() == "below"

    res = runner.invoke(app, ["release", "1.0.0", "-m", "first", "-w", str(ws.root)])
    assert res.exit_code == 0, res.output
    assert "note" in res.output and "judge agreement below review.calibration.min_kappa" in res.output
    assert "Cohen's kappa 0.00 (slight) < 0.60 on 12 expert-labelled pairs" in " ".join(res.output.split())
    changelog = (ws.data_dir / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "### Judge calibration" in changelog and "**Note:** judge agreement below" in changelog
    assert "| all | 12 | 50% | 0.00 | 3 | 3 | 3 | 3 |" in changelog

    # The release carries it: loaded back from the release (hashes checked), the record is there.
    released = load_dataset("v1.0.0", ws.root).manifest
    assert released is not None and released.calibration is not None
    assert released.calibration.overall == cal.overall and released.calibration.model == "fake-judge"
    shown = runner.invoke(app, ["show", "v1.0.0", "-w", str(ws.root)])
    assert shown.exit_code == 0, shown.output
    assert "judge         groundedness judge fake-judge" in shown.output and "judge agreement below" in shown.output


def test_a_release_whose_judge_agrees_says_nothing_and_a_stale_calibration_is_noted(
    ws: Workspace, fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_llm.add_responder("groundedness", marker_judge)
    config = ws.config_path.read_text()
    assert config.count("\nreview:\n") == 1
    ws.config_path.write_text(config.replace("\nreview:\n", "\nreview:\n  calibration:\n    min_kappa: -0.5\n"))
    calibrate(ws)
    manifest = read_json(ws.data_dir / "manifest.json", Manifest)
    pairs = read_pairs(ws)
    assert calibration_notes(manifest, pairs, Context.of(ws)) == [], "kappa 0.00 >= -0.5: nothing to say"

    res = runner.invoke(app, ["release", "1.0.0", "-m", "first", "-w", str(ws.root)])
    assert res.exit_code == 0, res.output
    assert "note" not in res.output
    assert "### Judge calibration" in (ws.data_dir / "CHANGELOG.md").read_text(encoding="utf-8")

    # A decision made after the calibration: the next release would say the figures are stale.
    late = ReviewDecision(reviewer="x", at=datetime(2026, 2, 1, tzinfo=UTC), verdict="reject", source="goldset:late")
    pairs[0] = pairs[0].model_copy(update={"review": pairs[0].review.model_copy(
        update={"decisions": [*pairs[0].review.decisions, late]})})  # fmt: skip
    notes = calibration_notes(manifest, pairs, Context.of(ws))
    assert len(notes) == 1 and "made before the latest review decisions" in notes[0]
    # ... and so would a judge model other than the one calibrated.
    monkeypatch.setenv("GOLDSET_JUDGE_MODEL", "another-judge")
    notes = calibration_notes(manifest, read_pairs(ws), Context.of(ws))
    assert len(notes) == 1 and "measured fake-judge" in notes[0] and "now model another-judge" in notes[0]

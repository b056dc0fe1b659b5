"""Semantic-duplicate thresholds belong to the embedding model: per-model thresholds, the warning when the model in
use has none, reasons that say lexical / semantic / judged, and `goldset judge duplicate-threshold`, which picks a
model's threshold from labelled pairs (the fake server's bag-of-tokens embeddings: cosines computable by hand)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from goldset.cli import app
from goldset.filters import run_filters
from goldset.filters.thresholds import pick_threshold
from goldset.io import read_jsonl
from goldset.schema import QAPair
from tests.helpers.fake_openai import FakeOpenAI, fake_embedding
from tests.helpers.filter_data import make_workspace, pair

A = "How do I declare a request body in FastAPI?"
A_REORDERED = "In FastAPI, how do I declare a request body?"  # the same tokens: cosine 1.0
B = "How do I read a request header in FastAPI?"
C = "Which status code means not found?"
LEXICAL_A = "How can I declare a request body in FastAPI?"
ANSWER = "The client sends a request body to your API; your API sends a response body to the client."


def cos(a: str, b: str) -> float:
    return sum(x * y for x, y in zip(fake_embedding(a), fake_embedding(b), strict=True))


def _config(extra: str = "") -> str:
    return ("filter:\n  checks:\n    verbatim: false\n    groundedness: false\n    question_overlap: false\n"
            f"    duplicate:\n      semantic: true\n      judge: false\n{extra}")  # fmt: skip


def _dup(ws) -> dict[str, tuple[str | None, str]]:
    return {p.id: (p.checks["duplicate"].duplicate_of, p.checks["duplicate"].reason)
            for p in read_jsonl(ws.pairs_path, QAPair)}  # fmt: skip


@pytest.fixture
def embed(fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> FakeOpenAI:
    monkeypatch.setenv("GOLDSET_EMBEDDING_MODEL", "fake-embed")
    return fake_llm


def test_reasons_say_lexical_or_semantic_and_a_threshold_not_set_for_the_model_is_warned_about(
    tmp_path: Path, embed: FakeOpenAI
) -> None:
    ps = [pair("qa-a", A, ANSWER), pair("qa-b", A_REORDERED, ANSWER), pair("qa-c", LEXICAL_A, ANSWER),
          pair("qa-d", C, "404.")]  # fmt: skip
    ws = make_workspace(tmp_path / "ws", ps, config=_config())
    report = run_filters(ws)
    got = _dup(ws)
    assert got["qa-b"][0] == "qa-a" and got["qa-b"][1].startswith("semantic near-duplicate (cosine 1.00) of qa-a")
    assert got["qa-c"][0] == "qa-a" and got["qa-c"][1].startswith("lexical near-duplicate (")
    assert any("embedding model fake-embed with semantic_threshold 0.95, which was not set for it" in w
               for w in report.warnings)  # fmt: skip


def test_a_threshold_set_for_the_model_is_used_and_silences_the_warning(tmp_path: Path, embed: FakeOpenAI) -> None:
    near = cos(A, B)
    assert 0.5 < near < 0.95  # the two different questions share most of their tokens
    ps = [pair("qa-a", A, ANSWER), pair("qa-b", B, ANSWER)]
    low = make_workspace(
        tmp_path / "low", ps, config=_config(f"      semantic_thresholds: {{fake-embed: {near - 0.01:.4f}}}\n")
    )
    report = run_filters(low)
    assert _dup(low)["qa-b"][0] == "qa-a", "fake-embed's own (lower) threshold is the one used"
    assert report.warnings == []
    other = make_workspace(tmp_path / "other", ps, config=_config("      semantic_thresholds: {other-model: 0.5}\n"))
    report = run_filters(other)
    assert _dup(other)["qa-b"][0] is None, "another model's threshold does not apply: the default 0.95 does"
    assert any("not set for it" in w for w in report.warnings)


def test_pick_threshold_by_hand() -> None:
    cut = pick_threshold([0.97, 0.93, 0.91, 0.88, 0.86, 0.84], [True, True, False, True, False, False])
    # cuts at the "same" cosines: 0.97 (P 1, R 1/3), 0.93 (P 1, R 2/3, F1 .8), 0.88 (P 3/4, R 1, F1 .857)
    assert cut.threshold == 0.88 and cut.precision == 0.75 and cut.recall == 1.0
    with pytest.raises(ValueError, match="labelled the same and pairs labelled different"):
        pick_threshold([0.9, 0.8], [True, True])


def test_duplicate_threshold_command_picks_the_models_threshold_from_labelled_pairs(
    tmp_path: Path, embed: FakeOpenAI
) -> None:
    from goldset.scaffold import init_workspace

    ws = init_workspace(tmp_path / "ws")
    labelled = tmp_path / "labelled.jsonl"
    rows = [
        {"question_a": A, "question_b": A_REORDERED, "same": True},
        {"question_a": A, "question_b": LEXICAL_A, "same": True},
        {"question_a": A, "question_b": B, "same": False},
        {"question_a": A, "question_b": C, "same": False},
    ]
    labelled.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    expected = pick_threshold([cos(r["question_a"], r["question_b"]) for r in rows], [r["same"] for r in rows])
    assert expected.f1 == 1.0 and expected.threshold == pytest.approx(
        min(cos(A, A_REORDERED), cos(A, LEXICAL_A)), abs=1e-6
    )
    res = CliRunner().invoke(app, ["judge", "duplicate-threshold", str(labelled), "-w", str(ws.root)])
    assert res.exit_code == 0, res.output
    assert "embedding model  fake-embed: 2 pair(s) labelled same, 2 different" in res.output
    assert f"picked           threshold {expected.threshold:.4f}: precision 1.00, recall 1.00" in res.output
    assert "current          threshold 0.9500" in res.output
    assert f'"fake-embed": {expected.threshold:.4f}' in res.output
    calls = embed.embedding_calls
    assert CliRunner().invoke(app, ["judge", "duplicate-threshold", str(labelled), "-w", str(ws.root)]).exit_code == 0
    assert embed.embedding_calls == calls, "the embeddings come from the call journal"
    one_label = tmp_path / "same.jsonl"
    one_label.write_text(json.dumps(rows[0]) + "\n", encoding="utf-8")
    res = CliRunner().invoke(app, ["judge", "duplicate-threshold", str(one_label), "-w", str(ws.root)])
    assert res.exit_code == 2 and "a threshold needs both" in res.output

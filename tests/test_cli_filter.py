"""`goldset filter` through the CLI: the table, the examples, the skipped judge, exit codes on bad input."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from goldset.cli import app
from goldset.io import read_jsonl
from goldset.schema import PairStatus, QAPair
from tests.helpers.fake_openai import FakeOpenAI
from tests.helpers.filter_data import COPY, PARAPHRASE, make_workspace, pair
from tests.helpers.judge_responders import groundedness_responder, make_repair_responder

runner = CliRunner()
#: A rewrite of COPY the fake judge accepts (it knows only words found in the sources) that is no copy: each
#: sentence mixes words of two sentences of the chunk that are not neighbours, so none holds most of its words.
GROUNDED_REWRITE = "To send data POST is the most common, and the interactive docs won't show a GET body."


def _pairs() -> list[QAPair]:
    return [
        pair("qa-copy", "What do the specifications say about a body on GET?", COPY, chunks=("en-body-2",)),
        pair("qa-para", "Can a GET request carry a body in FastAPI?", PARAPHRASE, chunks=("en-body-2",)),
        pair("qa-dup", "Can a GET request carry a body in FastAPI ?", PARAPHRASE, chunks=("en-body-2",)),
        pair("qa-cmp", "What is a request body?", "Data sent by the client.", qtype="comparison"),
    ]


def test_table_examples_and_skipped_judge(tmp_path: Path, no_llm_env: None) -> None:
    ws = make_workspace(tmp_path / "ws", _pairs())
    result = runner.invoke(app, ["filter", "-w", str(ws.root)])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "question_overlap" in out and "comparison" in out and "status by question type" in out
    assert "groundedness: skipped: no judge endpoint configured" in out
    assert "qa-copy" in out and "answer copies the evidence" in out  # an example of the failure
    assert "near-duplicate" in out and "duplicate groups: 1" in out
    # A comparison that names no contrast is flagged (type_plausible flags), not rejected: shown as a flag.
    assert "type_plausible flags, e.g." in out
    assert "flagged for review (a flag does not reject): type_plausible 1" in out
    assert "4 pairs: passed 2, rejected 2" in out
    got = {p.id: p for p in read_jsonl(ws.pairs_path, QAPair)}
    # qa-para and qa-dup tie on their checks: the lower id is kept.
    assert {k: p.status for k, p in got.items()} == {
        "qa-copy": "rejected", "qa-para": "rejected", "qa-dup": "passed", "qa-cmp": "passed"
    }  # fmt: skip
    assert list(got["qa-cmp"].flags) == ["type_plausible"]

    again = runner.invoke(app, ["filter", "-w", str(ws.root)])
    assert again.exit_code == 0 and "nothing changed, nothing written" in again.output


def test_judge_and_repair_through_the_cli(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    fake_llm.add_responder("groundedness", groundedness_responder)
    fake_llm.add_responder("paraphrase_repair", make_repair_responder({COPY: GROUNDED_REWRITE}))
    ws = make_workspace(tmp_path / "ws", _pairs()[:1], config="filter:\n  checks:\n    closed_book: false\n")
    result = runner.invoke(app, ["filter", "--repair", "-w", str(ws.root)])
    assert result.exit_code == 0, result.output
    assert "repaired 1 answer(s)" in result.output and "llm:" in result.output
    assert "$0.0000" not in result.output and "no price for the judge model; set llm.prices" in result.output
    (p,) = read_jsonl(ws.pairs_path, QAPair)
    assert p.answer == GROUNDED_REWRITE and p.status == PairStatus.passed and p.checks["groundedness"].passed
    assert p.provenance.revisions[0].answer == COPY
    assert fake_llm.api_key not in result.output


def test_bad_input_one_line_errors(tmp_path: Path, no_llm_env: None) -> None:
    ws = make_workspace(tmp_path / "ws", _pairs(), config="filter:\n  checks:\n    nope: {}\n")
    bad = runner.invoke(app, ["filter", "-w", str(ws.root)])
    assert bad.exit_code == 2 and bad.output.startswith("error:") and "unknown check 'nope'" in bad.output
    assert len(bad.output.strip().splitlines()) == 1

    (ws.root / "goldset.yaml").write_text("kb:\n  path: docs\n")
    unknown = runner.invoke(app, ["filter", "--check", "verbatimm", "-w", str(ws.root)])
    assert unknown.exit_code == 2 and "known checks" in unknown.output

    ws.pairs_path.write_text(ws.pairs_path.read_text() + "{oops\n")
    before = ws.pairs_path.read_bytes()
    broken = runner.invoke(app, ["filter", "-w", str(ws.root)])
    assert broken.exit_code == 2 and f"{ws.pairs_path}:5" in broken.output
    assert ws.pairs_path.read_bytes() == before

    ws.pairs_path.write_text(ws.pairs_path.read_text().replace("{oops\n", ""))
    missing = runner.invoke(app, ["filter", "--against", str(tmp_path / "nowhere"), "-w", str(ws.root)])
    assert missing.exit_code == 2 and "nowhere: against needs a dataset folder" in missing.output


def test_two_pairs_with_one_id_are_refused_and_neither_is_lost(tmp_path: Path, no_llm_env: None) -> None:
    ws = make_workspace(tmp_path / "ws", _pairs())
    lines = ws.pairs_path.read_text(encoding="utf-8").splitlines(keepends=True)
    second = QAPair.model_validate_json(lines[1])
    lines[1] = second.model_copy(update={"id": QAPair.model_validate_json(lines[0]).id}).model_dump_json() + "\n"
    ws.pairs_path.write_text("".join(lines), encoding="utf-8")
    before = ws.pairs_path.read_bytes()
    result = runner.invoke(app, ["filter", "--no-llm", "-w", str(ws.root)])
    assert result.exit_code == 2 and f"{ws.pairs_path}:2: duplicate id" in result.output
    assert ws.pairs_path.read_bytes() == before, "a file that could not be read whole is never rewritten"


def test_option_mistakes_name_the_options(tmp_path: Path, no_llm_env: None) -> None:
    ws = make_workspace(tmp_path / "ws", _pairs())
    before = ws.pairs_path.read_bytes()
    for args, needle in [
        (["--repair", "--no-llm"], "repair needs the LLM"),
        (["--repair", "-c", "leakage"], "run the verbatim check too"),
        (["-c", "nope"], "unknown check 'nope'; known checks: evidence,"),
    ]:
        result = runner.invoke(app, ["filter", *args, "-w", str(ws.root)])
        assert result.exit_code == 2 and needle in result.output, result.output
        assert "repair=True" not in result.output and "checks=" not in result.output
        dry = runner.invoke(app, ["filter", *args, "--dry-run", "-w", str(ws.root)])  # checked the same way
        assert dry.exit_code == 2 and dry.output == result.output, dry.output
    assert ws.pairs_path.read_bytes() == before


def test_an_unknown_check_is_one_line_in_the_librarys_wording(tmp_path: Path, no_llm_env: None) -> None:
    from goldset.filters.registry import CHECKS

    ws = make_workspace(tmp_path / "ws", _pairs())
    result = runner.invoke(app, ["filter", "-c", "verbatim", "-c", "nope", "-w", str(ws.root)])
    assert result.exit_code == 2
    assert result.output == f"error: unknown check 'nope'; known checks: {', '.join(CHECKS)}\n"


def test_an_experts_rejection_stands_when_the_checks_pass(tmp_path: Path, no_llm_env: None) -> None:
    from goldset.schema import Review

    ws = make_workspace(tmp_path / "ws", _pairs())
    pairs = read_jsonl(ws.pairs_path, QAPair)
    para = next(p for p in pairs if p.id == "qa-dup")
    rejected = para.model_copy(update={"status": PairStatus.rejected, "review": Review(outcome="rejected")})
    ws.pairs_path.write_text(
        "".join((rejected if p.id == "qa-dup" else p).model_dump_json() + "\n" for p in pairs), encoding="utf-8"
    )
    assert runner.invoke(app, ["filter", "-w", str(ws.root)]).exit_code == 0
    after = {p.id: p for p in read_jsonl(ws.pairs_path, QAPair)}
    assert after["qa-dup"].status is PairStatus.rejected, "review owns an expert's decision"
    assert after["qa-dup"].checks["verbatim"].passed, "the checks are still recorded"

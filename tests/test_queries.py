"""Real user questions end to end: import (redaction, merging), drafting from the KB against the fake server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goldset.errors import EndpointError, InputError
from goldset.kb import ingest
from goldset.queries.drafting import draft_answers
from goldset.queries.intake import import_queries, queries_path, read_queries
from goldset.schema import PairStatus, QuestionType
from goldset.workspace import Workspace
from tests.helpers.fake_openai import FakeOpenAI
from tests.helpers.generation_data import make_pair
from tests.helpers.query_data import DOCS, PERSONAL, QUESTIONS_CSV, draft_responder


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "goldset.yaml").write_text("{}\n", encoding="utf-8")
    docs = tmp_path / "docs"
    for name, text in DOCS.items():
        (docs / name).parent.mkdir(parents=True, exist_ok=True)
        (docs / name).write_text(text, encoding="utf-8")
    workspace = Workspace(root)
    ingest(docs, workspace)
    return workspace


def _all_text(root: Path) -> str:
    out = []
    for path in root.rglob("*"):
        if path.is_file():
            out.append(path.read_bytes().decode("utf-8", errors="replace"))
    return "\n".join(out)


def test_import_merges_duplicates_sums_counts_and_redacts(ws: Workspace, tmp_path: Path) -> None:
    src = tmp_path / "questions.csv"
    src.write_text(QUESTIONS_CSV, encoding="utf-8")
    report = import_queries(src, ws)
    assert report.rows == 8 and report.merged_exact == 2 and report.merged_near == 1
    by_text = {q.question: q for q in report.questions}
    en = by_text["How do I declare the type of a path parameter?"]
    assert en.count == 6 and len(en.origins) == 3 and en.origins[0].endswith("questions.csv:2")
    assert en.variants == ["How can I declare the type of a path parameter?"]
    assert en.first_seen == "2026-11-01T10:00:00" and en.last_seen == "2026-11-03T10:00:00"
    assert by_text["如何声明路径参数的类型？"].count == 5 and by_text["如何声明路径参数的类型？"].language == "zh"
    assert report.asked == 14 == sum(int(line.rsplit(",", 2)[1]) for line in QUESTIONS_CSV.splitlines()[1:])
    assert report.redacted == {"email": 1, "number": 1, "phone": 2}
    stored = queries_path(ws).read_text(encoding="utf-8")
    assert "[email]" in stored and "[phone]" in stored
    for value in PERSONAL:
        assert value not in stored
    # importing the same file again changes nothing
    again = import_queries(src, ws)
    assert again.already_imported == 8 and not again.added
    assert sum(q.count for q in read_queries(ws)) == 14


def test_import_formats_and_errors(ws: Workspace, tmp_path: Path) -> None:
    lines = tmp_path / "q.txt"
    lines.write_text("# exported from the chat log\nWhat is a path parameter?\n\n  What is a path parameter  \n",
                     encoding="utf-8")  # fmt: skip
    report = import_queries(lines, ws)
    assert [q.count for q in report.questions] == [2] and report.blank == 2
    jl = tmp_path / "q.jsonl"
    jl.write_text(json.dumps({"question": "Ports? call 555-123-4567", "count": 2}) + "\n" + json.dumps("hi there")
                  + "\n", encoding="utf-8")  # fmt: skip
    report = import_queries(jl, ws)
    assert {q.question for q in report.added} == {"Ports? call [phone]", "hi there"}
    bad = tmp_path / "bad.csv"
    bad.write_text("query\nwhat?\n", encoding="utf-8")
    with pytest.raises(InputError, match="no 'question' column"):
        import_queries(bad, ws)


def test_real_questions_become_pairs_with_evidence_or_unanswerable(
    ws: Workspace, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    fake_llm.add_responder("draft_answer", draft_responder)
    src = tmp_path / "questions.csv"
    src.write_text(QUESTIONS_CSV, encoding="utf-8")
    imported = import_queries(src, ws)
    est = draft_answers(ws, dry_run=True)
    assert est.calls == len(imported.questions) == 5 and fake_llm.calls == 0
    report = draft_answers(ws)
    assert fake_llm.calls == 5 and report.failed == 0 and report.rejected == 0
    from goldset.data import WorkspaceData

    pairs = WorkspaceData(ws).pairs()
    assert len(pairs) == 5
    questions = {q.question for q in imported.questions}
    assert {p.question for p in pairs} == questions  # never rewritten
    chunks = {c.id: c for c in WorkspaceData(ws).kb_chunks()}
    answered = [p for p in pairs if p.question_type is not QuestionType.unanswerable]
    unanswerable = [p for p in pairs if p.question_type is QuestionType.unanswerable]
    assert len(answered) == 3 and len(unanswerable) == 2
    for p in answered:
        assert p.evidence and all(e.quote in chunks[e.chunk_id].text for e in p.evidence)
        assert p.status is PairStatus.candidate and p.provenance.source == "real"
    for p in unanswerable:
        assert p.checks["generation"].passed and "do not answer" in p.checks["generation"].reason
    en = next(p for p in pairs if p.question.startswith("How do I declare"))
    assert en.provenance.count == 6 and len(en.provenance.origins) == 3
    # no redacted value anywhere in the workspace or in any request the fake server received
    sent = json.dumps([r.body for r in fake_llm.requests])
    workspace_text = _all_text(ws.root)
    for value in PERSONAL:
        assert value not in sent and value not in workspace_text
    assert "[email]" in sent
    # resume: a second run asks nothing
    again = draft_answers(ws)
    assert again.questions == 0 and again.already_done == 5 and fake_llm.calls == 5


def test_draft_without_endpoint_says_so(ws: Workspace, tmp_path: Path, no_llm_env: None) -> None:
    src = tmp_path / "q.txt"
    src.write_text("What is a path parameter?\n", encoding="utf-8")
    import_queries(src, ws)
    with pytest.raises(EndpointError, match="no LLM endpoint configured"):
        draft_answers(ws)


def test_import_reads_chinese_excel_exports_and_other_separators(ws: Workspace, tmp_path: Path) -> None:
    """What a Chinese team's spreadsheet gives: a GB18030 (GBK) CSV from Excel or WPS, a UTF-8 one with a BOM, a
    semicolon- or tab-separated one saved as .csv; each read like a comma-separated UTF-8 file. A file that is
    no text at all is one clear error."""
    from typer.testing import CliRunner

    from goldset.cli import app

    table = "question,count\n怎么定义查询参数？,7\n,3\n"
    gbk = tmp_path / "gbk.csv"
    gbk.write_bytes(table.encode("gb18030"))
    report = import_queries(gbk, ws, store=False)
    assert report.encoding == "gb18030" and report.blank == 1
    assert [(q.question, q.count, q.language) for q in report.questions] == [("怎么定义查询参数？", 7, "zh")]
    got = CliRunner().invoke(app, ["import", "--format", "queries", str(gbk), "-w", str(ws.root)])
    assert got.exit_code == 0, got.output
    assert "decoded as GB18030" in got.output and "(1 without a question, skipped)" in got.output
    for name, data in (("bom.csv", b"\xef\xbb\xbf" + table.encode()), ("semi.csv", table.replace(",", ";").encode()),
                       ("tab.csv", table.replace(",", "\t").encode()), ("tab.tsv", table.replace(",", "\t").encode())):
        path = tmp_path / name
        path.write_bytes(data)
        report = import_queries(path, ws, store=False)
        assert [(q.question, q.count) for q in report.questions] == [("怎么定义查询参数？", 7)], name
    binary = tmp_path / "export.csv"
    binary.write_bytes(b"PK\x03\x04\x00\x00binary")  # an .xlsx renamed .csv
    with pytest.raises(InputError, match=r"export.csv: binary file .*save it as UTF-8 text"):
        import_queries(binary, ws)


def test_cli_import_and_draft(ws: Workspace, tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    from typer.testing import CliRunner

    from goldset.cli import app

    fake_llm.add_responder("draft_answer", draft_responder)
    src = tmp_path / "questions.csv"
    src.write_text(QUESTIONS_CSV, encoding="utf-8")
    runner = CliRunner()
    got = runner.invoke(app, ["import", "--format", "queries", str(src), "--workspace", str(ws.root)])
    assert got.exit_code == 0, got.output
    assert "5 real question(s) asked 14 time(s)" in got.output and "email ×1" in got.output
    got = runner.invoke(app, ["generate", "--from-queries", "--dry-run", "--workspace", str(ws.root)])
    assert got.exit_code == 0 and "calls 5 to pay" in got.output and fake_llm.calls == 0
    got = runner.invoke(app, ["generate", "--from-queries", "--workspace", str(ws.root)])
    assert got.exit_code == 0 and "answered 3  unanswerable 2" in got.output, got.output


def test_cli_draft_without_endpoint_one_line_exit_2(ws: Workspace, tmp_path: Path, no_llm_env: None) -> None:
    from typer.testing import CliRunner

    from goldset.cli import app

    src = tmp_path / "q.txt"
    src.write_text("What is a path parameter?\n", encoding="utf-8")
    import_queries(src, ws)
    got = CliRunner().invoke(app, ["generate", "--from-queries", "--workspace", str(ws.root)])
    assert got.exit_code == 2 and got.output.strip().count("\n") == 0 and "no LLM endpoint" in got.output


def test_coverage_rephrase_covered_absent_topic_not_and_figures_add_up(
    ws: Workspace, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    from goldset.data import WorkspaceData
    from goldset.queries.coverage import coverage

    fake_llm.add_responder("draft_answer", draft_responder)
    src = tmp_path / "questions.csv"
    src.write_text(QUESTIONS_CSV, encoding="utf-8")
    import_queries(src, ws)
    draft_answers(ws)
    data = WorkspaceData(ws)
    pairs = [p.model_copy(update={"status": PairStatus.accepted}) if p.question_type is QuestionType.factual
             else p for p in data.pairs()]  # fmt: skip
    data.write(pairs, data.kb_chunks())
    traffic = tmp_path / "traffic.txt"
    traffic.write_text(
        "How should I declare the type of my path parameter?\n"  # rephrases a golden question
        "How do I configure OAuth2 scopes for my login page?\n"  # a topic absent from the KB
        "How do I configure OAuth2 scopes for my login page?\n"
        "怎样声明路径参数的类型？\n"  # rephrases the Chinese golden question
        "我的账户 alice@example.org 怎么注销？\n",  # absent, with personal data
        encoding="utf-8",
    )
    report = coverage(traffic, ws)
    assert report.method == "lexical" and report.threshold == 0.5
    by_q = {m.question.question: m for m in report.matches}
    assert by_q["How should I declare the type of my path parameter?"].covered
    assert by_q["怎样声明路径参数的类型？"].covered
    assert not by_q["How do I configure OAuth2 scopes for my login page?"].covered
    assert not by_q["我的账户 [email] 怎么注销？"].covered
    assert report.questions == 4 and report.asked == 5 and report.covered == 2 and report.asked_covered == 2
    assert report.share == 0.5 and report.weighted_share == 2 / 5
    assert sum(len(c.questions) for c in report.clusters) == report.questions - report.covered
    assert sum(c.asked for c in report.clusters) == report.asked - report.asked_covered
    assert "alice@example.org" not in json.dumps(report.as_dict(), ensure_ascii=False)

    from typer.testing import CliRunner

    from goldset.cli import app

    got = CliRunner().invoke(app, ["coverage", "--queries", str(traffic), "--workspace", str(ws.root)])
    assert got.exit_code == 0, got.output
    assert "covered at ≥ 0.5" in got.output and "2 of 4 questions (50%)" in got.output and "2 of 5 asks" in got.output
    calls = fake_llm.calls
    got = CliRunner().invoke(app, ["coverage", "--queries", str(traffic), "--for-uncovered",
                                   "--workspace", str(ws.root)])  # fmt: skip
    assert got.exit_code == 0, got.output
    assert fake_llm.calls == calls + 2 and "0 answer(s), 2 unanswerable" in got.output


def test_coverage_without_a_file_reads_the_imported_questions(ws: Workspace, tmp_path: Path) -> None:
    """`goldset import --format queries FILE` then `goldset coverage`: the questions imported are the traffic (it
    used to require --queries again); the same figures as from the file; nothing imported is a one-line error."""
    from typer.testing import CliRunner

    from goldset.cli import app
    from goldset.data import WorkspaceData
    from goldset.queries.coverage import coverage

    with pytest.raises(InputError, match=r"queries.jsonl: no real questions imported; run `goldset import"):
        coverage(None, ws)
    data = WorkspaceData(ws)
    question = "How do I declare the type of a path parameter?"
    golden = make_pair(data.kb_chunks()[0], question, status=PairStatus.accepted)
    data.write([golden], data.kb_chunks())
    src = tmp_path / "questions.csv"
    src.write_text(QUESTIONS_CSV, encoding="utf-8")
    import_queries(src, ws)
    from_file, from_store = coverage(src, ws, store=False), coverage(None, ws, store=False)
    figures = ("questions", "covered", "asked", "asked_covered", "redacted")
    assert [getattr(from_store, f) for f in figures] == [getattr(from_file, f) for f in figures]
    assert from_store.covered >= 1 and from_store.source.endswith("queries.jsonl")
    got = CliRunner().invoke(app, ["coverage", "--workspace", str(ws.root)])
    assert got.exit_code == 0, got.output
    assert f"{from_file.covered} of {from_file.questions} questions" in got.output


def test_review_sample_puts_real_questions_first_most_asked_first() -> None:
    from goldset.review.sampling import draw, risk_of
    from goldset.schema import CheckResult, Evidence, Provenance, QAPair

    def pair(n: int, *, real: int | None = None, flagged: bool = False) -> QAPair:
        checks = {"verbatim": CheckResult(passed=False, severity="flag", reason="copied")} if flagged else {}
        prov = Provenance(source="real", count=real) if real else Provenance()
        return QAPair(id=f"qa-{n:03d}", question=f"Question {n}?", answer="An answer.", question_type="factual",
                      evidence=[Evidence(chunk_id="c", doc_id="a.md", quote="q")], provenance=prov, checks=checks,
                      status=PairStatus.passed)  # fmt: skip

    population = [pair(i, flagged=True) for i in range(6)] + [pair(10, real=1), pair(11, real=9), pair(12, real=4)]
    risk = {p.id: risk_of(p, {}, None, 0.0) for p in population}
    assert risk["qa-011"][1] == ["real"] and risk["qa-000"][1] == ["flag:verbatim"]
    out = draw(population, 5, seed=1, round_no=1, random_share=0.2, dimensions=[], risk=risk)
    assert list(out.risk)[:3] == ["qa-011", "qa-012", "qa-010"] and len(out.risk) == 4


def test_build_with_queries_imports_and_answers_them(ws: Workspace, tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    import goldset
    from goldset.data import WorkspaceData
    from tests.helpers.duplicate_responders import no_duplicates
    from tests.helpers.judge_responders import groundedness_responder
    from tests.helpers.responders import qa_responder

    fake_llm.add_responder("draft_answer", draft_responder)
    fake_llm.add_responder("qa_pairs", qa_responder)
    fake_llm.add_responder("groundedness", groundedness_responder)
    fake_llm.add_responder("duplicate_judge", no_duplicates)
    src = tmp_path / "questions.csv"
    src.write_text(QUESTIONS_CSV, encoding="utf-8")
    docs = tmp_path / "docs"
    report = goldset.build(ws, docs=docs, queries=src, review="none")
    generate = next(s for s in report.stages if s.name == "generate")
    assert generate.counts["real_questions"] == 5 and generate.counts["real_answered"] == 3
    assert generate.counts["real_unanswerable"] == 2 and "real questions: 5 drafted" in generate.summary
    real = [p for p in WorkspaceData(ws).pairs() if p.provenance.source == "real"]
    assert len(real) == 5 and all(p.checks.get("verbatim") is not None for p in real)  # the filters ran on them
    for value in PERSONAL:
        assert value not in _all_text(ws.root)


def test_build_with_queries_and_no_endpoint_says_so(ws: Workspace, tmp_path: Path, no_llm_env: None) -> None:
    from typer.testing import CliRunner

    from goldset.cli import app

    src = tmp_path / "q.txt"
    src.write_text("What is a path parameter?\n", encoding="utf-8")
    got = CliRunner().invoke(app, ["build", str(tmp_path / "docs"), "--queries", str(src), "--no-review",
                                   "--workspace", str(ws.root)])  # fmt: skip
    assert got.exit_code == 2 and "no LLM endpoint" in got.output and got.output.strip().count("\n") == 0


def test_coverage_uses_embeddings_when_configured(
    ws: Workspace, tmp_path: Path, fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    from goldset.data import WorkspaceData
    from goldset.queries.coverage import coverage

    fake_llm.add_responder("draft_answer", draft_responder)
    src = tmp_path / "questions.csv"
    src.write_text(QUESTIONS_CSV, encoding="utf-8")
    import_queries(src, ws)
    draft_answers(ws)
    data = WorkspaceData(ws)
    data.write([p.model_copy(update={"status": PairStatus.accepted}) for p in data.pairs()], data.kb_chunks())
    monkeypatch.setenv("GOLDSET_EMBEDDING_MODEL", "fake-embed")
    traffic = tmp_path / "traffic.txt"
    traffic.write_text("How do I declare the type of a path parameter?\nWhat is OAuth2? mail bob@example.net\n",
                       encoding="utf-8")  # fmt: skip
    report = coverage(traffic, ws)
    assert report.method == "embedding" and report.threshold == 0.8
    by_q = {m.question.question: m for m in report.matches}
    assert by_q["How do I declare the type of a path parameter?"].similarity == pytest.approx(1.0)
    assert by_q["How do I declare the type of a path parameter?"].covered
    assert not by_q["What is OAuth2? mail [email]"].covered
    embedded = [r for r in fake_llm.requests if r.path.endswith("/embeddings")]
    assert embedded and "bob@example.net" not in json.dumps([r.body for r in embedded])


def test_drafting_fuses_embeddings_when_configured(
    ws: Workspace, tmp_path: Path, fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    from goldset.data import WorkspaceData

    fake_llm.add_responder("draft_answer", draft_responder)
    monkeypatch.setenv("GOLDSET_EMBEDDING_MODEL", "fake-embed")
    src = tmp_path / "questions.csv"
    src.write_text(QUESTIONS_CSV, encoding="utf-8")
    import_queries(src, ws)
    report = draft_answers(ws)
    assert report.answered == 3 and report.unanswerable == 2
    embedded = [r for r in fake_llm.requests if r.path.endswith("/embeddings")]
    assert embedded and all(value not in json.dumps([r.body for r in embedded]) for value in PERSONAL)
    assert len(WorkspaceData(ws).pairs()) == 5

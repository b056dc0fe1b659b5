"""A knowledge base of a PDF, a Word file and a PowerPoint deck (written by the test, English and Chinese) through
`goldset build` against the fake LLM: the pairs' evidence chunks carry their page or slide, the review tasks show
"handbook.pdf, p. 2" / "deck.pptx, slide 3" over the evidence (exported, and pushed to the REAL Label Studio
server), and after one PDF page and one slide change, the rebuild touches only the pairs citing those two."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from goldset.cli import app
from goldset.io import read_jsonl
from goldset.schema import Chunk, QAPair
from tests.helpers.duplicate_responders import no_duplicates
from tests.helpers.fake_openai import FakeOpenAI
from tests.helpers.judge_responders import marker_judge
from tests.helpers.labelstudio import project_id, require_server, tasks_by_pair
from tests.helpers.office_docs import PdfWriter, write_docx, write_pptx
from tests.helpers.responders import qa_responder

runner = CliRunner()

PDF_PAGES = [
    ("Travel policy", "Employees book business trips through the travel portal at least two weeks before they "
     "leave. Economy class is the rule for flights under six hours. Hotel rooms are booked through the portal too."),
    ("Expense claims", "Expense claims are submitted within fifteen working days after the trip. The original "
     "receipts are attached to every claim. The manager approves each claim before it is paid."),
    ("Security", "Laptops are locked with a cable in hotel rooms. They are never left in a car overnight. Lost "
     "devices are reported to the service desk within one hour."),
]  # fmt: skip
SLIDES: list[dict[str, Any]] = [
    {"title": "Quarterly results", "bullets": ["Revenue grew by twelve percent over the quarter.",
                                               "Costs stayed flat in every region of the company."],
     "notes": "Mention the opening of the new office in Lyon during this slide."},
    {"title": "Regional figures", "table": [["Region", "Revenue"], ["North region", "1.2 million euros"],
                                            ["South region", "0.8 million euros"]]},
    {"title": "下季度计划", "bullets": ["公司计划在上海开设新的办公室。", "研发部门将招聘二十名工程师。"],
     "notes": "请强调招聘工作的整体进度安排。"},
]  # fmt: skip
DOCX = [
    ("h1", "第一章 总则"),
    ("p", "为规范公司差旅管理，节约费用开支，特制定本制度。本制度适用于公司全体正式员工和实习人员。"),
    ("h1", "第二章 报销"),
    ("p", "员工应在出差结束后十五个工作日内提交报销申请。申请时须附上全部发票原件和行程单据。"),
    ("bullets", ["住宿费用按照所在城市的标准予以报销。", "市内交通费用凭有效票据实报实销。"]),
]


def write_kb(docs: Path, pages: list[tuple[str, str]] = PDF_PAGES, slides: list[dict[str, Any]] = SLIDES) -> None:
    docs.mkdir(exist_ok=True)
    pdf = PdfWriter(docs / "handbook.pdf", header="ACME Employee Handbook", footer="Page {n}")
    for title, text in pages:
        pdf.heading(title, 1)
        pdf.para(text)
        pdf.page()
    pdf.save()
    write_docx(docs / "制度.docx", DOCX)
    write_pptx(docs / "deck.pptx", slides)


def run(*args: str) -> str:
    result = runner.invoke(app, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    assert result.exit_code == 0, f"goldset {' '.join(args)} failed:\n{result.output}"
    return result.output


def line_of(output: str, stage: str) -> str:
    return next(line for line in output.splitlines() if line.startswith(f"{stage} "))


def chunks_of(ws: Path, where: str = "data") -> dict[str, Chunk]:
    """The chunks the pairs cite (``data``), or every chunk of the KB snapshot (``.goldset/kb``)."""
    return {c.id: c for c in read_jsonl(ws / where / "chunks.jsonl", Chunk)}


def pairs_of(ws: Path) -> dict[str, QAPair]:
    return {p.id: p for p in read_jsonl(ws / "data" / "pairs.jsonl", QAPair)}


def expected_heads(pair: QAPair, chunks: dict[str, Chunk]) -> list[str]:
    return [f"── {' › '.join([chunks[cid].location, *chunks[cid].heading_titles])}" for cid in pair.chunk_ids]


@pytest.fixture
def llm(fake_llm: FakeOpenAI) -> FakeOpenAI:
    fake_llm.add_responder("qa_pairs", qa_responder)
    fake_llm.add_responder("groundedness", marker_judge)  # supports every answer: most pairs pass
    fake_llm.add_responder("duplicate_judge", no_duplicates)
    return fake_llm


def test_pdf_word_and_powerpoint_go_through_the_build_with_their_pages_in_the_evidence(
    tmp_path: Path, llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LABEL_STUDIO_URL", raising=False)  # this build exports the review tasks
    docs, ws = tmp_path / "docs", tmp_path / "ws"
    write_kb(docs)
    run("init", str(ws))
    out = run("build", str(docs), "-w", str(ws), "--export", "--sample-fraction", "1")
    assert "3 documents" in line_of(out, "ingest")

    chunks, pairs = chunks_of(ws), pairs_of(ws)
    cited = {chunks[cid].doc_id for p in pairs.values() for cid in p.chunk_ids}
    assert cited == {"handbook.pdf", "制度.docx", "deck.pptx"}, "every format gave pairs"
    for p in pairs.values():
        for e in p.evidence:
            chunk = chunks[e.chunk_id]
            assert chunk.doc_id == e.doc_id and " ".join(e.quote.split()) in " ".join(chunk.text.split())
            if e.doc_id == "handbook.pdf":
                assert chunk.page is not None and PDF_PAGES[chunk.page - 1][0] in chunk.text
            elif e.doc_id == "deck.pptx":
                title = SLIDES[(chunk.page or 0) - 1]["title"]
                assert chunk.text.startswith(f"# {title}\n\n")
            else:
                assert chunk.page is None
    assert {c.page for c in chunks.values() if c.doc_id == "deck.pptx"} <= {1, 2, 3}
    assert any(p.language == "zh" for p in pairs.values()) and any(p.language == "en" for p in pairs.values())

    tasks = json.loads((ws / "review" / "tasks.json").read_text(encoding="utf-8"))
    assert tasks and {t["data"]["pair_id"] for t in tasks} == {p.id for p in pairs.values() if p.review.sampled}
    seen: set[str] = set()
    for task in tasks:
        pair = pairs[task["data"]["pair_id"]]
        heads = [line for line in task["data"]["evidence"].splitlines() if line.startswith("── ")]
        assert heads == expected_heads(pair, chunks)
        seen.update(h.split(" › ")[0] for h in heads)
    assert any(h.startswith("── handbook.pdf, p. ") for h in seen), seen
    assert any(h.startswith("── deck.pptx, slide ") for h in seen), seen
    assert "── 制度.docx" in seen

    # One PDF page and one slide's notes change: only the pairs citing them are refreshed.
    edited_pages = list(PDF_PAGES)
    edited_pages[1] = ("Expense claims", PDF_PAGES[1][1].replace("fifteen working days", "ten working days"))
    edited_slides = [dict(s) for s in SLIDES]
    edited_slides[0]["notes"] = "Mention the opening of the new office in Marseille during this slide."
    write_kb(docs, edited_pages, edited_slides)
    kb = chunks_of(ws, ".goldset/kb")
    changed = {cid for cid, c in kb.items() if (c.doc_id, c.page) in {("handbook.pdf", 2), ("deck.pptx", 1)}}
    assert len(changed) == 2, "one chunk a page here"
    out = run("build", str(docs), "-w", str(ws), "--export", "--sample-fraction", "1")
    assert "(+0 ~2 -0 chunks)" in line_of(out, "ingest"), line_of(out, "ingest")
    after = pairs_of(ws)
    touched = {pid for pid, p in after.items() if any(t.startswith("refresh:") for t in p.tags) and pid in pairs}
    citing = {pid for pid, p in pairs.items() if set(p.chunk_ids) & changed}
    assert touched == citing and {d for pid in citing for d in pairs[pid].doc_ids} >= {"handbook.pdf", "deck.pptx"}
    for pid in set(pairs) - citing:
        assert after[pid].status == pairs[pid].status and after[pid].evidence == pairs[pid].evidence
    new_kb = chunks_of(ws, ".goldset/kb")
    assert set(new_kb) == set(kb), "no chunk was renamed"
    assert {cid for cid in kb if new_kb[cid].content_hash != kb[cid].content_hash} == changed


def test_the_review_tasks_pushed_to_label_studio_name_the_page_or_slide(
    tmp_path: Path, llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = require_server()
    ls: Any = server.client()
    title = f"formats {uuid.uuid4().hex[:10]}"
    monkeypatch.setenv("GOLDSET_REVIEW__LABEL_STUDIO__PROJECT_TITLE", title)
    docs, ws = tmp_path / "docs", tmp_path / "ws"
    write_kb(docs)
    run("init", str(ws))
    run("build", str(docs), "-w", str(ws), "--sample-fraction", "1")
    pid = project_id(ls, title)
    try:
        chunks, pairs = chunks_of(ws), pairs_of(ws)
        tasks = {k: v[0] for k, v in tasks_by_pair(ls, pid).items()}
        assert tasks and set(tasks) == {p.id for p in pairs.values() if p.review.sampled}
        shown = ""
        for pair_id, task in tasks.items():
            evidence = task.data["evidence"]
            heads = [line for line in evidence.splitlines() if line.startswith("── ")]
            assert heads == expected_heads(pairs[pair_id], chunks)
            shown += evidence
        assert "── handbook.pdf, p. " in shown and "── deck.pptx, slide " in shown
    finally:
        ls.projects.delete(id=pid)

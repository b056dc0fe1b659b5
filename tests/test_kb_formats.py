"""PDF, Word and PowerPoint knowledge bases, on small real files the tests write (tests/helpers/office_docs.py):
text per page with the page on each chunk, headings from the outline or from font sizes, running headers and
footers left out, scanned pages reported, Chinese in reading order; Word headings, lists and tables; one section
per slide with its notes; ids that stay put when another page changes; a missing library named in one warning."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from goldset.kb import KBSettings, chunk_id, ingest, load_chunks, load_snapshot
from goldset.kb.pdf import join_lines
from goldset.schema import Chunk
from goldset.schema.kb import location
from tests.helpers.office_docs import PdfWriter, write_docx, write_pptx

SMALL = KBSettings(target_tokens=20, max_tokens=80, min_tokens=5)  # about one paragraph a chunk

EN_PAGES = [
    [
        ("h1", "Travel policy"),
        ("p", "Employees book business trips through the travel portal at least two weeks before they leave."),
        ("h2", "Booking flights"),
        ("p", "Economy class is the rule for flights under six hours. Longer flights may be in premium economy."),
        ("h4", "Rail travel"),  # 12 pt over an 11 pt body
        ("p", "Trains are preferred over flights for every trip that takes less than four hours by rail."),
    ],
    [
        ("p", "Hotels need approval."),  # the section of page 1 goes on, too small to stand alone: still its own chunk
        ("h2", "Expense claims"),
        ("p", "Expense claims are submitted within fifteen working days after the trip, with the original receipts."),
        ("p", "The manager approves each claim; claims over two thousand euros also need the finance team."),
        ("h1", "Security"),  # at the foot of the page: it travels with its text on the next
    ],
    [
        ("p", "Laptops are locked with a cable in hotels and never left in a car overnight or in checked luggage."),
    ],
]


def write_handbook(path: Path, pages: list[list[tuple[str, str]]] = EN_PAGES, *, outline: bool = False) -> Path:
    pdf = PdfWriter(path, header="ACME Employee Handbook", footer="Page {n} of " + str(len(pages)))
    for items in pages:
        for kind, text in items:
            if kind == "p":
                pdf.para(text)
            else:
                pdf.heading(text, int(kind[1]), outline=outline)
        pdf.page()
    return pdf.save()


def chunks_of(docs: Path, out: Path, settings: KBSettings = SMALL) -> list[Chunk]:
    return ingest(docs, settings=settings, out_dir=out).chunks


def page_of(chunks: list[Chunk], needle: str) -> Chunk:
    found = [c for c in chunks if needle in c.text]
    assert len(found) == 1, (needle, [c.text for c in chunks])
    return found[0]


# ---------------------------------------------------------------------------------------------------------- PDF


def test_a_pdf_is_read_page_by_page_with_its_headings_and_without_its_running_header_and_footer(
    tmp_path: Path,
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    write_handbook(docs / "handbook.pdf")
    chunks = chunks_of(docs, tmp_path / "kb")

    for number, items in enumerate(EN_PAGES, 1):
        for kind, text in items:
            if kind == "p":
                chunk = page_of(chunks, text)
                assert chunk.page == number, (text, chunk.page)
    # no chunk holds text of two pages
    for chunk in chunks:
        pages_in = {n for n, items in enumerate(EN_PAGES, 1) for k, t in items if k == "p" and t in chunk.text}
        assert pages_in == {chunk.page}
    everything = "\n".join(c.text for c in chunks)
    assert "ACME Employee Handbook" not in everything and "Page 2 of 3" not in everything and "of 3" not in everything
    # headings from font sizes: 20 pt is level 1, 15 pt level 2; a chapter goes on across the page break
    assert page_of(chunks, "Economy class").heading_titles == ["Travel policy", "Booking flights"]
    assert page_of(chunks, "Trains are preferred").heading_titles == ["Travel policy", "Booking flights", "Rail travel"]
    hotels = page_of(chunks, "Hotels need approval.")
    assert hotels.heading_titles == ["Travel policy", "Booking flights", "Rail travel"]
    assert hotels.text == "Hotels need approval."
    assert page_of(chunks, "fifteen working days").heading_titles == ["Travel policy", "Expense claims"]
    assert page_of(chunks, "The manager approves").heading_titles == ["Travel policy", "Expense claims"]
    assert page_of(chunks, "Laptops are locked").heading_titles == ["Security"]
    assert page_of(chunks, "Laptops are locked").text.startswith("# Security\n\n")
    assert page_of(chunks, "Laptops are locked").page == 3
    # ids: by page and position on it; offsets into the extracted text
    on_two = sorted((c for c in chunks if c.page == 2), key=lambda c: c.position)
    assert [c.position for c in on_two] == [0, 1, 2]
    assert [c.id for c in on_two] == [chunk_id("handbook.pdf", [], i, page=2) for i in range(3)]
    assert all(c.char_end > c.char_start for c in chunks) and all(c.language == "en" for c in chunks)
    assert on_two[0].location == "handbook.pdf, p. 2" == location("handbook.pdf", 2)
    snap = load_snapshot(out_dir=tmp_path / "kb")
    assert snap is not None and snap.documents[0].encoding == "pdf" and snap.documents[0].title == "Travel policy"
    # the chunks file names the page; re-reading it gives the same chunks
    lines = (tmp_path / "kb" / "chunks.jsonl").read_text(encoding="utf-8").splitlines()
    assert all(json.loads(line)["page"] in (1, 2, 3) for line in lines)
    assert load_chunks(out_dir=tmp_path / "kb") == sorted(chunks, key=lambda c: c.id)


def test_numbered_lines_at_the_page_tops_stay_unless_their_number_follows_the_page(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    pdf = PdfWriter(docs / "steps.pdf", footer="- {n} -")
    for n in range(1, 5):  # two steps a page, the first at the top of the page, in the header's band
        pdf.para(f"Step {2 * n - 1}: open form {2 * n - 1} of the travel portal and fill in every field.")
        pdf.para(f"Step {2 * n}: send form {2 * n - 1} to the manager, who signs it within a day.")
        pdf.page()
    pdf.save()
    chunks = chunks_of(docs, tmp_path / "kb", KBSettings())
    everything = "\n".join(c.text for c in chunks)
    assert all(f"Step {k}:" in everything for k in range(1, 9)), "steps are text, not a running header"
    assert "- 2 -" not in everything and "- 4 -" not in everything, "the page number is a footer"


def test_a_pdf_outline_gives_the_headings_at_its_depths(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    pdf = PdfWriter(docs / "guide.pdf", title="Employee guide")
    # Headings set in the body size: only the outline can tell they are headings.
    pdf.outline("Onboarding", 1)
    pdf.para("Onboarding")
    pdf.para("New employees receive their laptop and badge from the office manager on the first morning.")
    pdf.outline("Accounts", 2)
    pdf.para("Accounts")
    pdf.para("The IT desk creates the email account and the single sign-on login before the first day.")
    pdf.page()
    pdf.outline("Offboarding", 1)  # not printed on its page: a heading at the top of it
    pdf.para("Leavers return the laptop and badge to the office manager on their last working day.")
    pdf.page()
    pdf.save()

    chunks = chunks_of(docs, tmp_path / "kb")
    assert page_of(chunks, "laptop and badge from").heading_titles == ["Onboarding"]
    assert page_of(chunks, "single sign-on").heading_titles == ["Onboarding", "Accounts"]
    leavers = page_of(chunks, "Leavers return")
    assert leavers.heading_titles == ["Offboarding"] and leavers.page == 2
    assert leavers.text.startswith("# Offboarding\n\nLeavers")
    snap = load_snapshot(out_dir=tmp_path / "kb")
    assert snap is not None and snap.documents[0].title == "Employee guide", "the title in the PDF's metadata"


def test_a_chinese_pdf_keeps_its_characters_in_reading_order(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    paragraph = (
        "员工出差结束后，应在十五个工作日内通过报销系统提交申请，并附上全部发票原件和行程单，"
        "由部门经理审批后转交财务部门复核。"
    )
    pdf = PdfWriter(docs / "手册.pdf", chinese=True, header="公司内部资料 注意保密", footer="第 {n} 页")
    pdf.heading("第一章 差旅报销", 1)
    pdf.para(paragraph)  # wrapped over several lines
    pdf.page()
    pdf.heading("第二章 信息安全", 1)
    # Two columns, the right one drawn first; a line drawn glyph by glyph from its end.
    for k, line in enumerate(("右栏第一行：访客须登记。", "右栏第二行：离开时归还门卡。")):
        pdf.at(320, 600 - 16 * k, line)
    for k, line in enumerate(("左栏第一行：电脑须设置密码。", "左栏第二行：离开座位时锁屏。")):
        pdf.at(72, 600 - 16 * k, line)
    pdf.glyphs(72, 500, "重要文件必须存放在加密的共享盘中。", reverse=True)
    pdf.page()
    pdf.heading("第三章 附则", 1)
    pdf.para("本手册由人力资源部负责解释，自发布之日起施行。")
    pdf.page()
    pdf.save()

    chunks = chunks_of(docs, tmp_path / "kb", KBSettings())
    first = page_of(chunks, "员工出差结束后")
    assert paragraph in first.text, "the wrapped lines are joined without a space between two characters"
    assert first.page == 1 and first.heading_titles == ["第一章 差旅报销"] and first.language == "zh"
    second = page_of(chunks, "左栏第一行")
    assert second.page == 2 and second.language == "zh"
    order = [second.text.index(t) for t in ("左栏第一行", "左栏第二行", "右栏第一行", "右栏第二行")]
    assert order == sorted(order), second.text
    assert "重要文件必须存放在加密的共享盘中。" in second.text
    everything = "".join(c.text for c in chunks)
    assert "注意保密" not in everything and "页" not in everything
    assert page_of(chunks, "本手册由人力资源部").location == "手册.pdf, p. 3"


def test_a_pdf_printed_by_chromium_with_its_header_and_footer(tmp_path: Path) -> None:
    """A real producer (Chromium's print to PDF, Skia, subset fonts): its own running header (date, title) and
    footer (URL, "1/3") are left out, headings come from its font sizes, list items (bullets drawn as shapes)
    stay on their own lines."""
    from tests.helpers.chromium import CHROMIUM, FLAGS, HOW_TO

    if not Path(CHROMIUM).exists():
        pytest.fail(f"headless Chromium is missing: {HOW_TO}", pytrace=False)
    rule = (
        "<p>Rule {i}.{j}: claims for trips abroad are submitted within fifteen working days, with the original "
        "receipts, and the manager approves each claim before finance pays it.</p>"
    )
    sections = "".join(
        f"<h2>Section {i}: expenses abroad</h2>"
        + "".join(rule.format(i=i, j=j) for j in range(7))
        + f"<ul><li>Receipts for hotels ({i})</li><li>Receipts for trains and flights ({i})</li></ul>"
        for i in range(1, 6)
    )
    page = tmp_path / "handbook.html"
    page.write_text(f"<html><head><title>ACME Handbook</title></head><body><h1>Employee handbook</h1>{sections}"
                    "</body></html>", encoding="utf-8")  # fmt: skip
    docs = tmp_path / "docs"
    docs.mkdir()
    pdf = docs / "handbook.pdf"
    subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", f"--print-to-pdf={pdf}", page.as_uri()],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    chunks = chunks_of(docs, tmp_path / "kb", KBSettings())
    pages = {c.page for c in chunks}
    assert len(pages) >= 2 and pages == set(range(1, max(pages) + 1))
    everything = "\n".join(c.text for c in chunks)
    assert "ACME Handbook" not in everything and "file://" not in everything and f"1/{max(pages)}" not in everything
    for i in range(1, 6):
        assert f"Receipts for hotels ({i})" in everything and f"Receipts for trains and flights ({i})" in everything
    assert "Receipts for hotels (1)\nReceipts for trains and flights (1)" in everything, "a list item a line"
    assert ") Receipts" not in everything, "list items are not run together"
    first = page_of(chunks, "Rule 1.0:")
    assert first.heading_titles == ["Employee handbook", "Section 1: expenses abroad"] and first.page == 1
    for i in range(1, 6):
        for j in range(7):
            assert f"Rule {i}.{j}: claims for trips abroad are submitted" in everything
    assert all(c.heading_titles[0] == "Employee handbook" for c in chunks)


def test_the_lines_of_a_paragraph_are_joined_as_it_was_written() -> None:
    words = frozenset({"information", "the", "desk"})
    assert join_lines(["Ask the infor-", "mation desk."], words) == "Ask the information desk."
    assert join_lines(["See the operation-", "decorators page."], words) == "See the operation-decorators page."
    assert join_lines(["A soft infor\u00ad", "mation break."]) == "A soft information break."
    assert join_lines(["员工出差后应在十五个", "工作日内提交申请。"]) == "员工出差后应在十五个工作日内提交申请。"
    assert join_lines(["Bring:", "• a passport", "• the ticket"]) == "Bring:\n• a passport\n• the ticket"
    assert join_lines(["Version", "2.0 is out."]) == "Version 2.0 is out."


def test_scanned_pages_without_text_are_reported_not_left_silently_empty(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    pdf = PdfWriter(docs / "mixed.pdf")
    pdf.heading("Visitor rules", 1)
    pdf.para("Visitors sign in at the reception desk and wear their badge visibly at all times.")
    pdf.page()
    pdf.image()
    pdf.page(furniture=False)
    pdf.save()
    scan = PdfWriter(docs / "scan.pdf")
    for _ in range(2):
        scan.image()
        scan.page(furniture=False)
    scan.save()

    result = ingest(docs, settings=SMALL, out_dir=tmp_path / "kb")
    assert {c.page for c in result.chunks} == {1} and {c.doc_id for c in result.chunks} == {"mixed.pdf"}
    snap = result.snapshot
    page_note = next(s for s in snap.skipped if s.startswith("mixed.pdf: "))
    assert page_note.startswith("mixed.pdf: p. 2: no text layer") and "OCR" in page_note
    whole = next(s for s in snap.skipped if s.startswith("scan.pdf: "))
    assert "no text layer on any of its 2 page(s)" in whole and "OCR" in whole
    assert any(w.endswith(page_note) and str(docs) in w for w in result.warnings)
    assert [d.doc_id for d in snap.documents] == ["mixed.pdf"]


def test_broken_and_encrypted_pdfs_are_skipped_with_the_reason(tmp_path: Path) -> None:
    from reportlab.pdfgen import canvas

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "broken.pdf").write_bytes(b"%PDF-1.4\nthis is not really a pdf\n")
    locked = canvas.Canvas(str(docs / "locked.pdf"), encrypt="secret")
    locked.drawString(72, 700, "Salaries are confidential.")
    locked.save()
    (docs / "ok.md").write_text("# Ok\n\nA markdown page is read as before.\n", encoding="utf-8")

    result = ingest(docs, settings=SMALL, out_dir=tmp_path / "kb")
    reasons = dict(s.split(": ", 1) for s in result.snapshot.skipped)
    assert reasons["broken.pdf"].startswith("not a readable PDF") and reasons["broken.pdf"].endswith("skipped")
    assert reasons["locked.pdf"].startswith("encrypted PDF")
    assert [c.doc_id for c in result.chunks] == ["ok.md"]


def test_changing_one_page_of_a_pdf_changes_only_its_chunks(tmp_path: Path) -> None:
    docs, out = tmp_path / "docs", tmp_path / "kb"
    docs.mkdir()
    write_handbook(docs / "handbook.pdf")
    before = {c.id: c for c in chunks_of(docs, out)}
    data = (out / "chunks.jsonl").read_bytes()
    again = ingest(docs, settings=SMALL, out_dir=out)
    assert not again.changed and (out / "chunks.jsonl").read_bytes() == data, "a re-ingest rewrites the same bytes"

    edited = [list(items) for items in EN_PAGES]
    edited[1][2] = ("p", "Expense claims are submitted within ten working days after the trip, with the receipts.")
    edited[1].insert(4, ("p", "Claims in another currency are converted at the rate of the day of payment."))
    edited[0][0] = ("h1", "Travel rules")  # a retitled chapter renames no chunk on the pages after it
    write_handbook(docs / "handbook.pdf", edited)
    result = ingest(docs, settings=SMALL, out_dir=out)
    after = {c.id: c for c in result.chunks}
    diff = result.diff
    at = {(c.page, c.position): i for i, c in before.items()}
    assert sorted(at) == [(1, 0), (1, 1), (1, 2), (2, 0), (2, 1), (2, 2), (3, 0)]
    assert sorted(diff.chunks_changed) == sorted([at[1, 0], at[2, 1]]), "the retitled chapter, the edited claim"
    assert [(after[i].page, after[i].position) for i in diff.chunks_added] == [(2, 3)] and not diff.chunks_removed
    assert sorted(diff.chunks_unchanged) == sorted([at[1, 1], at[1, 2], at[2, 0], at[2, 2], at[3, 0]])
    assert after[at[2, 2]].heading_titles == ["Travel rules", "Expense claims"], "same id and text, new path"


# --------------------------------------------------------------------------------------------------------- Word


HANDBOOK_DOCX = [
    ("title", "Travel policy"),
    ("p", "This policy explains how employees of ACME travel for work and how they are reimbursed."),
    ("h1", "Booking"),
    ("p", "Flights are booked through the travel portal at least two weeks before the trip."),
    ("bullets", ["Economy class for flights under six hours", "Premium economy for longer flights"]),
    ("numbers", ["Open the travel portal", "Choose the flight", "Submit the request to your manager"]),
    ("h2", "Daily allowances"),
    ("table", [["City", "Daily allowance"], ["Berlin", "45 EUR"], ["Shanghai", "300 CNY"]]),
    ("h1", "Expenses"),
    ("p", "Receipts are uploaded within fifteen working days; the manager approves each claim."),
]


def test_word_headings_are_the_heading_path_and_lists_and_tables_are_kept(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    write_docx(docs / "policy.docx", HANDBOOK_DOCX, title="ACME travel policy")
    chunks = chunks_of(docs, tmp_path / "kb", KBSettings(target_tokens=30, max_tokens=80, min_tokens=5))

    lists = page_of(chunks, "Economy class")
    assert lists.heading_titles == ["Booking"] and lists.page is None
    assert "- Economy class for flights under six hours\n- Premium economy for longer flights" in lists.text
    numbered = page_of(chunks, "Open the travel portal")
    assert "1. Open the travel portal\n2. Choose the flight\n3. Submit the request to your manager" in numbered.text
    table = page_of(chunks, "Berlin")
    assert table.heading_titles == ["Booking", "Daily allowances"]
    assert "| City | Daily allowance |\n| Berlin | 45 EUR |\n| Shanghai | 300 CNY |" in table.text
    assert page_of(chunks, "Receipts are uploaded").heading_titles == ["Expenses"]
    for c in chunks:  # named like Markdown chunks: document, heading path, position
        assert c.id == chunk_id("policy.docx", c.heading_path, c.position) and c.location == "policy.docx"
    snap = load_snapshot(out_dir=tmp_path / "kb")
    assert snap is not None and snap.documents[0].title == "ACME travel policy"
    assert all("page" not in json.loads(line) for line in (tmp_path / "kb" / "chunks.jsonl").read_text().splitlines())


def test_a_chinese_word_file_and_an_edited_section(tmp_path: Path) -> None:
    docs, out = tmp_path / "docs", tmp_path / "kb"
    docs.mkdir()
    items = [
        ("h1", "第一章 总则"),
        ("p", "为规范公司差旅管理，节约费用开支，特制定本制度。本制度适用于公司全体员工。"),
        ("h1", "第二章 报销"),
        ("p", "员工应在出差结束后十五个工作日内提交报销申请，并附上发票原件。"),
        ("bullets", ["住宿费按城市标准报销", "交通费凭票据实报销"]),
        ("h1", "第三章 附则"),
        ("p", "本制度由财务部负责解释，自发布之日起施行。"),
    ]
    write_docx(docs / "制度.docx", items)
    settings = KBSettings(target_tokens=80, max_tokens=160, min_tokens=5)  # a CJK character is a token
    before = {c.id: c for c in chunks_of(docs, out, settings)}
    assert {c.language for c in before.values()} == {"zh"}
    report = page_of(list(before.values()), "十五个工作日")
    assert report.heading_titles == ["第二章 报销"] and "- 住宿费按城市标准报销\n- 交通费凭票据实报销" in report.text

    items[3] = ("p", "员工应在出差结束后十个工作日内提交报销申请，并附上发票原件。")
    write_docx(docs / "制度.docx", items)
    result = ingest(docs, settings=settings, out_dir=out)
    assert result.diff.chunks_changed == [report.id]
    assert not result.diff.chunks_added and not result.diff.chunks_removed


# --------------------------------------------------------------------------------------------------- PowerPoint


DECK = [
    {
        "title": "Quarterly results",
        "bullets": ["Revenue grew by twelve percent over the quarter", ("Costs stayed flat in every region", 1)],
        "notes": "Mention the new office in Lyon when presenting this slide.",
    },
    {"title": "Regional figures", "table": [["Region", "Revenue"], ["North", "1.2 million"], ["South", "0.8 million"]]},
    {"title": None, "text": "An untitled slide that holds only a text box about hiring plans."},
    {"title": "下季度计划", "bullets": ["在上海开设新的办公室", "招聘二十名工程师"], "notes": "强调招聘进度。"},
]


def test_each_slide_is_a_section_with_its_title_and_notes(tmp_path: Path) -> None:
    docs, out = tmp_path / "docs", tmp_path / "kb"
    docs.mkdir()
    write_pptx(docs / "deck.pptx", DECK)
    chunks = chunks_of(docs, out, KBSettings())
    assert sorted(c.page for c in chunks) == [1, 2, 3, 4], "one chunk per slide, each with its slide number"
    first = page_of(chunks, "Revenue grew")
    assert first.heading_titles == ["Quarterly results"] and first.text.startswith("# Quarterly results\n\n")
    assert "Revenue grew by twelve percent over the quarter\n  Costs stayed flat in every region" in first.text
    assert "Notes: Mention the new office in Lyon" in first.text
    second = page_of(chunks, "North")
    assert "| Region | Revenue |\n| North | 1.2 million |" in second.text and second.location == "deck.pptx, slide 2"
    untitled = page_of(chunks, "hiring plans")
    assert untitled.heading_titles == ["Slide 3"] and untitled.page == 3
    chinese = page_of(chunks, "上海")
    assert chinese.language == "zh" and "Notes: 强调招聘进度。" in chinese.text and chinese.page == 4

    DECK[1]["table"] = [["Region", "Revenue"], ["North", "1.3 million"], ["South", "0.8 million"]]
    try:
        write_pptx(docs / "deck.pptx", DECK)
    finally:
        DECK[1]["table"] = [["Region", "Revenue"], ["North", "1.2 million"], ["South", "0.8 million"]]
    result = ingest(docs, out_dir=out)
    assert result.diff.chunks_changed == [second.id] and len(result.diff.chunks_unchanged) == 3


# ------------------------------------------------------------------------------------------------------ missing


def test_a_missing_library_skips_its_files_with_a_warning_naming_the_extra(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    write_handbook(docs / "handbook.pdf")
    write_docx(docs / "policy.docx", HANDBOOK_DOCX)
    write_pptx(docs / "deck.pptx", DECK[:1])
    (docs / "readme.md").write_text("# Readme\n\nThe markdown file is still read.\n", encoding="utf-8")
    ws = tmp_path / "ws"
    code = (
        "import sys\n"
        "for name in ('pdfminer', 'docx', 'pptx'):\n"
        "    sys.modules[name] = None  # as if the extra were not installed\n"
        "from goldset.cli import main\n"
        f"sys.argv = ['goldset', 'ingest', {str(docs)!r}, '-w', {str(ws)!r}]\n"
        "main()\n"
    )
    subprocess.run([sys.executable, "-m", "goldset", "init", str(ws)], check=True, capture_output=True)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning: ")]
    expected = {
        "handbook.pdf": "PDF files need the pdf extra (pip install 'goldset[pdf]'); skipped",
        "policy.docx": "Word files need the docx extra (pip install 'goldset[docx]'); skipped",
        "deck.pptx": "PowerPoint files need the pptx extra (pip install 'goldset[pptx]'); skipped",
    }
    for name, reason in expected.items():
        assert f"warning: {docs / name}: {reason}" in warnings, done.stderr
    assert "1 documents" in done.stdout and "3 skipped" in done.stdout


@pytest.mark.parametrize("name", ["not-a-deck.pptx", "not-a-letter.docx"])
def test_a_file_that_is_not_what_its_suffix_says_is_skipped(tmp_path: Path, name: str) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / name).write_bytes(b"PK\x03\x04 not really a zip archive")
    (docs / "ok.txt").write_text("A text file is read.\n", encoding="utf-8")
    result = ingest(docs, out_dir=tmp_path / "kb")
    reason = next(s for s in result.snapshot.skipped if s.startswith(name))
    assert "not a readable" in reason and reason.endswith("skipped")

"""Benchmark: PDF, Word and PowerPoint knowledge bases against the same text as Markdown, side by side.

The FastAPI tutorial pages (English and Chinese, 0.141.1, ``../shared/kb``) are written out as PDF (reportlab:
headings in larger type, a running header and a page-number footer on every page; Chinese in STSong-Light), as
Word files (python-docx: heading styles, paragraphs, bulleted lists, tables) and as one deck per page
(python-pptx: a slide per section, its paragraphs as bullets), with the writers of tests/helpers/office_docs.py.
Each folder is ingested like the Markdown folder it came from.

Figures per format and language: files, pages or slides, MB, chunks, ingest wall time (median of RUNS cold
ingests), seconds per MB and the ratio to the Markdown ingest of the same pages; and what came through: the share
of the source paragraphs found whole in the chunks (whitespace aside), the share of the source headings found in
the chunks as headings (a ``#`` line: a heading detected as one), and chunks that still hold the running header
(0 but for one-page PDFs, where nothing repeats to tell a header from text).

Run: ``.venv/bin/python benchmarks/bench_formats.py`` (writes the ``## kb: PDF, Word and PowerPoint`` section).
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _results import machine, write_section

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from goldset.kb import KBSettings, ingest  # noqa: E402
from goldset.kb.markdown import parse_markdown  # noqa: E402
from goldset.kb.pdf import MIN_REPEATS  # noqa: E402
from goldset.schema import Chunk  # noqa: E402
from tests.helpers.office_docs import PdfWriter, write_docx, write_pptx  # noqa: E402

KB = ROOT.parent / "shared" / "kb"
SECTION = "## kb: PDF, Word and PowerPoint"
FOLDERS = {"en": "fastapi-en-0.141.1", "zh": "fastapi-zh-0.141.1"}
PAGES_PER_LANGUAGE = 20  # the first pages of the tutorial, by path (PDF extraction is the slow part)
RUNS = 3
HEADER = {"en": "FastAPI tutorial (internal copy)", "zh": "FastAPI 教程（内部副本）"}
FOOTER = {"en": "Page {n}", "zh": "第 {n} 页"}
MIN_PARAGRAPH = 40  # characters: shorter source paragraphs are not counted in the recovered share


Section = tuple[int, str, list[tuple[str, str]]]  # (level, title, [(kind, text)])


def printable(text: str, lang: str) -> str:
    """What the PDF fonts can set: Helvetica's Windows-1252 for English, the Basic Multilingual Plane for Chinese
    (no emoji). Every format gets this text, so they are compared on the same words."""
    if lang == "en":
        return "".join(c for c in text if c in "\n\t" or c.encode("cp1252", "ignore"))
    return "".join(c for c in text if ord(c) < 0x10000)


def sections(text: str, lang: str) -> list[Section]:
    """A Markdown page as (heading level, title, its blocks) with the text goldset's Markdown reader gives."""
    out: list[Section] = [(0, "", [])]
    for block in parse_markdown(text).blocks:
        if block.kind == "heading":
            out.append((block.level, printable(block.title, lang).strip(), []))
        elif block.text.strip():
            out[-1][2].append((block.kind, printable(block.text, lang)))
    return [s for s in out if s[1] or s[2]]


def list_items(text: str) -> list[str] | None:
    lines = text.split("\n")
    if all(line.lstrip().startswith(("- ", "* ")) for line in lines):
        return [line.lstrip()[2:] for line in lines]
    return None


def table_rows(text: str) -> list[list[str]]:
    rows = []
    for line in text.split("\n"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and not all(set(c) <= set("-: ") for c in cells):
            rows.append(cells)
    width = max(len(r) for r in rows) if rows else 0
    return [r + [""] * (width - len(r)) for r in rows]


def paragraphs_of(page: list[Section]) -> list[str]:
    """The source paragraphs the extracted text is checked against: prose (lists item by item), not code/tables."""
    out: list[str] = []
    for _, _, blocks in page:
        for kind, text in blocks:
            if kind != "text":
                continue
            out += list_items(text) or [" ".join(text.split())]
    return [p for p in out if len(p) >= MIN_PARAGRAPH]


def write_pdf(path: Path, page: list[Section], lang: str) -> int:
    pdf = PdfWriter(path, chinese=lang == "zh", header=HEADER[lang], footer=FOOTER[lang])
    for level, title, blocks in page:
        if title:
            pdf.heading(title, min(level, 3))
        for kind, text in blocks:
            if kind == "table":
                for row in table_rows(text):
                    pdf.para(" | ".join(row))
            elif kind == "code":
                for line in text.split("\n"):
                    if line.strip():
                        pdf.para(line)
            else:
                for item in list_items(text) or [" ".join(text.split())]:
                    pdf.para(item)
    pdf.page()
    pdf.save()
    return pdf.pages


def write_word(path: Path, page: list[Section], lang: str) -> int:
    items: list[tuple[str, Any]] = []
    for level, title, blocks in page:
        if title:
            items.append((f"h{min(level, 3)}", title))
        for kind, text in blocks:
            if kind == "table":
                rows = table_rows(text)
                if rows:
                    items.append(("table", rows))
            elif kind == "code":
                items.append(("p", text))
            else:
                bullets = list_items(text)
                items.append(("bullets", bullets) if bullets else ("p", " ".join(text.split())))
    write_docx(path, items)
    return 0


def write_slides(path: Path, page: list[Section], lang: str) -> int:
    slides = []
    for _, title, blocks in page:
        bullets: list[str] = []
        table = None
        for kind, text in blocks:
            if kind == "table" and table is None and table_rows(text):
                table = table_rows(text)
            elif kind == "text":
                bullets += list_items(text) or [" ".join(text.split())]
        if title or bullets:
            slides.append({"title": title or None, "bullets": bullets, "table": table})
    write_pptx(path, slides)
    return len(slides)


WRITERS: dict[str, tuple[str, Callable[[Path, list[Section], str], int]]] = {
    "pdf": (".pdf", write_pdf),
    "docx": (".docx", write_word),
    "pptx": (".pptx", write_slides),
}


def squash(text: str) -> str:
    return "".join(text.split()).casefold()


def timed_ingest(docs: Path, settings: KBSettings) -> tuple[float, list[Chunk], list[str]]:
    times, chunks, skipped = [], [], []
    for _ in range(RUNS):
        out = Path(tempfile.mkdtemp(prefix="bench-formats-"))
        try:
            t0 = time.perf_counter()
            result = ingest(docs, settings=settings, out_dir=out)
            times.append(time.perf_counter() - t0)
            chunks, skipped = result.chunks, result.snapshot.skipped
        finally:
            shutil.rmtree(out)
    return statistics.median(times), chunks, skipped


def bench_language(lang: str, work: Path, settings: KBSettings) -> list[dict[str, Any]]:
    source = KB / FOLDERS[lang]
    files = sorted(source.rglob("*.md"))[:PAGES_PER_LANGUAGE]
    pages = {f.relative_to(source).with_suffix("").as_posix(): sections(f.read_text(encoding="utf-8"), lang)
             for f in files}  # fmt: skip
    md_dir = work / lang / "md"
    for f in files:
        target = md_dir / f.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(printable(f.read_text(encoding="utf-8"), lang), encoding="utf-8")
    md_seconds, md_chunks, _ = timed_ingest(md_dir, settings)
    md_bytes = sum(f.stat().st_size for f in files)
    rows = [{"format": "Markdown (reference)", "lang": lang, "files": len(files), "units": "", "bytes": md_bytes,
             "one_page": set(),
             "chunks": len(md_chunks), "seconds": md_seconds, "ratio": 1.0, **recovered(pages, md_chunks, lang)}]
    for fmt, (suffix, write) in WRITERS.items():
        folder = work / lang / fmt
        units: Any = 0
        one_page = set()
        for name, page in pages.items():
            path = folder / (name + suffix)
            path.parent.mkdir(parents=True, exist_ok=True)
            n = write(path, page, lang)
            units += n
            if fmt == "pdf" and n < MIN_REPEATS:
                one_page.add(path.relative_to(folder).as_posix())
        n_bytes = sum(p.stat().st_size for p in folder.rglob(f"*{suffix}"))
        seconds, chunks, skipped = timed_ingest(folder, settings)
        if skipped:
            sys.exit(f"{lang} {fmt}: {len(skipped)} left out, e.g. {skipped[0]}")
        if fmt == "pptx":
            units = len({(c.doc_id, c.page) for c in chunks})
        elif fmt == "docx":
            units = "–"  # a Word file has no pages until it is laid out
        rows.append({"format": fmt, "lang": lang, "files": len(files), "units": units, "bytes": n_bytes,
                     "chunks": len(chunks), "seconds": seconds, "ratio": seconds / md_seconds, "one_page": one_page,
                     **recovered(pages, chunks, lang)})  # fmt: skip
    return rows


def recovered(pages: dict[str, list[Section]], chunks: list[Chunk], lang: str) -> dict[str, Any]:
    by_doc: dict[str, list[Chunk]] = {}
    for c in sorted(chunks, key=lambda c: c.char_start):  # in document order: a paragraph may go on on the next page
        by_doc.setdefault(c.doc_id.rsplit(".", 1)[0], []).append(c)
    found = total = heads_found = heads = 0
    extra: set[str] = set()
    for name, page in pages.items():
        doc_chunks = by_doc.get(name, [])
        text = squash("".join(c.text for c in doc_chunks))
        titles = {line.lstrip("#").strip() for c in doc_chunks for line in c.text.split("\n") if line.startswith("#")}
        for p in paragraphs_of(page):
            total += 1
            found += squash(p) in text
        for level, title, _ in page:
            if title and level <= 3:
                heads += 1
                heads_found += title in titles
        source_titles = {" ".join(title.split()) for _, title, _ in page}
        extra |= {" ".join(t.split()) for t in titles} - source_titles
    header = squash(HEADER[lang])
    leaked = [c for c in chunks if header in squash(c.text)]
    return {"paragraphs": found / total if total else 0.0, "n_paragraphs": total,
            "headings": heads_found / heads if heads else 0.0, "n_headings": heads, "extra": extra,
            "leaks": len(leaked), "leaked_docs": {c.doc_id for c in leaked}}  # fmt: skip


def per_page(row: dict[str, Any]) -> str:
    units = row["units"]
    return f"{1000 * row['seconds'] / units:.0f}" if isinstance(units, int) and units else "–"


def main() -> None:
    if not KB.is_dir():
        sys.exit(f"{KB}: the shared FastAPI docs are not there")
    settings = KBSettings()
    work = Path(tempfile.mkdtemp(prefix="bench-formats-src-"))
    try:
        rows = [row for lang in FOLDERS for row in bench_language(lang, work, settings)]
    finally:
        shutil.rmtree(work)
    import docx
    import pdfminer
    import pptx

    versions = f"pdfminer.six {pdfminer.__version__}, python-docx {docx.__version__}, python-pptx {pptx.__version__}"
    lines = [
        SECTION,
        f"Machine: {machine()}; load average {os.getloadavg()[0]:.2f} (shared machine: times vary with load). "
        f"Script: `benchmarks/bench_formats.py`; {versions}.",
        "",
        f"The first {PAGES_PER_LANGUAGE} FastAPI tutorial pages (by path) of each language, written as PDF (A4, "
        "running header and page-number footer), as Word files and as decks (a slide per section), ingested with "
        f"the default settings (target {settings.target_tokens}, max {settings.max_tokens}, min "
        f"{settings.min_tokens} tokens). Time: median of {RUNS} cold ingests (read, extract, chunk, write). "
        "Paragraphs: source prose paragraphs (list items one by one, at least "
        f"{MIN_PARAGRAPH} characters) found whole in the chunks of their document, whitespace aside (a paragraph "
        "cut by a page break counts when its two halves follow each other); headings: source headings (levels 1-3) "
        "found as heading lines in the chunks; not headings: heading lines that are no source heading (PowerPoint: "
        "the `Slide N` of an untitled slide); header leaks: chunks holding the running header (a PDF shorter "
        f"than {MIN_REPEATS} pages keeps it: too few pages repeat it to tell it from text). Text the PDF fonts "
        "cannot set (emoji; for English, anything outside Windows-1252) is left out of every format alike.",
        "",
        "| format | lang | files | pages / slides | MB | chunks | ingest | s per MB | ms per page | × Markdown | "
        "paragraphs | headings | not headings | header leaks |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        mb = r["bytes"] / 1e6
        lines.append(
            f"| {r['format']} | {r['lang']} | {r['files']} | {r['units']} | {mb:.2f} | {r['chunks']} | "
            f"{r['seconds']:.2f} s | {r['seconds'] / mb:.2f} | {per_page(r)} | {r['ratio']:.1f} | "
            f"{r['paragraphs']:.1%} of {r['n_paragraphs']} | {r['headings']:.1%} of {r['n_headings']} | "
            f"{len(r['extra'])} | {r['leaks']} |"
        )
    extra = sorted({t for r in rows for t in r["extra"] if not (r["format"] == "pptx" and t.startswith("Slide "))})
    pdfs = [r for r in rows if r["format"] == "pdf"]
    leaked = sum(len(r["leaked_docs"]) for r in pdfs)
    in_one_page = all(r["leaked_docs"] <= r["one_page"] for r in pdfs)
    lines += [
        "",
        "A PDF gives more chunks than the Markdown it came from, and a deck one per slide: a chunk never spans two "
        f"pages or slides. Heading lines that are no source heading: {', '.join(f'`{t}`' for t in extra) or 'none'} "
        "(a `#` comment line of a code block is one, in Markdown too). The header leaked in "
        f"{leaked} PDF(s), {'all' if in_one_page else 'NOT all'} of them shorter than {MIN_REPEATS} pages "
        f"({sum(len(r['one_page']) for r in pdfs)} such PDFs in all).",
    ]
    text = "\n".join(lines)
    print(text)
    write_section(text)


if __name__ == "__main__":
    main()

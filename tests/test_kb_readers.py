"""Readers: formats (HTML, reStructuredText, plain text), encodings and every kind of bad file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from goldset.kb import KBSettings, chunk_document, ingest
from goldset.kb.decoding import SkipFile, decode
from goldset.kb.discovery import discover
from goldset.kb.html import parse_html
from goldset.kb.rst import parse_rst

FIXTURES = Path(__file__).parent / "fixtures" / "kb"

HTML = """<!DOCTYPE html>
<html><head><title>Widget guide</title><style>p { color: red; }</style><script>var x = "<p>no</p>";</script></head>
<body>
<h1 id="widgets">Widgets</h1>
<p>A <b>widget</b> turns &amp; spins.<br>It is <a href="https://example.com/w">documented here</a>.</p>
<h2 id="install">Installing</h2>
<p>Run the installer first.</p>
<pre><code>pip install widget
widget --init</code></pre>
<table><tr><th>Name</th><th>Size</th></tr><tr><td>small</td><td>1</td></tr></table>
<h2>No anchor here</h2>
<ul><li>First point</li><li>Second point</li></ul>
</body></html>
"""

RST = """.. _intro-label:

=====
Intro
=====

Widgets are small. See :ref:`the setup <setup>` and `the site <https://example.com>`_.

.. note::

   This note's text is content.

Usage
-----

Call it like this::

    widget.run(fast=True)
    widget.stop()

.. code-block:: python

   import widget

.. image:: picture.png
   :alt: not content

=====  =====
Name   Size
=====  =====
small  1
=====  =====
"""


def test_html_headings_code_tables_and_text() -> None:
    doc = parse_html(HTML)
    assert doc.title == "Widget guide"
    kinds = [b.kind for b in doc.blocks]
    assert kinds.count("heading") == 3 and "code" in kinds and "table" in kinds
    headings = [(b.level, b.title, b.anchor) for b in doc.blocks if b.kind == "heading"]
    assert headings == [(1, "Widgets", "widgets"), (2, "Installing", "install"), (2, "No anchor here", "")]
    chunks = chunk_document(HTML, "guide.html", KBSettings(target_tokens=20, max_tokens=40, min_tokens=1))
    text = "\n".join(c.text for c in chunks)
    assert "A widget turns & spins." in text and "documented here" in text
    assert "<b>" not in text and "color: red" not in text and "var x" not in text
    assert "pip install widget\nwidget --init" in text  # <pre> kept verbatim
    assert "| small | 1 |" in text
    paths = {tuple(c.heading_path) for c in chunks}
    assert ("widgets", "install") in paths and ("widgets", "No anchor here") in paths
    for c in chunks:  # spans point into the HTML source
        assert 0 <= c.char_start < c.char_end <= len(HTML)


def test_html_anchors_from_sections_and_links_and_no_permalink_signs() -> None:
    page = (
        '<section id="intro"><h1>Intro<a class="headerlink" href="#intro">¶</a></h1><p>Text <em>here</em>.</p>'
        '<section id="sub-part"><h2>Sub <code>part</code></h2><p>More.</p></section></section>'
        '<a name="old"></a><h2>Old style</h2><p>x</p><a id="far"></a><p>between</p><h2>No anchor</h2>'
    )
    headings = [(b.title, b.anchor) for b in parse_html(page).blocks if b.kind == "heading"]
    assert headings == [("Intro", "intro"), ("Sub part", "sub-part"), ("Old style", "old"), ("No anchor", "")]


def test_rst_headings_anchors_literal_blocks_and_directives() -> None:
    doc = parse_rst(RST)
    headings = [(b.level, b.title, b.anchor) for b in doc.blocks if b.kind == "heading"]
    assert headings == [(1, "Intro", "intro-label"), (2, "Usage", "")]
    codes = [b.text for b in doc.blocks if b.kind == "code"]
    assert "widget.run(fast=True)\nwidget.stop()" in codes
    assert "import widget" in codes
    text = "\n".join(b.text for b in doc.blocks)
    assert "This note's text is content." in text
    assert ".. note" not in text and "picture.png" not in text and ":alt:" not in text
    assert "the setup" in text and "<setup>" not in text and "the site" in text
    assert any(b.kind == "table" and "small  1" in b.text for b in doc.blocks)
    chunks = chunk_document(RST, "intro.rst")
    assert chunks[0].heading_path[0] == "intro-label"


def test_plain_text_is_paragraphs() -> None:
    text = "First paragraph line one.\nline two.\n\n\nSecond paragraph.\n"
    chunks = chunk_document(text, "notes.txt", KBSettings(target_tokens=3, max_tokens=6, min_tokens=0))
    assert [c.text for c in chunks] == ["First paragraph line one.\nline two.", "Second paragraph."]
    assert all(c.heading_path == [] and c.doc_title == "notes" for c in chunks)
    assert len({c.id for c in chunks}) == 2


# ------------------------------------------------------------------------------------------------ encodings


def test_a_small_tail_of_a_cut_paragraph_joins_the_piece_before() -> None:
    text = "# T\n\n" + "一二三四五六七八九十" * 5 + "\n"
    chunks = chunk_document(text, "t.md", KBSettings(target_tokens=20, max_tokens=30, min_tokens=8))
    sizes = [c.n_tokens for c in chunks]
    assert sum(sizes) == 51 and all(8 <= n <= 30 for n in sizes), sizes


def test_gb18030_is_tried_after_utf8_and_named() -> None:
    text = "# 标题\n\n这是中文文档。\n"
    decoded, encoding = decode(text.encode("gbk"))
    assert decoded == text and encoding == "gb18030"
    assert decode(text.encode("utf-8")) == (text, "utf-8")
    assert decode(b"\xef\xbb\xbf" + text.encode("utf-8")) == (text, "utf-8")  # BOM dropped
    assert decode(text.encode("utf-16")) == (text, "utf-16")


def test_binary_and_undecodable_bytes_are_skipped_with_a_reason() -> None:
    with pytest.raises(SkipFile, match="binary"):
        decode(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(SkipFile, match="not UTF-8 or GB18030"):
        decode(b"caf\xe9 au lait \xff\xfe\xfd")


def _kb(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.md").write_text("# Good\n\nSome real content here.\n", encoding="utf-8")
    return docs


def test_bad_files_are_skipped_and_named_good_ones_ingested(tmp_path: Path) -> None:
    docs = _kb(tmp_path)
    (docs / "chinese-gbk.md").write_bytes("# 中文\n\n用 GBK 编码的文档。\n".encode("gbk"))
    (docs / "image.md").write_bytes(b"\x89PNG\x00\x00binary")
    (docs / "empty.md").write_bytes(b"")
    (docs / "blank.txt").write_text("  \n\n \n", encoding="utf-8")
    (docs / "latin1.md").write_bytes(b"caf\xe9 \xff\xfe\xfd")
    (docs / "huge.md").write_text("# Big\n\n" + "word " * 400, encoding="utf-8")
    (docs / "only-markup.md").write_text("{* ../../docs_src/x.py hl[3] *}\n\n/// note\n\n///\n", encoding="utf-8")
    (docs / "picture.png").write_bytes(b"\x89PNG")
    (docs / ".hidden.md").write_text("# Hidden\n\nnot read\n", encoding="utf-8")
    (docs / ".git").mkdir()
    (docs / ".git" / "x.md").write_text("# no\n", encoding="utf-8")
    result = ingest(docs, settings=KBSettings(max_file_bytes=1000), out_dir=tmp_path / "out")
    ids = sorted(d.doc_id for d in result.snapshot.documents)
    assert ids == ["chinese-gbk.md", "good.md"]
    gbk = next(d for d in result.snapshot.documents if d.doc_id == "chinese-gbk.md")
    assert gbk.encoding == "gb18030" and gbk.language == "zh"
    warnings = "\n".join(result.warnings)
    assert "chinese-gbk.md: not UTF-8; decoded as GB18030" in warnings
    reasons = {line.split(": ", 1)[0]: line for line in result.snapshot.skipped}
    assert set(reasons) == {"image.md", "empty.md", "blank.txt", "latin1.md", "huge.md", "only-markup.md"}
    assert "binary" in reasons["image.md"]
    assert "empty file" in reasons["empty.md"] and "empty file" in reasons["blank.txt"]
    assert "not UTF-8 or GB18030" in reasons["latin1.md"]
    assert "kb.max_file_bytes" in reasons["huge.md"]
    assert "no text left" in reasons["only-markup.md"]
    for name in reasons:  # every skipped file is named in a warning line
        assert sum(name in line for line in result.warnings) == 1
    assert ".png ×1" in warnings
    assert "hidden" not in warnings.lower()


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="platform without symlinks")
def test_symlink_loops_broken_links_and_duplicates_are_reported(tmp_path: Path) -> None:
    docs = _kb(tmp_path)
    sub = docs / "sub"
    sub.mkdir()
    (sub / "page.md").write_text("# Page\n\nText.\n", encoding="utf-8")
    (sub / "loop").symlink_to(docs, target_is_directory=True)  # sub/loop → docs: a loop
    (docs / "self").symlink_to("self")  # a link to itself
    (docs / "dangling.md").symlink_to(tmp_path / "missing.md")
    (docs / "alias.md").symlink_to(docs / "good.md")  # a second path to good.md
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "ext.md").write_text("# External\n\nLinked in from elsewhere.\n", encoding="utf-8")
    (docs / "linked").symlink_to(outside, target_is_directory=True)
    found = discover(docs, KBSettings())
    assert [f.doc_id for f in found.files] == ["good.md", "linked/ext.md", "sub/page.md"]
    reasons = dict(found.skipped)
    assert "symlink loop" in reasons["sub/loop"]
    assert "symlink loop" in reasons["self"]
    assert "broken symlink" in reasons["dangling.md"]
    assert reasons["alias.md"] == "same file as good.md (symlink); skipped"  # the real path is kept


def test_include_and_exclude_globs(tmp_path: Path) -> None:
    docs = _kb(tmp_path)
    (docs / "drafts").mkdir()
    (docs / "drafts" / "wip.md").write_text("# WIP\n\nNot yet.\n", encoding="utf-8")
    (docs / "notes.txt").write_text("Plain notes.\n", encoding="utf-8")
    only_md = discover(docs, KBSettings(include=["*.md"], exclude=["drafts/*"]))
    assert [f.doc_id for f in only_md.files] == ["good.md"]
    everything = discover(docs, KBSettings())
    assert [f.doc_id for f in everything.files] == ["drafts/wip.md", "good.md", "notes.txt"]


def test_doc_ids_are_posix_paths_relative_to_the_root(tmp_path: Path) -> None:
    result = ingest(FIXTURES / "zh", settings=KBSettings(), out_dir=tmp_path / "out")
    assert sorted(d.doc_id for d in result.snapshot.documents) == ["body.md", "metadata.md", "query-params.md"]
    nested = ingest(FIXTURES, settings=KBSettings(exclude=["*.txt", "README.md"]), out_dir=tmp_path / "o2")
    ids = {d.doc_id for d in nested.snapshot.documents}
    assert "zh/body.md" in ids and "en-0.120.0/cookie-params.md" in ids
    assert all("\\" not in i and not i.startswith("/") for i in ids)

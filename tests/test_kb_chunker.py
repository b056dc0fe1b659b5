"""The chunker on real FastAPI pages (tests/fixtures/kb, MIT) and on small hand-written documents."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from goldset.kb import KBSettings, chunk_document, chunk_id, content_hash
from goldset.kb.chunker import OVERSIZED, SPLIT
from goldset.text import count_tokens

FIXTURES = Path(__file__).parent / "fixtures" / "kb"
EN = FIXTURES / "en"
ZH = FIXTURES / "zh"


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _fence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every fenced code block of a Markdown text, fences included."""
    return [m.span() for m in re.finditer(r"^```[^\n]*\n.*?\n```", text, flags=re.DOTALL | re.MULTILINE)]


def _assert_whole(spans: list[tuple[int, int]], chunks: list) -> None:
    """Each span lies inside exactly one chunk's span and only partly inside none."""
    for start, end in spans:
        inside = [c for c in chunks if c.char_start <= start and end <= c.char_end]
        partly = [c for c in chunks if c.char_start < end and start < c.char_end and c not in inside]
        assert len(inside) == 1 and not partly, (start, end)


# ------------------------------------------------------------------------------------------------- ids


def test_ids_are_derived_from_doc_heading_path_and_position() -> None:
    chunks = chunk_document(_read(EN / "body.md"), "body.md")
    assert chunks, "body.md must give chunks"
    for c in chunks:
        assert c.id == chunk_id("body.md", c.heading_path, c.position)
        assert c.id.startswith("c-") and len(c.id) == 18
    assert len({c.id for c in chunks}) == len(chunks)


def test_rechunking_is_byte_for_byte_identical() -> None:
    text = _read(ZH / "body.md")
    first = [c.model_dump_json() for c in chunk_document(text, "zh/body.md")]
    second = [c.model_dump_json() for c in chunk_document(text, "zh/body.md")]
    assert first == second


def test_editing_one_section_keeps_the_ids_and_hashes_of_every_other_section() -> None:
    text = _read(EN / "body.md")
    before = {c.id: c for c in chunk_document(text, "body.md")}
    edited_text = text.replace(
        "With just that Python type declaration, **FastAPI** will:",
        "With just that Python type declaration, and nothing else at all, **FastAPI** will do all this:",
    )
    assert edited_text != text
    after = {c.id: c for c in chunk_document(edited_text, "body.md")}
    assert set(before) == set(after)
    changed = [i for i in before if before[i].content_hash != after[i].content_hash]
    assert len(changed) == 1
    assert after[changed[0]].heading_path == ["request-body", "results"]


def test_inserting_a_section_leaves_the_other_ids_alone() -> None:
    text = _read(EN / "query-params.md")
    before = chunk_document(text, "query-params.md")
    new_section = "## Brand new section { #brand-new }\n\n" + "Words about nothing in particular. " * 60 + "\n\n"
    at = text.index("## Optional parameters")
    after = chunk_document(text[:at] + new_section + text[at:], "query-params.md")
    before_ids = {c.id for c in before}
    after_ids = {c.id for c in after}
    assert before_ids <= after_ids
    added = [c for c in after if c.id not in before_ids]
    assert added and all(c.heading_path[-1] == "brand-new" for c in added)


def test_anchor_not_title_is_the_heading_path_so_translations_share_it() -> None:
    en = chunk_document(_read(EN / "body.md"), "body.md")
    zh = chunk_document(_read(ZH / "body.md"), "body.md")
    en_paths = {tuple(c.heading_path) for c in en}
    zh_paths = {tuple(c.heading_path) for c in zh}
    assert ("request-body", "create-your-data-model") in en_paths
    assert en_paths & zh_paths, "anchors are the same across translations"
    first_zh = next(c for c in zh if c.heading_path == ["request-body", "create-your-data-model"])
    assert first_zh.heading_titles == ["请求体", "创建数据模型"]


def test_retitling_a_heading_with_an_anchor_keeps_the_id() -> None:
    text = _read(EN / "body.md")
    retitled = text.replace("## Results { #results }", "## What you get { #results }")
    before = {c.id for c in chunk_document(text, "body.md")}
    after = {c.id for c in chunk_document(retitled, "body.md")}
    assert before == after


# ------------------------------------------------------------------------------------------------ code


def test_code_blocks_are_never_split_even_with_a_tiny_budget() -> None:
    text = _read(EN / "first-steps.md")
    tiny = KBSettings(target_tokens=20, max_tokens=30, min_tokens=5)
    chunks = chunk_document(text, "first-steps.md", tiny)
    spans = _fence_spans(text)
    assert len(spans) >= 3
    _assert_whole(spans, chunks)
    for start, end in spans:  # and the code itself is in the chunk's text (console blocks lose colour tags)
        body = text[start:end]
        if "<" not in body:
            assert sum(body in c.text for c in chunks) >= 1


def test_an_oversized_code_block_is_one_flagged_chunk() -> None:
    code = "\n".join(f"value_{i} = compute({i}, {i + 1})" for i in range(120))
    text = f"# Big {{ #big }}\n\nIntro.\n\n## Code {{ #code }}\n\nHere it is:\n\n```python\n{code}\n```\n\nAfter.\n"
    settings_ = KBSettings(target_tokens=100, max_tokens=200, min_tokens=10)
    chunks = chunk_document(text, "big.md", settings_)
    flagged = [c for c in chunks if OVERSIZED in c.flags]
    assert len(flagged) == 1
    assert code in flagged[0].text
    assert flagged[0].n_tokens > settings_.max_tokens
    assert all(c.n_tokens <= settings_.max_tokens for c in chunks if OVERSIZED not in c.flags)


def test_tables_are_never_split() -> None:
    text = _read(EN / "metadata.md")
    chunks = chunk_document(text, "metadata.md", KBSettings(target_tokens=30, max_tokens=40, min_tokens=5))
    holders = [c for c in chunks if "| `title` | `str` | The title of the API. |" in c.text]
    assert len(holders) == 1
    assert "| `license_info` | `dict` |" in holders[0].text  # the last row is in the same chunk
    assert OVERSIZED in holders[0].flags


# ------------------------------------------------------------------------------------------------ sizes


def test_chinese_is_counted_per_character_and_cut_to_size() -> None:
    text = _read(ZH / "query-params.md")
    settings_ = KBSettings(target_tokens=120, max_tokens=200, min_tokens=20)
    chunks = chunk_document(text, "zh/query-params.md", settings_)
    assert len(chunks) > 3
    for c in chunks:
        assert c.n_tokens == count_tokens(c.text)
        if OVERSIZED not in c.flags:
            assert c.n_tokens <= settings_.max_tokens
    assert {c.language for c in chunks} == {"zh"}
    # a line of 40 Chinese characters is 40 tokens, not one "word"
    assert count_tokens("查询参数" * 10) == 40


def test_a_giant_chinese_paragraph_without_spaces_is_cut_below_max() -> None:
    text = "# 标题\n\n" + "这是一个没有空格也没有标点的很长的中文句子" * 80 + "\n"
    settings_ = KBSettings(target_tokens=100, max_tokens=150, min_tokens=10)
    chunks = chunk_document(text, "long.md", settings_)
    assert len(chunks) >= 10
    assert all(c.n_tokens <= settings_.max_tokens for c in chunks)
    assert any(SPLIT in c.flags for c in chunks)
    # the pieces cover the paragraph: their spans are contiguous and ordered
    spans = sorted((c.char_start, c.char_end) for c in chunks)
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))


def test_english_chunks_respect_max_and_mostly_reach_min() -> None:
    settings_ = KBSettings(target_tokens=150, max_tokens=300, min_tokens=40)
    chunks = chunk_document(_read(EN / "first-steps.md"), "first-steps.md", settings_)
    assert all(c.n_tokens <= settings_.max_tokens or OVERSIZED in c.flags for c in chunks)
    small = [c for c in chunks if c.n_tokens < settings_.min_tokens]
    assert len(small) <= 1, [c.heading_path for c in small]


def test_a_small_trailing_section_joins_the_previous_chunk() -> None:
    body = "Some words here to make the section large enough to stand alone in its chunk. " * 5
    text = f"# Doc {{ #doc }}\n\n{body}\n\n## Tail {{ #tail }}\n\nA short end.\n"
    chunks = chunk_document(text, "doc.md", KBSettings(target_tokens=200, max_tokens=300, min_tokens=30))
    assert len(chunks) == 1
    assert chunks[0].heading_path == ["doc"]
    assert "## Tail" in chunks[0].text and "A short end." in chunks[0].text


def test_a_heading_only_section_is_carried_into_the_next_one() -> None:
    body = "Plenty of text for a real section, so it stands on its own and is not merged anywhere. " * 4
    text = f"# Title {{ #title }}\n\n## First {{ #first }}\n\n{body}\n\n## Second {{ #second }}\n\n{body}\n"
    chunks = chunk_document(text, "doc.md", KBSettings(target_tokens=80, max_tokens=120, min_tokens=20))
    assert [c.heading_path for c in chunks] == [["title", "first"], ["title", "second"]]
    assert chunks[0].text.startswith("# Title\n\n## First")


# ------------------------------------------------------------------------------------------------ markup


def test_non_content_markup_stays_out_of_the_text() -> None:
    chunks = chunk_document(_read(EN / "body.md"), "body.md")
    text = "\n".join(c.text for c in chunks)
    assert "{*" not in text and "docs_src" not in text
    assert "{ #" not in text
    assert not re.search(r"^/{3,}", text, flags=re.MULTILINE)
    assert "<img" not in text and "<abbr" not in text
    assert "documentation UIs." in text  # the text of <abbr>UIs</abbr> is kept
    assert "To send data, you should use one of" in text  # the content of a /// note is kept


def test_console_colour_tags_are_removed_inside_console_blocks() -> None:
    text = "\n".join(c.text for c in chunk_document(_read(EN / "first-steps.md"), "first-steps.md"))
    assert "<font" not in text and "<span" not in text
    assert "uv run fastapi" in text and "dev" in text


def test_spans_point_at_the_source_and_raw_hash_covers_them() -> None:
    from goldset.hashing import sha256_hex

    source = _read(EN / "query-params.md")
    chunks = sorted(chunk_document(source, "query-params.md"), key=lambda c: c.char_start)
    for c in chunks:
        span = source[c.char_start : c.char_end]
        assert c.raw_hash == sha256_hex(span)
        first_line = c.text.split("\n", 1)[0]
        if first_line.startswith("#"):
            assert span.startswith(first_line)
    for a, b in itertools.pairwise(chunks):
        assert a.char_end <= b.char_start


def test_content_hash_ignores_link_targets_whitespace_and_case_but_raw_hash_does_not() -> None:
    base = "# Doc\n\nSee [the guide](guide.md) for   details.\n"
    moved = "# Doc\n\nSee [the guide](new/guide.md) for details.\n"
    html_link = '# Doc\n\nSee <a href="https://x/guide">the guide</a> for details.\n'
    reworded = "# Doc\n\nSee [the manual](guide.md) for details.\n"
    a, b, c, d = (chunk_document(t, "d.md")[0] for t in (base, moved, html_link, reworded))
    assert a.content_hash == b.content_hash == c.content_hash
    assert a.raw_hash != b.raw_hash
    assert a.content_hash != d.content_hash
    assert content_hash("Hello   World") == content_hash("hello world")


def test_admonition_type_change_is_not_a_content_change() -> None:
    new = _read(EN / "cookie-params.md")
    old = _read(FIXTURES / "en-0.120.0" / "cookie-params.md")
    assert old != new  # 0.120.0 says "/// info" where 0.141.1 says "/// note"
    old_chunks = {(c.id, c.content_hash) for c in chunk_document(old, "cookie-params.md")}
    new_chunks = {(c.id, c.content_hash) for c in chunk_document(new, "cookie-params.md")}
    assert old_chunks == new_chunks


# ------------------------------------------------------------------------------------------------ property


_WORDS = st.sampled_from(["alpha", "beta", "gamma", "请求", "参数", "模型", "delta", "code", "数据"])
_PARAGRAPH = st.lists(_WORDS, min_size=1, max_size=80).map(" ".join)
_CODE = st.lists(st.sampled_from(["x = 1", "print(x)", "def f():", "    return 2", ""]), min_size=1, max_size=60).map(
    lambda lines: "```python\n" + "\n".join(lines) + "\nEND_OF_BLOCK\n```"
)
_HEADING = st.tuples(st.integers(1, 3), st.sampled_from(["Intro", "Usage", "用法", "Details"])).map(
    lambda t: "#" * t[0] + " " + t[1]
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    blocks=st.lists(st.one_of(_PARAGRAPH, _CODE, _HEADING), min_size=1, max_size=25),
    target=st.integers(10, 80),
)
def test_property_code_whole_sizes_bounded_ids_unique(blocks: list[str], target: int) -> None:
    text = "\n\n".join(blocks) + "\n"
    settings_ = KBSettings(target_tokens=target, max_tokens=target * 2, min_tokens=target // 4)
    chunks = chunk_document(text, "p.md", settings_)
    assert len({c.id for c in chunks}) == len(chunks)
    _assert_whole(_fence_spans(text), chunks)
    for block in blocks:
        if block.startswith("```"):
            assert any(block in c.text for c in chunks)
    for c in chunks:
        assert c.n_tokens <= settings_.max_tokens or OVERSIZED in c.flags
        assert 0 <= c.char_start <= c.char_end <= len(text)
    assert chunk_document(text, "p.md", settings_) == chunks


@pytest.mark.parametrize("name", ["body.md", "metadata.md", "query-params.md"])
def test_every_word_of_the_prose_survives_chunking(name: str) -> None:
    """Nothing is lost: each paragraph's words appear in some chunk (markup aside)."""
    chunks = chunk_document(_read(ZH / name), name)
    joined = "\n".join(c.text for c in chunks)
    for para in _read(ZH / name).split("\n\n"):
        para = para.strip()
        if not para or para.startswith(("{*", "/", "<", "#", "|", "```")) or "```" in para:
            continue
        assert para.splitlines()[0][:12] in joined, para[:40]


def test_windows_line_ends_give_the_same_chunks_without_carriage_returns() -> None:
    text = _read(EN / "body.md")
    unix = chunk_document(text, "body.md")
    dos = chunk_document(text.replace("\n", "\r\n"), "body.md")
    assert [(c.id, c.content_hash, c.text) for c in unix] == [(c.id, c.content_hash, c.text) for c in dos]
    assert all("\r" not in c.text for c in dos)
    assert [c.raw_hash for c in unix] != [c.raw_hash for c in dos]


def test_a_document_of_headings_only_is_one_chunk_under_its_title() -> None:
    chunks = chunk_document("# Title { #title }\n\n## Empty { #empty }\n\n## Also empty\n", "h.md")
    assert len(chunks) == 1
    assert chunks[0].heading_path == ["title"]
    assert chunks[0].text == "# Title\n\n## Empty\n\n## Also empty"


def test_a_code_only_chunk_of_a_chinese_document_is_chinese() -> None:
    code = "\n".join(f"result_{i} = compute_something(alpha, beta, gamma)" for i in range(40))
    text = f"# 标题\n\n这是一段说明文字，介绍下面的代码是做什么用的。\n\n```python\n{code}\n```\n"
    chunks = chunk_document(text, "zh.md", KBSettings(target_tokens=30, max_tokens=60, min_tokens=5))
    code_chunk = next(c for c in chunks if "result_0" in c.text)
    assert OVERSIZED in code_chunk.flags and code_chunk.text.startswith("```python")
    assert {c.language for c in chunks} == {"zh"}

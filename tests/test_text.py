"""The shared tokeniser: CJK characters one token each, code identifiers whole, normalisation applied."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from goldset.text import count_tokens, detect_language, estimate_llm_tokens, normalize, tokenize


def test_chinese_is_one_token_per_character_and_code_stays_whole() -> None:
    assert tokenize("FastAPI 使用 read_item() 处理") == ["fastapi", "使", "用", "read_item", "处", "理"]
    assert count_tokens("路径参数") == 4


def test_full_width_forms_fold_to_ascii() -> None:
    assert tokenize("ＦａｓｔＡＰＩ，１２３") == ["fastapi", "123"]


def test_language_detection() -> None:
    assert detect_language("FastAPI 会自动把查询参数转换为声明的类型，例如 `int` 和 `bool`。") == "zh"
    assert detect_language("Query parameters are converted to the declared type, e.g. 路径.") == "en"


def test_llm_token_estimate_counts_cjk_characters() -> None:
    assert estimate_llm_tokens("你好世界") == 4
    assert 20 <= estimate_llm_tokens("word " * 20) <= 30


@given(st.text())
def test_tokenize_equals_tokens_of_the_normalised_text(text: str) -> None:
    assert tokenize(text) == tokenize(normalize(text))


@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_the_ascii_shortcut_gives_the_general_paths_tokens(text: str) -> None:
    import unicodedata

    from goldset import text as module

    assert tokenize(text) == module._TOKEN_RE.findall(unicodedata.normalize("NFKC", text).casefold())

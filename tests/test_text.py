"""The shared tokeniser: CJK characters one token each, code identifiers whole, normalisation applied."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from goldset.text import _CJK_RE as module_cjk
from goldset.text import (
    MIN_LANGUAGE_WORDS,
    cjk_ratio,
    count_tokens,
    detect_language,
    estimate_llm_tokens,
    normalize,
    tokenize,
)


def test_chinese_is_one_token_per_character_and_code_stays_whole() -> None:
    assert tokenize("FastAPI 使用 read_item() 处理") == ["fastapi", "使", "用", "read_item", "处", "理"]
    assert count_tokens("路径参数") == 4


def test_full_width_forms_fold_to_ascii() -> None:
    assert tokenize("ＦａｓｔＡＰＩ，１２３") == ["fastapi", "123"]


def test_language_detection() -> None:
    assert detect_language("FastAPI 会自动把查询参数转换为声明的类型，例如 `int` 和 `bool`。") == "zh"
    assert detect_language("Query parameters are converted to the declared type, e.g. 路径.") == "en"
    assert detect_language("The FastAPI docs were translated into Chinese by 王小明 and 李娜 last year.") == "en"


def test_japanese_and_korean_are_not_chinese() -> None:
    # FastAPI docs/ja and docs/ko, tutorial/query-params.md (MIT)
    ja = "パスパラメータではない関数パラメータを宣言すると、それらは自動的にクエリパラメータとして解釈されます。"
    assert detect_language(ja) == "ja"
    assert detect_language("必須のクエリパラメータ") == "ja"  # a heading: kanji, then kana loanword
    assert detect_language("型ヒントに基づいて自動的にデータ検証を行う") == "ja"  # kanji-dense, still 40% kana
    ko = "경로 매개변수의 일부가 아닌 다른 함수 매개변수를 선언하면 쿼리 매개변수로 자동 해석합니다."
    assert detect_language(ko) == "ko"
    assert detect_language("FastAPI는 `item_id`가 경로 매개변수이고 `q`는 쿼리 매개변수라는 것을 압니다.") == "ko"
    # Chinese naming a Korean or quoting one Japanese word stays Chinese.
    assert detect_language("这个接口由김민준维护，文档里的每个示例都可以直接运行，并且会返回一个 JSON 响应。") == "zh"
    assert detect_language("日语里的「です」表示礼貌，这一点在翻译接口文档时需要特别注意，否则语气会显得生硬。") == "zh"


def test_too_few_words_give_the_fallback() -> None:
    assert detect_language("Swagger UI", fallback="zh") == "zh"
    assert detect_language("By 司马相如.", fallback="en") == "en"
    assert detect_language("By 司马相如.") == "zh"  # without a fallback, whatever there is decides
    assert detect_language("`x = 1` 12345 ____", fallback="ja") == "ja"
    assert detect_language("", fallback="ko") == "ko" and detect_language("") == "en"
    enough = " ".join(["word"] * MIN_LANGUAGE_WORDS)
    assert detect_language(enough, fallback="zh") == "en"
    assert detect_language(enough.rsplit(" ", 1)[0] + " 2024", fallback="zh") == "zh"  # a number is no word


def test_kana_and_hangul_are_one_token_per_character() -> None:
    assert tokenize("クエリ パラメータ") == list("クエリパラメータ")
    assert tokenize("쿼리 매개변수") == ["쿼", "리", "매", "개", "변", "수"]
    assert count_tokens("必須のクエリ") == 6


def _reference_cjk_ratio(text: str) -> float:
    """cjk_ratio as it was first written (the definition it must keep)."""
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return 0.0
    return sum(1 for c in letters if module_cjk.match(c)) / len(letters)


@given(st.text(alphabet=st.sampled_from("ab Z1_-。，路径参数的クエリ쿼리・ー゛")))
def test_cjk_ratio_and_chinese_detection_keep_their_definition(text: str) -> None:
    assert cjk_ratio(text) == _reference_cjk_ratio(text)
    if not any("\u3040" <= c <= "\u30ff" or "\uac00" <= c <= "\ud7af" for c in text):
        assert detect_language(text) == ("zh" if _reference_cjk_ratio(text) >= 0.2 else "en")


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

"""Similarity primitives: hand-made cases in English, Chinese and code, plus properties (hypothesis)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from goldset.filters.textsim import (
    best_edit_match,
    canonical,
    containment,
    content_units,
    edit_similarity,
    identifier_tokens,
    jaccard,
    lcs_ratio,
    longest_common_run,
    ngrams,
    normalized_contains,
    split_sentences,
)
from goldset.text import tokenize

# Mixed scripts, code-ish identifiers and punctuation, so the properties cover what the checks see.
WORDS = st.sampled_from(
    ["FastAPI", "request", "body", "response_model", "路径", "参数", "请求体", "GET", "42", "a", "the", "。", "?"]
)
TEXT = st.lists(WORDS, min_size=0, max_size=12).map(" ".join)
NONEMPTY = st.lists(WORDS.filter(lambda w: bool(tokenize(w))), min_size=1, max_size=12).map(" ".join)
TOKENS = st.lists(st.sampled_from(["a", "b", "c", "路", "径", "x_1"]), min_size=0, max_size=15)


@settings(max_examples=150, deadline=None)
@given(TEXT, TEXT)
def test_edit_similarity_is_symmetric_and_bounded(a: str, b: str) -> None:
    s = edit_similarity(a, b)
    assert 0.0 <= s <= 1.0
    assert abs(s - edit_similarity(b, a)) < 1e-9


@settings(max_examples=100, deadline=None)
@given(TEXT)
def test_edit_similarity_identity_is_one(a: str) -> None:
    assert edit_similarity(a, a) == 1.0


@settings(max_examples=150, deadline=None)
@given(TOKENS, TOKENS, st.integers(1, 4))
def test_jaccard_symmetric_bounded(a: list[str], b: list[str], n: int) -> None:
    s = jaccard(a, b, n)
    assert 0.0 <= s <= 1.0
    assert s == jaccard(b, a, n)
    assert jaccard(a, a, n) == 1.0


@settings(max_examples=150, deadline=None)
@given(TOKENS, TOKENS, st.integers(1, 4))
def test_containment_and_lcs_bounded_identity_one(a: list[str], b: list[str], n: int) -> None:
    for value in (containment(a, b, n), lcs_ratio(a, b)):
        assert 0.0 <= value <= 1.0
    if a:
        assert containment(a, a, n) == 1.0
        assert lcs_ratio(a, a) == 1.0
        # A part is fully contained in any text that embeds it.
        assert containment(a, ["z", *a, "z"], n) == 1.0


@settings(max_examples=150, deadline=None)
@given(TOKENS, TOKENS)
def test_longest_common_run_symmetric_and_matches_brute_force(a: list[str], b: list[str]) -> None:
    brute = max(
        (k for i in range(len(a)) for j in range(len(b)) for k in range(1, min(len(a) - i, len(b) - j) + 1)
         if a[i : i + k] == b[j : j + k]),
        default=0,
    )  # fmt: skip
    assert longest_common_run(a, b) == brute == longest_common_run(b, a)


@settings(max_examples=80, deadline=None)
@given(NONEMPTY)
def test_best_edit_match_finds_itself(a: str) -> None:
    score, best = best_edit_match(a, ["something else entirely", a])
    assert score == 1.0 and best == a


def test_chinese_answer_becomes_character_ngrams() -> None:
    tokens = tokenize("使用Pydantic模型声明请求体")
    assert tokens == ["使", "用", "pydantic", "模", "型", "声", "明", "请", "求", "体"]
    assert ngrams(tokens, 3)[0] == ("使", "用", "pydantic")
    # Canonical text: CJK characters spaced, so its character 3-grams are CJK bigrams.
    assert canonical("请求体") == "请 求 体"


def test_code_identifiers_stay_whole() -> None:
    assert containment(tokenize("set response_model=Item"), tokenize("use response_model = Item here"), 2) == 0.5


def test_containment_short_part_compared_at_its_length() -> None:
    assert containment(["port", "8000"], ["the", "port", "8000", "is"], 3) == 1.0
    assert containment([], ["x"], 3) == 0.0


def test_normalized_contains_respects_token_boundaries() -> None:
    assert normalized_contains("Does it listen on port 8000?", "Port 8000")
    assert not normalized_contains("Does it listen on port 80001?", "8000")
    assert normalized_contains("默认端口是8000吗？", "8000")


def test_split_sentences_latin_and_cjk() -> None:
    assert split_sentences("One. Two? 三。四！\nfive") == ["One.", "Two?", "三。", "四！", "five"]


def test_identifiers_acronyms_and_numbers() -> None:
    text = "Raise HTTPException (an HTTP error) with 404; read `user_agent`, not User_Agent. In short, APIs work."
    assert identifier_tokens(text) == {"httpexception", "http", "404", "user_agent", "apis"}
    assert identifier_tokens("请求头 `X-Token` 可以出现两次，状态码是 400。") == {"x", "token", "400"}
    assert identifier_tokens("plain words only") == frozenset()


def test_content_units_are_order_free_words_and_cjk_bigrams() -> None:
    assert content_units("The client sends a body to the API.") == {"client", "sends", "body", "api"}
    assert content_units("to the API the client sends a body") == content_units("The client sends a body to the API.")
    assert content_units("总的来说，请求体") == {"总的", "的来", "来说", "请求", "求体"}  # no bigram across the comma
    assert content_units("ＦａｓｔＡＰＩ 的") == {"fastapi"}  # full width folded; a lone function character dropped


def _units_always_folded(text: str) -> frozenset[str]:
    """content_units as it was before the fold was skipped: every full-width form folded first."""
    import operator

    from goldset.filters import textsim

    if text.isascii():
        return textsim.content_units(text)
    out: set[str] = set()
    for piece in textsim._UNIT_RE.findall(text.translate(textsim._FULL_WIDTH).lower()):
        if len(piece) > 1 and piece[0] >= "\u3040":
            out.update(map(operator.add, piece, piece[1:]))
        elif piece not in textsim.STOPWORDS:
            out.add(piece)
    return frozenset(out)


def test_content_units_skips_the_full_width_fold_only_where_it_changes_nothing() -> None:
    texts = [f"请求{chr(c)}体a{chr(c)}b {chr(c)}x" for c in range(0xFF01, 0xFF5F)]
    texts += ["ＦａｓｔＡＰＩ，用０１２吗？", "请求体，就是客户端发送的数据。", "ｕｓｅｒ＿ａｇｅｎｔ：值"]
    for text in texts:
        assert content_units(text) == _units_always_folded(text), text
    assert "fastapi" in content_units("ＦａｓｔＡＰＩ，用")
    assert "user_agent" in content_units("ｕｓｅｒ＿ａｇｅｎｔ：值")


def test_content_units_minus() -> None:
    for text in ("The client sends a request body.", "客户端发送请求体 body"):
        minus = frozenset(["client", "body", "客户"])
        assert content_units(text, minus) == content_units(text) - minus
        assert content_units(text, minus) != content_units(text)

"""Answer metrics: ROUGE-L, token F1, exact match (English and Chinese), refusals, conciseness."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from goldset.evaluation.metrics.conciseness import conciseness
from goldset.evaluation.metrics.lexical import AnswerInput, exact_match, lcs_length, rouge_l, token_f1
from goldset.evaluation.metrics.refusal import compile_patterns, correct_refusal, false_refusal, is_refusal
from goldset.evaluation.settings import DEFAULT_REFUSAL_PATTERNS
from goldset.text import tokenize


def inp(answer: str, reference: str, answerable: bool = True, refused: bool = False) -> AnswerInput:
    return AnswerInput(tuple(tokenize(answer)), tuple(tokenize(reference)), answerable, refused)


def test_rouge_l_english() -> None:
    # LCS of "the cat sat on the mat" / "the cat lay on the mat" = "the cat on the mat" (5 of 6 each)
    assert rouge_l(inp("The cat sat on the mat.", "the cat lay on the mat")) == pytest.approx(5 / 6)
    # P = 2/2, R = 2/6 -> F = 2 * 1 * (1/3) / (4/3) = 1/2
    assert rouge_l(inp("cat mat", "the cat lay on the mat")) == pytest.approx(0.5)
    assert rouge_l(inp("", "the cat")) == 0.0


def test_rouge_l_chinese_is_per_character() -> None:
    # 他喜欢吃苹果 (6) vs 他爱吃苹果 (5): LCS 他吃苹果 = 4; P = 4/6, R = 4/5 -> F = 8/11
    assert rouge_l(inp("他喜欢吃苹果。", "他爱吃苹果")) == pytest.approx(8 / 11)
    # mixed: 使用 Depends 声明依赖 vs 用Depends声明: tokens 使 用 depends 声 明 依 赖 / 用 depends 声 明
    assert rouge_l(inp("使用 Depends 声明依赖", "用Depends声明")) == pytest.approx(2 * (4 / 7) * 1 / (4 / 7 + 1))


def test_token_f1_counts_repeats_once_per_occurrence() -> None:
    # bags {a:2, b:1} and {a:1, b:2}: overlap 2 -> P = R = 2/3
    assert token_f1(inp("a a b", "a b b")) == pytest.approx(2 / 3)
    assert token_f1(inp("苹果好吃", "苹果很好")) == pytest.approx(2 * (3 / 4) * (3 / 4) / (3 / 4 + 3 / 4))
    assert token_f1(inp("nothing shared", "entirely different")) == 0.0


def test_exact_match_ignores_case_width_and_punctuation() -> None:
    assert exact_match(inp("Paris.", "paris")) == 1.0
    assert exact_match(inp("Ｐａｒｉｓ", "Paris")) == 1.0
    assert exact_match(inp("北京。", "北京")) == 1.0
    assert exact_match(inp("Paris, France", "Paris")) == 0.0
    assert exact_match(inp("", "Paris")) == 0.0


def test_unanswerable_pairs_have_no_lexical_scores() -> None:
    a = inp("I don't know.", "The knowledge base does not say.", answerable=False)
    assert (rouge_l(a), token_f1(a), exact_match(a)) == (None, None, None)


def _lcs_dp(a: list[str], b: list[str]) -> int:
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "b", "c", "中", "文", "ab"]), max_size=30),
    st.lists(st.sampled_from(["a", "b", "c", "中", "文", "ab"]), max_size=30),
)
def test_lcs_matches_dynamic_programming(a: list[str], b: list[str]) -> None:
    assert lcs_length(a, b) == _lcs_dp(a, b)


REFUSALS = [
    "I don't know based on the provided context.",
    "I'm sorry, I cannot answer that from the documents.",
    "The documentation does not mention a rate limit.",
    "This is not covered in the provided context.",
    "There is no information about pricing in the knowledge base.",
    "The answer cannot be determined from the sources.",
    "I do not have enough information to answer.",
    "根据提供的文档，无法回答这个问题。",
    "文档中没有提及这个参数。",
    "抱歉，我不知道。",
    "资料里并未说明具体的版本号。",
    "没有相关的信息。",
]
ANSWERS = [
    "FastAPI does not require a database; use any ORM you like.",
    "The context manager closes the file when the block ends.",
    "You can find the docs at /docs, and no information is lost when you restart.",
    "Use Depends() to declare a dependency.",
    "该参数没有默认值，必须显式传入。",
    "可以使用 Depends 声明依赖，文档中给出了示例。",
    "如果找不到文件，会返回 404 错误。",
]


@pytest.mark.parametrize("answer", REFUSALS)
def test_default_patterns_detect_refusals(answer: str) -> None:
    assert is_refusal(answer, compile_patterns(DEFAULT_REFUSAL_PATTERNS))


@pytest.mark.parametrize("answer", ANSWERS)
def test_default_patterns_leave_real_answers_alone(answer: str) -> None:
    assert not is_refusal(answer, compile_patterns(DEFAULT_REFUSAL_PATTERNS))


def test_custom_patterns_and_refusal_metrics() -> None:
    pattern = compile_patterns([r"^n/a$", r"暂无答案"])
    assert is_refusal("N/A", pattern)
    assert is_refusal("暂无答案", pattern)
    assert not is_refusal("I don't know.", pattern)  # the defaults are replaced, not extended
    assert not is_refusal("anything", compile_patterns([]))
    assert correct_refusal(inp("n/a", "x", answerable=False, refused=True)) == 1.0
    assert correct_refusal(inp("Paris", "x", answerable=False, refused=False)) == 0.0
    assert correct_refusal(inp("Paris", "x", answerable=True)) is None
    assert false_refusal(inp("n/a", "x", answerable=True, refused=True)) == 1.0
    assert false_refusal(inp("Paris", "x", answerable=True)) == 0.0
    assert false_refusal(inp("n/a", "x", answerable=False, refused=True)) is None


def test_conciseness_budget() -> None:
    ref = " ".join(f"w{i}" for i in range(10))  # 10 tokens: budget 2 * 10 + 10 = 30
    assert conciseness(inp(" ".join(["x"] * 30), ref), max_ratio=2.0, slack_tokens=10) == 1.0
    assert conciseness(inp(" ".join(["x"] * 60), ref), max_ratio=2.0, slack_tokens=10) == pytest.approx(0.5)
    assert conciseness(inp(" ".join(["x"] * 40), ref), max_ratio=1.0, slack_tokens=0) == pytest.approx(0.25)
    assert conciseness(inp("", ref)) == 0.0
    # Chinese counts characters: 20 characters against a 5-character reference with budget 2*5+0 = 10
    assert conciseness(inp("一" * 20, "二" * 5), max_ratio=2.0, slack_tokens=0) == pytest.approx(0.5)

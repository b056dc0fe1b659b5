"""Each pair check on hand-made cases in English and Chinese (chunks: tests/fixtures/filters)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from goldset.filters import (
    answer_present,
    leakage,
    length,
    question_form,
    question_overlap,
    self_contained,
    type_plausible,
    verbatim,
)
from tests.helpers.filter_data import (
    COPY,
    PARAPHRASE,
    SWAPPED,
    ZH_COPY,
    ZH_PARAPHRASE,
    ZH_SWAPPED,
    fixture_chunks,
    pair,
)

CHUNKS = fixture_chunks()
V = verbatim.Settings()

def _v(answer: str, chunk: str = "en-body-2") -> bool:
    return verbatim.check(pair("q1", "What about a body on GET?", answer, chunks=(chunk,)), CHUNKS, V).passed


@pytest.mark.parametrize(
    ("answer", "chunk", "passes"),
    [
        (COPY, "en-body-2", False),
        (SWAPPED, "en-body-2", False),
        (PARAPHRASE, "en-body-2", True),
        (ZH_COPY, "zh-body-2", False),
        (ZH_SWAPPED, "zh-body-2", False),
        (ZH_PARAPHRASE, "zh-body-2", True),
    ],
    ids=["en-copy", "en-swapped", "en-paraphrase", "zh-copy", "zh-swapped", "zh-paraphrase"],
)
def test_verbatim(answer: str, chunk: str, passes: bool) -> None:
    assert _v(answer, chunk) is passes


def test_verbatim_reasons_and_scores() -> None:
    res = verbatim.check(pair("q1", "What about GET?", COPY, chunks=("en-body-2",)), CHUNKS, V)
    assert res.score == 1.0
    assert "copies the evidence" in res.reason
    ok = verbatim.check(pair("q1", "What about GET?", PARAPHRASE, chunks=("en-body-2",)), CHUNKS, V)
    assert ok.score is not None and ok.score < 0.6


def test_verbatim_copy_of_two_sentences_caught_by_window() -> None:
    answer = (
        "Your API almost always has to send a response body. But clients don't necessarily need to send "
        "request bodies all the time."
    )
    assert not _v(answer, "en-body-1")


def test_verbatim_short_answer_not_judged_and_threshold_respected() -> None:
    res = verbatim.check(pair("q1", "Which method is most common?", "POST", chunks=("en-body-2",)), CHUNKS, V)
    assert res.passed and "not judged" in res.reason
    strict = verbatim.Settings(max_edit_similarity=0.4, max_containment=0.05, max_lcs_ratio=0.05)
    assert not verbatim.check(pair("q1", "GET?", PARAPHRASE, chunks=("en-body-2",)), CHUNKS, strict).passed


def test_verbatim_missing_chunk_falls_back_to_quote() -> None:
    p = pair("q1", "GET?", COPY, chunks=("gone-1",), quote=COPY)
    assert not verbatim.check(p, CHUNKS, V).passed


def test_question_overlap() -> None:
    s = question_overlap.Settings()
    copied = pair("q1", "A request body is data sent by the client to your API?", "x", chunks=("en-body-1",))
    assert not question_overlap.check(copied, CHUNKS, s).passed
    fine = pair("q1", "Who produces the data in a request body?", "x", chunks=("en-body-1",))
    assert question_overlap.check(fine, CHUNKS, s).passed
    zh = pair("q1", "请求体是客户端发送给你的 API 的数据吗？", "是", chunks=("zh-body-1",))
    assert not question_overlap.check(zh, CHUNKS, s).passed
    # A copy of a sentence from another chunk is caught only through the KB-wide sentences.
    other = pair("q1", "A request body is data sent by the client to your API?", "x", chunks=("en-body-3",))
    assert question_overlap.check(other, CHUNKS, s).passed
    kb = ["A **request** body is data sent by the client to your API."]
    assert not question_overlap.check(other, CHUNKS, s, kb).passed
    assert question_overlap.check(other, CHUNKS, question_overlap.Settings(whole_kb=False), kb).passed


@pytest.mark.parametrize(
    ("question", "answer", "leaks"),
    [
        ("Does FastAPI support a body on GET requests for extreme use cases?", "Yes, for extreme use cases.", True),
        ("Is POST the most common method to send data?", "POST.", True),
        ("Which HTTP method is the most common one for sending data?", "POST.", False),
        ("What does FastAPI use to declare request bodies?", "FastAPI uses Pydantic models.", False),
        ("默认用 POST 方法发送数据吗？", "POST", True),
        ("发送数据最常用哪个方法？", "POST", False),
    ],
)
def test_leakage(question: str, answer: str, leaks: bool) -> None:
    res = leakage.check(pair("q1", question, answer), CHUNKS, leakage.Settings())
    assert res.passed is not leaks, res.reason


def test_leakage_skips_unanswerable() -> None:
    p = pair("q1", "Does FastAPI support MQTT?", "The documentation does not say.", qtype="unanswerable")
    assert leakage.check(p, CHUNKS, leakage.Settings()).passed


def test_self_contained() -> None:
    s = self_contained.Settings()
    leaning = pair("q", "According to the passage, what is a request body?", "x")
    assert not self_contained.check(leaning, CHUNKS, s).passed
    assert not self_contained.check(pair("q", "What is a body?", "As stated in the passage, data."), CHUNKS, s).passed
    assert not self_contained.check(pair("q", "上文提到的请求体是什么？", "数据"), CHUNKS, s).passed
    assert not self_contained.check(pair("q", "文中说的请求体是什么？", "数据"), CHUNKS, s).passed
    standalone = pair("q", "What is a request body in FastAPI?", "Data sent by a client.")
    assert self_contained.check(standalone, CHUNKS, s).passed
    with pytest.raises(ValidationError):
        self_contained.Settings(patterns=["(unclosed"])


def test_question_form() -> None:
    s = question_form.Settings()
    assert question_form.check(pair("q", "What is a request body?", "x"), CHUNKS, s).passed
    assert question_form.check(pair("q", "Explain how FastAPI reads a body", "x"), CHUNKS, s).passed
    assert question_form.check(pair("q", "请求体是什么", "x"), CHUNKS, s).passed
    assert not question_form.check(pair("q", "The request body.", "x"), CHUNKS, s).passed
    two = question_form.check(pair("q", "What is a body? And how do I send one?", "x"), CHUNKS, s)
    assert not two.passed and "2 question marks" in two.reason


def test_answer_present() -> None:
    s = answer_present.Settings()
    for bad in ("N/A", "n/a.", "Unknown", "无", "…", "---"):
        assert not answer_present.check(pair("q", "What?", bad), CHUNKS, s).passed, bad
    assert answer_present.check(pair("q", "What?", "POST"), CHUNKS, s).passed


def test_length() -> None:
    s = length.Settings(min_question_tokens=3, max_answer_tokens=5)
    assert not length.check(pair("q", "Body?", "x"), CHUNKS, s).passed
    assert not length.check(pair("q", "What is a body?", "one two three four five six"), CHUNKS, s).passed
    assert length.check(pair("q", "请求体是什么？", "数据"), CHUNKS, s).passed  # 5 CJK tokens
    with pytest.raises(ValidationError):
        length.Settings(min_question_tokens=10, max_question_tokens=5)


def test_type_plausible() -> None:
    s = type_plausible.Settings()
    ok = type_plausible.check
    assert not ok(pair("q", "Does FastAPI support MQTT?", "Yes it does.", qtype="unanswerable"), CHUNKS, s).passed
    refusal = pair("q", "Does FastAPI support MQTT?", "The docs do not mention MQTT.", qtype="unanswerable")
    assert ok(refusal, CHUNKS, s).passed
    assert ok(pair("q", "FastAPI 支持 MQTT 吗？", "文档没有提到 MQTT。", qtype="unanswerable"), CHUNKS, s).passed
    assert not ok(pair("q", "What is a body?", "This is not mentioned."), CHUNKS, s).passed
    assert not ok(pair("q", "What is a request body?", "Data.", qtype="comparison"), CHUNKS, s).passed
    contrast = pair("q", "How does a request body differ from a response body?", "Direction.", qtype="comparison")
    assert ok(contrast, CHUNKS, s).passed
    assert ok(pair("q", "请求体和响应体有什么区别？", "方向不同。", qtype="comparison"), CHUNKS, s).passed
    assert not ok(pair("q", "What is a body?", "Data.", qtype="multi_hop"), CHUNKS, s).passed
    two = pair("q", "What is a body?", "Data.", qtype="multi_hop", chunks=("en-body-1", "en-body-2"))
    assert ok(two, CHUNKS, s).passed
    assert not ok(pair("q", "The request body.", "Data.", qtype="procedural"), CHUNKS, s).passed
    assert ok(pair("q", "How do I declare a request body?", "Use a model.", qtype="procedural"), CHUNKS, s).passed

"""Each pair check on hand-made cases in English and Chinese (chunks: tests/fixtures/filters)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from goldset.filters import (
    answer_present,
    evidence,
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
    fixture_quote,
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


def test_verbatim_containment_of_unigrams_and_of_long_ngrams() -> None:
    """ngram 1 (each token its own n-gram) is measured like any other n; a copy's containment is 1 whatever n."""
    source = CHUNKS["en-body-2"].text
    for n in (1, 2, 3, 5):
        s = verbatim.Settings(ngram=n)
        assert verbatim.measure(COPY, [source], s, question="What about GET?")["containment"] == 1.0, n
        assert verbatim.measure(PARAPHRASE, [source], s, question="What about GET?")["containment"] < 1.0, n


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
        ("Is the body sent by the client?", "the body, sent by the client", True),  # as many tokens as the question
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


def test_answer_present_placeholder_of_the_most_tokens() -> None:
    """Answers with more tokens than every placeholder skip the comparison: the longest placeholders, spread
    over whitespace and full-width letters, are still caught, and one token more passes."""
    s = answer_present.Settings()
    for bad in ("I do not know", "  i   do\tnot\n know !", "I DON'T KNOW.", "ｉ　do not know"):
        assert not answer_present.check(pair("q", "What?", bad), CHUNKS, s).passed, bad
    assert answer_present.check(pair("q", "What?", "I do not know yet"), CHUNKS, s).passed
    custom = answer_present.Settings(placeholders=["see the docs for more"])
    assert not answer_present.check(pair("q", "What?", "See the  docs for more."), CHUNKS, custom).passed


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


# References to the source that used to pass, and ordinary words that used to be rejected (the trust issue).
SELF_REFERENCES = [
    "根据这篇文章，后台任务在什么时候运行？",
    "该文章中提到的中间件执行顺序是什么？",
    "如上所述，Header 如何转换下划线？",
    "文章里说了哪些状态码？",
    "作者为什么不推荐用 GET 请求发送请求体？",
    "按照作者的说法，怎样把查询参数设为可选？",
    "在上面的例子中，limit 的值是多少？",
    "In this document, which status code means Not Found?",
    "As described in the section, how are headers converted?",
    "Per the excerpt, what does Header do?",
    "In the example above, what does item_id become?",
    "Why does the author discourage a body on GET?",
    "What does the text say about compatible tools?",
]
ORDINARY = [
    "FastAPI 中文文档与英文原文不一致时，应以哪个为准？",  # 原文: the original (English) text
    "翻译时应如何处理原文中的代码块？",
    "在中文中，请求体对应哪个英文术语？",  # 文中 inside 中文中
    "线上文档的地址是什么？",  # 上文 inside 线上文档
    "版本文档在哪里可以找到？",  # 本文 inside 版本文档
    "这段代码中的 Depends 有什么作用？",
    "FastAPI 的作者是谁？",
    "Who is the author of FastAPI?",
    "What does 'scope' mean in the context of OAuth2?",
    "How do I read the text field of a form?",
]


@pytest.mark.parametrize("question", SELF_REFERENCES)
def test_self_contained_catches_references_to_the_source(question: str) -> None:
    res = self_contained.check(pair("q", question, "x"), CHUNKS, self_contained.Settings())
    assert not res.passed, question
    assert res.severity == "flag" and res.flagged  # a pattern cannot be sure: it flags, the pair may pass


@pytest.mark.parametrize("question", ORDINARY)
def test_self_contained_leaves_ordinary_words_alone(question: str) -> None:
    assert self_contained.check(pair("q", question, "x"), CHUNKS, self_contained.Settings()).passed, question


def test_a_severity_is_configurable_per_check() -> None:
    strict = self_contained.Settings(severity="reject")
    res = self_contained.check(pair("q", SELF_REFERENCES[0], "x"), CHUNKS, strict)
    assert res.rejects and not res.flagged
    with pytest.raises(ValidationError):
        self_contained.Settings(severity="warn")
    assert verbatim.Settings().severity == "reject" and type_plausible.Settings().severity == "flag"
    assert question_form.Settings().severity == "flag" and evidence.Settings().severity == "reject"


@pytest.mark.parametrize(
    ("qtype", "question", "answer"),
    [
        ("comparison", "FastAPI 的 HTTPException 与 Starlette 的 HTTPException 有何差别？", "detail 能放的数据不同。"),
        ("comparison", "How is a parameter of type int handled differently from a Pydantic model?", "Query vs body."),
        ("comparison", "What distinguishes FastAPI's HTTPException from Starlette's?", "The detail field."),
        ("reasoning", "中间件最后添加意味着什么？", "它在最外层，最先处理请求。"),
        ("unanswerable", "FastAPI 支持 gRPC 吗？", "文档没有介绍 gRPC，也并未给出相关的配置方法。"),
        ("unanswerable", "Does FastAPI support MQTT?", "The documentation doesn't mention MQTT."),
        ("unanswerable", "How many X-Token values can a request carry?", "No maximum is documented."),
        ("factual", "状态码 404 表示什么？", "请求的资源找不到。"),  # 找不到 here is the answer, not a refusal
        ("factual", "GET 请求可以带请求体吗？", "HTTP 标准并未规定带载荷的 GET 如何处理。"),  # neither is 并未规定
    ],
)
def test_type_plausible_natural_phrasings(qtype: str, question: str, answer: str) -> None:
    res = type_plausible.check(pair("q", question, answer, qtype=qtype), CHUNKS, type_plausible.Settings())
    assert res.passed, res.reason


def _quoting(p, *spans: tuple[str, str]):
    """``p`` with one evidence quote per (chunk id, quote)."""
    from goldset.schema import Evidence

    return p.model_copy(update={"evidence": [Evidence(chunk_id=c, doc_id=f"{c.rsplit('-', 1)[0]}.md", quote=q)
                                             for c, q in spans]})  # fmt: skip


READINGS = (("en-body-1", "request body"), ("en-body-2", "To send data"))
ZH_READINGS = (("zh-body-1", "请求体"), ("zh-body-2", "发送数据"))


@pytest.mark.parametrize(
    ("question", "answer", "spans"),
    [
        ("How do I send data?", "It depends on whether you mean a request body or the method: a body is data the "
         "client sends; the method is usually POST.", READINGS),
        ("What is the body?", "Which one do you mean: the request body (client to API) or the response body?",
         READINGS),
        ("What is the body?", "It could mean the request body or the response body; the client sends the first.",
         READINGS),
        ("数据怎么发送？", "这取决于您指的是请求体还是请求方法：请求体由客户端发送，方法通常用 POST。", ZH_READINGS),
        ("怎么发送？", "您问的是哪一种：发送请求体，还是选择请求方法？", ZH_READINGS),
    ],
)  # fmt: skip
def test_type_plausible_ambiguous_answers_name_the_readings(question: str, answer: str, spans: tuple) -> None:
    p = _quoting(pair("q", question, answer, qtype="ambiguous"), *spans)
    res = type_plausible.check(p, CHUNKS, type_plausible.Settings())
    assert res.passed, res.reason


def test_type_plausible_flags_an_ambiguous_pair_without_readings_or_a_quote_for_each() -> None:
    s = type_plausible.Settings()
    plain = _quoting(pair("q", "How do I send data?", "Use POST with a request body.", qtype="ambiguous"), *READINGS)
    res = type_plausible.check(plain, CHUNKS, s)
    assert res.flagged and "names no readings" in res.reason
    zh_plain = _quoting(pair("q", "数据怎么发送？", "用 POST 发送请求体。", qtype="ambiguous"), *ZH_READINGS)
    assert type_plausible.check(zh_plain, CHUNKS, s).flagged
    one = pair("q", "How do I send data?", "It depends on whether you mean the body or the method.", qtype="ambiguous")
    res = type_plausible.check(_quoting(one, READINGS[0]), CHUNKS, s)
    assert res.flagged and "quotes 1 span" in res.reason
    assert type_plausible.check(_quoting(one, READINGS[0], READINGS[0]), CHUNKS, s).flagged  # the same quote twice
    assert type_plausible.check(_quoting(one, *READINGS), CHUNKS, s).passed
    assert type_plausible.check(_quoting(one, READINGS[0]), CHUNKS, type_plausible.Settings(min_ambiguous_quotes=1))


KEY_POINTS = "- Send it in a request body.\n- Use POST, PUT, DELETE or PATCH."
ZH_KEY_POINTS = "1. 用请求体发送数据。\n2. 使用 POST、PUT、DELETE 或 PATCH。"


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("How would you design an API endpoint that receives data?", KEY_POINTS),
        ("What should one consider when sending data to an API?", KEY_POINTS),
        ("What are the main considerations for sending data to an API?", KEY_POINTS),
        ("如何设计一个接收数据的 API？", ZH_KEY_POINTS),
        ("向 API 发送数据时需要考虑哪些方面？", ZH_KEY_POINTS),
        ("设计接收数据的接口时应注意什么？", "（1）用请求体发送数据；（2）使用 POST 方法。"),
    ],
)
def test_type_plausible_open_ended_asks_design_or_considerations_and_lists_points(question: str, answer: str) -> None:
    p = _quoting(pair("q", question, answer, qtype="open_ended"), *READINGS)
    res = type_plausible.check(p, CHUNKS, type_plausible.Settings())
    assert res.passed, res.reason


def test_type_plausible_flags_an_open_ended_pair_without_its_cue_or_its_key_points() -> None:
    s = type_plausible.Settings()
    factual = _quoting(pair("q", "Which method sends data?", KEY_POINTS, qtype="open_ended"), *READINGS)
    res = type_plausible.check(factual, CHUNKS, s)
    assert res.flagged and "how-to-design" in res.reason
    zh_factual = _quoting(pair("q", "用哪个方法发送数据？", ZH_KEY_POINTS, qtype="open_ended"), *ZH_READINGS)
    assert type_plausible.check(zh_factual, CHUNKS, s).flagged
    prose = pair("q", "What should one consider when sending data?", "Use a body and POST.", qtype="open_ended")
    res = type_plausible.check(_quoting(prose, *READINGS), CHUNKS, s)
    assert res.flagged and "lists 0 key point" in res.reason
    assert type_plausible.check(_quoting(prose, *READINGS), CHUNKS, type_plausible.Settings(min_key_points=0)).passed


def test_leakage_and_evidence_treat_the_new_types_like_answerable_pairs() -> None:
    good = _quoting(pair("q", "How do I send data?", "It depends on whether you mean the payload or the verb: "
                         "a request body carries it; POST is the usual method.", qtype="ambiguous"), *READINGS)
    assert leakage.check(good, CHUNKS, leakage.Settings()).passed
    spelled_out = pair("q", "Should I send data in a request body or with POST?", "A request body or POST.",
                       qtype="ambiguous")  # the question names its readings: the answer adds nothing
    assert not leakage.check(spelled_out, CHUNKS, leakage.Settings()).passed
    listed = _quoting(pair("q", "What should one consider when sending data?", KEY_POINTS, qtype="open_ended"),
                      *READINGS)
    assert leakage.check(listed, CHUNKS, leakage.Settings()).passed
    assert evidence.check(listed, CHUNKS, evidence.Settings()).passed
    unquoted = listed.model_copy(update={"evidence": []})
    assert not evidence.check(unquoted, CHUNKS, evidence.Settings()).passed  # no evidence: only unanswerable


def test_question_form_accepts_a_chinese_imperative() -> None:
    imperative = pair("q", "说明 Header 参数的下划线转换规则", "x")
    assert question_form.check(imperative, CHUNKS, question_form.Settings()).passed


def test_evidence_check() -> None:
    s = evidence.Settings()
    quote = fixture_quote("en-body-2")
    good = pair("q1", "What about GET?", "x", chunks=("en-body-2",))
    assert evidence.check(good, CHUNKS, s).passed
    # A chunk that is not in the KB, a quote not in its chunk, a wrong document: each named.
    gone = pair("q1", "What about GET?", "x", chunks=("en-gone-1",), quote=quote)
    assert "chunk en-gone-1 is not in the KB" in evidence.check(gone, CHUNKS, s).reason
    moved = pair("q1", "What about GET?", "x", chunks=("en-body-2",), quote="a sentence the chunk does not hold")
    assert "quote not found in chunk en-body-2" in evidence.check(moved, CHUNKS, s).reason
    wrong_doc = good.model_copy(update={"evidence": [good.evidence[0].model_copy(update={"doc_id": "other.md"})]})
    res = evidence.check(wrong_doc, CHUNKS, s)
    assert not res.passed and res.rejects and "belongs to en-body.md, not to other.md" in res.reason
    # No evidence at all: only an unanswerable pair may have none.
    bare = good.model_copy(update={"evidence": []})
    assert "no evidence" in evidence.check(bare, CHUNKS, s).reason
    assert evidence.check(pair("q1", "Does it do MQTT?", "Not documented.", qtype="unanswerable"), CHUNKS, s).passed
    # Quotes match the way generation matches them: whitespace, full-width punctuation, a trailing ellipsis.
    loose = "Sending a body with a `GET`   request has an undefined behavior…"
    assert evidence.check(pair("q1", "GET?", "x", chunks=("en-body-2",), quote=loose), CHUNKS, s).passed
    zh = "规范中没有定义用 `GET` 请求发送请求体的行为,但 FastAPI 仍支持这种方式"  # half-width comma
    assert evidence.check(pair("q1", "GET？", "x", chunks=("zh-body-2",), quote=zh), CHUNKS, s).passed


QUOTE_TEXT = st.lists(st.sampled_from([*"ab ，,。.…\n\t　ＡA路径", "..."]), max_size=20).map("".join)


@settings(max_examples=300, deadline=None)
@given(QUOTE_TEXT, QUOTE_TEXT)
def test_quotes_are_found_exactly_as_generation_finds_them(quote: str, text: str) -> None:
    """The evidence check and generation never disagree on whether a quote is in its chunk."""
    from goldset.generation.validation import quote_in_text

    assert evidence.quote_found(quote, text) == quote_in_text(quote, text)
    assert evidence.quote_found(text[3:12], text) == quote_in_text(text[3:12], text)

"""The relevance matcher on contexts chunked differently from goldset's chunks (English and Chinese)."""

from __future__ import annotations

import random

import pytest

from goldset.evaluation.matcher import Matcher
from goldset.evaluation.settings import EvalSettings
from goldset.schema.pairs import Evidence
from goldset.schema.runs import RetrievedContext
from goldset.text import tokenize

QUOTE = (
    "FastAPI uses Pydantic models to declare the request body, validate the data and convert it "
    "to Python types automatically"
)  # 19 tokens
WORDS = QUOTE.split()
ZH_QUOTE = "FastAPI 拥有非常强大但非常直观的依赖注入系统，它被设计得非常易于使用。"


def ev(quote: str = QUOTE, chunk_id: str = "c1", doc_id: str = "d1") -> Evidence:
    return Evidence(chunk_id=chunk_id, doc_id=doc_id, quote=quote)


def ctx(text: str, chunk_id: str | None = None, doc_id: str | None = None) -> RetrievedContext:
    return RetrievedContext(text=text, chunk_id=chunk_id, doc_id=doc_id)


def test_whole_quote_inside_a_larger_context_despite_markup_case_and_line_breaks() -> None:
    m = Matcher("text")
    text = "## Request body\n\n**FastAPI** uses *Pydantic* models to declare the request\nbody, validate THE data and "
    text += "convert it to Python types automatically. More text follows here."
    r = m.relevance([ev()], [ctx("Unrelated paragraph about deployment."), ctx(text)])
    assert r.rel == (0, 1)
    assert r.n_relevant == 1


def test_quote_split_across_two_contexts_counts_for_the_larger_piece() -> None:
    m = Matcher("text", min_share=0.5, min_tokens=8)
    first = "Intro sentence. " + " ".join(WORDS[:12])  # 12 of 19 tokens: the larger piece
    second = " ".join(WORDS[12:]) + ". Next section."  # 7 of 19 tokens
    r = m.relevance([ev()], [ctx(second), ctx(first)])
    assert r.rel == (0, 1)
    assert r.matched == (0, 1)
    assert r.n_covered == 1


def test_quote_split_three_ways_matches_no_single_context_but_is_covered_together() -> None:
    m = Matcher("text", min_share=0.5, min_tokens=5)  # need = 10 of 19 tokens
    pieces = [" ".join(WORDS[:7]), " ".join(WORDS[7:14]), " ".join(WORDS[14:])]  # 7 + 7 + 5 tokens
    contexts = [ctx("Before. " + pieces[0]), ctx(pieces[1]), ctx(pieces[2] + ". After.")]
    r = m.relevance([ev()], contexts)
    assert r.rel == (0, 0, 0)  # no context holds half of the quote ...
    assert r.n_covered == 1  # ... but together they hold all of it: context recall counts it
    only_two = m.relevance([ev()], contexts[:1] + contexts[2:])  # 12 of 19 tokens, the middle missing
    assert only_two.n_covered == 1
    only_one = m.relevance([ev()], contexts[:1])  # 7 of 19: not enough
    assert only_one.n_covered == 0


def test_context_wholly_inside_a_long_quote() -> None:
    m = Matcher("text", min_share=0.5, min_tokens=8)
    assert m.relevance([ev()], [ctx(" ".join(WORDS[3:15]))]).rel == (1,)  # 12 tokens inside the quote
    assert m.relevance([ev()], [ctx(" ".join(WORDS[3:10]))]).rel == (0,)  # 7 tokens: too little


def test_words_in_common_but_not_in_sequence_do_not_match() -> None:
    m = Matcher("text")
    shuffled = " ".join(reversed(WORDS))
    assert m.relevance([ev()], [ctx(shuffled)]).rel == (0,)


def test_short_quotes_must_be_whole_and_on_token_boundaries() -> None:
    m = Matcher("text", min_tokens=8)
    short = ev("uses Python 3.8")
    assert m.relevance([short], [ctx("FastAPI uses Python 3.8 or later")]).rel == (1,)
    assert m.relevance([short], [ctx("FastAPI uses Python 3.80")]).rel == (0,)  # 80 is not 8
    assert m.relevance([short], [ctx("FastAPI uses Python")]).rel == (0,)


def test_long_quotes_and_contexts_cut_mid_word_still_match() -> None:
    m = Matcher("text", min_share=0.5, min_tokens=8)
    cut_quote = QUOTE[3:-4]  # "tAPI uses ... automati": both edge words cut
    assert m.relevance([ev(cut_quote)], [ctx("Intro. " + QUOTE + " More.")]).rel == (1,)
    cut_context = QUOTE[:70]  # ends inside a word, holds the first 12 of 19 tokens
    assert m.relevance([ev()], [ctx("Intro: " + cut_context)]).rel == (1,)
    inner = QUOTE[20:88]  # "c models ... and conver": a context inside the quote, both edge words cut
    assert m.relevance([ev()], [ctx(inner)]).rel == (1,)


def test_inside_match_with_the_fewest_whole_tokens() -> None:
    """8 tokens inside a 16-token quote, both edge words cut: only 6 whole tokens (quote tokens 1-6) remain; they
    hold 39 of the quote's 58 letters."""
    words = "alpha bravo charlie delta echo foxtrot golf hotel ab cd ef gh ij kl mn op"
    quote = ev(words)
    context = "lpha bravo charlie delta echo foxtrot golf hot"  # tokens 0-7, 0 and 7 cut
    assert Matcher("text", min_share=0.5, min_tokens=8).relevance([quote], [ctx(context)]).rel == (1,)


def test_chinese_quote_with_other_punctuation_and_split() -> None:
    m = Matcher("text", min_share=0.5, min_tokens=8)
    same = "简介。FastAPI拥有非常强大但非常直观的依赖注入系统, 它被设计得非常易于使用! 后文。"
    assert m.relevance([ev(ZH_QUOTE)], [ctx(same)]).rel == (1,)
    head = "FastAPI 拥有非常强大但非常直观的依赖注入"  # 1 + 16 of 31 tokens
    tail = "系统，它被设计得非常易于使用。"
    r = m.relevance([ev(ZH_QUOTE)], [ctx(tail), ctx(head)])
    assert r.rel == (0, 1)
    assert m.relevance([ev(ZH_QUOTE)], [ctx("依赖注入是一种设计模式，系统非常强大。")]).rel == (0,)


# -- half of a quote is half of its letters (a context cut inside a word keeps that word's letters) -------------------

DEPS = (
    "FastAPI resolves every sub-dependency before it calls your path operation function, and it caches the results "
    "per request"
)


def test_a_quote_cut_inside_a_word_counts_for_the_piece_holding_more_of_it() -> None:
    """19 tokens cut inside the 10th ("pa|th"): 9 whole tokens on either side, so neither held 10 of 19 tokens and
    the quote was found by no context at all. By letters the left piece holds 52 of 102."""
    m = Matcher("text")
    cut = DEPS.index("path") + 2
    left, right = "Intro. " + DEPS[:cut], DEPS[cut:] + " More."
    r = m.relevance([ev(DEPS)], [ctx(right), ctx(left)])
    assert r.rel == (0, 1)
    assert m.relevance([ev(DEPS)], [ctx(right)]).rel == (0,)  # 50 of 102 letters: under half


def test_chinese_quote_cut_inside_an_identifier_counts_for_the_larger_piece() -> None:
    """15 characters, an identifier, 15 characters; a context boundary cuts the identifier: 15 whole tokens on each
    side of 31, so neither side matched. The right piece holds 33 of the 58 letters."""
    m = Matcher("text")
    quote = "路径操作的参数按名称匹配，可以用 response_model_exclude_unset 只返回显式设置过的字段值就可以。"
    cut = quote.index("model")
    left, right = "前文。" + quote[:cut], quote[cut:] + "后文"
    assert m.relevance([ev(quote)], [ctx(left), ctx(right)]).rel == (0, 1)


def test_half_of_a_quote_is_half_of_its_letters_whatever_the_script() -> None:
    """A Chinese quote with two long identifiers: 9 of its 19 tokens hold 33 of its 62 letters, the other 10 hold
    29. The half that holds more of the quote counts, not the half with more (one-character) tokens."""
    m = Matcher("text")
    quote = "在依赖项中声明 OAuth2PasswordRequestForm 和 HTTPBasicCredentials 以读取用户名和密码"
    first, second = "在依赖项中声明 OAuth2PasswordRequestForm 和", "HTTPBasicCredentials 以读取用户名和密码"
    assert m.relevance([ev(quote)], [ctx("前文。" + first), ctx(second + "。后文")]).rel == (1, 0)


def test_eight_words_of_fourteen_are_not_half_of_the_quote_when_they_hold_under_half_its_letters() -> None:
    quote = "Use response_model_exclude_unset to return only the values that were explicitly set in the request"
    m = Matcher("text")  # 14 tokens, 85 letters: half is 43
    last_eight = "Other text: values that were explicitly set in the request"  # 39 letters
    first_eight = "Use response_model_exclude_unset to return only the values that, ..."  # 56 letters
    assert m.relevance([ev(quote)], [ctx(last_eight), ctx(first_eight)]).rel == (0, 1)


def test_a_head_cut_inside_a_word_does_not_match_another_word_starting_the_same() -> None:
    """Half of this quote ends inside "image01" ("...imag"); a context with the same sentence but image02 is another
    figure, and holds less than half the quote (the Chinese one: its tail starts inside "debugging")."""
    m = Matcher("text")
    quote = (
        'In the debugger it will look like this: <img src="/img/tutorial/debugging/image01.png"> and then you can '
        "step through the code line by line and inspect them"
    )
    other = 'In the debugger it will look like this: <img src="/img/tutorial/debugging/image02.png"> with variables.'
    cut_there = 'In the debugger it will look like this: <img src="/img/tutorial/debugging/imag'  # a context cut
    assert m.relevance([ev(quote)], [ctx(other), ctx(cut_there)]).rel == (0, 1)
    zh = '运行后界面如下：<img src="/img/tutorial/debugging/image01.png"> 然后就可以在编辑器里设置断点并逐步调试代码了'
    zh_other = '<img src="/img/tutorial/logging/image01.png"> 然后就可以在编辑器里设置断点并逐步调试代码了'
    zh_cut = 'ugging/image01.png"> 然后就可以在编辑器里设置断点并逐步调试代码了'
    assert m.relevance([ev(zh)], [ctx(zh_other), ctx(zh_cut)]).rel == (0, 1)


def test_context_recall_adds_up_letters_of_pieces() -> None:
    """Identifiers at both ends of a Chinese quote: the two end pieces hold 16 of 36 tokens (under half) but 130 of
    its 150 letters, so together they cover it; neither does alone."""
    m = Matcher("text")
    ends = ["OAuth2PasswordBearer", "OAuth2PasswordRequestForm", "HTTPBasicCredentials"]
    middle = "在依赖项中声明这些类之后就可以读取请求里的用户名和密码并完成身份验证流程"
    quote = " ".join(ends) + " " + middle[:30] + " " + " ".join(reversed(ends))
    head, tail = " ".join(ends) + " " + middle[:5], middle[25:30] + " " + " ".join(reversed(ends))
    r = m.relevance([ev(quote)], [ctx("前文 " + head), ctx(tail + " 后文")])
    assert r.rel == (0, 0)
    assert r.n_covered == 1


# -- systems that index rendered text: link targets, HTML tags and {#anchors} are gone -------------------------------

RENDERED = (  # a quote copied from the Markdown source
    'FastAPI has a very powerful but intuitive <abbr title="also known as components, resources, providers">Dependency '
    "Injection</abbr> system. It is designed to be very simple to use, see [the dependency injection tutorial]"
    "(https://fastapi.tiangolo.com/tutorial/dependencies/) for all the details"
)
FIRST = "FastAPI has a very powerful but intuitive Dependency Injection system."  # 60 of 137 letters a reader sees
SECOND = "It is designed to be very simple to use, see the dependency injection tutorial for all the details."  # 77


def test_a_context_of_rendered_text_matches_a_quote_copied_with_markup() -> None:
    """A crawler of the documentation site or a Markdown-to-text loader keeps a link's text but not its target, nor
    HTML tags with their attributes: the quote as written is in no such context, nor either of its halves."""
    contexts = [ctx("Intro. " + FIRST), ctx(SECOND + " More."), ctx(f"{FIRST} {SECOND}")]
    r = Matcher("text", rendered_text=True).relevance([ev(RENDERED)], contexts)
    assert (r.rel, r.matched) == ((0, 1, 0), (0, 1, 1))  # halves count over what a reader sees: SECOND holds more
    assert Matcher("text").relevance([ev(RENDERED)], contexts).matched == (0, 0, 0)  # eval.text_match_rendered off
    on = Matcher.from_settings(EvalSettings(matcher="text", text_match_rendered=True))
    assert on.relevance([ev(RENDERED)], contexts).matched == (0, 1, 1)


def test_pieces_of_a_rendered_quote_in_several_contexts_cover_it() -> None:
    m = Matcher("text", rendered_text=True)
    end = "to use, see the dependency injection tutorial for all the details."  # 11 tokens, 54 letters
    r = m.relevance([ev(RENDERED)], [ctx("Intro. " + FIRST), ctx(end + " More.")])
    assert r.rel == (0, 0)
    assert r.n_covered == 1  # 114 of 137 letters together


def test_chinese_rendered_context_with_a_link_target_in_the_middle_of_the_quote() -> None:
    """The link target and its attribute block sit in both token halves of the quote as written (51 tokens)."""
    m = Matcher("text", rendered_text=True)
    before, link, after = (
        "在使用它之前请确保创建并激活一个",
        "虚拟环境",
        "，然后再用它来安装密码哈希库和它所需要的全部依赖项",
    )
    quote = f"{before}[{link}](../../virtual-environments.md){{.internal-link target=_blank}}{after}"
    whole, head, tail = before + link + after, "前文。" + before + link + after[:8], before[8:] + link + after + "。"
    assert m.relevance([ev(quote)], [ctx(whole), ctx(head), ctx(tail)]).matched == (1, 1, 1)
    assert m.relevance([ev(quote)], [ctx("前文。" + before)]).rel == (0,)  # 16 of 44 letters


def test_a_context_showing_markup_is_compared_with_the_quote_as_written_only() -> None:
    """A context that keeps its Markdown did not come from a rendering system: there, another link target behind
    the same link text is another link, though the quote as rendered would match it."""
    m = Matcher("text", rendered_text=True)
    second = RENDERED[RENDERED.index("It is") :]  # the quote's second half as written: most of its letters
    other_link = second.replace("https://fastapi.tiangolo.com/tutorial/dependencies/", "https://example.com/di/")
    assert m.relevance([ev(RENDERED)], [ctx(other_link), ctx(second)]).rel == (0, 1)
    as_html = f"<p>{FIRST}</p> <p>{SECOND}</p>"  # rendered to HTML: no link syntax, but tags
    assert m.relevance([ev(RENDERED)], [ctx(as_html)]).rel == (0,)


def test_id_matchers() -> None:
    evidence = [ev(chunk_id="c1", doc_id="d1"), ev("another quote of the same chunk", chunk_id="c1", doc_id="d1")]
    contexts = [ctx("x", chunk_id="c2", doc_id="d1"), ctx("y", chunk_id="c1", doc_id="d1")]
    by_chunk = Matcher("chunk_id").relevance(evidence, contexts)
    assert (by_chunk.rel, by_chunk.n_relevant) == ((0, 1), 1)  # one unit: chunk c1
    by_doc = Matcher("doc_id").relevance(evidence, contexts)
    assert (by_doc.rel, by_doc.matched, by_doc.n_relevant) == ((1, 0), (1, 1), 1)  # the repeat finds nothing new
    no_ids = Matcher("chunk_id").relevance(evidence, [ctx(QUOTE)])
    assert no_ids.rel == (0,)  # text is ignored by the id matchers


def test_auto_uses_text_then_ids() -> None:
    m = Matcher("auto")
    evidence = [ev(chunk_id="c1", doc_id="d1")]
    # text decides when it matches, whatever the ids say
    assert m.relevance(evidence, [ctx(QUOTE, chunk_id="theirs-7")]).rel == (1,)
    # goldset's chunk id is trusted even when the text differs (e.g. the system returns a summary)
    assert m.relevance(evidence, [ctx("a summary of the chunk", chunk_id="c1")]).rel == (1,)
    # no text, no chunk id: the document id decides
    assert m.relevance(evidence, [ctx("", doc_id="d1")]).rel == (1,)
    # with text, a document id alone is too coarse to count
    assert m.relevance(evidence, [ctx("something else entirely", doc_id="d1")]).rel == (0,)
    # the text matcher never looks at ids
    assert Matcher("text").relevance(evidence, [ctx("a summary of the chunk", chunk_id="c1")]).rel == (0,)


def test_units_are_distinct_quotes_and_a_context_with_two_counts_once() -> None:
    m = Matcher("text")
    q2 = "Dependencies are declared with Depends in the path operation function parameters"
    evidence = [ev(), ev(QUOTE.upper(), chunk_id="c9"), ev(q2, chunk_id="c2")]
    assert len(m.units(evidence)) == 2  # the same quote twice (other case) is one unit
    both = ctx(QUOTE + " And then: " + q2)
    r = m.relevance(evidence, [both, ctx(QUOTE)])
    assert (r.rel, r.new_units, r.matched, r.n_relevant) == ((1, 0), (2, 0), (1, 1), 2)


def test_matches_single_context_and_bad_modes() -> None:
    m = Matcher("text")
    unit = m.units([ev()])[0]
    assert m.matches(ctx("x " + QUOTE), unit)
    assert not m.matches(ctx("nothing"), unit)
    with pytest.raises(ValueError, match="unknown matcher"):
        Matcher("fuzzy")


# -- the fast path (anchor pre-checks, substring searches) agrees with a plain token-list definition ----------------

# enough distinct tokens that the anchor pre-checks often fail (which is what they are for)
VOCAB = [f"w{i}" for i in range(30)] + list("中文系统依赖注入路径参数") + ["Ｆｏｏ", "foo", "ÄB", "the", "a"]
SEPS = [" ", "\n", ", ", "，", " **", "。"]


def _contains(big: list[str], small: list[str]) -> bool:
    return any(big[i : i + len(small)] == small for i in range(len(big) - len(small) + 1))


def _contains_loose(big: list[str], small: list[str]) -> bool:
    """``small`` inside ``big`` where its first token may end a token of ``big`` and its last may start one."""
    k = len(small)
    if k == 1:
        return any(small[0] in t for t in big)
    return any(
        big[i].endswith(small[0]) and big[i + 1 : i + k - 1] == small[1:-1] and big[i + k - 1].startswith(small[-1])
        for i in range(len(big) - k + 1)
    )


def _piece_at(big: list[str], piece: list[str], before: str | None, after: str | None) -> bool:
    """``piece`` inside ``big`` as a token sequence, where its first token may end a longer token of ``big`` whose
    beginning ends ``before``, and its last may begin one whose rest begins ``after`` (None: anything)."""
    k = len(piece)
    for i in range(len(big) - k + 1):
        first, last = big[i], big[i + k - 1]
        if k == 1:
            spots = [s for s in range(len(first) - len(piece[0]) + 1) if first.startswith(piece[0], s)]
        elif first.endswith(piece[0]) and big[i + 1 : i + k - 1] == piece[1:-1] and last.startswith(piece[-1]):
            spots = [len(first) - len(piece[0])]
        else:
            continue
        for s in spots:
            rest = last[s + len(piece[0]) :] if k == 1 else last[len(piece[-1]) :]
            if (before is None or before.endswith(first[:s])) and (after is None or after.startswith(rest)):
                return True
    return False


def _head(q: list[str], need: int, min_tokens: int) -> tuple[list[str], str | None]:
    """The quote's shortest prefix holding ``need`` letters (its last token possibly cut) and ``min_tokens`` tokens,
    and the rest of the token it cuts ("" at a token's end, None at the quote's end)."""
    got = j = 0
    while got + len(q[j]) < need:
        got += len(q[j])
        j += 1
    if j < min_tokens:
        piece, rest = q[:min_tokens], ""
    else:
        piece, rest = [*q[:j], q[j][: need - got]], q[j][need - got :]
    return piece, (None if len(piece) == len(q) and rest == "" else rest)


def _reference_match(context: str, quote: str, share: float, min_tokens: int) -> bool:
    """The documented rule, written token by token."""
    from math import ceil

    c, q = tokenize(context), tokenize(quote)
    n = len(q)
    if not q or not c:
        return False
    if n < min_tokens:
        return _contains(c, q)  # short quotes: whole, on token boundaries
    need = ceil(share * sum(map(len, q)) - 1e-9)  # letters
    head, rest = _head(q, need, min_tokens)
    back, lead = _head([t[::-1] for t in reversed(q)], need, min_tokens)  # the tail, read backwards
    tail = [t[::-1] for t in reversed(back)]
    if _piece_at(c, head, None, rest) or _piece_at(c, tail, None if lead is None else lead[::-1], None):
        return True
    inside = min_tokens <= len(c) < n and sum(map(len, c)) >= need and _contains_loose(q, c)
    return inside and len(context) <= 2 * len(quote) + 32


def _case(rng: random.Random) -> tuple[str, str, float, int]:
    words = [rng.choice(VOCAB) for _ in range(rng.randint(1, 24))]
    quote = "".join(w + rng.choice(SEPS) for w in words).strip()
    a = rng.randint(0, len(words))
    b = rng.randint(a, len(words))
    noisy = rng.random() < 0.4  # without noise the context may lie wholly inside the quote
    before = [rng.choice(VOCAB) for _ in range(rng.randint(0, 6))] if noisy else []
    after = [rng.choice(VOCAB) for _ in range(rng.randint(0, 6))] if noisy else []
    context = "".join(w + rng.choice(SEPS) for w in before + words[a:b] + after)
    if rng.random() < 0.3:
        context = context.upper()
    if rng.random() < 0.3:  # cut in the middle of a word, as fixed-size chunkers and careless quotes do
        quote = quote[rng.randint(0, 2) : len(quote) - rng.randint(0, 2)]
    if rng.random() < 0.3:
        context = context[rng.randint(0, 2) : len(context) - rng.randint(0, 2)]
    return quote, context, rng.choice([0.3, 0.5, 0.8, 1.0]), rng.randint(1, 9)


def test_fast_matcher_agrees_with_the_token_definition() -> None:
    """20,000 random quote/context cases (splits, noise, case, full-width, CJK, words cut): the pre-checked
    substring searches decide exactly as the token-by-token rule. (Hypothesis found too few 'inside only' cases.)"""
    rng = random.Random(2026)
    kinds = {True: 0, False: 0}
    for _ in range(20_000):
        quote, context, share, min_tokens = _case(rng)
        if not tokenize(quote):
            continue
        expected = _reference_match(context, quote, share, min_tokens)
        got = Matcher("text", share, min_tokens).relevance([ev(quote)], [ctx(context)]).rel == (1,)
        assert got == expected, (quote, context, share, min_tokens)
        kinds[expected] += 1
    assert min(kinds.values()) > 1200  # both outcomes well represented

"""Deterministic fake-LLM responders for generation: they build QA pairs FROM THE PROMPT they are sent.

A responder reads the chunks (``<chunk id="…">…</chunk>``), the language (``Language: …``) and the requested
types (``- factual: 2``) out of the rendered prompt, and answers like a careful model would: evidence quotes are
sentences copied from the chunk text in the prompt, questions and answers are derived from those sentences,
and they are written in Chinese when the prompt asks for Chinese. So a test passes only if the prompt really
carries the chunk, the language and the type mix. Every type is produced: multi_hop, ambiguous and open_ended
pairs quote two sentences (one of the partner chunk when the prompt shows two), an ambiguous answer names both
readings ("It depends on whether you mean …" / 这取决于您指的是…还是…) and an open_ended answer lists key points.

Register with ``fake.add_responder("qa_pairs", qa_responder)``; a responder takes the request body (the JSON
the openai client sent) and returns the assistant's JSON content as a dict.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable
from typing import Any

_CHUNK_RE = re.compile(r'<chunk id="([^"]+)">\n(.*?)\n</chunk>', re.DOTALL)
_LANG_RE = re.compile(r"^Language: (.+)$", re.MULTILINE)
_TYPE_RE = re.compile(r"^- ([a-z_]+): (\d+)$", re.MULTILINE)
_SENTENCE_RE = re.compile(r"[^.!?。！？\n]+[.!?。！？]?")


def user_prompt(body: dict[str, Any]) -> str:
    """The generation request: the first user message (a repair turn may follow it in the conversation)."""
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


def parse_prompt(body: dict[str, Any]) -> tuple[list[tuple[str, str]], str, list[str]]:
    """(chunks as (id, text), language name, requested types expanded one per pair) of a generation prompt."""
    text = user_prompt(body)
    chunks = _CHUNK_RE.findall(text)
    match = _LANG_RE.search(text)
    language = match.group(1).strip() if match else "English"
    types = [name for name, n in _TYPE_RE.findall(text) for _ in range(int(n))]
    return chunks, language, types


def sentences(text: str) -> list[str]:
    """Sentences of ``text`` as they appear in it (so they are verbatim quotes), longest-first fallback."""
    found = [s.strip() for s in _SENTENCE_RE.findall(text)]
    good = [s for s in found if len(s) >= 12]
    return good or [text.strip()]


def _topic(sentence: str, chinese: bool) -> str:
    if re.search(r"[\u4e00-\u9fff]", sentence):
        return sentence[:8]
    words = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", sentence)
    return " ".join(words[: 3 if chinese else 6]) or sentence[:20]


_EN = {
    "factual": ("What does the FastAPI documentation state about {t}?", "It states that {s}"),
    "reasoning": ("Why does the documentation explain {t}?", "Because, as it explains, {s}"),
    "comparison": ("How does {t} compare with the alternatives described?", "The comparison is: {s}"),
    "procedural": ("How do you proceed with {t}?", "You proceed as follows: {s}"),
    "multi_hop": ("How do {t} and {t2} relate?", "Combining both: {s} Also, {s2}"),
    "unanswerable": ("Does the documentation say how {t} behaves on Windows 95?", "The documentation does not say."),
    "ambiguous": (
        "How do I set up {t}?",
        "It depends on whether you mean {t} or {t2}: for the first, {s} For the second, {s2}",
    ),
    "open_ended": ("What should one consider when working with {t}?", "- {s}\n- {s2}"),
}
_ZH = {
    "factual": ("文档中关于「{t}」说明了什么？", "文档说明了这一点的具体内容和默认行为。"),
    "reasoning": ("为什么文档要介绍「{t}」？", "因为这样可以让使用者理解其中的原因和结果。"),
    "comparison": ("「{t}」与其他方式相比有什么不同？", "两者在用法和结果上有所不同。"),
    "procedural": ("如何按照文档完成「{t}」？", "按照文档中给出的步骤依次完成即可。"),
    "multi_hop": ("「{t}」和「{t2}」之间有什么关系？", "结合两部分内容可以看出它们相互配合。"),
    "unanswerable": ("文档是否说明了「{t}」在旧系统上的行为？", "文档没有说明这一点。"),
    "ambiguous": ("「{t}」应该怎么设置？", "这取决于您指的是「{t}」还是「{t2}」：两种情况的设置方法不同。"),
    "open_ended": (
        "使用「{t}」时需要考虑哪些方面？", "- 第一点：先确认声明方式是否正确。\n- 第二点：再检查传入的参数值。"
    ),
}
#: Types whose pairs quote two sentences: the partner chunk's when there is one, else the chunk's next sentence.
TWO_QUOTES = ("multi_hop", "ambiguous", "open_ended")


def build_pairs(body: dict[str, Any], *, quote_fn: Callable[[str], str] | None = None) -> dict[str, Any]:
    chunks, language, types = parse_prompt(body)
    if not chunks:
        return {"pairs": []}
    chinese = "Chinese" in language
    table = _ZH if chinese else _EN
    (cid, ctext), partner = chunks[0], (chunks[1] if len(chunks) > 1 else None)
    sents = sentences(ctext)
    psents = sentences(partner[1]) if partner else []
    pairs = []
    for i, qtype in enumerate(types):
        s = sents[i % len(sents)]
        q_tpl, a_tpl = table.get(qtype, table["factual"])
        t, t2 = _topic(s, chinese), ""
        evidence = [{"chunk_id": cid, "quote": quote_fn(s) if quote_fn else s}]
        s2 = ""
        if qtype in TWO_QUOTES and (partner or qtype != "multi_hop"):
            cid2, s2 = (partner[0], psents[i % len(psents)]) if partner else (cid, sents[(i + 1) % len(sents)])
            t2 = _topic(s2, chinese)
            evidence.append({"chunk_id": cid2, "quote": quote_fn(s2) if quote_fn else s2})
        if qtype == "unanswerable":
            evidence = []
        question = q_tpl.format(t=t, t2=t2) + ("" if chinese else f" (#{i + 1})")
        if chinese:
            question = f"{question}（第{i + 1}问）"
        pairs.append(
            {
                "question": question,
                "answer": a_tpl.format(s=s, s2=s2, t=t, t2=t2),
                "question_type": qtype,
                "evidence": evidence,
            }
        )
    return {"pairs": pairs}


def qa_responder(body: dict[str, Any]) -> dict[str, Any]:
    """A well-behaved model: every pair's quotes come verbatim from the prompt's chunks."""
    return build_pairs(body)


def reflowed_quote_responder(body: dict[str, Any]) -> dict[str, Any]:
    """Quotes with their whitespace changed (line breaks, doubled spaces): must still validate."""
    return build_pairs(body, quote_fn=lambda s: "  " + s.replace(" ", "\n  ", 2) + " ")


def invented_quote_responder(body: dict[str, Any]) -> dict[str, Any]:
    """Quotes that are NOT in the chunk (a word replaced): every answerable pair must be rejected."""
    return build_pairs(body, quote_fn=lambda s: "Allegedly, " + s)


def never_valid_responder(body: dict[str, Any]) -> dict[str, Any]:
    """A reply that never matches the schema, however often it is asked."""
    return {"pairs": "I cannot help with that."}


def logging_qa_responder(body: dict[str, Any]) -> dict[str, Any]:
    """:func:`qa_responder` that also appends a hash of the request's prompt to ``$GOLDSET_TEST_REQUEST_LOG``,
    so a test can see which requests a server in another process received more than once."""
    log = os.environ.get("GOLDSET_TEST_REQUEST_LOG")
    if log:
        digest = hashlib.sha256(user_prompt(body).encode("utf-8")).hexdigest()[:16]
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(digest + "\n")
    return qa_responder(body)

"""Real-looking user questions (both languages, duplicates, personal data, questions the KB does not answer), a
tiny KB to answer them from, and a fake model that drafts answers from the passages it is shown."""

from __future__ import annotations

import re
from typing import Any

from goldset.text import tokenize
from tests.helpers.fake_openai import last_user_message

DOCS = {
    "path-params.md": "# Path parameters\n\nPath parameters are declared with the same syntax as Python format "
    "strings. You can declare the type of a path parameter using standard Python type annotations.\n",
    "query-params.md": "# Query parameters\n\nQuery parameters are the key-value pairs after the question mark in "
    "a URL. When a query parameter has a default value it becomes optional.\n",
    "zh/path-params.md": "# 路径参数\n\n路径参数使用与 Python 格式字符串相同的语法声明。"
    "可以使用标准的类型注解声明路径参数的类型。\n",
}
#: personal data planted in the file; none of it may reach the workspace or the fake server
PERSONAL = ("jane.doe@example.com", "+1 415 555 0134", "13800138000", "4111 1111 1111 1111")
QUESTIONS_CSV = (
    "question,count,timestamp\n"
    "How do I declare the type of a path parameter?,3,2026-11-01T10:00:00\n"
    "how do I declare the type of a path parameter,2,2026-11-02T10:00:00\n"
    "How can I declare the type of a path parameter?,1,2026-11-03T10:00:00\n"
    "When does a query parameter become optional? mail me at jane.doe@example.com,1,\n"
    '"My card 4111 1111 1111 1111 was charged twice, call +1 415 555 0134: how do I get a refund?",1,\n'
    "如何声明路径参数的类型？,4,\n"
    "如何声明路径参数的类型,1,\n"
    "我的手机号是13800138000，你们的客服电话是多少？,1,\n"
)


_CHUNK_RE = re.compile(r'<chunk id="([^"]+)">\n(.*?)\n</chunk>', re.DOTALL)
_QUESTION_RE = re.compile(r"<question>\n(.*?)\n</question>", re.DOTALL)
_SENT_RE = re.compile(r"[^.。!?！？]+[.。!?！？]")


def draft_responder(body: dict[str, Any]) -> dict[str, Any]:
    """Answers with the passage sentence sharing most tokens with the question (at least 4), quoted verbatim; else
    says the documents do not answer it."""
    text = last_user_message(body)
    match = _QUESTION_RE.search(text)
    question = set(tokenize(match.group(1) if match else ""))
    best: tuple[int, str, str] = (0, "", "")
    for cid, chunk in _CHUNK_RE.findall(text):
        for sentence in _SENT_RE.findall(chunk):
            sentence = sentence.strip()
            if sentence.startswith("#"):
                continue
            shared = len(question & set(tokenize(sentence)))
            if shared > best[0]:
                best = (shared, cid, sentence)
    if best[0] >= 4:
        return {"answerable": True, "answer": best[2], "evidence": [{"chunk_id": best[1], "quote": best[2]}],
                "reason": ""}  # fmt: skip
    return {"answerable": False, "answer": "The documents do not answer this.", "evidence": [],
            "reason": "No passage is about this."}  # fmt: skip

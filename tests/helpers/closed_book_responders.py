"""A fair fake for the closed-book check: a model with a fixed store of general knowledge, and a judge that
compares two answers by their key facts. Neither reads any label; both decide from the prompt they are sent.

* ``closed_book_answer_responder``: the "model" knows the facts of :data:`GENERAL_KNOWLEDGE` (web and programming
  common knowledge, written as what any general model knows: HTTP status codes, JSON, ports, HTTP methods, Python
  keywords), and nothing of FastAPI's documentation. It answers a ``<question>`` when every cue of one entry occurs
  in it (English words or Chinese strings), else ``knows: false``. Like a general model it answers "which status
  code for invalid data" with 400, the common convention, not FastAPI's 422.
* ``closed_book_judge_responder``: ``agrees`` when every number of ``<reference_answer>`` is in ``<model_answer>``
  and at least 40% of the model answer's content tokens (words; Chinese character bigrams) occur in the reference.
"""

from __future__ import annotations

import re
from typing import Any

from tests.helpers.judge_responders import STOP

#: (cues, answer in English, answer in Chinese). Cues all present in the question -> the model answers.
GENERAL_KNOWLEDGE: list[tuple[tuple[str, ...], str, str]] = [
    (("404",), "404 means Not Found: the server cannot find the requested resource.",
     "404 表示未找到：服务器找不到请求的资源。"),
    (("500",), "500 is Internal Server Error: the server failed to handle the request.", "500 表示服务器内部错误。"),
    (("200",), "200 means OK: the request succeeded.", "200 表示请求成功。"),
    (("json",), "JSON stands for JavaScript Object Notation.", "JSON 是 JavaScript Object Notation 的缩写。"),
    (("https", "port"), "HTTPS uses port 443 by default.", "HTTPS 默认使用 443 端口。"),
    (("create", "method"), "POST is used to create a resource.", "通常用 POST 创建资源。"),
    (("python", "函数"), "Functions are defined with def.", "Python 用 def 关键字定义函数。"),
    (("python", "function"), "Functions are defined with the def keyword.", "用 def 定义函数。"),
    (("status", "validation"), "Usually 400 Bad Request.", "通常返回 400 Bad Request。"),
    (("状态码", "校验"), "Usually 400 Bad Request.", "通常返回 400 Bad Request。"),
]

_TAG = r"<{0}>\n(.*?)\n</{0}>"


def _tag(body: dict[str, Any], name: str) -> str:
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    m = re.search(_TAG.format(name), user, re.S)
    return m.group(1) if m else ""


def _chinese(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def closed_book_answer_responder(body: dict[str, Any]) -> dict[str, Any]:
    question = _tag(body, "question").lower()
    words = set(re.findall(r"[a-z0-9]+", question))
    for cues, en, zh in GENERAL_KNOWLEDGE:
        if all((c in words) if c.isascii() else (c in question) for c in cues):
            return {"knows": True, "answer": zh if _chinese(question) else en}
    return {"knows": False, "answer": ""}


def _tokens(text: str) -> set[str]:
    text = text.lower()
    words = {w for w in re.findall(r"[a-z]+", text) if w not in STOP and len(w) > 2}
    han = "".join(ch if "\u4e00" <= ch <= "\u9fff" and ch not in STOP else " " for ch in text)
    bigrams = {run[i : i + 2] for run in han.split() for i in range(max(1, len(run) - 1))}
    return words | bigrams | set(re.findall(r"\d+", text))


def closed_book_judge_responder(body: dict[str, Any]) -> dict[str, Any]:
    ref, got = _tag(body, "reference_answer"), _tag(body, "model_answer")
    numbers_ok = set(re.findall(r"\d+", ref)) <= set(re.findall(r"\d+", got))
    mine = _tokens(got)
    share = len(mine & _tokens(ref)) / len(mine) if mine else 0.0
    if numbers_ok and share >= 0.4:
        return {"agrees": True, "reason": "The model's answer states the reference's key facts."}
    return {"agrees": False, "reason": "The model's answer gives other facts than the reference."}

"""Deterministic fake-LLM responders for the groundedness judge and the paraphrase repair.

They decide FROM THE PROMPT they are sent, like a careful model would, so a test passes only if the prompt
really carries the answer, the question and the sources:

* ``groundedness_responder``: ``supported`` when every content word of ``<answer>`` occurs in ``<sources>``;
  ``answerable`` when 80% of the content words of ``<question>`` do. Unsupported claims are the answer's sentences
  holding a word the sources lack.
* ``make_repair_responder(rewrites)``: returns ``rewrites[answer]`` for a known answer, else the answer
  unchanged (a model that failed to paraphrase).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from goldset.text import tokenize

_TAG = r"<{0}>\n(.*?)\n</{0}>"
#: Words every sentence needs; they are no evidence of support.
_EN_STOP = (
    "a an the is are was were be of to in on at for by with from as and or not it its this that you your can "
    "do does use uses using what which how why when there their they should one all only"
)
STOP = set(_EN_STOP.split()) | set("的了是在和与或吗呢吧这那有个也就都而之于以中不可能会要用你把它们如何什么为")


def _field(text: str, tag: str) -> str:
    m = re.search(_TAG.format(tag), text, re.DOTALL)
    return m.group(1) if m else ""


def _user(body: dict[str, Any]) -> str:
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


def _content(text: str) -> list[str]:
    return [t for t in tokenize(text) if t not in STOP]


def groundedness_responder(body: dict[str, Any]) -> dict[str, Any]:
    text = _user(body)
    question, answer, sources = _field(text, "question"), _field(text, "answer"), _field(text, "sources")
    have = set(tokenize(sources))
    missing = [t for t in _content(answer) if t not in have]
    asked = _content(question)
    answerable = bool(sources) and bool(asked) and sum(t in have for t in asked) >= 0.8 * len(asked)
    claims = [s.strip() for s in re.split(r"(?<=[.!?。！？])\s*", answer) if any(t in tokenize(s) for t in missing)]
    return {
        "supported": not missing,
        "answerable": answerable,
        "unsupported_claims": [c for c in claims if c],
        "reason": f"words not in the sources: {', '.join(missing[:5])}" if missing else "every claim is in the sources",
    }


def make_repair_responder(rewrites: dict[str, str]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def respond(body: dict[str, Any]) -> dict[str, Any]:
        answer = _field(_user(body), "answer")
        return {"answer": rewrites.get(answer, answer)}

    return respond

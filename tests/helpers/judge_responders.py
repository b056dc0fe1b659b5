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


# -- a judge whose verdicts the test decides (judge calibration) ------------------------------------------------

#: An answer holding one of these is "not supported" by :func:`marker_judge`.
DOUBT_MARKS = ("reportedly", "据说")
#: A question holding one of these is "answerable from the sources" (an unanswerable pair the KB does answer).
ANSWERED_MARKS = ("in practice", "实际上")
#: An answer holding one of these is supported when the request has no seed or an even one, else not: a judge
#: that changes its mind between repeats, in a way the test can count.
WAVER_MARKS = ("usually", "通常")


def marker_judge(body: dict[str, Any]) -> dict[str, Any]:
    """The groundedness judge as a test controls it: the verdict depends only on marker words in the prompt's
    ``<answer>`` / ``<question>`` and on the request's ``seed`` (see the marks above), not on the sources."""
    text = _user(body)
    question, answer = _field(text, "question"), _field(text, "answer")
    seed = body.get("seed")
    wavers = any(m in answer for m in WAVER_MARKS) and seed is not None and seed % 2 == 1
    supported = not any(m in answer for m in DOUBT_MARKS) and not wavers
    answerable = any(m in question for m in ANSWERED_MARKS)
    return {
        "supported": supported,
        "answerable": answerable,
        "unsupported_claims": [] if supported else [answer[:60]],
        "reason": "marker judge",
    }

"""Deterministic fake-LLM responders for the groundedness judge, the paraphrase repair and the evaluation judge.

They decide FROM THE PROMPT they are sent, like a careful model would, so a test passes only if the prompt
really carries the answer, the question and the sources:

* ``groundedness_responder``: ``supported`` when every content word of ``<answer>`` occurs in ``<sources>``;
  ``answerable`` when 80% of the content words of ``<question>`` do. Unsupported claims are the answer's sentences
  holding a word the sources lack.
* ``make_repair_responder(rewrites)``: returns ``rewrites[answer]`` for a known answer, else the answer
  unchanged (a model that failed to paraphrase).
* ``claims_responder``, ``coverage_responder``, ``relevance_responder`` (``add_eval_judge_responders(fake)``): the
  evaluation judge's three calls; their rules are described above them, below.
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


# --------------------------------------------------------------------------------------------------- eval judge
# Responders of the evaluation judge's three calls (goldset.evaluation.judge): judge_claims, judge_coverage and
# judge_relevance. They too decide from the prompt alone, with rules simple enough to compute by hand:
#
# * claims: the answer's sentences are its claims (refusal sentences are not claims). A claim is *supported* by
#   the first context holding all its content words; *contradicted* by the first context holding all its non-number
#   content words but none of its numbers while stating a number of its own; else *not found*. The quote is the
#   context's sentence sharing the most words with the claim. Against the reference the same rule gives agrees /
#   contradicts / not_in_reference (null when the reference is "(none)").
# * coverage: the reference's sentences (an open_ended reference: its "- " lines) are its points; a point is
#   covered when 80% of its content words are in the answer. Ambiguous questions: readings acknowledged when the
#   answer asks ("?") or says "either" / "或".
# * relevance: rating 1 + round(4 × share of the question's content words in the answer), 1 for a refusal; a
#   context is relevant when it holds half the question's content words; stance: a refusal is declined, or hedged
#   when it goes on with "but" / "但"; reverse questions: "What about <sentence>?" per answer sentence, as many as
#   asked for.
#
# An answer containing BROKEN-<call> makes that call's responder reply with invalid JSON (the repair too).

_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])\s*")
_CONTEXT_RE = re.compile(r'<context index="(\d+)">\n(.*?)\n</context>', re.DOTALL)


def _line_value(text: str, label: str) -> str:
    m = re.search(rf"^{re.escape(label)}: (.*)$", text, re.MULTILINE)
    return m.group(1).strip() if m else ""


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_RE.split(text) if s.strip()]


def _contexts(text: str) -> list[str]:
    return [body for _, body in _CONTEXT_RE.findall(text)]


def _is_refusal(text: str) -> bool:
    from goldset.evaluation.metrics.refusal import compile_patterns, is_refusal
    from goldset.evaluation.settings import DEFAULT_REFUSAL_PATTERNS

    return is_refusal(text, compile_patterns(DEFAULT_REFUSAL_PATTERNS))


def _verdict(claim: str, source: str) -> str:
    words = _content(claim)
    have = set(tokenize(source))
    if all(w in have for w in words):
        return "supported"
    numbers = [w for w in words if w.isdigit()]
    others = [w for w in words if not w.isdigit()]
    states_another = any(t.isdigit() for t in have) and not any(n in have for n in numbers)
    if numbers and states_another and all(w in have for w in others):
        return "contradicted"
    return "not_found"


def _best_sentence(claim: str, source: str) -> str:
    words = set(_content(claim))
    return max(_sentences(source), key=lambda s: len(words & set(tokenize(s))), default="")


def claims_responder(body: dict[str, Any]) -> Any:
    text = _user(body)
    answer, reference = _field(text, "answer"), _field(text, "reference")
    if "BROKEN-claims" in answer:
        return '{"claims": [ this is not JSON'
    contexts = _contexts(text)
    claims = []
    for sentence in _sentences(answer):
        if _is_refusal(sentence) or not _content(sentence):
            continue
        verdict, index, quote = "not_found", None, ""
        for i, ctx in enumerate(contexts, 1):
            v = _verdict(sentence, ctx)
            if v != "not_found":
                verdict, index, quote = v, i, _best_sentence(sentence, ctx)
                break
        ref: str | None = None
        if reference != "(none)":
            ref = {"supported": "agrees", "contradicted": "contradicts"}.get(
                _verdict(sentence, reference), "not_in_reference"
            )
        claims.append({"claim": sentence, "verdict": verdict, "context": index, "quote": quote, "reference": ref})
    return {"claims": claims}


def coverage_responder(body: dict[str, Any]) -> Any:
    text = _user(body)
    answer, reference = _field(text, "answer"), _field(text, "reference")
    if "BROKEN-coverage" in answer:
        return "no JSON here"
    qtype = _line_value(text, "Question type")
    if qtype == "open_ended":
        items = [line[2:].strip() for line in reference.splitlines() if line.startswith("- ")]
    else:
        items = _sentences(reference)
    have = set(tokenize(answer))
    points = []
    for item in items:
        words = _content(item)
        covered = bool(words) and sum(w in have for w in words) >= 0.8 * len(words)
        points.append({"point": item, "covered": covered})
    readings = None
    if qtype == "ambiguous":
        readings = "?" in answer or "？" in answer or bool(re.search(r"\beither\b|或", answer))
    return {"points": points, "readings_acknowledged": readings}


def relevance_responder(body: dict[str, Any]) -> Any:
    text = _user(body)
    question, answer = _field(text, "question"), _field(text, "answer")
    if "BROKEN-relevance" in answer:
        return '{"relevance": {"rating": 9}}'  # valid JSON, invalid reply: rating out of range, parts missing
    asked = _content(question)
    have = set(tokenize(answer))
    refusal = _is_refusal(answer)
    share = sum(w in have for w in asked) / len(asked) if asked else 0.0
    rating = 1 if refusal else 1 + round(4 * share)
    contexts = []
    for i, ctx in enumerate(_contexts(text), 1):
        ctx_words = set(tokenize(ctx))
        relevant = bool(asked) and sum(w in ctx_words for w in asked) >= 0.5 * len(asked)
        contexts.append({"index": i, "relevant": relevant})
    if refusal:
        stance = "hedged" if re.search(r"\bbut\b|但", answer) else "declined"
    else:
        stance = "answered"
    n = int(_line_value(text, "Reverse questions asked for") or 0)
    sentences = _sentences(answer) or [answer]
    questions = [f"What about {sentences[i % len(sentences)]}?" for i in range(n)]
    return {
        "relevance": {
            "rating": rating,
            "reason": f"{share:.0%} of the question's words",
            "reverse_questions": questions,
        },
        "contexts": contexts,
        "stance": {"stance": stance, "reason": "refusal patterns" if refusal else "gives an answer"},
    }


#: The evaluation judge's responders by schema name.
EVAL_JUDGE_RESPONDERS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "judge_claims": claims_responder,
    "judge_coverage": coverage_responder,
    "judge_relevance": relevance_responder,
}


def add_eval_judge_responders(fake: Any) -> None:
    """Register the three evaluation-judge responders on a FakeOpenAI."""
    for name, fn in EVAL_JUDGE_RESPONDERS.items():
        fake.add_responder(name, fn)


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

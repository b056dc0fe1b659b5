"""Responders for the duplicate judge (schema ``duplicate_judge``) on the fake OpenAI server.

:func:`parse_pairs` reads the numbered pairs of questions out of a request rendered from
``prompts/filter_duplicate.md``; :func:`make_duplicate_responder` answers each with a rule the test gives
(``same(question_a, question_b) -> bool``); :func:`group_oracle` is the rule "same labelled group", used as a
*plumbing check* of the stage (it knows the answers: it says nothing about a real model's quality).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from tests.helpers.fake_openai import last_user_message

_PAIR_RE = re.compile(
    r'<pair n="(\d+)">\s*<question_a>(.*?)</question_a>.*?<question_b>(.*?)</question_b>.*?</pair>', re.S
)


def parse_pairs(body: dict[str, Any]) -> list[tuple[int, str, str]]:
    """(number, question A, question B) of every pair in the request."""
    return [(int(n), a, b) for n, a, b in _PAIR_RE.findall(last_user_message(body))]


def make_duplicate_responder(
    same: Callable[[str, str], bool], log: list[tuple[str, str]] | None = None
) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A responder giving one verdict per pair by ``same``; ``log`` collects every pair asked about."""

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        verdicts = []
        for n, a, b in parse_pairs(body):
            if log is not None:
                log.append((a, b))
            ok = same(a, b)
            verdicts.append({"pair": n, "same": ok, "reason": "same need" if ok else f"different: {a[:20]} / {b[:20]}"})
        return {"verdicts": verdicts}

    return respond


def group_oracle(group_of: Mapping[str, str | None]) -> Callable[[str, str], bool]:
    """``same(a, b)``: both questions belong to the same (non-empty) group of ``group_of`` (question -> group)."""

    def same(a: str, b: str) -> bool:
        ga, gb = group_of.get(a), group_of.get(b)
        return ga is not None and ga == gb

    return same


def pair_set_rule(same_pairs: set[frozenset[str]]) -> Callable[[str, str], bool]:
    """``same(a, b)``: the two questions form one of ``same_pairs`` (a hand-written answer key)."""
    return lambda a, b: frozenset((a, b)) in same_pairs


def no_duplicates(body: dict[str, Any]) -> dict[str, Any]:
    """A judge that finds every candidate pair distinct (for loops whose duplicates are not what they test)."""
    return make_duplicate_responder(lambda a, b: False)(body)

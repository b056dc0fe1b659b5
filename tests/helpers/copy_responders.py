"""The fake copy judge (``goldset.filters.copy_judge``), deciding FROM THE PROMPT alone, never from a label.

Rule: the answer's tokens (``goldset.text.tokenize``: words, CJK characters) that follow one passage *in its
order* (the longest common subsequence of the two token lists), as a share of the answer's tokens; at or over
``NEAR_COPY_SHARE`` the answer is a near copy. Order-preserving, so unlike a bag of words it tells an answer that
walks through the passage phrase by phrase (a synonym or two swapped, a lead-in added, two sentences merged) from
one that says the same in another structure; a clause swap lowers it. ``copied_phrases``: the common runs of three
tokens or more. ``make_copy_judge_responder(contradict=...)``: the same, but for an answer containing one of the
given strings the verdict contradicts itself (``near_copy`` and ``own_words`` both true).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from typing import Any

from goldset.text import tokenize

#: The share of the answer's tokens in order with a passage from which the fake calls it a near copy.
NEAR_COPY_SHARE = 0.6
_ANSWER = re.compile(r"<answer>\n(.*?)\n</answer>", re.DOTALL)
_PASSAGE = re.compile(r"<passage>\n(.*?)\n</passage>", re.DOTALL)


def _lcs_runs(a: list[str], b: list[str]) -> tuple[int, list[tuple[int, int]]]:
    """(length of the longest common subsequence of ``a`` and ``b``, the runs of consecutive ``a`` positions in it
    as (start, end))."""
    n, m = len(a), len(b)
    table = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            table[i][j] = table[i + 1][j + 1] + 1 if a[i] == b[j] else max(table[i + 1][j], table[i][j + 1])
    picked: list[int] = []
    i = j = 0
    while i < n and j < m:
        if a[i] == b[j]:
            picked.append(i)
            i, j = i + 1, j + 1
        elif table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    runs: list[tuple[int, int]] = []
    for k in picked:
        if runs and runs[-1][1] == k:
            runs[-1] = (runs[-1][0], k + 1)
        else:
            runs.append((k, k + 1))
    return table[0][0], runs


def verdict_of(answer: str, passages: list[str]) -> dict[str, Any]:
    """The fake judge's verdict on ``answer`` against ``passages``."""
    a = list(tokenize(answer))
    best, runs = 0, []
    for passage in passages:
        got, got_runs = _lcs_runs(a, list(tokenize(passage)))
        if got > best:
            best, runs = got, got_runs
    share = best / len(a) if a else 0.0
    near = share >= NEAR_COPY_SHARE
    phrases = [" ".join(a[s:e]) for s, e in runs if e - s >= 3]
    if near and not phrases:
        phrases = [" ".join(a[s:e]) for s, e in runs[:3]]
    return {
        "near_copy": near,
        "own_words": not near,
        "copied_phrases": phrases if near else [],
        "reason": f"{share:.0%} of the answer's words follow the passage in its order",
    }


def make_copy_judge_responder(contradict: Collection[str] = ()) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def respond(body: dict[str, Any]) -> dict[str, Any]:
        text = next(m["content"] for m in body["messages"] if m["role"] == "user")
        found = _ANSWER.search(text)
        answer = found.group(1) if found else ""
        out = verdict_of(answer, _PASSAGE.findall(text))
        if any(s in answer for s in contradict):
            out.update(near_copy=True, own_words=True)
        return out

    return respond


copy_judge_responder = make_copy_judge_responder()

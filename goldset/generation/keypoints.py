"""The key points of an ``open_ended`` reference answer: the items of its list.

The prompt asks for one key point per line, each starting with ``- ``; models also write ``*``, ``•``, ``1.``,
``1)``, ``1、``, ``（1）`` or ``①``, and some put a numbered list on one line ("(1) … (2) …"). Standalone (only
``re``), so the filters can use it without loading the rest of the generation package.
"""

from __future__ import annotations

import re

#: A list item at the start of a line: a bullet, or a number with its punctuation.
_ITEM_RE = re.compile(r"^\s*(?:[-*•·・]|\d{1,2}\s*[.)、．]|[(（]\d{1,2}[)）]|[①-⑩])\s*(\S.*)$")
#: A numbered item inside a line: "(1) …", "1) …", "（2）…", "② …" (a plain "1." is too often a version or value).
_INLINE_RE = re.compile(r"(?:^|(?<=\s)|(?<=[:：;；。]))(?:[(（]\d{1,2}[)）]|\d{1,2}\)|[①-⑩])\s*")


def key_points(answer: str) -> list[str]:
    """The list items of ``answer`` (their text, markers stripped); [] when it holds no list of two or more.

    Line items are preferred; a line without them that numbers two or more items inline counts those.
    """
    lines = [m.group(1).strip() for line in answer.splitlines() if (m := _ITEM_RE.match(line))]
    if len(lines) >= 2:
        return lines
    for line in answer.splitlines():
        parts = _INLINE_RE.split(line)
        items = [p.strip(" ;；,，") for p in parts[1:] if p.strip(" ;；,，")]
        if len(items) >= 2:
            return items
    return []

"""Personal data out of user text before it is stored or sent anywhere: real user questions and production logs.

:func:`redact_personal` replaces e-mail addresses, phone numbers and long digit or id strings (card, account and
ID-card numbers: eight digits or more) with a placeholder naming the kind (``[email]``, ``[phone]``,
``[number]``), and lists what it removed (kind → count) so a report can say so without showing it. Digits next to
CJK text count as standalone (``电话13800138000`` is a phone number): word boundaries do not separate them, so the
patterns look at the digits themselves. Short numbers (versions, ports, years, counts) are left alone.

It is a safety net for the common cases, not a guarantee: names and addresses in free text are not found.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

PLACEHOLDERS = {"email": "[email]", "phone": "[phone]", "number": "[number]"}

_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
_NO_DIGIT_BEFORE, _NO_DIGIT_AFTER = r"(?<![\d.])", r"(?![\d])"
#: Card and account numbers written in groups (4 x 4 digits) and Chinese ID-card numbers (17 digits + a digit or X),
#: found before phone numbers (whose digit groups they would match); then any other run of eight digits or more.
_GROUPED = re.compile(
    _NO_DIGIT_BEFORE + r"(?:\d{4}[ -]){3}\d{4}" + _NO_DIGIT_AFTER
    + "|" + _NO_DIGIT_BEFORE + r"\d{17}[\dXx]" + _NO_DIGIT_AFTER
)  # fmt: skip
_LONG = re.compile(_NO_DIGIT_BEFORE + r"\d{8,}" + _NO_DIGIT_AFTER)
#: International numbers (+ and a country code), mainland mobile numbers, and numbers of 3-4 digit groups joined by
#: a space, dot or dash (``555-123-4567``, ``(010) 6552 9988``).
_PHONE = re.compile(
    r"\+\d{1,3}[\s.-]?(?:\(\d{1,4}\)[\s.-]?)?\d{2,4}(?:[\s.-]?\d{2,4}){1,3}" + _NO_DIGIT_AFTER
    + "|" + _NO_DIGIT_BEFORE + r"1[3-9]\d{9}" + _NO_DIGIT_AFTER
    + "|" + _NO_DIGIT_BEFORE + r"(?:\(\d{2,4}\)\s?|\d{3,4}[\s.-])\d{3,4}[\s.-]\d{4}" + _NO_DIGIT_AFTER
)  # fmt: skip


@dataclass(frozen=True)
class Redacted:
    """The text with personal data replaced, and what was replaced (kind → count)."""

    text: str
    found: dict[str, int] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        return bool(self.found)


def redact_personal(text: str) -> Redacted:
    """``text`` with e-mail addresses, phone numbers and long digit strings replaced (see the module docstring)."""
    if not text:
        return Redacted(text)
    found: Counter[str] = Counter()

    def sub(kind: str, pattern: re.Pattern[str], value: str) -> str:
        def one(match: re.Match[str]) -> str:
            found[kind] += 1
            return PLACEHOLDERS[kind]

        return pattern.sub(one, value)

    out = sub("email", _EMAIL, text)
    out = sub("number", _GROUPED, out)
    out = sub("phone", _PHONE, out)
    out = sub("number", _LONG, out)
    return Redacted(out, dict(sorted(found.items())))

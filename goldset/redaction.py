"""Removing secrets from text before it is shown, logged or stored.

Server error messages are not trusted to be clean: OpenAI's 401 text quotes part of the key
("Incorrect API key provided: sk-proj-****abcd"). Everything that leaves the client passes through
:func:`redact`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MASK = "***"

_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # Bearer tokens in echoed headers.
    (re.compile(r"(?i)\b(bearer\s+)[^\s\"',;]+"), r"\1" + MASK),
    # key=value / "api_key": "value" forms.
    (
        re.compile(r"(?i)\b((?:api[_-]?key|access[_-]?token|x-api-key)\"?\s*[:=]\s*\"?)[^\s\"',;]+"),
        r"\1" + MASK,
    ),
    # OpenAI-style keys (sk-..., sk-proj-..., also partially masked ones such as sk-abc****wxyz).
    (re.compile(r"\b(?:sk|rk|pk)-[A-Za-z0-9_\-*.]{4,}"), MASK),
    # Anything partially masked with asterisks is a quoted key fragment.
    (re.compile(r"[A-Za-z0-9_\-]*\*{3,}[A-Za-z0-9_\-]*"), MASK),
)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with the given secrets, bearer tokens, ``sk-…`` keys and masked key fragments replaced by ***."""
    if not text:
        return text
    for secret in sorted((s for s in secrets if s and len(s) >= 4), key=len, reverse=True):
        text = text.replace(secret, MASK)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text

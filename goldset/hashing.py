"""Content hashes and stable ids. One place, so every record hashes the same way."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def sha256_hex(data: str | bytes) -> str:
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def short_hash(data: str | bytes, length: int = 16) -> str:
    """A hex prefix of sha256: 16 characters (64 bits) keeps ids readable and collisions out of reach."""
    return sha256_hex(data)[:length]


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace, for hashing settings and messages."""
    return _encode(value)


#: ``json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)`` without building
#: its encoder on every call (three hashes per pair at 50,000 candidates).
_encode = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str).encode


def hash_obj(value: Any, length: int = 16) -> str:
    return short_hash(canonical_json(value), length)

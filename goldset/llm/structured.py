"""Structured output: the pydantic schema as a strict ``json_schema`` response format, and the fallbacks.

Endpoints differ: OpenAI, vLLM and recent Ollama accept ``response_format: json_schema``; llama.cpp's server and
llama-cpp-python refuse it but accept ``{"type": "json_object", "schema": …}`` (which they enforce with a grammar)
and forced tool calls; others accept none of these. The modes, strongest first (:data:`MODES`): ``json_schema``,
``json_object`` (the schema sent along: servers that can use it do, the others ignore it), ``tool`` (one function
whose parameters are the schema, its call forced with ``tool_choice``; the arguments are the reply) and ``text``
(plain JSON asked for in the prompt, with the repair attempt). In every mode the reply is validated with pydantic,
so the modes differ only in how hard the server is held to the schema. In the weaker modes the schema is also
written into the prompt.

A reply is one whole JSON document: surrounding whitespace, one Markdown code fence around it and a reasoning
model's leading ``<think>…</think>`` block are allowed, nothing else. Digging "the first JSON object" out of a
longer text used to turn a reply cut off mid-document into the first complete *inner* object, which the schema's
defaults then filled into an empty success; prose around the JSON is now invalid too, and goes to the repair
attempt (which tells the model to send only the JSON).
"""

from __future__ import annotations

import copy
import functools
import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from goldset.hashing import canonical_json
from goldset.io import describe_validation_error

T = TypeVar("T", bound=BaseModel)

MODES = ("json_schema", "json_object", "tool", "text")

#: Leading reasoning blocks (deepseek-r1, qwen3… through Ollama's OpenAI API): closed, and only before the document.
_THINK_RE = re.compile(r"\A(?:\s*<think>.*?</think>)+", re.DOTALL | re.IGNORECASE)
#: One Markdown fence around the whole document (language tag optional).
_FENCE_RE = re.compile(r"\A```[A-Za-z]*[ \t]*\n(.*?)\n?[ \t]*```\Z", re.DOTALL)
_NAME_RE = re.compile(r"[^A-Za-z0-9_-]")


@functools.lru_cache(maxsize=256)
def schema_json(schema: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema (what the cache key hashes). Cached per class, as pydantic rebuilds it on every
    call (~1 ms, a third of the client's own cost per call): treat the returned dict as read-only."""
    return schema.model_json_schema()


@functools.lru_cache(maxsize=256)
def schema_json_text(schema: type[BaseModel]) -> str:
    """``canonical_json(schema_json(schema))``, encoded once per class (for the cache key of every call)."""
    return canonical_json(schema_json(schema))


def _is_strict_compatible(node: Any) -> bool:
    """OpenAI's strict mode cannot express free-form maps (``dict[str, X]``)."""
    if isinstance(node, dict):
        extra = node.get("additionalProperties")
        if extra not in (None, False):
            return False
        return all(_is_strict_compatible(v) for v in node.values())
    if isinstance(node, list):
        return all(_is_strict_compatible(v) for v in node)
    return True


_SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties")


def _strictify(node: Any) -> Any:
    """A strict-mode copy of a JSON schema node (a schema, never a name → schema map)."""
    if isinstance(node, list):
        return [_strictify(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "default":
            continue
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: _strictify(sub) for name, sub in value.items()}
        else:
            out[key] = _strictify(value)
    if out.get("type") == "object" or isinstance(out.get("properties"), dict):
        out["additionalProperties"] = False
        out["required"] = list(out.get("properties", {}))
    return out


@functools.lru_cache(maxsize=256)
def response_format_json_schema(schema: type[BaseModel], name: str) -> dict[str, Any]:
    """``response_format`` for json_schema mode; strict when the schema allows it.

    Strict mode needs every property listed as required and no extra properties; defaults are dropped (the
    model must then produce every field, which pydantic accepts). Cached: treat the result as read-only.
    """
    raw = copy.deepcopy(schema_json(schema))
    strict = _is_strict_compatible(raw)
    body = _strictify(raw) if strict else raw
    return {
        "type": "json_schema",
        "json_schema": {"name": _NAME_RE.sub("_", name)[:64] or "reply", "schema": body, "strict": strict},
    }


@functools.lru_cache(maxsize=256)
def response_format_json_object(schema: type[BaseModel]) -> dict[str, Any]:
    """``response_format`` for json_object mode: the schema goes along (llama.cpp constrains the reply to it; other
    servers ignore the extra key). Cached: treat the result as read-only."""
    return {"type": "json_object", "schema": schema_json(schema)}


@functools.lru_cache(maxsize=256)
def tool_choice(schema: type[BaseModel], name: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """``tools`` and ``tool_choice`` for tool mode: one function taking the schema as its parameters, its call
    forced. Cached: treat the result as read-only."""
    fn = _NAME_RE.sub("_", name)[:64] or "reply"
    tools = [{"type": "function", "function": {"name": fn, "description": "Give the reply.",
                                               "parameters": schema_json(schema)}}]
    return tools, {"type": "function", "function": {"name": fn}}


@functools.lru_cache(maxsize=256)
def schema_instruction(schema: type[BaseModel]) -> str:
    """Text appended to the prompt when the server does not enforce the schema itself."""
    return (
        "Reply with a single JSON object and nothing else (no prose, no code fences). "
        "It must match this JSON schema:\n" + json.dumps(schema_json(schema), ensure_ascii=False)
    )


def with_instruction(messages: list[dict[str, str]], instruction: str) -> list[dict[str, str]]:
    """A copy of ``messages`` with ``instruction`` added to the system message (or a new one first)."""
    out = [dict(m) for m in messages]
    for m in out:
        if m.get("role") == "system":
            m["content"] = f"{m.get('content', '')}\n\n{instruction}".strip()
            return out
    return [{"role": "system", "content": instruction}, *out]


class ReplyError(ValueError):
    """The reply is not JSON or does not match the schema; the message is short and safe to show the model."""


def extract_json(text: str) -> Any:
    """The JSON document a model reply consists of (see the module docstring); :class:`ReplyError` otherwise."""
    if text is None:
        raise ReplyError("the reply is empty")
    stripped = _THINK_RE.sub("", text).strip()
    if not stripped:
        raise ReplyError("the reply is empty")
    fenced = _FENCE_RE.match(stripped)
    document = fenced.group(1).strip() if fenced else stripped
    try:
        return json.loads(document)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data":
            raise ReplyError(
                f"the reply is not one JSON document: more text follows it at character {exc.pos}"
            ) from None
        ends_early = exc.pos >= len(document) - 1 or exc.msg.startswith("Unterminated string")
        hint = " (it ends before the document is complete: cut off?)" if ends_early else ""
        what = exc.msg.removesuffix(" at")  # "Unterminated string starting at"
        raise ReplyError(f"the reply is not valid JSON: {what} at character {exc.pos}{hint}") from None


def parse_reply(text: str, schema: type[T]) -> T:
    """Extract and validate; raises :class:`ReplyError` with a one-line reason."""
    value = extract_json(text)
    try:
        return schema.model_validate(value)
    except ValidationError as exc:
        raise ReplyError(f"the reply does not match the schema: {describe_validation_error(exc, limit=5)}") from None

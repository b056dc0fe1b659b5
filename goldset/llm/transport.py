"""One HTTP request to an endpoint through the openai SDK: building the SDK client, posting a chat completion or
an embeddings request, and reading the reply. No retries, no limits, no journal here (see :mod:`goldset.llm.retry`
and :mod:`goldset.llm.client`): a failed request raises the SDK's error (``openai.APIStatusError``,
``openai.APIConnectionError``…) or :class:`TimeoutError` for the caller to classify.

The SDK's own retries are off (``max_retries=0``) so that the run's ``retry_budget`` really bounds the retries.

Chat completions go through the SDK's public ``post`` with ``cast_to=httpx.Response`` (the SDK's documented way
to make a request its typed methods do not cover), not ``chat.completions.create``: ``create`` first walks the
whole request, schema included, against its TypedDict annotations (``async_transform``, ~0.7 ms per call on the
event loop), which maps aliases and encodes files and dates (a body of plain strings and numbers such as this one
comes out of it unchanged), then builds the whole ``ChatCompletion`` object tree (~0.2 ms). The body sent is what
``create`` sends, key for key; auth, default headers, timeouts and the error classes are still the SDK's, and
:func:`read_chat_reply` reads the few fields goldset uses straight from the JSON. ``cast_to`` is the response class
of the HTTP library the SDK runs on (:func:`sdk_response_class`), which every release accepts.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from goldset.llm.structured import response_format_json_object, response_format_json_schema, tool_choice
from goldset.llm.usage import Usage

if TYPE_CHECKING:
    from goldset.llm.endpoints import Endpoint


@dataclass(frozen=True)
class ChatReply:
    """What goldset reads of one chat completion: the first choice, the usage, and the response headers
    (names lower-cased). ``has_choice`` is False when the server sent no choice at all."""

    has_choice: bool
    content: str | None
    refusal: str | None
    finish_reason: str | None
    usage: Usage | None
    headers: Mapping[str, str]


@dataclass(frozen=True)
class EmbeddingsReply:
    """One embeddings response: a vector per input text (``None`` where the server sent none) and the prompt
    tokens it reported (``None`` when it sent no usage)."""

    vectors: list[list[float] | None]
    prompt_tokens: int | None


def chat_body(
    model: str, messages: list[dict[str, str]], mode: str, schema: type[BaseModel], schema_name: str,
    params: Mapping[str, Any],
) -> dict[str, Any]:
    """The JSON body of one chat completion, keys in the order ``create`` sends them. ``mode`` is the structured
    output mode (:data:`goldset.llm.structured.MODES`); ``params`` holds temperature, seed and max_tokens."""
    body: dict[str, Any] = {"model": model, "messages": messages}
    if params.get("max_tokens"):
        body["max_tokens"] = params["max_tokens"]
    if mode == "json_schema":
        body["response_format"] = response_format_json_schema(schema, schema_name)
    elif mode == "json_object":
        body["response_format"] = response_format_json_object(schema)
    elif mode == "tool":
        body["tools"], body["tool_choice"] = tool_choice(schema, schema_name)
    if params.get("seed") is not None:
        body["seed"] = params["seed"]
    body["temperature"] = params["temperature"]
    return body


def sdk_response_class() -> Any:
    """The HTTP response class the installed openai SDK returns as is when given as ``post``'s ``cast_to``: that of
    httpx2 for openai 3.x, which runs on it, that of httpx for the 1.x and 2.x releases. (3.x also accepts httpx's
    class, but only once httpx is imported: importing it for that would cost ~5 MB and ~50 ms per process.)"""
    import openai

    if int(openai.__version__.split(".", 1)[0]) >= 3:
        import httpx2  # type: ignore[import-not-found,unused-ignore]

        return httpx2.Response
    import httpx

    return httpx.Response


def _text_or_none(value: Any, field: str) -> str | None:
    if value is None or type(value) is str:
        return value
    raise ValueError(f"{field} is not a string")


def _tokens(value: Any) -> int:
    """A token count as the server sent it (``None`` → 0; floats such as ``12.0`` from some servers → int)."""
    if value is None:
        return 0
    if isinstance(value, int | float) and not isinstance(value, bool):
        return int(value)
    raise ValueError("usage holds a token count that is not a number")


def read_chat_reply(http: Any) -> ChatReply:
    """The fields goldset uses of a chat completion response (``choices[0].message.content`` / ``.refusal``, or the
    arguments of ``.tool_calls[0]`` when there is no content,
    ``choices[0].finish_reason``, ``usage.prompt_tokens`` / ``.completion_tokens``), read from its JSON body.

    Raises :class:`ValueError` when the body is not JSON or these fields do not have the types of the API's
    ``ChatCompletion`` (the caller reports an unreadable response); other fields are not looked at.
    """
    data = http.json()
    if not isinstance(data, dict):
        raise ValueError("the body is not a JSON object")
    headers = {k.lower(): v for k, v in http.headers.items()}
    raw_usage = data.get("usage")
    usage = None
    if isinstance(raw_usage, dict):
        usage = Usage(
            prompt_tokens=_tokens(raw_usage.get("prompt_tokens")),
            completion_tokens=_tokens(raw_usage.get("completion_tokens")),
        )
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        return ChatReply(False, None, None, None, usage, headers)
    choice = choices[0]
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        raise ValueError("choices[0].message is not an object")
    content = _text_or_none(message.get("content"), "choices[0].message.content")
    calls = message.get("tool_calls")
    if not content and isinstance(calls, list) and calls:
        # tool mode: the reply is the arguments of the (forced) call
        fn = calls[0].get("function") if isinstance(calls[0], dict) else None
        arguments = fn.get("arguments") if isinstance(fn, dict) else None
        if isinstance(arguments, dict):  # some servers send the object itself
            arguments = json.dumps(arguments, ensure_ascii=False)
        content = _text_or_none(arguments, "choices[0].message.tool_calls[0].function.arguments")
    return ChatReply(
        has_choice=True,
        content=content,
        refusal=_text_or_none(message.get("refusal"), "choices[0].message.refusal"),
        finish_reason=_text_or_none(choice.get("finish_reason"), "choices[0].finish_reason"),
        usage=usage,
        headers=headers,
    )


class Transport:
    """The SDK client of one endpoint (built on first use) and the two requests goldset makes with it."""

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self.timeout_s = endpoint.settings.timeout_s
        self._client: Any = None
        self._embeddings_client: Any = None
        self._response_type: Any = None

    def _build(self, base_url: str | None) -> Any:
        from openai import AsyncOpenAI

        return AsyncOpenAI(
            api_key=self.endpoint.client_key(),
            base_url=base_url,
            max_retries=0,  # the retry loop and its budget are goldset's
            timeout=self.timeout_s + 5.0,  # the hard per-request limit is asyncio's, in the requests below
        )

    def sdk(self) -> Any:
        """The ``openai.AsyncOpenAI`` client, built on first use (importing openai costs ~0.5 s)."""
        if self._client is None:
            self._response_type = sdk_response_class()
            self._client = self._build(self.endpoint.base_url)
        return self._client

    def embeddings_sdk(self) -> Any:
        """The client for /v1/embeddings: the endpoint's ``embedding_base_url`` server when set, else :meth:`sdk`."""
        url = self.endpoint.embedding_base_url
        if not url or url.rstrip("/") == (self.endpoint.base_url or "").rstrip("/"):
            return self.sdk()
        if self._embeddings_client is None:
            self._embeddings_client = self._build(url)
        return self._embeddings_client

    async def aclose(self) -> None:
        """Close the SDK clients and their connections (a later request builds new ones)."""
        for client in (self._client, self._embeddings_client):
            if client is not None:
                await client.close()
        self._client = self._embeddings_client = None

    async def chat(self, body: dict[str, Any], schema_name: str) -> ChatReply:
        """Post one chat completion (see the module docstring) and read its reply. ``schema_name`` goes out as the
        ``X-Goldset-Schema`` header, so logs and test servers can tell the calls apart in every structured mode."""
        sdk = self.sdk()
        async with asyncio.timeout(self.timeout_s):
            http = await sdk.post(
                "/chat/completions",
                cast_to=self._response_type,
                body=body,
                options={"headers": {"X-Goldset-Schema": schema_name}},
            )
            return read_chat_reply(http)

    async def embeddings(self, model: str, texts: Sequence[str]) -> EmbeddingsReply:
        """Post one embeddings request for ``texts`` (float vectors)."""
        async with asyncio.timeout(self.timeout_s):
            reply = await self.embeddings_sdk().embeddings.create(
                model=model, input=list(texts), encoding_format="float"
            )
        vectors: list[list[float] | None] = [None] * len(texts)
        for item in reply.data:
            if 0 <= item.index < len(texts):
                vectors[item.index] = [float(x) for x in item.embedding]
        return EmbeddingsReply(vectors, reply.usage.prompt_tokens if reply.usage is not None else None)

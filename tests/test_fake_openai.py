"""The fake server itself: it must behave like an OpenAI endpoint for the real openai client."""

from __future__ import annotations

import base64
import json
import struct
import urllib.request
from typing import TYPE_CHECKING

import openai
import pytest

from tests.helpers.fake_openai import FakeOpenAI, Fault, fake_embedding, start_subprocess

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageParam
    from openai.types.shared_params import ResponseFormatJSONSchema


def _client(fake: FakeOpenAI, key: str | None = None) -> openai.OpenAI:
    return openai.OpenAI(base_url=fake.base_url, api_key=key or fake.api_key, max_retries=0, timeout=5)


def test_chat_dispatches_on_schema_name_and_counts_tokens(fake_llm: FakeOpenAI) -> None:
    fake_llm.add_responder("echo", lambda body: {"echo": body["messages"][-1]["content"].upper()})
    client = _client(fake_llm)
    reply = client.chat.completions.create(
        model="fake-model",
        messages=[{"role": "user", "content": "hello world"}],
        response_format={"type": "json_schema", "json_schema": {"name": "echo", "schema": {"type": "object"}}},
    )
    assert json.loads(reply.choices[0].message.content or "") == {"echo": "HELLO WORLD"}
    assert reply.usage is not None
    assert fake_llm.calls == 1
    assert fake_llm.prompt_tokens == reply.usage.prompt_tokens > 0
    assert fake_llm.completion_tokens == reply.usage.completion_tokens > 0
    # Without a json_schema the header names the schema; unknown names get the default responder ({}).
    client.chat.completions.create(
        model="fake-model", messages=[{"role": "user", "content": "a"}], extra_headers={"X-Goldset-Schema": "echo"}
    )
    other = client.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": "b"}])
    assert json.loads(other.choices[0].message.content or "") == {}
    assert fake_llm.calls == 3
    assert [r.body["messages"][0]["content"] for r in fake_llm.chat_requests()] == ["hello world", "a", "b"]
    times = fake_llm.arrival_times()
    assert times == sorted(times)


def test_wrong_key_is_401(fake_llm: FakeOpenAI) -> None:
    with pytest.raises(openai.AuthenticationError):
        _client(fake_llm, key="sk-wrong-key-000000").chat.completions.create(
            model="fake-model", messages=[{"role": "user", "content": "x"}]
        )


def test_faults_apply_in_order(fake_llm: FakeOpenAI) -> None:
    fake_llm.inject(Fault("429", retry_after=1.5), "500", "malformed", "schema", "no_usage")
    client = _client(fake_llm)
    msgs: list[ChatCompletionMessageParam] = [{"role": "user", "content": "x"}]
    with pytest.raises(openai.RateLimitError) as rate:
        client.chat.completions.create(model="m", messages=msgs)
    assert rate.value.response.headers["retry-after"] == "2"
    assert rate.value.response.headers["retry-after-ms"] == "1500"
    with pytest.raises(openai.InternalServerError):
        client.chat.completions.create(model="m", messages=msgs)
    bad = client.chat.completions.create(model="m", messages=msgs).choices[0].message.content or ""
    with pytest.raises(json.JSONDecodeError):
        json.loads(bad)
    assert isinstance(json.loads(client.chat.completions.create(model="m", messages=msgs).choices[0].message.content
                                 or ""), list)
    assert client.chat.completions.create(model="m", messages=msgs).usage is None
    assert client.chat.completions.create(model="m", messages=msgs).usage is not None  # faults used up
    assert fake_llm.pending_faults == 0


def test_truncated_and_length_faults_cut_the_content(fake_llm: FakeOpenAI) -> None:
    whole = {"items": [{"text": "a" * 40}, {"text": "b" * 40}]}
    fake_llm.add_responder("cut", lambda body: whole)
    fake_llm.inject("truncated", "length", Fault("length", keep=1.0))
    client = _client(fake_llm)

    def ask() -> tuple[str, str]:
        reply = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "x"}], extra_headers={"X-Goldset-Schema": "cut"}
        )
        return reply.choices[0].message.content or "", reply.choices[0].finish_reason

    text = json.dumps(whole)
    assert ask() == (text[: len(text) // 2], "stop")
    assert ask() == (text[: len(text) // 2], "length")
    assert ask() == (text, "length")
    assert ask() == (text, "stop")  # faults used up


def test_disconnect_fault_and_unknown_model_status() -> None:
    with FakeOpenAI(known_models={"good"}, unknown_model_status=400) as fake:
        fake.inject("disconnect")
        client = _client(fake)
        with pytest.raises(openai.APIConnectionError):
            client.chat.completions.create(model="good", messages=[{"role": "user", "content": "x"}])
        with pytest.raises(openai.BadRequestError) as err:
            client.chat.completions.create(model="bad", messages=[{"role": "user", "content": "x"}])
        assert err.value.code == "model_not_found" and "`bad` does not exist" in err.value.message
        assert fake.calls == 2


def test_timeout_fault_outlasts_client_timeout(fake_llm: FakeOpenAI) -> None:
    fake_llm.inject(Fault("timeout", delay=1.0))
    client = openai.OpenAI(base_url=fake_llm.base_url, api_key=fake_llm.api_key, max_retries=0, timeout=0.2)
    with pytest.raises(openai.APITimeoutError):
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])


def test_reject_json_schema_and_unknown_model() -> None:
    with FakeOpenAI(reject_json_schema=True, known_models={"good"}) as fake:
        client = _client(fake)
        fmt: ResponseFormatJSONSchema = {
            "type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object"}}
        }
        with pytest.raises(openai.BadRequestError):
            client.chat.completions.create(model="good", messages=[{"role": "user", "content": "x"}],
                                           response_format=fmt)
        with pytest.raises(openai.NotFoundError):
            client.chat.completions.create(model="bad", messages=[{"role": "user", "content": "x"}])
        ok = client.chat.completions.create(model="good", messages=[{"role": "user", "content": "x"}],
                                            response_format={"type": "json_object"})
        assert ok.choices[0].message.content == "{}"


def test_embeddings_are_deterministic_and_similar_for_shared_words(fake_llm: FakeOpenAI) -> None:
    client = _client(fake_llm)
    texts = ["the cat sat on the mat", "the cat sat on a mat", "quantum chromodynamics lattice"]
    vecs = [d.embedding for d in client.embeddings.create(model="emb", input=texts, encoding_format="float").data]
    assert vecs[0] == pytest.approx(fake_embedding(texts[0]))

    def cos(a: list[float], b: list[float]) -> float:
        return sum(x * y for x, y in zip(a, b, strict=True))

    assert cos(vecs[0], vecs[1]) > cos(vecs[0], vecs[2])
    assert cos(vecs[0], vecs[0]) == pytest.approx(1.0)
    # The SDK's default encoding is base64 of float32: decode it and compare.
    raw = client.embeddings.with_raw_response.create(model="emb", input="the cat", encoding_format="base64")
    b64 = json.loads(raw.text)["data"][0]["embedding"]
    decoded = struct.unpack(f"<{len(base64.b64decode(b64)) // 4}f", base64.b64decode(b64))
    assert list(decoded) == pytest.approx(fake_embedding("the cat"), abs=1e-6)
    assert fake_llm.embedding_calls == 2
    assert fake_llm.calls == 0


def test_subprocess_server_serves_and_reports_stats() -> None:
    proc, base_url = start_subprocess({"echo": "tests.test_fake_openai:echo_responder"})
    try:
        client = openai.OpenAI(base_url=base_url, api_key=FakeOpenAI.DEFAULT_KEY, max_retries=0, timeout=5)
        reply = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "ping"}], extra_headers={"X-Goldset-Schema": "echo"}
        )
        assert json.loads(reply.choices[0].message.content or "") == {"echo": "ping"}
        with urllib.request.urlopen(base_url.removesuffix("/v1") + "/_fake/stats", timeout=5) as resp:
            stats = json.loads(resp.read())
        assert stats["calls"] == 1
        assert stats["schema_names"] == ["echo"]
    finally:
        proc.kill()
        proc.wait(timeout=5)


def echo_responder(body: dict) -> dict:
    return {"echo": body["messages"][-1]["content"]}

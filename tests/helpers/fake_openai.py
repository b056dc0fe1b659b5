"""A fake OpenAI-compatible server for tests and benchmarks: a real HTTP server on 127.0.0.1.

The real ``openai`` client talks to it over HTTP, so everything between goldset and the wire is exercised.

* ``POST /v1/chat/completions``: the reply content is built by a *responder* chosen by schema name: the
  ``response_format.json_schema.name`` of the request, else its ``X-Goldset-Schema`` header (goldset's client
  always sends it, so the fallback modes dispatch too). A responder gets the parsed request body and returns the
  assistant content: a dict/list is serialised with ``json.dumps``; a ``str`` is sent verbatim (to test prose,
  code fences, broken JSON). Unknown schema names get the default responder (``{}``).
* ``POST /v1/embeddings``: deterministic unit vectors from hashed tokens (``dim`` 64 by default), float or base64.
* ``GET /v1/models``: the model list.

Usage is computed deterministically with :func:`goldset.text.estimate_llm_tokens` (prompt: every message's
content; completion: the reply content). Each request is recorded with its arrival time (``time.monotonic()``)
in ``requests``; ``calls`` counts chat completions received (faulted ones included).

Faults (``inject``) apply to the next chat completions, one per request, in order: ``"429"`` (with
``Retry-After``), ``"500"``, ``"timeout"`` (sleeps ``Fault.delay`` seconds, longer than the client's timeout, then
answers), ``"malformed"`` (content is not JSON), ``"schema"`` (JSON that violates any object schema),
``"no_usage"`` (no usage field), ``"401"``, ``"400"``, ``"404"``, ``"ratelimit_headers"`` (success with
``x-ratelimit-remaining-requests: 0`` and a reset time), ``"truncated"`` (the responder's content cut after
``Fault.keep`` of its characters, half by default, with ``finish_reason: stop``, as a proxy or a broken server may
send it) and ``"length"`` (the same cut with ``finish_reason: length``, as when a reply hits max_tokens;
``Fault("length", keep=1.0)`` sends the whole content, which then parses, still marked cut off),
``"disconnect"`` (the connection is closed without a response). Switches: ``reject_json_schema`` /
``reject_json_object`` answer 400 to those response formats (to test the fallback); ``known_models`` answers
``unknown_model_status`` (404, or 400 as some servers do) with ``model_not_found`` to other models.
``reject_tools`` answers 400 to a request with ``tools``; otherwise a request that forces a tool call
(``tool_choice``) gets the responder's content as the call's arguments (``finish_reason: tool_calls``).
``llama_cpp=True`` answers like llama-cpp-python's server: ``json_schema`` gets HTTP 500 with its validation message
("Input should be 'text' or 'json_object'"), ``json_object`` with a schema and forced tool calls work, and
``GET /props`` (at the server root) says ``n_ctx`` and ``total_slots``. ``total_slots=N`` serves at most N chat
completions at once, the others wait their turn as on a llama.cpp server (``None``: no limit);
``cut_off_above=N`` cuts a reply with more than N pairs in half, marked ``finish_reason: length`` (a weak model
that runs past max_tokens when asked for many); ``honour_max_tokens=True`` cuts a reply longer than the request's
``max_tokens`` (counted with ``estimate_llm_tokens``) and marks it ``finish_reason: length``, as a real server
does; ``n_ctx`` is what ``/props`` states.
``Fault(kind, retry_after=, delay=, reset=, message=, code=, keep=)`` tunes one fault (e.g. ``Fault("429",
code="insufficient_quota")``). ``max_in_flight`` is the most chat requests handled at once (to check a
concurrency bound).

Use in-process::

    with FakeOpenAI() as fake:
        fake.add_responder("qa_pairs", my_responder)
        ...  # OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY=fake.api_key

For a kill -9 resume test the simplest setup is this in-process server plus the client (e.g. ``goldset
generate``) in a subprocess that the test kills (see tests/test_llm_journal.py); the server, its counters and
recorded requests survive. The server can also run as a separate process::

    python -m tests.helpers.fake_openai --port 0 \
        --responder qa_pairs=tests.helpers.responders:qa_responder [--latency 0.05]

It prints one line, ``READY http://127.0.0.1:PORT/v1``, when it is listening, and serves until killed. The key
is ``FakeOpenAI.DEFAULT_KEY`` (``--api-key`` to change). Its counters are available at ``GET /_fake/stats``
(JSON: calls, prompt_tokens, completion_tokens, arrivals), so the test can check which calls were repeated.
``start_subprocess()`` does all of this and returns ``(process, base_url)``.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import importlib
import json
import math
import socket
import struct
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `goldset` and `tests` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from goldset.text import estimate_llm_tokens, tokenize

Responder = Callable[[dict[str, Any]], Any]

FAULT_KINDS = (
    "429", "500", "timeout", "malformed", "schema", "no_usage", "401", "400", "404", "ratelimit_headers",
    "truncated", "length", "disconnect",
)


@dataclass(frozen=True)
class Fault:
    """One injected fault. ``retry_after`` is sent for 429 (seconds, fractional allowed: sent as
    ``retry-after-ms`` too); ``delay`` is how long "timeout" sleeps; ``reset`` the x-ratelimit reset; ``keep`` the
    fraction of the content "truncated" and "length" send."""

    kind: str
    retry_after: float = 0.2
    delay: float = 2.0
    reset: str = "0.3s"
    message: str | None = None  # replaces the error message of an HTTP error fault
    code: str | None = None  # replaces the error code of an HTTP error fault (e.g. "insufficient_quota" on 429)
    keep: float = 0.5

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault {self.kind!r}; known: {', '.join(FAULT_KINDS)}")


@dataclass(frozen=True)
class Recorded:
    t: float  # time.monotonic() at arrival
    path: str
    body: dict[str, Any]
    headers: dict[str, str]  # lower-cased names


def default_responder(body: dict[str, Any]) -> Any:
    return {}


def last_user_message(body: dict[str, Any]) -> str:
    """The content of the last user message of a chat request (what most responders build their reply from)."""
    for message in reversed(body.get("messages", [])):
        if message.get("role") == "user":
            return str(message.get("content", ""))
    return ""


def schema_name_of(body: dict[str, Any], headers: dict[str, str] | None = None) -> str | None:
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        name = (fmt.get("json_schema") or {}).get("name")
        if name:
            return str(name)
    return (headers or {}).get("x-goldset-schema")


def fake_embedding(text: str, dim: int = 64) -> list[float]:
    """Deterministic unit vector: each token adds ±1 to a hashed bucket (texts sharing tokens are similar)."""
    vec = [0.0] * dim
    for token in tokenize(text):
        digest = hashlib.sha256(token.encode("utf-8")).digest()
        bucket = int.from_bytes(digest[:4], "little") % dim
        vec[bucket] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(v * v for v in vec))
    if norm == 0:
        vec[0], norm = 1.0, 1.0
    return [v / norm for v in vec]


class FakeOpenAI:
    """The fake server; a context manager. See the module docstring."""

    DEFAULT_KEY = "sk-test-SECRET123456"

    def __init__(
        self,
        *,
        api_key: str = DEFAULT_KEY,
        latency_s: float = 0.0,
        port: int = 0,
        reject_json_schema: bool = False,
        reject_json_object: bool = False,
        known_models: set[str] | None = None,
        unknown_model_status: int = 404,
        embedding_dim: int = 64,
        reject_tools: bool = False,
        llama_cpp: bool = False,
        total_slots: int | None = None,
        honour_max_tokens: bool = False,
        n_ctx: int = 8192,
        embeddings_error: str | None = None,
        cut_off_above: int | None = None,
    ) -> None:
        self.api_key = api_key
        self.latency_s = latency_s
        self.reject_json_schema = reject_json_schema
        self.reject_json_object = reject_json_object
        self.known_models = known_models
        self.unknown_model_status = unknown_model_status
        self.embedding_dim = embedding_dim
        self.reject_tools = reject_tools
        self.llama_cpp = llama_cpp
        self.total_slots = total_slots
        self._slots = threading.Semaphore(total_slots) if total_slots else None
        self.honour_max_tokens = honour_max_tokens
        self.n_ctx = n_ctx
        #: A server that cannot embed: /v1/embeddings answers HTTP 501 with this message (llama.cpp without
        #: --embeddings says so).
        self.embeddings_error = embeddings_error
        #: A weak model: a reply with more than this many items in its ``pairs`` list is cut in half and marked
        #: ``finish_reason: length``, as when it runs past max_tokens (``None``: off).
        self.cut_off_above = cut_off_above
        self.props_requests = 0
        self.calls = 0
        self.embedding_calls = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.requests: list[Recorded] = []
        self.in_flight = 0
        self.max_in_flight = 0  # most chat completions being handled at the same time
        from tests.helpers.copy_responders import copy_judge_responder

        # The copy judge is asked whenever a judge endpoint is configured and a pair falls in the verbatim check's
        # borderline band: answered by default, so a test about something else does not see it fail and retry.
        self._responders: dict[str, Responder] = {"copy_judge": copy_judge_responder}
        self._default: Responder = default_responder
        self._faults: deque[Fault] = deque()
        self._lock = threading.Lock()
        self._port = port
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- configuration -----------------------------------------------------------------------------------
    def add_responder(self, schema_name: str, fn: Responder) -> None:
        self._responders[schema_name] = fn

    def set_default_responder(self, fn: Responder) -> None:
        self._default = fn

    def inject(self, *faults: str | Fault) -> None:
        """Queue faults for the next chat completions, one per request, in order."""
        with self._lock:
            self._faults.extend(f if isinstance(f, Fault) else Fault(f) for f in faults)

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    @property
    def pending_faults(self) -> int:
        with self._lock:
            return len(self._faults)

    def chat_requests(self) -> list[Recorded]:
        with self._lock:
            return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def arrival_times(self) -> list[float]:
        return [r.t for r in self.chat_requests()]

    # -- lifecycle ---------------------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("FakeOpenAI is not started; use it as a context manager or call start()")
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> FakeOpenAI:
        handler = type("Handler", (_Handler,), {"fake": self})
        self._server = _Server(("127.0.0.1", self._port), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-openai", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- request handling (called from server threads) ---------------------------------------------------
    def _record(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> Fault | None:
        with self._lock:
            self.requests.append(Recorded(time.monotonic(), path, body, headers))
            if path.endswith("/chat/completions"):
                self.calls += 1
                return self._faults.popleft() if self._faults else None
            self.embedding_calls += 1
            return None

    def _chat(self, body: dict[str, Any], headers: dict[str, str], fault: Fault | None) -> tuple[int, dict, dict]:
        extra: dict[str, str] = {}
        kind = fault.kind if fault else None
        if kind == "401":
            return 401, _error("Incorrect API key provided: sk-te****3456. You can find your API key at "
                               "https://platform.openai.com/account/api-keys.", "invalid_api_key"), extra
        if fault is not None and fault.kind == "429":
            extra = {"retry-after": str(max(0, math.ceil(fault.retry_after))),
                     "retry-after-ms": str(int(fault.retry_after * 1000))}
            text = fault.message or "Rate limit reached for requests"
            return 429, _error(text, fault.code or "rate_limit_exceeded"), extra
        if kind == "500":
            return 500, _error("The server had an error while processing your request.", "server_error"), extra
        if fault is not None and fault.kind == "400":
            # echoes the caller's credentials, as some proxies do: the client must redact them
            auth = headers.get("authorization", "")
            text = fault.message or f"Bad request: malformed (sent with Authorization: {auth})"
            return 400, _error(text, fault.code or "invalid_request"), extra
        model = body.get("model")
        if kind == "404":
            return 404, _error(f"The model `{model}` does not exist.", "model_not_found"), extra
        if self.known_models is not None and model not in self.known_models:
            return self.unknown_model_status, _error(f"The model `{model}` does not exist.", "model_not_found"), extra
        fmt = (body.get("response_format") or {}).get("type")
        if fmt == "json_schema" and self.llama_cpp:
            # what llama-cpp-python 0.3.x answers (a pydantic validation error, as HTTP 500)
            return 500, _error("[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': "
                               "\"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}]",
                               "internal_server_error"), extra
        if body.get("tools") and self.reject_tools:
            return 400, _error("tools are not supported by this server", "bad_request"), extra
        if fmt == "json_schema" and self.reject_json_schema:
            return 400, _error("response_format json_schema is not supported by this server", "bad_format"), extra
        if fmt == "json_object" and self.reject_json_object:
            return 400, _error("response_format json_object is not supported by this server", "bad_format"), extra
        if fault is not None and fault.kind == "timeout":
            time.sleep(fault.delay)
        if self.latency_s:
            time.sleep(self.latency_s)
        name = schema_name_of(body, headers)
        if kind == "malformed":
            content = '{"this is": not JSON'
        elif kind == "schema":
            content = json.dumps(["not", "an", "object"])
        else:
            value = self._responders.get(name or "", self._default)(body)
            content = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            if fault is not None and kind in ("truncated", "length"):
                content = content[: int(len(content) * fault.keep)]
            too_long = self.cut_off_above is not None and isinstance(value, dict) and \
                len(value.get("pairs") or []) > self.cut_off_above
            if too_long:
                content, kind = content[: len(content) // 2], "length"
        finish = "length" if kind == "length" else "stop"
        limit = body.get("max_tokens")
        if self.honour_max_tokens and isinstance(limit, int) and estimate_llm_tokens(content) > limit:
            while content and estimate_llm_tokens(content) > limit:
                content = content[: int(len(content) * 0.9)]
            finish = "length"
        prompt = sum(estimate_llm_tokens(str(m.get("content", ""))) for m in body.get("messages", []))
        completion = estimate_llm_tokens(content)
        message: dict[str, Any] = {"role": "assistant", "content": content}
        forced = (body.get("tool_choice") or {}) if isinstance(body.get("tool_choice"), dict) else {}
        if body.get("tools") and forced.get("function"):
            message = {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_fake", "type": "function",
                 "function": {"name": forced["function"].get("name"), "arguments": content}}]}
            finish = "tool_calls" if finish == "stop" else finish
        reply: dict[str, Any] = {
            "id": f"chatcmpl-fake{self.calls}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        }
        if kind != "no_usage":
            reply["usage"] = {"prompt_tokens": prompt, "completion_tokens": completion,
                              "total_tokens": prompt + completion}
            with self._lock:
                self.prompt_tokens += prompt
                self.completion_tokens += completion
        if fault is not None and fault.kind == "ratelimit_headers":
            extra = {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": fault.reset,
                     "x-ratelimit-remaining-tokens": "100000", "x-ratelimit-reset-tokens": "1s"}
        return 200, reply, extra

    def _embeddings(self, body: dict[str, Any]) -> tuple[int, dict, dict]:
        if self.embeddings_error is not None:
            return 501, {"error": {"code": 501, "message": self.embeddings_error, "type": "not_supported_error"}}, {}
        inputs = body.get("input")
        texts = [inputs] if isinstance(inputs, str) else list(inputs or [])
        data = []
        tokens = 0
        for i, text in enumerate(texts):
            text = str(text)
            tokens += estimate_llm_tokens(text)
            vec = fake_embedding(text, self.embedding_dim)
            if body.get("encoding_format") == "base64":
                emb: Any = base64.b64encode(struct.pack(f"<{len(vec)}f", *vec)).decode("ascii")
            else:
                emb = vec
            data.append({"object": "embedding", "index": i, "embedding": emb})
        return 200, {"object": "list", "data": data, "model": body.get("model"),
                     "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}, {}

    def stats(self) -> dict[str, Any]:
        with self._lock:
            return {
                "calls": self.calls,
                "embedding_calls": self.embedding_calls,
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "arrivals": [r.t for r in self.requests if r.path.endswith("/chat/completions")],
                "schema_names": [schema_name_of(r.body, r.headers) for r in self.requests
                                 if r.path.endswith("/chat/completions")],
            }


def _error(message: str, code: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": code}}


class _Server(ThreadingHTTPServer):
    # The default listen backlog of 5 drops the SYNs of a burst of new connections; the kernel retries them
    # after 1 s, 3 s…, which looks like a slow server (30 concurrent first calls took 2 s).
    request_queue_size = 1024
    daemon_threads = True


class _Handler(BaseHTTPRequestHandler):
    fake: FakeOpenAI
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in two writes; without TCP_NODELAY, Nagle + delayed ACK add ~40 ms per call.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def _send(self, status: int, payload: Any, extra: dict[str, str] | None = None) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (extra or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/props" and self.fake.llama_cpp:
            with self.fake._lock:
                self.fake.props_requests += 1
            self._send(200, {"total_slots": self.fake.total_slots or 1,
                             "default_generation_settings": {"n_ctx": self.fake.n_ctx}})
        elif self.path.rstrip("/").endswith("/models"):
            models = sorted(self.fake.known_models or ["fake-model"])
            data = [{"id": m, "object": "model", "owned_by": "fake"} for m in models]
            self._send(200, {"object": "list", "data": data})
        elif self.path == "/_fake/stats":
            self._send(200, self.fake.stats())
        else:
            self._send(404, _error(f"no route {self.path}", "not_found"))

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if len(raw) < length:  # the client went away mid-request (killed): like a real server, process nothing
            self.close_connection = True
            return
        headers = {k.lower(): v for k, v in self.headers.items()}
        if headers.get("authorization") != f"Bearer {self.fake.api_key}":
            self._send(401, _error("Incorrect API key provided: sk-te****3456. You can find your API key at "
                                   "https://platform.openai.com/account/api-keys.", "invalid_api_key"))
            return
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._send(400, _error("request body is not JSON", "invalid_json"))
            return
        path = self.path.split("?", 1)[0].rstrip("/")
        fault = self.fake._record(path, body, headers)
        if fault is not None and fault.kind == "disconnect":
            self.close_connection = True  # no response at all: the client sees the connection drop
            return
        if path.endswith("/chat/completions"):
            with self.fake._lock:
                self.fake.in_flight += 1
                self.fake.max_in_flight = max(self.fake.max_in_flight, self.fake.in_flight)
            try:
                if self.fake._slots is not None:
                    with self.fake._slots:  # the others wait their turn, as on a server with N slots
                        status, payload, extra = self.fake._chat(body, headers, fault)
                else:
                    status, payload, extra = self.fake._chat(body, headers, fault)
            finally:
                with self.fake._lock:
                    self.fake.in_flight -= 1
        elif path.endswith("/embeddings"):
            status, payload, extra = self.fake._embeddings(body)
        else:
            status, payload, extra = 404, _error(f"no route {path}", "not_found"), {}
        self._send(status, payload, extra)


def load_responder(spec: str) -> Responder:
    """``module:function`` → the function."""
    module, _, name = spec.partition(":")
    if not module or not name:
        raise ValueError(f"responder {spec!r}: expected MODULE:FUNCTION")
    return getattr(importlib.import_module(module), name)


def start_subprocess(
    responders: dict[str, str] | None = None, *, latency_s: float = 0.0, api_key: str = FakeOpenAI.DEFAULT_KEY,
    timeout_s: float = 15.0,
) -> tuple[subprocess.Popen[str], str]:
    """Run the fake server in its own process; returns (process, base_url). The caller terminates it.

    ``responders`` maps schema names to ``module:function`` specs importable from the repository root.
    """
    root = Path(__file__).resolve().parents[2]
    cmd = [sys.executable, str(Path(__file__).resolve()), "--port", "0", "--latency", str(latency_s),
           "--api-key", api_key]
    for name, spec in (responders or {}).items():
        cmd += ["--responder", f"{name}={spec}"]
    proc = subprocess.Popen(cmd, cwd=root, stdout=subprocess.PIPE, text=True)
    deadline = time.monotonic() + timeout_s
    if proc.stdout is None:  # for type checkers: stdout=PIPE always gives one
        raise RuntimeError("no stdout pipe")
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line.startswith("READY "):
            return proc, line.split(" ", 1)[1].strip()
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise RuntimeError("the fake OpenAI server did not start")


def main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(description="Fake OpenAI-compatible server for goldset tests.")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--api-key", default=FakeOpenAI.DEFAULT_KEY)
    parser.add_argument("--responder", action="append", default=[], metavar="SCHEMA=MODULE:FUNC")
    parser.add_argument("--reject-json-schema", action="store_true")
    args = parser.parse_args(argv)
    fake = FakeOpenAI(api_key=args.api_key, latency_s=args.latency, port=args.port,
                      reject_json_schema=args.reject_json_schema)
    for item in args.responder:
        name, _, spec = item.partition("=")
        fake.add_responder(name, load_responder(spec))
    fake.start()
    print(f"READY {fake.base_url}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        fake.stop()


if __name__ == "__main__":
    main()

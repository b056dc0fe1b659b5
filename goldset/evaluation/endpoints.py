"""An HTTP endpoint as the system under test: goldset POSTs each question and maps the JSON reply through
``eval.endpoint`` (:class:`~goldset.evaluation.settings.SystemEndpointSettings`)."""

from __future__ import annotations

import asyncio
import json
import math
from typing import Any

from goldset.context import Context
from goldset.errors import ConfigError, UsageError
from goldset.evaluation.asking import ask_all
from goldset.evaluation.settings import SystemEndpointSettings
from goldset.progress import ProgressCallback
from goldset.redaction import redact
from goldset.schema import QAPair, RunSample


def _get_path(data: Any, path: str | None) -> Any:
    """``data["a"]["b"]`` for path ``a.b``; None when any step is missing."""
    if path is None:
        return None
    cur = data
    for part in path.split("."):
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        elif isinstance(cur, list) and part.isdigit() and int(part) < len(cur):
            cur = cur[int(part)]
        else:
            return None
    return cur


def response_to_output(data: Any, cfg: SystemEndpointSettings) -> dict[str, Any]:
    """An endpoint's JSON response mapped onto the target output fields through ``eval.endpoint``."""
    if not isinstance(data, dict):
        raise ValueError("endpoint response is not a JSON object")
    answer = _get_path(data, cfg.answer_field)
    if answer is None:
        raise ValueError(f"endpoint response has no {cfg.answer_field!r} field (set eval.endpoint.answer_field)")
    raw_contexts = _get_path(data, cfg.contexts_field) or []
    if not isinstance(raw_contexts, list):
        raise ValueError(f"endpoint response field {cfg.contexts_field!r} is not a list")
    contexts: list[dict[str, Any]] = []
    for ctx in raw_contexts:
        if isinstance(ctx, str):
            contexts.append({"text": ctx})
            continue
        text = _get_path(ctx, cfg.context_text_field)
        if text is None:
            raise ValueError(f"a context in the response has no {cfg.context_text_field!r} field")
        item: dict[str, Any] = {"text": str(text)}
        for key, path in (
            ("doc_id", cfg.context_doc_id_field),
            ("chunk_id", cfg.context_chunk_id_field),
            ("score", cfg.context_score_field),
        ):
            value = _get_path(ctx, path)
            if value is not None:
                item[key] = value if key == "score" else str(value)
        contexts.append(item)
    out: dict[str, Any] = {"answer": str(answer), "contexts": contexts}
    figures: tuple[tuple[str, str | None], ...] = (
        ("retrieval_ms", cfg.retrieval_ms_field),
        ("generation_ms", cfg.generation_ms_field),
        ("tokens_in", cfg.tokens_in_field),
        ("tokens_out", cfg.tokens_out_field),
        ("cost_usd", cfg.cost_field),
    )
    for key, figure_path in figures:
        value = _get_path(data, figure_path)
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
            out[key] = value
    return out


def run_endpoint(
    url: str,
    pairs: list[QAPair],
    cfg: SystemEndpointSettings | None = None,
    *,
    ctx: Context | None = None,
    concurrency: int = 8,
    timeout_s: float = 60.0,
    progress: ProgressCallback | None = None,
) -> dict[str, RunSample]:
    """POST every question to ``url``; HTTP errors, bad JSON and timeouts become failed samples."""
    import httpx

    cfg = cfg or SystemEndpointSettings()
    if not url.startswith(("http://", "https://")):
        raise UsageError(f"endpoint {url!r}: expected an http:// or https:// URL")
    headers = dict(cfg.headers)
    # Servers sometimes echo the request (headers included) in error bodies: never let the key into a record.
    secrets: list[str] = []
    if cfg.api_key_env:
        key = (ctx or Context.open(None)).getenv(cfg.api_key_env)
        if not key:
            raise ConfigError(
                f"eval.endpoint.api_key_env: secret {cfg.api_key_env} is not set; put it in the environment or .env"
            )
        headers["Authorization"] = f"Bearer {key}"
        secrets.append(key)

    async def main() -> dict[str, RunSample]:
        limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
        async with httpx.AsyncClient(headers=headers, timeout=timeout_s, limits=limits) as client:

            async def ask(pair: QAPair) -> Any:
                body: dict[str, Any] = {**cfg.extra_body, cfg.request_field: pair.question}
                if cfg.pair_id_field:
                    body[cfg.pair_id_field] = pair.id
                try:
                    resp = await client.post(url, json=body)
                except httpx.TimeoutException:
                    raise TimeoutError from None
                except httpx.HTTPError as exc:
                    # The exception text can hold the request; keep only its class and the host-free reason.
                    raise RuntimeError(f"HTTP request failed ({type(exc).__name__})") from None
                if resp.status_code >= 400:
                    snippet = " ".join(resp.text.split())[:200]
                    raise RuntimeError(f"HTTP {resp.status_code}: {redact(snippet, secrets)}")
                try:
                    data = resp.json()
                except (json.JSONDecodeError, UnicodeDecodeError):
                    raise ValueError("endpoint response is not JSON") from None
                return response_to_output(data, cfg)

            return await ask_all(pairs, ask, concurrency=concurrency, timeout_s=timeout_s, progress=progress)

    return asyncio.run(main())


def redact_url(url: str) -> str:
    """The URL as stored in run metadata: no user:password, no query string (where API keys like to hide)."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))

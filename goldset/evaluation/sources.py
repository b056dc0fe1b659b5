"""Getting a run: a JSONL file the user's system wrote, a Python callable, or an HTTP endpoint.

For callables and endpoints goldset asks every question itself, with bounded concurrency and a per-question
timeout, and measures the total latency. A question that raises, times out or gets an HTTP error becomes a
*failed sample* carrying its error: it counts against the system in the averages, and the run goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import inspect
import json
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from goldset.dataset import Dataset, read_dataset
from goldset.errors import ConfigError, InputError, RecordError, UsageError
from goldset.evaluation.settings import SystemEndpointSettings
from goldset.hashing import canonical_json, sha256_hex
from goldset.progress import Progress, ProgressCallback
from goldset.redaction import redact
from goldset.schema import PairStatus, QAPair, RunSample
from goldset.schema.manifest import CHUNKS_FILE, PAIRS_FILE
from goldset.workspace import Workspace

# --------------------------------------------------------------------------------------------------- datasets


def resolve_dataset(spec: str | Path, ws: Workspace | None = None) -> Dataset:
    """A dataset given as a folder (``pairs.jsonl`` + ``chunks.jsonl`` + ``manifest.json``).

    Released versions by name plug in here once ``goldset release`` exists; until then a name that is not a
    folder is an error that says so.
    """
    path = Path(spec)
    candidates = [path] if path.is_absolute() else [path, *([ws.root / path] if ws else [])]
    for candidate in candidates:
        if candidate.is_dir():
            return read_dataset(candidate)
    import goldset

    load = getattr(goldset, "load", None)  # the versioning API, once it exists
    if load is not None:
        kwargs = {"ws": ws} if "ws" in inspect.signature(load).parameters else {}
        loaded = load(str(spec), **kwargs)
        return loaded if isinstance(loaded, Dataset) else read_dataset(Path(loaded))
    raise InputError(
        f"{spec}: no such dataset folder; released versions by name arrive with `goldset release` — "
        f"for now pass a dataset folder (e.g. data/)"
    )


def dataset_fingerprint(dataset: Dataset) -> str:
    """A hash of the dataset's *content* (its pairs and chunks files), the identity runs are compared by.

    The manifest's file hashes are used when present (they are what a release pins); ``created_at`` is left out
    on purpose, so rewriting identical data does not make two runs incomparable.
    """
    files = dataset.manifest.files if dataset.manifest is not None else {}
    if files:
        return sha256_hex(canonical_json(dict(sorted(files.items()))))[:16]
    if dataset.path is not None:
        parts = {}
        for name in (PAIRS_FILE, CHUNKS_FILE):
            f = dataset.path / name
            if f.is_file():
                parts[name] = sha256_hex(f.read_bytes())
        return sha256_hex(canonical_json(parts))[:16]
    return sha256_hex(canonical_json([p.model_dump(mode="json") for p in dataset.pairs]))[:16]


def select_pairs(dataset: Dataset) -> tuple[list[QAPair], str | None]:
    """The pairs evaluated: passed/accepted ones when there are any, else every non-rejected, non-retired pair.

    Returns the pairs (sorted by id) and a note for the user when the fallback was used.
    """
    kept = {PairStatus.passed, PairStatus.accepted}
    chosen = [p for p in dataset.pairs if p.status in kept]
    note = None
    if not chosen:
        dropped = {PairStatus.rejected, PairStatus.retired}
        chosen = [p for p in dataset.pairs if p.status not in dropped]
        note = (
            f"no passed or accepted pairs in the dataset: evaluating all {len(chosen)} non-rejected, "
            f"non-retired pairs (run `goldset filter` to check them first)"
        )
    if not chosen:
        where = dataset.path or "dataset"
        raise InputError(f"{where}: no pairs to evaluate (every pair is rejected or retired)")
    return sorted(chosen, key=lambda p: p.id), note


# --------------------------------------------------------------------------------------------------- run files


@dataclass
class RunFile:
    samples: dict[str, RunSample]
    notes: list[str] = field(default_factory=list)


def _sidecar_meta(path: Path) -> tuple[Path, dict[str, Any]] | None:
    """``<run>.meta.json`` or ``meta.json`` beside the run file, read loosely (only the version keys matter)."""
    for candidate in (path.with_name(path.stem + ".meta.json"), path.with_name("meta.json")):
        if candidate.is_file():
            try:
                data = json.loads(candidate.read_text(encoding="utf-8"))
            except (json.JSONDecodeError, UnicodeDecodeError):
                raise InputError(f"{candidate}: not valid JSON; fix it or remove it") from None
            if not isinstance(data, dict):
                raise InputError(f"{candidate}: expected a JSON object with dataset_version and/or manifest_hash")
            return candidate, data
    return None


def read_run_file(path: Path, dataset: Dataset, *, fingerprint: str | None = None) -> RunFile:
    """Read a run file (JSONL of RunSample) and check it belongs to ``dataset``.

    Errors: malformed lines (file:line), a blank retrieved context (file:line), the same pair twice, pair ids
    the dataset does not have (a few listed), a sidecar meta.json naming another dataset version or hash.
    Pairs the file lacks are *not* an error here: the caller scores them as failed samples.
    """
    from goldset.io import iter_jsonl_numbered

    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: run file not found")
    samples: dict[str, RunSample] = {}
    notes: list[str] = []
    no_contexts = 0
    for lineno, sample in iter_jsonl_numbered(path, RunSample):
        for i, ctx in enumerate(sample.contexts):
            if not ctx.text.strip():
                raise RecordError(
                    str(path), lineno, f"contexts[{i}].text is empty; give the retrieved text or drop the context"
                )
        if sample.pair_id in samples:
            raise RecordError(str(path), lineno, f"pair {sample.pair_id} appears twice; keep one line per pair")
        if not sample.contexts and not sample.error:
            no_contexts += 1
        samples[sample.pair_id] = sample
    if not samples:
        raise InputError(f"{path}: the run file holds no samples; write one JSON line per question")

    known = {p.id for p in dataset.pairs}
    unknown = sorted(set(samples) - known)
    if unknown:
        shown = ", ".join(unknown[:5]) + (f" (+{len(unknown) - 5} more)" if len(unknown) > 5 else "")
        raise InputError(
            f"{path}: {len(unknown)} pair id(s) not in dataset {dataset.path or ''}: {shown}; "
            f"was the run made against another dataset version?"
        )
    side = _sidecar_meta(path)
    if side is not None:
        meta_path, meta = side
        manifest = dataset.manifest
        want_version = manifest.version if manifest else None
        got_version = meta.get("dataset_version")
        if got_version and want_version and got_version != want_version:
            raise InputError(
                f"{meta_path}: the run was made against dataset version {got_version}, not {want_version}; "
                f"evaluate it against {got_version} or re-run your system"
            )
        got_hash = meta.get("manifest_hash")
        if got_hash and fingerprint and got_hash != fingerprint:
            raise InputError(
                f"{meta_path}: the run was made against a dataset with hash {got_hash}, not {fingerprint}; "
                f"evaluate it against that dataset or re-run your system"
            )
    if no_contexts:
        notes.append(f"{no_contexts} sample(s) in {path.name} have no retrieved contexts (nothing retrieved)")
    return RunFile(samples=samples, notes=notes)


def missing_sample(pair: QAPair, reason: str) -> RunSample:
    """A failed sample standing in for a pair the run lacks: it counts against the system, it is not dropped."""
    return RunSample(pair_id=pair.id, question=pair.question, error=reason)


# --------------------------------------------------------------------------------------------------- targets


def load_target(spec: str) -> Callable[..., Any]:
    """``package.module:function`` → the callable."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise UsageError(f"--target {spec!r}: expected package.module:function")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UsageError(f"--target {spec}: cannot import {module_name} ({exc}); is it on PYTHONPATH?") from None
    obj: Any = module
    for part in attr.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise UsageError(f"--target {spec}: {module_name} has no attribute {attr!r}")
    if not callable(obj):
        raise UsageError(f"--target {spec}: {attr} is not callable")
    return obj


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


_SAMPLE_KEYS = {"answer", "contexts", "latency", "tokens_in", "tokens_out", "cost_usd", "error"}
_LATENCY_KEYS = {"retrieval_ms", "generation_ms", "ttft_ms"}


def to_sample(pair: QAPair, output: Any, total_ms: float) -> RunSample:
    """What a target returned, as a RunSample; ``total_ms`` (measured by goldset) wins over a reported one.

    Accepts a RunSample, a dict (answer, contexts: [str | {text, doc_id, chunk_id, score}], latency or
    retrieval_ms/generation_ms/ttft_ms, tokens_in, tokens_out, cost_usd, error), an object with those
    attributes, or a plain string (the answer, no contexts). Raises ValueError on anything else.
    """
    if isinstance(output, RunSample):
        data: dict[str, Any] = output.model_dump(exclude={"pair_id", "question", "schema_version"})
    elif isinstance(output, str):
        data = {"answer": output}
    elif isinstance(output, dict):
        data = dict(output)
    elif output is not None and hasattr(output, "answer"):
        data = {k: getattr(output, k) for k in (*_SAMPLE_KEYS, *_LATENCY_KEYS) if hasattr(output, k)}
    else:
        raise ValueError(f"target returned {type(output).__name__}; return a dict with answer and contexts")
    unknown = sorted(set(data) - _SAMPLE_KEYS - _LATENCY_KEYS)
    if unknown:
        known = ", ".join(sorted(_SAMPLE_KEYS))
        raise ValueError(f"target returned unknown field(s) {', '.join(unknown)}; known: {known}")
    latency = dict(data.pop("latency", None) or {})
    for key in _LATENCY_KEYS:
        if data.get(key) is not None:
            latency[key] = data.pop(key)
        else:
            data.pop(key, None)
    latency["total_ms"] = total_ms
    contexts = []
    for ctx in data.pop("contexts", None) or []:
        contexts.append({"text": ctx} if isinstance(ctx, str) else ctx)
    if data.get("answer") is None:
        data["answer"] = ""
    return RunSample.model_validate(
        {"pair_id": pair.id, "question": pair.question, **data, "contexts": contexts, "latency": latency}
    )


def _error_text(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}"[:500] if text else type(exc).__name__


def _resolve_in_loop(fut: asyncio.Future[Any], result: Any, exc: BaseException | None) -> None:
    if fut.done():  # timed out and cancelled meanwhile: the late result is dropped
        return
    if exc is not None:
        fut.set_exception(exc)
    else:
        fut.set_result(result)


async def _call_in_thread(fn: Callable[[str], Any], arg: str) -> Any:
    """Run a sync callable in a *daemon* thread.

    Not ``asyncio.to_thread``: its pool threads are joined when the loop (and the interpreter) shuts down, so one
    hung target would hang goldset after the run is done. A daemon thread that never returns is simply left behind.
    """
    loop = asyncio.get_running_loop()
    fut: asyncio.Future[Any] = loop.create_future()

    def work() -> None:
        try:
            result, error = fn(arg), None
        except BaseException as exc:
            result, error = None, exc
        with contextlib.suppress(RuntimeError):  # the loop is closed: the run finished without us
            loop.call_soon_threadsafe(_resolve_in_loop, fut, result, error)

    threading.Thread(target=work, daemon=True, name="goldset-target").start()
    return await fut


async def _ask_all(
    pairs: list[QAPair],
    ask: Callable[[QAPair], Any],
    *,
    concurrency: int,
    timeout_s: float,
    progress: ProgressCallback | None,
) -> dict[str, RunSample]:
    sem = asyncio.Semaphore(concurrency)
    out: dict[str, RunSample] = {}
    done = 0

    async def one(pair: QAPair) -> None:
        nonlocal done
        async with sem:
            start = time.perf_counter()
            try:
                output = await asyncio.wait_for(ask(pair), timeout=timeout_s)
                ms = (time.perf_counter() - start) * 1000
                sample = to_sample(pair, output, ms)
            except TimeoutError:
                ms = (time.perf_counter() - start) * 1000
                sample = RunSample(pair_id=pair.id, question=pair.question, error=f"timeout after {timeout_s:g} s")
                sample.latency.total_ms = ms
            except Exception as exc:
                ms = (time.perf_counter() - start) * 1000
                sample = RunSample(pair_id=pair.id, question=pair.question, error=_error_text(exc))
                sample.latency.total_ms = ms
            out[pair.id] = sample
            done += 1
            if progress is not None:
                progress(Progress("questions", done, len(pairs)))

    await asyncio.gather(*(one(p) for p in pairs))
    return out


def run_callable(
    fn: Callable[..., Any],
    pairs: list[QAPair],
    *,
    concurrency: int = 8,
    timeout_s: float = 60.0,
    progress: ProgressCallback | None = None,
) -> dict[str, RunSample]:
    """Ask ``fn(question)`` (sync or async) every question; failures and timeouts become failed samples."""
    # Objects with an async __call__ go the sync way and return a coroutine, which is awaited below.
    is_async = inspect.iscoroutinefunction(fn)

    async def ask(pair: QAPair) -> Any:
        if is_async:
            return await fn(pair.question)
        result = await _call_in_thread(fn, pair.question)
        if inspect.isawaitable(result):
            return await result
        return result

    return asyncio.run(_ask_all(pairs, ask, concurrency=concurrency, timeout_s=timeout_s, progress=progress))


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
    for key, path in (
        ("retrieval_ms", cfg.retrieval_ms_field),
        ("generation_ms", cfg.generation_ms_field),
        ("tokens_in", cfg.tokens_in_field),
        ("tokens_out", cfg.tokens_out_field),
        ("cost_usd", cfg.cost_field),
    ):
        value = _get_path(data, path)
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
            out[key] = value
    return out


def run_endpoint(
    url: str,
    pairs: list[QAPair],
    cfg: SystemEndpointSettings | None = None,
    *,
    ws: Workspace | None = None,
    concurrency: int = 8,
    timeout_s: float = 60.0,
    progress: ProgressCallback | None = None,
) -> dict[str, RunSample]:
    """POST every question to ``url``; HTTP errors, bad JSON and timeouts become failed samples."""
    import httpx

    from goldset.config import get_env

    cfg = cfg or SystemEndpointSettings()
    if not url.startswith(("http://", "https://")):
        raise UsageError(f"--endpoint {url!r}: expected an http:// or https:// URL")
    headers = dict(cfg.headers)
    # Servers sometimes echo the request (headers included) in error bodies: never let the key into a record.
    secrets: list[str] = []
    if cfg.api_key_env:
        key = get_env(cfg.api_key_env, ws)
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

            return await _ask_all(pairs, ask, concurrency=concurrency, timeout_s=timeout_s, progress=progress)

    return asyncio.run(main())


def redact_url(url: str) -> str:
    """The URL as stored in run metadata: no user:password, no query string (where API keys like to hide)."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))

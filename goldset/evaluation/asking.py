"""Asking a system every question: bounded concurrency, a per-question timeout, goldset's own latency clock, and
what the system returned turned into a :class:`~goldset.schema.RunSample`.

Shared by Python callables (:mod:`.callables`) and HTTP endpoints (:mod:`.endpoints`). A question that raises,
times out or returns something unusable becomes a *failed sample* carrying its error: it counts against the
system in the averages, and the run goes on.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from goldset.progress import Progress, ProgressCallback
from goldset.schema import QAPair, RunSample

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


async def ask_all(
    pairs: list[QAPair],
    ask: Callable[[QAPair], Any],
    *,
    concurrency: int,
    timeout_s: float,
    progress: ProgressCallback | None,
) -> dict[str, RunSample]:
    """``await ask(pair)`` for every pair, at most ``concurrency`` at once and ``timeout_s`` each; one sample per
    pair (failures included), keyed by pair id. ``progress`` gets a ``questions`` update after each answer."""
    from goldset.llm.fanout import fan_out

    async def one(pair: QAPair) -> RunSample:
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
        return sample

    def tick(done: int, total: int) -> None:
        if progress is not None:
            progress(Progress("questions", done, total))

    samples = await fan_out(pairs, one, limit=concurrency, on_done=tick)
    return {s.pair_id: s for s in samples}

"""A Python callable as the system under test: ``package.module:function`` (or the function itself), sync or
async, asked every question through :mod:`.asking`."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import inspect
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from goldset.errors import UsageError
from goldset.evaluation.asking import ask_all
from goldset.progress import ProgressCallback
from goldset.schema import QAPair, RunSample


def load_target(spec: str) -> Callable[..., Any]:
    """``package.module:function`` → the callable."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise UsageError(f"target {spec!r}: expected package.module:function")
    here = str(Path.cwd())
    if here not in sys.path and "" not in sys.path:
        sys.path.insert(0, here)  # modules in the current folder, as pytest and uvicorn find them
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UsageError(
            f"target {spec}: cannot import {module_name} ({exc}); run from the folder that holds it, or add its "
            "folder to PYTHONPATH"
        ) from None
    obj: Any = module
    for part in attr.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise UsageError(f"target {spec}: {module_name} has no attribute {attr!r}")
    if not callable(obj):
        raise UsageError(f"target {spec}: {attr} is not callable")
    return obj


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

    return asyncio.run(ask_all(pairs, ask, concurrency=concurrency, timeout_s=timeout_s, progress=progress))

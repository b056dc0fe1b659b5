"""Scoring a large run on several cores: forked processes each score a slice of the pairs (:func:`map_forked`).

Scoring is pure Python (the matcher, tokenisation, the metric functions), so threads would share one core. A
forked child inherits the pairs and samples already in memory (nothing is pickled on the way in) and sends back
only its scores, which are small; the parent scores the first slice meanwhile. ``gc.freeze()`` before the fork
keeps the children's garbage collector from touching (and so copying) every inherited object.

Fork is used only where it is the platform's own way to start processes (Linux): macOS's frameworks are not
fork-safe and Windows has no fork, and there a run is scored in one process. A child that dies or cannot be
started costs time, not results: the parent scores that slice itself. An error raised while scoring (a bad
setting) is raised in the parent as it would be in one process.
"""

from __future__ import annotations

import gc
import pickle
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

T = TypeVar("T")
R = TypeVar("R")

#: Fewer items than this per process and starting one costs more than it saves.
MIN_PER_WORKER = 1000


def available() -> bool:
    """Whether work may be forked here (Linux, with the fork start method)."""
    import multiprocessing

    return sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()


def _child(conn: Connection, fn: Callable[[Sequence[T]], list[R]], part: Sequence[T]) -> None:
    """Runs in the forked process: ``fn(part)``, sent back as ('ok', results) or ('error', exception)."""
    try:
        payload: tuple[str, Any] = ("ok", fn(part))
    except Exception as exc:  # raised again in the parent, as in one process
        payload = ("error", exc)
    try:
        conn.send_bytes(pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL))
    except Exception as exc:  # an exception that does not pickle
        conn.send_bytes(pickle.dumps(("error", RuntimeError(f"scoring failed in a worker: {exc}"))))
    finally:
        conn.close()


def map_forked(fn: Callable[[Sequence[T]], list[R]], items: Sequence[T], workers: int) -> list[R]:
    """``fn(items)``, computed as ``fn`` of consecutive slices in ``workers`` processes (this one included) and
    concatenated in order. ``fn`` and what it reads are inherited by the children, not pickled; its results are."""
    import multiprocessing

    workers = max(1, min(workers, len(items) // MIN_PER_WORKER))
    if workers == 1 or not available():
        return fn(items)
    ctx = multiprocessing.get_context("fork")
    size = -(-len(items) // workers)
    slices = [items[i : i + size] for i in range(0, len(items), size)]
    children: list[tuple[Any, Connection | None, Sequence[T]]] = []
    gc.freeze()
    try:
        for part in slices[1:]:
            recv, send = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_child, args=(send, fn, part), daemon=True)
            try:
                proc.start()
            except OSError:  # no memory or process slot for a child: this process does the slice
                recv.close()
                children.append((None, None, part))
                continue
            finally:
                send.close()
            children.append((proc, recv, part))
        out = fn(slices[0])
        for proc, conn, part in children:
            result: tuple[str, Any] | None = None
            if conn is not None:
                try:
                    result = pickle.loads(conn.recv_bytes())
                except (EOFError, OSError):  # the child died: do its slice here
                    result = None
                finally:
                    conn.close()
                    proc.join()
            if result is None:
                out += fn(part)
            elif result[0] == "error":
                raise result[1]
            else:
                out += result[1]
        return out
    finally:
        gc.unfreeze()
        for proc, _, _ in children:
            if proc is not None and proc.is_alive():
                proc.kill()
                proc.join()

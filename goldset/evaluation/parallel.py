"""Scoring a large run on several cores: forked processes each score a slice of the pairs.

Scoring is pure Python (the matcher, tokenisation, the metric functions), so threads would share one core. A
forked child inherits the pairs and samples already in memory (nothing is pickled on the way in) and sends back
only its scores, which are small. :class:`Forks` starts a child on a slice as soon as that slice is in memory (a run
file's first half is scored while its second half is read) and collects the results later; :func:`map_forked` is
the simple case, every slice at once. ``gc.freeze()`` before a fork keeps the child's garbage collector from
touching (and so copying) every inherited object.

Fork is used only where it is the platform's own way to start processes (Linux): macOS's frameworks are not
fork-safe and Windows has no fork, and there a run is scored in one process. A fork may happen while the run
folder's compressor thread runs (:class:`~goldset.evaluation.runs.SampleStore`); the child never touches it or any
lock it may hold: it scores from memory, sends its result through its own pipe and ends with ``os._exit`` (as
multiprocessing's fork children do). Python 3.12 warns about any fork of a threaded process; this one is of that
safe kind. A child that dies or cannot be
started costs time, not results: the parent does that slice itself. An error raised in a child (a bad setting) is
raised in the parent as it would be in one process.
"""

from __future__ import annotations

import gc
import pickle
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

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


class Forks(Generic[T, R]):
    """``fn`` of slices computed in forked children, started one by one and collected in order.

    ``start(part)`` forks a child that computes ``fn(part)`` from the memory as it is at that moment; ``collect()``
    returns the children's results concatenated in the order they were started. Use as a context manager: children
    still running when it exits (an error elsewhere) are killed.
    """

    def __init__(self, fn: Callable[[Sequence[T]], list[R]]) -> None:
        self.fn = fn
        self._children: list[tuple[BaseProcess | None, Connection | None, Sequence[T]]] = []

    def __enter__(self) -> Forks[T, R]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self, part: Sequence[T]) -> None:
        """Fork a child computing ``fn(part)`` (or keep ``part`` for :meth:`collect` when forking is unavailable)."""
        import multiprocessing

        if not available():
            self._children.append((None, None, part))
            return
        ctx = multiprocessing.get_context("fork")
        recv, send = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_child, args=(send, self.fn, part), daemon=True)
        gc.freeze()
        try:
            proc.start()
        except OSError:  # no memory or process slot for a child: the parent does the slice
            recv.close()
            self._children.append((None, None, part))
            return
        finally:
            gc.unfreeze()
            send.close()
        self._children.append((proc, recv, part))

    def collect(self) -> list[R]:
        """Every started slice's results, in order; a slice whose child died is computed here."""
        out: list[R] = []
        for proc, conn, part in self._children:
            result: tuple[str, Any] | None = None
            if proc is not None and conn is not None:
                try:
                    result = pickle.loads(conn.recv_bytes())
                except (EOFError, OSError):  # the child died
                    result = None
                finally:
                    conn.close()
                    proc.join()
            if result is None:
                out += self.fn(part)
            elif result[0] == "error":
                raise result[1]
            else:
                out += result[1]
        self._children = []
        return out

    def close(self) -> None:
        """Kill the children still running."""
        for proc, conn, _ in self._children:
            if conn is not None:
                conn.close()
            if proc is not None and proc.is_alive():
                proc.kill()
                proc.join()
        self._children = []


def map_forked(fn: Callable[[Sequence[T]], list[R]], items: Sequence[T], workers: int) -> list[R]:
    """``fn(items)``, computed as ``fn`` of consecutive slices in ``workers`` processes (this one included) and
    concatenated in order. ``fn`` and what it reads are inherited by the children, not pickled; its results are."""
    workers = max(1, min(workers, len(items) // MIN_PER_WORKER))
    if workers == 1 or not available():
        return fn(items)
    size = -(-len(items) // workers)
    slices = [items[i : i + size] for i in range(0, len(items), size)]
    with Forks(fn) as forks:
        for part in slices[1:]:
            forks.start(part)
        first = fn(slices[0])
        return first + forks.collect()

"""Work split over forked processes, for the CPU-bound part of an evaluation (scoring 10,000 samples).

:func:`split_work` cuts ``n`` items into contiguous slices, runs the first in this process and each other one in
a child made by ``os.fork``. A child sees the parent's objects as they were at the fork (copy-on-write: nothing is
pickled on the way in), computes its slice and pickles the result back through a pipe. The results come back in
item order, and each slice is computed by the same code on the same objects, so the outcome is the one a single
process gives: only the time changes.

A child that fails in any way (an exception, a signal, the memory killer, a truncated result, no answer long
after this process finished its own share: :func:`patience`) costs time, never results: its slice is computed
again in this process, where a real error then raises as usual. Without ``fork``
(Windows) everything runs in this process. :class:`Forked` is one such child, for work that starts before the
rest is known (scoring the samples read so far while the run file is still being read).
"""

from __future__ import annotations

import functools
import os
import pickle
import select
import signal
import time
from collections.abc import Callable
from typing import Generic, NoReturn, TypeVar

R = TypeVar("R")

__all__ = ["Forked", "available_cpus", "patience", "split_work"]


def available_cpus() -> int:
    """CPU cores this process may run on (its affinity mask where the system has one, else the machine's)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _slices(n: int, parts: int) -> list[tuple[int, int]]:
    size, extra = divmod(n, parts)
    bounds, start = [], 0
    for i in range(parts):
        end = start + size + (1 if i < extra else 0)
        bounds.append((start, end))
        start = end
    return bounds


def _child(work: Callable[[], list[R]], write_fd: int) -> NoReturn:
    """Run in the forked child: compute the work, send it pickled, and leave without running the parent's exit
    handlers or flushing its buffers (``os._exit``)."""
    code = 1
    try:
        data = pickle.dumps(work(), protocol=pickle.HIGHEST_PROTOCOL)
        with os.fdopen(write_fd, "wb") as fh:
            fh.write(data)
        code = 0
    except BaseException:  # whatever happened, the parent computes this slice again
        pass
    finally:
        os._exit(code)


class Forked(Generic[R]):
    """``work()`` computed in a forked child while this process goes on: :meth:`result` waits for it (None when the
    child failed: compute it here then), :meth:`cancel` stops it. Without ``fork`` the work is done at once, here.
    """

    def __init__(self, work: Callable[[], list[R]]) -> None:
        self._done: list[R] | None = None
        self._pid = -1
        self._fd = -1
        if not hasattr(os, "fork"):
            self._done = work()
            return
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child
            os.close(read_fd)
            _child(work, write_fd)
        os.close(write_fd)
        self._pid, self._fd = pid, read_fd

    def result(self, timeout: float | None = None) -> list[R] | None:
        """The child's result, once it is there; None when it failed in any way, or sent nothing for ``timeout``
        seconds (a child stuck on a lock another thread of this process held at the fork): it is stopped then."""
        if self._pid < 0:
            return self._done
        chunks: list[bytes] = []
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self._fd], [], [], left)[0]:
                    self.cancel()
                    return None
            chunk = os.read(self._fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        os.close(self._fd)
        self._fd = -1
        _, status = os.waitpid(self._pid, 0)
        self._pid = -1
        data = b"".join(chunks)
        if os.waitstatus_to_exitcode(status) == 0 and data:
            try:
                self._done = pickle.loads(data)
            except Exception:  # a cut-off result
                self._done = None
        return self._done

    def cancel(self) -> None:
        """Stop the child and reap it (nothing to do once :meth:`result` returned)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        if self._pid >= 0:
            try:
                os.kill(self._pid, signal.SIGKILL)
                os.waitpid(self._pid, 0)
            except OSError:
                pass
            self._pid = -1


def patience(own_seconds: float) -> float:
    """How long to wait for a child whose work is about the size of the ``own_seconds`` this process took for its
    own: generously more (a loaded machine), then the work is done here."""
    return max(10.0, 4 * own_seconds)


def split_work(work: Callable[[int, int], list[R]], n: int, processes: int) -> list[R]:
    """``work(0, n)``, computed as ``work(start, end)`` over ``processes`` contiguous slices at once (module
    docstring); ``work`` must return one result per item of its slice and must not depend on which process runs it.
    """
    if processes <= 1 or n < 2 or not hasattr(os, "fork"):
        return work(0, n)
    bounds = _slices(n, min(processes, n))
    children: list[Forked[R]] = []
    try:
        for start, end in bounds[1:]:
            children.append(Forked(functools.partial(work, start, end)))
        began = time.monotonic()
        out = work(*bounds[0])
        wait = patience(time.monotonic() - began)
        for (start, end), child in zip(bounds[1:], children, strict=True):
            part = child.result(timeout=wait)
            if part is None or len(part) != end - start:
                part = work(start, end)
            out += part
        return out
    finally:
        for child in children:  # reaped already unless this process raised: then stop what is left
            child.cancel()

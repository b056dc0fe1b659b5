"""Work split over forked processes, for the CPU-bound part of an evaluation (scoring 10,000 samples).

:func:`split_work` cuts ``n`` items into contiguous slices, runs the first in this process and each other one in
a child made by ``os.fork``. A child sees the parent's objects as they were at the fork (copy-on-write: nothing is
pickled on the way in), computes its slice and pickles the result back through a pipe. The results come back in
item order, and each slice is computed by the same code on the same objects, so the outcome is the one a single
process gives: only the time changes.

A child that fails in any way (an exception, a signal, the memory killer, a truncated result) costs time, never
results: its slice is computed again in this process, where a real error then raises as usual. Without ``fork``
(Windows) everything runs in this process.
"""

from __future__ import annotations

import os
import pickle
import signal
from collections.abc import Callable
from typing import NoReturn, TypeVar

R = TypeVar("R")

__all__ = ["available_cpus", "split_work"]


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


def _child(work: Callable[[int, int], list[R]], start: int, end: int, write_fd: int) -> NoReturn:
    """Run in the forked child: compute one slice, send it pickled, and leave without running the parent's exit
    handlers or flushing its buffers (``os._exit``)."""
    code = 1
    try:
        data = pickle.dumps(work(start, end), protocol=pickle.HIGHEST_PROTOCOL)
        with os.fdopen(write_fd, "wb") as fh:
            fh.write(data)
        code = 0
    except BaseException:  # whatever happened, the parent computes this slice again
        pass
    finally:
        os._exit(code)


def split_work(work: Callable[[int, int], list[R]], n: int, processes: int) -> list[R]:
    """``work(0, n)``, computed as ``work(start, end)`` over ``processes`` contiguous slices at once (module
    docstring); ``work`` must return one result per item of its slice and must not depend on which process runs it.
    """
    if processes <= 1 or n < 2 or not hasattr(os, "fork"):
        return work(0, n)
    bounds = _slices(n, min(processes, n))
    children: list[list[int]] = []  # [pid, read fd (-1 once closed)] of each child not yet reaped
    try:
        for start, end in bounds[1:]:
            read_fd, write_fd = os.pipe()
            pid = os.fork()
            if pid == 0:  # the child
                os.close(read_fd)
                _child(work, start, end, write_fd)
            os.close(write_fd)
            children.append([pid, read_fd])
        out = work(*bounds[0])
        for (start, end), child in zip(bounds[1:], list(children), strict=True):
            pid, read_fd = child
            with os.fdopen(read_fd, "rb") as fh:
                child[1] = -1
                data = fh.read()
            _, status = os.waitpid(pid, 0)
            children.remove(child)
            part: list[R] | None = None
            if os.waitstatus_to_exitcode(status) == 0 and data:
                try:
                    part = pickle.loads(data)
                except Exception:  # a cut-off result: compute the slice here
                    part = None
            if part is None or len(part) != end - start:
                part = work(start, end)
            out += part
        return out
    finally:
        for pid, read_fd in children:  # only when this process raised: stop and reap what is left
            if read_fd >= 0:
                os.close(read_fd)
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except OSError:
                pass

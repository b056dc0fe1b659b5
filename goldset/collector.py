"""The cyclic garbage collector paused for the span of a big allocation, and skipped at the command line's exit:
goldset's two adjustments of it.

A span that makes hundreds of thousands of objects and next to no reference cycles gains nothing from the
collector's passes and pays for each: a full pass walks every object of the process, those made so far included.
Used where that was measured (this machine, benchmarks/): reading a dataset, a 10,000-sample run file (the
collector took 0.9 s of 1.8 s) or a run folder, scoring and summarising a run, and a generation run (over the
FastAPI docs, 286 calls at 200 ms: one full pass of 70–110 ms near its start and 100–160 ms of passes in all
without the pause, under 1 ms with it; the run leaves 112 unreachable objects, its closed connections, whatever
its number of calls, retries and repairs). Nothing in goldset freezes objects for the rest of the process, but
for :func:`skip_final_collections` when the ``goldset`` command is done.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """The cyclic garbage collector off for the span, back as it was after.

    When it is back on, the objects made meanwhile go to the oldest generation without a pass over them
    (``gc.freeze`` then ``gc.unfreeze`` moves them there and resets the young count, which a pause lets grow to
    hundreds of thousands: else the next allocation walks them all at once). They are still collected by the next
    full pass. Not done when something else froze objects (``gc.get_freeze_count``): unfreezing would undo that.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            if not gc.get_freeze_count():
                gc.freeze()
                gc.unfreeze()
            gc.enable()


def skip_final_collections() -> None:
    """Called by the ``goldset`` command when its work is done, just before the interpreter shuts down: every
    object the collector tracks goes to the permanent generation (``gc.freeze``), so the collections of the
    shutdown do not walk them again. A generation run holds ~100,000 tracked objects (openai's types, pydantic's
    models, the run's records); its shutdown took 0.3–0.5 s of a 4.5 s process, under 0.05 s frozen
    (benchmarks/RESULTS.md, "generate: whole process"). Shutdown is otherwise unchanged: ``atexit`` handlers and
    ``weakref.finalize`` callbacks run, modules are cleared, objects whose last reference goes are freed (files
    flushed and closed). Only garbage *cycles* still alive at that moment are not finalised: goldset writes its
    files through context managers and commits each journal row as it goes, so nothing waits on one."""
    gc.freeze()

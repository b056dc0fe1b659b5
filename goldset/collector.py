"""The cyclic garbage collector paused for the span of a big allocation: goldset's one adjustment of it.

A span that makes hundreds of thousands of objects and next to no reference cycles gains nothing from the
collector's passes and pays for each: a full pass walks every object of the process, those made so far included.
Used where that was measured (this machine, benchmarks/): reading a dataset, a 10,000-sample run file (the
collector took 0.9 s of 1.8 s) or a run folder, scoring and summarising a run, and a generation run (over the
FastAPI docs, 286 calls at 200 ms: one full pass of 70–110 ms near its start and 100–160 ms of passes in all
without the pause, under 1 ms with it; the run leaves 112 unreachable objects, its closed connections, whatever
its number of calls, retries and repairs). Nothing in goldset freezes objects for the rest of the process.
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

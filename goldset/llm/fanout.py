"""Sending many calls at once: :func:`fan_out`, the one way every LLM caller does it.

Two bounds, two jobs. The client's pool (``llm.endpoints.<name>.concurrency``) bounds the requests on the wire;
it cannot bound how many calls *wait* for it: a ``gather`` over 50,000 pairs makes 50,000 coroutines at once,
each holding its rendered prompt while it waits for a slot. :func:`fan_out` keeps only ``limit`` calls in
progress: ``limit`` workers each take the next item when their call is done. Callers of one client pass
:func:`fan_out_limit`: twice the endpoint's concurrency, so that a slot freed in the pool always has a call
waiting with its prompt rendered and its key computed, and no more prompts than that are held.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from goldset.llm.endpoints import Endpoint

ItemT = TypeVar("ItemT")
ResultT = TypeVar("ResultT")

#: Calls in progress per request slot of the endpoint (see the module docstring).
CALLS_PER_SLOT = 2


def fan_out_limit(endpoint: Endpoint) -> int:
    """The calls to keep in progress against ``endpoint``: :data:`CALLS_PER_SLOT` × its concurrency."""
    return CALLS_PER_SLOT * endpoint.settings.concurrency


async def fan_out(
    items: Sequence[ItemT],
    call: Callable[[ItemT], Awaitable[ResultT]],
    *,
    limit: int,
    on_done: Callable[[int, int], object] | None = None,
) -> list[ResultT]:
    """``await call(item)`` for every item, at most ``limit`` at once; the results in the order of ``items``.

    Items are started in their order, each as soon as one of the ``limit`` calls in progress is done. ``on_done``
    gets ``(done, total)`` after each call, in the order they finish (for progress).

    A call is expected to return its failure (the client's :class:`~goldset.llm.CallResult` carries it), not to
    raise it. An exception (:class:`~goldset.errors.EndpointError`: the endpoint can serve no call; a bug) stops
    the fan-out: no further item is started, the calls in progress are cancelled, and the exception itself is
    raised (not an exception group) once they have ended. A call that must record its result even then does it
    in a ``finally`` (the generation run does).
    """
    total = len(items)
    results: list[Any] = [None] * total
    order = iter(range(total))  # shared by the workers: each index is taken by one of them
    done = 0

    async def worker() -> None:
        nonlocal done
        for index in order:
            results[index] = await call(items[index])
            done += 1
            if on_done is not None:
                on_done(done, total)

    try:
        async with asyncio.TaskGroup() as group:
            for _ in range(min(max(1, limit), total)):
                group.create_task(worker())
    except BaseExceptionGroup as errors:
        raise _first_error(errors) from None
    return results


def _first_error(group: BaseExceptionGroup) -> BaseException:
    """The first exception of ``group`` (nested groups looked into): the one that stopped the fan-out."""
    first: BaseException = group
    while isinstance(first, BaseExceptionGroup) and first.exceptions:
        first = first.exceptions[0]
    return first

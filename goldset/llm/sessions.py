"""A run's LLM session: the call journal and a client for one endpoint over it, opened and closed together."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

from goldset.context import Context
from goldset.llm.client import LLMClient
from goldset.llm.journal import CallJournal
from goldset.workspace import Workspace

if TYPE_CHECKING:
    from goldset.llm.endpoints import Endpoint


@contextlib.asynccontextmanager
async def session(
    journal: Context | Workspace | Path | None, endpoint: Endpoint, *, use_cache: bool = True
) -> AsyncIterator[LLMClient]:
    """A client for ``endpoint`` over the call journal of ``journal``, both closed on the way out.

    ``async with session(ctx, endpoint) as client:``. ``journal``: a context's or a workspace's journal
    (``.goldset/calls.sqlite``, shared by generation, the filters, refresh, calibration and the judge), the journal
    file at a path, or None for none. Every call is committed as it returns. ``use_cache=False`` sends every call
    even when the journal holds its reply (the reply is still recorded).
    """
    if isinstance(journal, Context):
        journal = journal.workspace
    path = journal.cache_path if isinstance(journal, Workspace) else journal
    with contextlib.ExitStack() as stack:
        opened = stack.enter_context(CallJournal(path)) if path is not None else None
        async with LLMClient(endpoint, opened, use_cache=use_cache) as client:
            yield client

"""What a run would cost before it runs: calls to pay, calls the journal already holds, tokens, dollars."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from goldset.context import Context
from goldset.generation.planning import CallPlan, build_plans, fewer_pairs, fitted_max_tokens
from goldset.generation.selection import select
from goldset.generation.settings import GenerateSettings
from goldset.schema import (
    Chunk,
)
from goldset.workspace import Workspace

if TYPE_CHECKING:

    from goldset.llm.endpoints import Endpoint
    from goldset.workspace import WorkspaceLike


@dataclass
class Estimate:
    """What a run would take (:func:`estimate`): chunks asked about, calls to pay and calls the journal holds,
    chunks left out (too small, or with pairs already), tokens and dollars of the paid calls (``cost_usd`` None
    without a price), the model, the pairs asked for and the calls that show a partner chunk (multi_hop,
    ambiguous, open_ended)."""

    chunks: int
    calls: int
    cache_hits: int
    skipped_small: int
    already_done: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None
    model: str | None
    pairs_requested: int
    partner_calls: int
    #: On a local endpoint: the concurrency a run starts at, and why (:func:`goldset.llm.capacity.concurrency_line`)
    concurrency: str = ""

    @property
    def tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens




def estimate(
    ws: WorkspaceLike | Context = None,
    *,
    chunks: Sequence[Chunk] | None = None,
    chunk_ids: Iterable[str] | None = None,
    limit: int | None = None,
    docs: str | None = None,
    all_chunks: bool = False,
    no_cache: bool = False,
    settings: GenerateSettings | None = None,
    model: str | None = None,
) -> Estimate:
    """Calls, tokens and dollars a run with the same options would take; calls nothing, writes nothing.

    The parameters are those of :func:`goldset.generate` (``ws`` the workspace, a folder inside one, or ``None``
    for the current one). ``calls`` counts the calls that would be paid: calls the journal already holds are
    counted in ``cache_hits`` instead (unless ``no_cache``; without an endpoint the journal cannot be consulted).
    Tokens (of the paid calls): the rendered prompts measured with :func:`goldset.llm.estimate_tokens`, plus
    ``output_tokens_per_pair`` per requested pair, at most the call's max_tokens
    (:func:`~goldset.generation.planning.fitted_max_tokens`). A call the journal knows was cut off counts as the
    smaller call a run would send instead. Dollars need a model with a known price (else ``None``).
    """
    from goldset.errors import EndpointError
    from goldset.llm import cost_usd, estimate_tokens, resolve_endpoint
    from goldset.llm.usage import Usage

    ctx = Context.of(ws)
    ws = ctx.workspace
    settings = settings or ctx.section(GenerateSettings)
    existing = ctx.data.pairs()
    kb, selection = select(
        ctx.data, chunks, limit=limit, docs=docs, all_chunks=all_chunks, chunk_ids=chunk_ids, settings=settings,
        existing=existing,
    )
    plans = build_plans(selection.chunks, kb, settings, ws.prompts_dir)
    overrides = {"model": model, "concurrency": settings.concurrency}
    try:
        endpoint = resolve_endpoint(ctx, "generate", overrides=overrides)
    except EndpointError:
        endpoint = None
    endpoint_max = endpoint.settings.max_tokens if endpoint is not None else None
    cached: set[int] = set()
    # the call each plan would send: the plan itself, or a smaller one the journal knows it comes down to
    sent = list(plans)
    if endpoint is not None and not no_cache and ws.cache_path.exists():
        cached, sent = _cached_plans(ws, endpoint, plans, settings)
    paid = [p for i, p in enumerate(sent) if i not in cached]
    prompt_tokens = sum(estimate_tokens(p.messages()) for p in paid)
    completion_tokens = 0
    for p in paid:  # expected reply tokens, never more than the call's fitted max_tokens lets the server write
        expected = len(p.types) * settings.output_tokens_per_pair
        limit = fitted_max_tokens(len(p.types), settings, endpoint_max)
        completion_tokens += expected if limit is None else min(expected, limit)
    cost: float | None = None
    concurrency = ""
    if endpoint is not None:
        from goldset.llm.capacity import concurrency_line

        model = endpoint.model
        concurrency = concurrency_line(endpoint)
        cost = cost_usd(endpoint, Usage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens))
    return Estimate(
        chunks=len(plans),
        calls=len(paid),
        cache_hits=len(cached),
        skipped_small=selection.too_small,
        already_done=selection.already_done,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        cost_usd=cost,
        model=model,
        pairs_requested=sum(len(p.types) for p in plans),
        partner_calls=sum(1 for p in plans if p.partner is not None),
        concurrency=concurrency,
    )


def _cached_plans(
    ws: Workspace, endpoint: Endpoint, plans: Sequence[CallPlan], settings: GenerateSettings
) -> tuple[set[int], list[CallPlan]]:
    """Indexes of the plans whose call the journal already holds, and the call each plan would send, keyed
    exactly as the run keys a call (model, messages, schema, sampling parameters with the fitted max_tokens; a
    test pins the two together). A call the journal knows was cut off at max_tokens is followed down to the one
    with fewer pairs the run would send instead (:meth:`CallPlan.fewer`), as the run does without sending it."""
    from goldset.llm import CallJournal
    from goldset.llm.client import CUT_OFF_REASON, request_key

    cached: set[int] = set()
    sent: list[CallPlan] = []
    with CallJournal(ws.cache_path) as journal:
        for i, plan in enumerate(plans):
            while True:
                n = len(plan.types)
                key = request_key(
                    endpoint, plan.messages(), plan.reply_model, seed=settings.seed,
                    max_tokens=fitted_max_tokens(n, settings, endpoint.settings.max_tokens),
                )  # fmt: skip
                if journal.get(key):
                    cached.add(i)
                    break
                if n > 1 and any(e.startswith(CUT_OFF_REASON) for _, e in journal.failures(key)):
                    plan = plan.fewer(fewer_pairs(n))
                    continue
                break
            sent.append(plan)
    return cached, sent

"""Embeddings (``/v1/embeddings``) for :meth:`goldset.llm.LLMClient.embed`: batched, cached per text in the call
journal, through the same pool, rate limits, retry budget and fatal errors as the client's chat calls."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from goldset.errors import EndpointError
from goldset.llm.fanout import fan_out, fan_out_limit
from goldset.llm.journal import CallJournal, call_key
from goldset.llm.retry import CallFailed, RetryPolicy
from goldset.llm.stats import CallStats
from goldset.llm.transport import EmbeddingsReply, Transport
from goldset.llm.usage import Usage, cost_usd
from goldset.text import estimate_llm_tokens

if TYPE_CHECKING:
    from goldset.llm.capacity import Slots
    from goldset.llm.endpoints import Endpoint

log = logging.getLogger("goldset.llm")


def embedding_key(model: str, text: str) -> str:
    """The call journal's key of one text's embedding by ``model``."""
    return call_key(model, [{"role": "embed", "content": text}], {}, {"kind": "embedding"})


def journal_vector(journal: CallJournal, key: str) -> list[float] | None:
    """The embedding the journal holds under ``key`` (:func:`embedding_key`), or None."""
    entry = journal.get(key)
    return [float(x) for x in entry.reply] if entry is not None and isinstance(entry.reply, list) else None


class Embedder:
    """The embeddings half of one client; it shares the client's transport, pool, policy, journal and counters."""

    def __init__(
        self,
        endpoint: Endpoint,
        transport: Transport,
        policy: RetryPolicy,
        pool: Slots,
        journal: CallJournal | None,
        stats: CallStats,
        *,
        use_cache: bool,
    ) -> None:
        self.endpoint = endpoint
        self.transport = transport
        self.policy = policy
        self.pool = pool
        self.journal = journal
        self.stats = stats
        self.use_cache = use_cache
        #: Why batches got no vectors (the server's reason, redacted), in the order they failed.
        self.errors: list[str] = []

    async def embed(self, texts: Sequence[str], *, model: str | None, batch_size: int) -> list[list[float] | None]:
        """See :meth:`goldset.llm.LLMClient.embed`."""
        self.policy.check()
        model = model or self.endpoint.embedding_model
        if not model:
            raise EndpointError(
                f"endpoint {self.endpoint}: no embedding model; set GOLDSET_EMBEDDING_MODEL or "
                f"llm.endpoints.{self.endpoint.name}.embedding_model"
            )
        keys = [embedding_key(model, t) for t in texts]
        out: list[list[float] | None] = [None] * len(texts)
        todo: list[int] = []
        for i, key in enumerate(keys):
            out[i] = journal_vector(self.journal, key) if (self.use_cache and self.journal is not None) else None
            if out[i] is not None:
                self.stats.cache_hits += 1
            else:
                todo.append(i)
        size = max(1, batch_size)
        batches = [todo[k : k + size] for k in range(0, len(todo), size)]

        async def one(batch: list[int]) -> None:
            async with self.pool:
                vectors = await self._batch(model, [texts[i] for i in batch], [keys[i] for i in batch])
            for i, vec in zip(batch, vectors, strict=True):
                out[i] = vec

        await fan_out(batches, one, limit=fan_out_limit(self.endpoint))
        return out

    async def _batch(self, model: str, texts: list[str], keys: list[str]) -> list[list[float] | None]:
        estimate = sum(estimate_llm_tokens(t) for t in texts)
        attempts = 0
        reply: EmbeddingsReply
        self.stats.count_call("embedding")
        try:
            while True:
                await self.policy.before_request(estimate)
                attempts += 1
                self.stats.requests += 1
                try:
                    reply = await self.transport.embeddings(model, texts)
                except Exception as exc:  # classified by the policy; anything unknown is re-raised
                    await self.policy.on_error(exc, attempts=attempts, estimate=estimate, can_fall_back=False)
                    continue
                break
        except CallFailed as fail:
            reason = self.endpoint.redact(str(fail))
            self.stats.failures += 1
            self.errors.append(reason)
            log.info("%s: embeddings failed: %s", self.endpoint, reason)
            if self.journal is not None:
                for key in keys:
                    self.journal.put_failure(key, model=model, schema_name="embedding", error=reason,
                                             attempts=attempts)
            return [None] * len(texts)
        prompt = reply.prompt_tokens if reply.prompt_tokens is not None else estimate
        self.policy.settle(estimate, prompt, {})
        usage = Usage(prompt_tokens=prompt, estimated=reply.prompt_tokens is None)
        self.stats.add_usage(usage, cost_usd(self.endpoint, usage))
        share = prompt // max(1, len(texts))
        for key, vec in zip(keys, reply.vectors, strict=True):
            if vec is not None and self.journal is not None:
                self.journal.put(key, model=model, schema_name="embedding", reply=vec, prompt_tokens=share,
                                 completion_tokens=0, attempts=attempts)
        return reply.vectors

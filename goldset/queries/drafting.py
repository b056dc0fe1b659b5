"""Reference answers for real questions, drafted from the KB (``goldset generate --from-queries``).

For each stored real question without a pair: the KB's chunks nearest to it (BM25 over goldset's CJK-aware
tokens, fused with embedding similarity when an embedding model is configured), then one LLM call that answers
it from those chunks with verbatim evidence, or says the documents do not answer it (an ``unanswerable`` pair
whose reason is kept in its ``generation`` check). The question text is never rewritten. Calls go through the
call journal (:func:`goldset.llm.sessions.session` + ``fan_out``), so a stopped run resumes where it stopped; a
question with a pair is not asked again. The pairs are candidates: ``goldset filter`` checks them like any other.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from goldset.context import Context
from goldset.errors import InputError
from goldset.generation.sink import CandidateSink
from goldset.generation.validation import CHECK_NAME, check_evidence
from goldset.hashing import hash_obj
from goldset.llm.stats import CallStats
from goldset.prompts import load_prompt
from goldset.queries.intake import read_queries
from goldset.queries.settings import QueriesSettings
from goldset.schema import CheckResult, Chunk, Evidence, PairStatus, Provenance, QAPair, QuestionType, pair_id
from goldset.schema.queries import RealQuestion

if TYPE_CHECKING:
    from goldset.workspace import WorkspaceLike

PROMPT_ID = "draft_answer"
SCHEMA_NAME = "draft_answer"
TAG_PREFIX = "query:"
NOT_ANSWERED = "The documents do not answer this."


class DraftEvidence(BaseModel):
    """One quote of a drafted answer."""

    chunk_id: str = Field("", description="The id of the passage the quote is copied from, exactly as given.")
    quote: str = Field("", description="Text copied character for character from that passage.")


class DraftReply(BaseModel):
    """The model's reply to one real question."""

    answerable: bool = Field(description="True when the passages answer the question.")
    answer: str = Field("", description="The answer resting only on the passages, or that they do not answer it.")
    evidence: list[DraftEvidence] = Field(default_factory=list, description="One to three verbatim quotes.")
    reason: str = Field("", description="When not answerable: what the passages lack, in one sentence.")


@dataclass
class DraftReport:
    """What :func:`draft_answers` did (or, with ``dry_run``, would do: ``calls`` and ``prompt_tokens`` only)."""

    questions: int = 0
    already_done: int = 0
    answered: int = 0
    unanswerable: int = 0
    rejected: int = 0
    failed: int = 0
    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    dry_run: bool = False
    llm: CallStats = field(default_factory=CallStats)
    failures: list[str] = field(default_factory=list)
    new_pairs: list[QAPair] = field(default_factory=list)
    pairs_path: Path | None = None


def query_tag(question: RealQuestion) -> str:
    """The tag a drafted pair carries: which real question it answers."""
    return TAG_PREFIX + question.id


def retrieve(question: str, index: object, by_id: dict[str, Chunk], k: int) -> list[Chunk]:
    """The ``k`` chunks BM25 ranks first for ``question``."""
    from goldset.baselines.bm25 import BM25Index

    assert isinstance(index, BM25Index)
    return [by_id[p.chunk_id] for p, _ in index.search(question, k) if p.chunk_id in by_id]


Plan = tuple[RealQuestion, list[Chunk], list[dict[str, str]], str]


def _cosine(a: list[float], b: list[float]) -> float:
    import math

    den = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return sum(x * y for x, y in zip(a, b, strict=False)) / den if den else 0.0


def _fused(
    question: str, lexical: list[Chunk], kb: Sequence[Chunk], vectors: dict[str, list[float] | None], k: int
) -> list[Chunk]:
    """BM25's and the embeddings' rankings fused (reciprocal rank, 60): the ``k`` chunks first in both."""
    qv = vectors.get(question)
    if qv is None:
        return lexical
    dense = sorted(((c, _cosine(qv, v)) for c in kb if (v := vectors.get(c.text)) is not None), key=lambda t: -t[1])
    scores: dict[str, float] = {}
    by_id = {c.id: c for c in kb}
    for ranking in ([c.id for c in lexical], [c.id for c, _ in dense[: 4 * k]]):
        for rank, cid in enumerate(ranking):
            scores[cid] = scores.get(cid, 0.0) + 1 / (60 + rank)
    return [by_id[cid] for cid in sorted(scores, key=lambda cid: -scores[cid])[:k]]


def _messages(prompt_dir: Path, question: str, chunks: Sequence[Chunk]) -> tuple[list[dict[str, str]], str]:
    prompt = load_prompt(PROMPT_ID, prompt_dir)
    passages = "\n\n".join(f'<chunk id="{c.id}">\n{c.text}\n</chunk>' for c in chunks) or "(none found)"
    return prompt.render(question=question, passages=passages), prompt.hash


def _pair(q: RealQuestion, reply: DraftReply, chunks: Sequence[Chunk], prov: Provenance) -> QAPair:
    by_id = {c.id: c for c in chunks}
    reasons: list[str] = []
    evidence: list[Evidence] = []
    qtype = QuestionType.factual if reply.answerable else QuestionType.unanswerable
    answer = reply.answer.strip() or (NOT_ANSWERED if not reply.answerable else "")
    if reply.answerable:
        evidence, reasons = check_evidence(reply.evidence, by_id, shown="among the passages")
        if not answer:
            reasons.append("empty answer")
            answer = NOT_ANSWERED
    note = "" if reply.answerable else f"the documents do not answer this: {reply.reason.strip() or 'no reason given'}"
    check = CheckResult(
        passed=not reasons,
        reason="; ".join(reasons) or note,
        input_hash=hash_obj([q.question, answer, qtype.value, [e.model_dump() for e in evidence]]),
        checked_at=prov.generated_at,
    )
    return QAPair(
        id=pair_id([q.id], "real", q.question),
        question=q.question,  # never rewritten
        answer=answer,
        question_type=qtype,
        language=q.language,
        evidence=evidence,
        provenance=prov,
        checks={CHECK_NAME: check},
        status=PairStatus.rejected if reasons else PairStatus.candidate,
        tags=["real", query_tag(q)],
    )


def draft_answers(
    ws: WorkspaceLike | Context = None,
    *,
    limit: int | None = None,
    questions: Iterable[str] | None = None,
    concurrency: int | None = None,
    no_cache: bool = False,
    dry_run: bool = False,
    model: str | None = None,
) -> DraftReport:
    """Draft the reference answer of every stored real question that has no pair yet (most asked first).

    ``questions`` restricts the run to those real-question ids (``goldset coverage --for-uncovered``), ``limit``
    to the first N. ``dry_run`` calls nothing and reports the calls, journal hits, tokens and dollars a run would
    take. Raises :class:`~goldset.errors.EndpointError` (one line) when no generation endpoint is configured.
    """
    from goldset.baselines.bm25 import BM25Index, Passage
    from goldset.llm import cost_usd, estimate_tokens, resolve_endpoint
    from goldset.llm.usage import Usage

    ctx = Context.of(ws)
    ws = ctx.workspace
    settings = ctx.section(QueriesSettings)
    stored = read_queries(ws)
    if not stored:
        raise InputError(f"no real questions in {ws.state_dir}; run `goldset import --format queries FILE` first")
    data = ctx.data
    existing = data.pairs()
    done = {t for p in existing for t in p.tags if t.startswith(TAG_PREFIX)}
    wanted = set(questions) if questions is not None else None
    todo = [q for q in sorted(stored, key=lambda q: (-q.count, q.id)) if wanted is None or q.id in wanted]
    report = DraftReport(dry_run=dry_run)
    report.already_done = sum(1 for q in todo if query_tag(q) in done)
    todo = [q for q in todo if query_tag(q) not in done][:limit]
    report.questions = len(todo)
    kb = data.kb_chunks()
    if not kb:
        raise InputError("no knowledge base to answer from; run `goldset ingest DOCS` first")
    by_id = {c.id: c for c in kb}
    index = BM25Index(Passage(c.text, c.doc_id, c.id) for c in kb)
    endpoint = resolve_endpoint(ctx, "generate", overrides={"concurrency": concurrency, "model": model})

    def plans_for(vectors: dict[str, list[float] | None] | None) -> list[Plan]:
        plans = []
        for q in todo:
            chunks = retrieve(q.question, index, by_id, settings.candidates)
            if vectors is not None:
                chunks = _fused(q.question, chunks, kb, vectors, settings.candidates)
            messages, prompt_hash = _messages(ws.prompts_dir, q.question, chunks)
            plans.append((q, chunks, messages, prompt_hash))
        return plans

    plans = plans_for(None)  # the dry run's estimate: BM25 candidates (embedding calls are not counted)
    if dry_run:
        from goldset.llm import CallJournal
        from goldset.llm.client import request_key

        paid = plans
        if not no_cache and ws.cache_path.exists():
            with CallJournal(ws.cache_path) as journal:
                paid = [p for p in plans if not journal.get(request_key(endpoint, p[2], DraftReply))]
        report.cache_hits = len(plans) - len(paid)
        report.calls = len(paid)
        report.prompt_tokens = sum(estimate_tokens(p[2]) for p in paid)
        report.completion_tokens = len(paid) * settings.output_tokens
        report.cost_usd = cost_usd(
            endpoint, Usage(prompt_tokens=report.prompt_tokens, completion_tokens=report.completion_tokens)
        )
        return report
    from goldset.data import snapshot_id
    from goldset.llm import fan_out, fan_out_limit, session

    kb_snapshot = snapshot_id(kb)
    sink = CandidateSink(data, existing, 5.0)

    async def run() -> None:
        nonlocal plans
        async with session(ctx, endpoint, use_cache=not no_cache) as client:
            report.llm = client.stats
            if endpoint.embedding_model and todo:
                texts = [q.question for q in todo] + [c.text for c in kb]
                vectors = dict(zip(texts, await client.embed(texts), strict=True))
                plans = plans_for(vectors)

            async def one(plan: Plan) -> None:
                q, chunks, messages, prompt_hash = plan
                res = await client.complete_json(messages, DraftReply, schema_name=SCHEMA_NAME)
                if res.value is None:
                    report.failed += 1
                    report.failures.append(f"{q.id}: {res.error or 'the call failed'}")
                    return
                prov = Provenance(
                    source="real", model=res.model or endpoint.model, endpoint=endpoint.name, prompt_id=PROMPT_ID,
                    prompt_hash=prompt_hash, kb_snapshot_id=kb_snapshot,
                    chunk_hashes={c.id: c.content_hash for c in chunks}, call_key=res.key, count=q.count,
                    origins=list(q.origins),
                )  # fmt: skip
                pair = _pair(q, res.value, chunks, prov)
                if pair.status is PairStatus.rejected:
                    report.rejected += 1
                elif pair.question_type is QuestionType.unanswerable:
                    report.unanswerable += 1
                else:
                    report.answered += 1
                sink.add([pair])

            await fan_out(plans, one, limit=fan_out_limit(endpoint))

    try:
        asyncio.run(run())
    finally:
        sink.flush()
    report.new_pairs = sink.new_pairs
    if sink.new_pairs:
        cited = {c.id: c for c in data.cited_chunks()} | by_id
        data.write(sink.pairs.values(), cited.values(), kb_snapshot_id=kb_snapshot)
    report.pairs_path = data.pairs_path
    report.calls = report.llm.calls
    return report

"""QA generation: chunks in, candidate pairs with full provenance out.

One LLM call per selected chunk asks for ``pairs_per_chunk`` pairs with a mix of question types drawn from the
configured weights. The draw is seeded by (seed, chunk id), so a re-run asks exactly the same question of the
model and the call journal (``.goldset/calls.sqlite``) answers it: an unchanged re-run pays for nothing, and a
run killed mid-way resumes by replaying the calls already paid for. When a chunk's draw includes ``multi_hop``
the call shows a second, related chunk (same document first, else the most similar chunk by TF-IDF) and uses
the ``generate_multi_hop`` prompt.

Every returned item is checked before it is kept (fields, type, evidence quotes found verbatim in the named
chunk after whitespace normalisation, language). Nothing is dropped silently:

* an item that is a well-formed pair but fails a check is kept as ``status=rejected`` with
  ``checks["generation"]`` giving the reason;
* an item too broken to be a pair (empty question, unknown type) and a call whose reply never validated are
  written to ``.goldset/generation_failures.jsonl`` with the reason.

The candidates file (``data/pairs.jsonl``) is rewritten sorted, through a temp file and a rename, as batches
complete; pairs already in it (any status, reviewed or not) are never replaced or lost.

A pair's ``provenance.chunk_hashes`` lists the chunks shown in its call, the *primary* chunk first: "chunks
without pairs" means chunks that were never the primary chunk of a call, so a multi-hop partner still gets its
own call (and a resumed run selects the same chunks as an uninterrupted one).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import fnmatch
import gc
import math
import random
import re
import time
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, field_validator

from goldset._callable import make_module_callable
from goldset.config import Workspace, load_section
from goldset.errors import InputError
from goldset.hashing import hash_obj
from goldset.io import atomic_write_text, dump_record, iter_jsonl, read_jsonl, write_jsonl
from goldset.prompts import Prompt, load_prompt
from goldset.schema import (
    CheckResult,
    Chunk,
    Evidence,
    PairStatus,
    Provenance,
    QAPair,
    QuestionType,
    pair_id,
)
from goldset.schema.base import Record, utcnow
from goldset.text import detect_language, normalize_ws, tokenize

if TYPE_CHECKING:
    from goldset.llm import CallResult, LLMClient
    from goldset.llm.settings import Endpoint

PROMPT_SINGLE = "generate"
PROMPT_MULTI_HOP = "generate_multi_hop"
SCHEMA_NAME = "qa_pairs"
FAILURES_FILE = "generation_failures.jsonl"
CHECK_NAME = "generation"

DEFAULT_TYPE_WEIGHTS: dict[str, float] = {
    "factual": 0.30,
    "reasoning": 0.20,
    "procedural": 0.15,
    "comparison": 0.10,
    "multi_hop": 0.15,
    "unanswerable": 0.10,
}
#: What the prompt calls each language; other codes are passed through as they are.
LANGUAGE_NAMES = {
    "en": "English",
    "zh": "Chinese (简体中文)",
    "ja": "Japanese (日本語)",
    "ko": "Korean (한국어)",
    "fr": "French",
    "de": "German",
    "es": "Spanish",
    "pt": "Portuguese",
    "ru": "Russian",
}
#: The type a chunk gets instead of multi_hop when the KB has no second chunk to pair it with.
MULTI_HOP_FALLBACK = QuestionType.reasoning


# ---------------------------------------------------------------------------------------------------- settings


class GenerateSettings(BaseModel):
    """The ``generate`` section of goldset.yaml."""

    model_config = ConfigDict(extra="forbid")

    pairs_per_chunk: int = Field(3, ge=1, le=20, description="Pairs asked for in one call per chunk.")
    types: dict[str, float] = Field(
        default_factory=lambda: dict(DEFAULT_TYPE_WEIGHTS),
        description="Relative weight of each question type; 0 turns a type off.",
    )
    language: str = Field("auto", description="'auto' = each chunk's language, or a code such as 'en', 'zh'.")
    concurrency: int | None = Field(None, ge=1, le=512, description="Overrides llm concurrency for generation.")
    seed: int = Field(0, description="Seeds the type draw per chunk and is sent to the model.")
    min_tokens: int = Field(20, ge=0, description="Chunks with fewer tokens are skipped (headings, stubs).")
    output_tokens_per_pair: int = Field(150, ge=1, description="Expected reply tokens per pair, for estimates.")
    flush_seconds: float = Field(2.0, ge=0, description="Rewrite the candidates file at most this often.")

    @field_validator("types")
    @classmethod
    def _known_types(cls, v: dict[str, float]) -> dict[str, float]:
        known = {t.value for t in QuestionType}
        for name, weight in v.items():
            if name not in known:
                raise ValueError(f"unknown question type {name!r}; known: {', '.join(sorted(known))}")
            if not isinstance(weight, int | float) or weight < 0 or math.isnan(weight):
                raise ValueError(f"weight of {name!r} must be a number >= 0")
        if not any(w > 0 for w in v.values()):
            raise ValueError("at least one question type needs a weight > 0")
        return v


def load_settings(ws: Workspace | None, overrides: dict[str, Any] | None = None) -> GenerateSettings:
    return load_section(ws, "generate", GenerateSettings, overrides)


# ------------------------------------------------------------------------------------------- structured output


class GeneratedEvidence(BaseModel):
    chunk_id: str = ""
    quote: str = ""


class GeneratedPair(BaseModel):
    """One item of the model's reply. Lenient on purpose: one bad item must not fail the whole reply, so
    types and blanks are checked item by item afterwards (:func:`validate_reply`)."""

    question: str = ""
    answer: str = ""
    question_type: str = Field("", json_schema_extra={"enum": [t.value for t in QuestionType]})
    evidence: list[GeneratedEvidence] = Field(default_factory=list)


class GeneratedPairs(BaseModel):
    pairs: list[GeneratedPair] = Field(default_factory=list)

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """Cached: the LLM client asks for the schema on every call (cache key and response format), and
        pydantic rebuilds it each time (~2 ms of event-loop time per call, a fifth of the throughput at 80
        calls/s). A deep copy is returned so no caller can alter the cached one."""
        key = (args, tuple(sorted(kwargs.items())))
        cached = _SCHEMA_CACHE.get(key)
        if cached is None:
            cached = _SCHEMA_CACHE[key] = super().model_json_schema(*args, **kwargs)
        return copy.deepcopy(cached)


_SCHEMA_CACHE: dict[Any, dict[str, Any]] = {}


# ------------------------------------------------------------------------------------------------ records


class GenerationFailure(Record):
    """An item or a call that produced no pair, with the reason (``.goldset/generation_failures.jsonl``)."""

    id: str
    kind: Literal["call", "item"]
    chunk_ids: list[str]
    reason: str
    call_key: str | None = None
    question: str | None = None
    question_type: str | None = None
    at: datetime = Field(default_factory=utcnow)


# ------------------------------------------------------------------------------------------------ planning


@dataclass(frozen=True)
class CallPlan:
    """One generation call: which chunk(s), which types, which language, which prompt."""

    chunk: Chunk
    partner: Chunk | None
    types: tuple[QuestionType, ...]
    language: str
    prompt: Prompt

    @property
    def chunks(self) -> tuple[Chunk, ...]:
        return (self.chunk, self.partner) if self.partner is not None else (self.chunk,)

    def messages(self) -> list[dict[str, str]]:
        return render_messages(self.prompt, self.chunk, self.partner, self.types, self.language)


def plan_types(chunk_id: str, weights: dict[str, float], count: int, seed: int) -> tuple[QuestionType, ...]:
    """The question types asked of one chunk: ``count`` weighted draws seeded by (seed, chunk id), sorted.

    Per chunk, not per run, so adding documents or using ``--limit`` never changes what an existing chunk is
    asked (and so never turns a cache hit into a miss).
    """
    names = [t.value for t in QuestionType if weights.get(t.value, 0) > 0]
    rng = random.Random(hash_obj(["generate-types", seed, chunk_id]))
    drawn = rng.choices(names, weights=[weights[n] for n in names], k=count)
    order = {t.value: i for i, t in enumerate(QuestionType)}
    return tuple(QuestionType(n) for n in sorted(drawn, key=order.__getitem__))


def describe_types(types: Sequence[QuestionType]) -> str:
    """``- factual: 2`` lines, in a fixed order, for the prompt."""
    counts = Counter(types)
    return "\n".join(f"- {t.value}: {counts[t]}" for t in QuestionType if counts[t])


def render_messages(
    prompt: Prompt, chunk: Chunk, partner: Chunk | None, types: Sequence[QuestionType], language: str
) -> list[dict[str, str]]:
    variables: dict[str, Any] = {
        "chunk_id": chunk.id,
        "chunk_text": chunk.text.strip(),
        "doc_title": chunk.doc_title or chunk.doc_id,
        "doc_id": chunk.doc_id,
        "heading_path": " > ".join(chunk.heading_titles or chunk.heading_path) or "(top of the document)",
        "language": LANGUAGE_NAMES.get(language, language),
        "language_code": language,
        "count": len(types),
        "question_types": describe_types(types),
    }
    if partner is not None:
        variables |= {
            "partner_chunk_id": partner.id,
            "partner_chunk_text": partner.text.strip(),
            "partner_doc_title": partner.doc_title or partner.doc_id,
            "partner_heading_path": " > ".join(partner.heading_titles or partner.heading_path)
            or "(top of the document)",
        }
    return prompt.render(**variables)


class PartnerFinder:
    """Picks the chunk a multi-hop question pairs with: related by document and by shared rare words.

    Score = TF-IDF cosine over token sets, +1 when both chunks are in the same document (so a document's own
    chunks come first and similarity breaks the tie), same language only; ties go to the smaller id, so the
    choice is deterministic. Candidates come from an inverted index, skipping tokens found in more than 20% of
    chunks, which keeps it near-linear on real KBs.
    """

    def __init__(self, chunks: Iterable[Chunk]) -> None:
        self.chunks = {c.id: c for c in chunks}
        self._tokens: dict[str, set[str]] = {cid: set(tokenize(c.text)) for cid, c in self.chunks.items()}
        df: Counter[str] = Counter()
        for toks in self._tokens.values():
            df.update(toks)
        n = max(1, len(self.chunks))
        self._idf = {tok: math.log((1 + n) / (1 + d)) + 1.0 for tok, d in df.items()}
        self._norm = {cid: math.sqrt(sum(self._idf[t] ** 2 for t in toks)) or 1.0 for cid, toks in self._tokens.items()}
        cap = max(2, int(0.2 * n))
        self._index: dict[str, list[str]] = {}
        for cid, toks in self._tokens.items():
            for tok in toks:
                if df[tok] <= cap:
                    self._index.setdefault(tok, []).append(cid)
        self._by_doc: dict[str, list[str]] = {}
        for cid, c in self.chunks.items():
            self._by_doc.setdefault(c.doc_id, []).append(cid)

    def partner(self, chunk: Chunk) -> Chunk | None:
        toks = self._tokens.get(chunk.id)
        if toks is None:
            toks = set(tokenize(chunk.text))
        scores: dict[str, float] = {}
        for tok in toks:
            for other in self._index.get(tok, ()):
                scores[other] = scores.get(other, 0.0) + self._idf[tok] ** 2
        norm = math.sqrt(sum(self._idf.get(t, 1.0) ** 2 for t in toks)) or 1.0
        for other in self._by_doc.get(chunk.doc_id, ()):
            scores.setdefault(other, 0.0)
        best: tuple[float, str] | None = None
        for other, dot in scores.items():
            cand = self.chunks[other]
            if other == chunk.id or cand.language != chunk.language:
                continue
            score = dot / (norm * self._norm[other]) + (1.0 if cand.doc_id == chunk.doc_id else 0.0)
            if best is None or score > best[0] or (score == best[0] and other < best[1]):
                best = (score, other)
        return self.chunks[best[1]] if best is not None else None


def primary_chunk_ids(pairs: Iterable[QAPair]) -> set[str]:
    """Chunks that already have pairs generated from them (see the module docstring on "primary")."""
    out: set[str] = set()
    for p in pairs:
        if p.provenance.chunk_hashes:
            out.add(next(iter(p.provenance.chunk_hashes)))
        else:
            out.update(p.chunk_ids)
    return out


class Selection(NamedTuple):
    """The chunks a run asks about, in document order, and why the others of the KB were left out."""

    chunks: list[Chunk]
    too_small: int
    already_done: int


def select_chunks(
    chunks: Sequence[Chunk],
    existing: Iterable[QAPair] = (),
    *,
    limit: int | None = None,
    docs: str | None = None,
    all_chunks: bool = False,
    chunk_ids: Iterable[str] | None = None,
    min_tokens: int = 0,
) -> Selection:
    """The chunks to generate for: ``docs`` glob, then size, then (unless ``all_chunks``) only chunks that were
    never the primary chunk of a pair, then ``limit``. ``chunk_ids`` (used by refresh) names chunks explicitly
    and implies ``all_chunks`` for them.
    """
    selected = sorted(chunks, key=lambda c: (c.doc_id, c.char_start, c.position, c.id))
    if chunk_ids is not None:
        wanted = set(chunk_ids)
        selected = [c for c in selected if c.id in wanted]
        all_chunks = True
    if docs:
        selected = [c for c in selected if fnmatch.fnmatchcase(c.doc_id, docs)]
    n_before = len(selected)
    selected = [c for c in selected if c.n_tokens >= min_tokens]
    too_small = n_before - len(selected)
    already_done = 0
    if not all_chunks:
        done = primary_chunk_ids(existing)
        n_before = len(selected)
        selected = [c for c in selected if c.id not in done]
        already_done = n_before - len(selected)
    if limit is not None:
        selected = selected[: max(0, limit)]
    return Selection(selected, too_small, already_done)


def build_plans(
    selected: Sequence[Chunk],
    kb_chunks: Sequence[Chunk],
    settings: GenerateSettings,
    prompts_dir: Path | None,
) -> list[CallPlan]:
    """One plan per selected chunk. Partners are looked up in the whole KB, not the selection, so a chunk's
    call is the same whichever subset of chunks a run selects."""
    planner = _Planner(kb_chunks, settings, prompts_dir)
    return [planner.plan(chunk) for chunk in selected]


class _Planner:
    """Plans one chunk at a time (:func:`build_plans` in order, or a run as it reaches each chunk): the prompts
    and the partner finder are loaded or built once, when first needed."""

    def __init__(self, kb_chunks: Sequence[Chunk], settings: GenerateSettings, prompts_dir: Path | None) -> None:
        self.kb_chunks = kb_chunks
        self.settings = settings
        self.prompts_dir = prompts_dir
        self.single = load_prompt(PROMPT_SINGLE, prompts_dir)
        self.multi: Prompt | None = None
        self.finder: PartnerFinder | None = None

    def types(self, chunk: Chunk) -> tuple[QuestionType, ...]:
        settings = self.settings
        return plan_types(chunk.id, settings.types, settings.pairs_per_chunk, settings.seed)

    def plan(self, chunk: Chunk) -> CallPlan:
        types = self.types(chunk)
        language = chunk.language if self.settings.language == "auto" else self.settings.language
        partner = None
        if QuestionType.multi_hop in types:
            if self.finder is None:
                self.finder = PartnerFinder(self.kb_chunks)
            partner = self.finder.partner(chunk)
            if partner is None:
                types = tuple(
                    sorted(
                        (MULTI_HOP_FALLBACK if t is QuestionType.multi_hop else t for t in types),
                        key=list(QuestionType).index,
                    )
                )
        if partner is not None:
            self.multi = self.multi or load_prompt(PROMPT_MULTI_HOP, self.prompts_dir)
        return CallPlan(chunk, partner, types, language, self.multi if partner is not None else self.single)


def _planner_for_run(
    selected: Sequence[Chunk], kb_chunks: Sequence[Chunk], settings: GenerateSettings, prompts_dir: Path | None
) -> Callable[[Chunk], CallPlan]:
    """What :func:`build_plans` gives each chunk, worked out when the run reaches the chunk rather than all before
    the first call: the partner search (~50 ms on a few hundred chunks) then runs while calls are in flight.

    A prompt that cannot be loaded still stops the run before its first call, as with :func:`build_plans`: the
    prompts are loaded here, and if the multi-hop one fails, every plan is built now (which raises exactly when
    :func:`build_plans` would: when some chunk gets a partner).
    """
    planner = _Planner(kb_chunks, settings, prompts_dir)
    if any(QuestionType.multi_hop in planner.types(c) for c in selected):
        try:
            planner.multi = load_prompt(PROMPT_MULTI_HOP, prompts_dir)
        except Exception:
            plans = {id(c): p for c, p in zip(selected, build_plans(selected, kb_chunks, settings, prompts_dir),
                                              strict=True)}
            return lambda chunk: plans[id(chunk)]
    return planner.plan


# ---------------------------------------------------------------------------------------------- validation


_ELLIPSIS_RE = re.compile(r"^(?:\.\.\.|…)\s*|\s*(?:\.\.\.|…)$")


def _quote_form(text: str) -> str:
    return normalize_ws(unicodedata.normalize("NFKC", text))


def quote_in_text(quote: str, text: str, *, text_form: str | None = None) -> bool:
    """The quote occurs in the text once whitespace is normalised (and NFKC-folded, so full-width punctuation
    a model re-typed in half-width still matches); a leading or trailing ellipsis is ignored.
    ``text_form`` is ``text`` already normalised, for callers checking many quotes against one chunk."""
    q = _quote_form(_ELLIPSIS_RE.sub("", quote.strip()))
    return bool(q) and q in (text_form if text_form is not None else _quote_form(text))


@dataclass
class ReplyOutcome:
    pairs: list[QAPair] = field(default_factory=list)
    failures: list[GenerationFailure] = field(default_factory=list)

    @property
    def rejected(self) -> int:
        return sum(1 for p in self.pairs if p.status is PairStatus.rejected)


def validate_reply(reply: GeneratedPairs, plan: CallPlan, provenance: Provenance) -> ReplyOutcome:
    """Turn the model's items into pairs; each item is kept, rejected with reasons, or recorded as a failure."""
    by_id = {c.id: c for c in plan.chunks}
    forms = {c.id: _quote_form(c.text) for c in plan.chunks}
    out = ReplyOutcome()
    seen: set[str] = set()
    for index, item in enumerate(reply.pairs):
        question, answer = item.question.strip(), item.answer.strip()
        problem = None
        if not question or not answer:
            problem = "empty question" if not question else "empty answer"
        elif item.question_type not in QuestionType.__members__:
            problem = f"unknown question_type {item.question_type!r}"
        if problem is not None:
            out.failures.append(
                GenerationFailure(
                    id=hash_obj([provenance.call_key, index]),
                    kind="item",
                    chunk_ids=list(by_id),
                    reason=problem,
                    call_key=provenance.call_key,
                    question=question or None,
                    question_type=item.question_type or None,
                )
            )
            continue
        qtype = QuestionType(item.question_type)
        reasons: list[str] = []
        evidence: list[Evidence] = []
        if qtype is not QuestionType.unanswerable:
            for ev in item.evidence:
                chunk = by_id.get(ev.chunk_id.strip())
                if chunk is None:
                    reasons.append(f"evidence names chunk {ev.chunk_id!r}, which was not in the prompt")
                    continue
                if not ev.quote.strip():
                    reasons.append(f"empty evidence quote for chunk {chunk.id}")
                    continue
                if not quote_in_text(ev.quote, chunk.text, text_form=forms[chunk.id]):
                    reasons.append(f"evidence quote not found verbatim in chunk {chunk.id}: {ev.quote[:60]!r}")
                evidence.append(Evidence(chunk_id=chunk.id, doc_id=chunk.doc_id, quote=ev.quote.strip()))
            if not item.evidence:
                reasons.append("no evidence quote")
            if qtype is QuestionType.multi_hop and len({e.chunk_id for e in evidence}) < 2:
                reasons.append("multi_hop evidence must come from both chunks")
        if plan.language in ("en", "zh") and detect_language(question + " " + answer) != plan.language:
            reasons.append(f"written in the wrong language (asked for {plan.language})")
        cited = [e.chunk_id for e in evidence] or [plan.chunk.id]
        pid = pair_id(cited, qtype.value, question)
        if pid in seen:
            out.failures.append(
                GenerationFailure(
                    id=hash_obj([provenance.call_key, index]),
                    kind="item",
                    chunk_ids=list(by_id),
                    reason=f"duplicate of {pid} in the same reply",
                    call_key=provenance.call_key,
                    question=question,
                    question_type=qtype.value,
                )
            )
            continue
        seen.add(pid)
        check = CheckResult(
            passed=not reasons,
            reason="; ".join(reasons),
            input_hash=hash_obj([question, answer, qtype.value, [e.model_dump() for e in evidence]]),
            checked_at=provenance.generated_at,
        )
        out.pairs.append(
            QAPair(
                id=pid,
                question=question,
                answer=answer,
                question_type=qtype,
                language=plan.language,
                evidence=evidence,
                provenance=_own_copy(provenance),
                checks={CHECK_NAME: check},
                status=PairStatus.candidate if not reasons else PairStatus.rejected,
            )
        )
    if not reply.pairs:
        out.failures.append(
            GenerationFailure(
                id=hash_obj([provenance.call_key, "empty"]),
                kind="call",
                chunk_ids=list(by_id),
                reason="the reply held no pairs",
                call_key=provenance.call_key,
            )
        )
    return out


_IMMUTABLE = (str, int, float, bool, type(None), datetime, Enum)


def _own_copy(record: BaseModel) -> BaseModel:
    """``record.model_copy(deep=True)`` for a flat record such as :class:`Provenance`: a shallow copy whose
    mutable fields (the chunk_hashes dict, the revisions list) are deep-copied, the strings and datetimes shared.
    The generic deep copy walks every field and was a third of :func:`validate_reply`'s time."""
    out = record.model_copy()
    fields = out.__dict__
    for name, value in fields.items():
        if not isinstance(value, _IMMUTABLE):
            fields[name] = copy.deepcopy(value)
    return out


def merge_pairs(existing: Iterable[QAPair], new: Iterable[QAPair]) -> tuple[list[QAPair], int]:
    """Existing pairs win: a pair already in the file (whatever its status or review) is never replaced.

    Returns the merged list sorted by id and the number of new pairs actually added.
    """
    merged = {p.id: p for p in existing}
    added = 0
    for p in new:
        if p.id not in merged:
            merged[p.id] = p
            added += 1
    return [merged[k] for k in sorted(merged)], added


# ------------------------------------------------------------------------------------------- the workspace


def kb_snapshot_id(ws: Workspace) -> str | None:
    from goldset.kb import load_snapshot

    snapshot = load_snapshot(ws)
    return snapshot.id if snapshot is not None else None


def _load_kb_chunks(ws: Workspace) -> list[Chunk]:
    from goldset.kb import load_chunks

    chunks = list(load_chunks(ws))
    if not chunks:
        raise InputError(f"{ws.kb_dir}: the knowledge base has no chunks; run `goldset ingest DOCS_DIR` first")
    return chunks


def _read_existing(ws: Workspace) -> list[QAPair]:
    return read_jsonl(ws.pairs_path, QAPair) if ws.pairs_path.exists() else []


@dataclass
class Estimate:
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
    multi_hop_calls: int

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def _select(
    ws: Workspace | None,
    chunks: Sequence[Chunk] | None,
    *,
    limit: int | None,
    docs: str | None,
    all_chunks: bool,
    chunk_ids: Iterable[str] | None,
    settings: GenerateSettings,
    existing: list[QAPair],
) -> tuple[list[Chunk], Selection]:
    if chunks is None:
        if ws is None:
            raise InputError("generate needs a workspace or chunks; run inside a goldset workspace")
        chunks = _load_kb_chunks(ws)
    kb = list(chunks)
    selection = select_chunks(
        kb,
        existing,
        limit=limit,
        docs=docs,
        all_chunks=all_chunks,
        chunk_ids=chunk_ids,
        min_tokens=settings.min_tokens,
    )
    return kb, selection


def estimate(
    ws: Workspace | None,
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

    ``calls`` counts the calls that would be paid: calls the journal already holds are counted in
    ``cache_hits`` instead (unless ``no_cache``; without an endpoint the journal cannot be consulted).
    Tokens (of the paid calls): the rendered prompts measured with :func:`goldset.llm.estimate_tokens`, plus
    ``output_tokens_per_pair`` per requested pair. Dollars need a model with a known price (else ``None``).
    """
    from goldset.errors import EndpointError
    from goldset.llm import cost_usd, estimate_tokens, resolve_endpoint
    from goldset.llm.usage import Usage

    settings = settings or load_settings(ws)
    existing = _read_existing(ws) if ws is not None else []
    kb, selection = _select(
        ws, chunks, limit=limit, docs=docs, all_chunks=all_chunks, chunk_ids=chunk_ids, settings=settings,
        existing=existing,
    )
    plans = build_plans(selection.chunks, kb, settings, ws.prompts_dir if ws is not None else None)
    overrides = {"model": model, "concurrency": settings.concurrency}
    try:
        endpoint = resolve_endpoint(ws, "generate", overrides=overrides)
    except EndpointError:
        endpoint = None
    cached: set[int] = set()
    if endpoint is not None and ws is not None and not no_cache and ws.cache_path.exists():
        cached = _cached_plans(ws, endpoint, plans, settings)
    paid = [p for i, p in enumerate(plans) if i not in cached]
    prompt_tokens = sum(estimate_tokens(p.messages()) for p in paid)
    completion_tokens = sum(len(p.types) for p in paid) * settings.output_tokens_per_pair
    cost: float | None = None
    if endpoint is not None:
        model = endpoint.model
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
        multi_hop_calls=sum(1 for p in plans if p.partner is not None),
    )


def _cached_plans(ws: Workspace, endpoint: Endpoint, plans: Sequence[CallPlan], settings: GenerateSettings) -> set[int]:
    """Indexes of the plans whose call the journal already holds, keyed exactly as the client keys a call
    (model, messages, schema, sampling parameters); a test pins the two together."""
    from goldset.llm import CallJournal, call_key
    from goldset.llm.structured import schema_json

    schema = schema_json(GeneratedPairs)
    params = {
        "temperature": endpoint.settings.temperature,
        "seed": settings.seed,
        "max_tokens": endpoint.settings.max_tokens,
    }
    with CallJournal(ws.cache_path) as journal:
        return {i for i, p in enumerate(plans) if journal.get(call_key(endpoint.model, p.messages(), schema, params))}


@dataclass
class GenerationProgress:
    """A snapshot of a running generation, passed to the ``progress`` callback after every call."""

    chunks_total: int = 0
    chunks_done: int = 0
    pairs: int = 0
    rejected: int = 0
    calls: int = 0
    cache_hits: int = 0
    failed_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    unpriced_calls: int = 0

    @property
    def errors(self) -> int:
        return self.failed_calls + self.rejected

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass
class GenerationReport:
    chunks: int = 0
    skipped_small: int = 0
    already_done: int = 0
    calls: int = 0
    cache_hits: int = 0
    failed_calls: int = 0
    pairs_kept: int = 0
    pairs_rejected: int = 0
    pairs_existing: int = 0
    items_failed: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    unpriced_calls: int = 0
    seconds: float = 0.0
    failures: list[GenerationFailure] = field(default_factory=list)
    new_pairs: list[QAPair] = field(default_factory=list)
    pairs_path: Path | None = None
    failures_path: Path | None = None
    estimate: Estimate | None = None

    @property
    def pairs_failed(self) -> int:
        """Items that did not become a kept candidate: rejected pairs plus malformed items."""
        return self.pairs_rejected + self.items_failed

    @property
    def failure_reasons(self) -> dict[str, int]:
        """Failure reasons (call failures, malformed items) with counts, most frequent first."""
        counts = Counter(f.reason.split(":")[0] for f in self.failures)
        return dict(counts.most_common())


ProgressCallback = Callable[[GenerationProgress], None]


class _Sink:
    """Collects results and rewrites the candidates file in batches; existing pairs are never replaced.

    Each pair is serialised once (pairs do not change once added) and kept as its JSON line, so a rewrite is a
    sort and a join instead of dumping every pair again (~1.2 KB per pair, next to ~6.5 KB for the pair itself).
    """

    def __init__(
        self,
        ws: Workspace | None,
        existing: list[QAPair],
        flush_seconds: float,
    ) -> None:
        self.ws = ws
        self.pairs: dict[str, QAPair] = {p.id: p for p in existing}
        self.lines: dict[str, str] = {}
        self.pending = 0
        self.flush_seconds = flush_seconds
        self.last_flush = time.monotonic()
        self.added = 0
        self.existing_hits = 0
        self.new_pairs: list[QAPair] = []

    def add(self, pairs: Iterable[QAPair]) -> None:
        for p in pairs:
            if p.id in self.pairs:
                self.existing_hits += 1
                continue
            self.pairs[p.id] = p
            if self.ws is not None:
                self.lines[p.id] = dump_record(p)  # here rather than all at once in the next rewrite
            self.new_pairs.append(p)
            self.added += 1
            self.pending += 1
        if self.pending and time.monotonic() - self.last_flush >= self.flush_seconds:
            self.flush()

    def text(self) -> str:
        """The candidates file: what ``write_jsonl(path, self.pairs.values())`` writes (sorted by id)."""
        lines = self.lines
        for pid, pair in self.pairs.items():
            if pid not in lines:
                lines[pid] = dump_record(pair)
        return "".join(lines[pid] + "\n" for pid in sorted(self.pairs))

    def flush(self) -> None:
        if self.ws is not None and self.pending:
            started = time.monotonic()
            atomic_write_text(self.ws.pairs_path, self.text())
            # The rewrite blocks the event loop; on a large file, space rewrites so they take ≤ ~10% of the run.
            self.flush_seconds = max(self.flush_seconds, 10 * (time.monotonic() - started))
        self.pending = 0
        self.last_flush = time.monotonic()


def _write_failures(ws: Workspace, failures: list[GenerationFailure], processed: set[str]) -> Path:
    """Keep earlier failures of chunks this run did not touch; replace those of chunks it did."""
    path = ws.state_dir / FAILURES_FILE
    if not failures and not path.exists():
        return path
    old = list(iter_jsonl(path, GenerationFailure)) if path.exists() else []
    kept = {f.id: f for f in old if not (set(f.chunk_ids[:1]) & processed)}
    kept.update({f.id: f for f in failures})
    write_jsonl(path, kept.values())
    return path


def generate(
    ws: Workspace | None,
    *,
    limit: int | None = None,
    docs: str | None = None,
    all_chunks: bool = False,
    concurrency: int | None = None,
    no_cache: bool = False,
    dry_run: bool = False,
    progress: ProgressCallback | None = None,
    chunks: Sequence[Chunk] | None = None,
    chunk_ids: Iterable[str] | None = None,
    settings: GenerateSettings | None = None,
    model: str | None = None,
    write: bool = True,
) -> GenerationReport:
    """Generate candidate pairs for the selected chunks and merge them into the workspace's candidates file.

    ``chunks`` replaces the workspace's KB (e.g. for refresh or tests); ``chunk_ids`` restricts the run to those
    chunks (whether or not they already have pairs). ``dry_run`` calls nothing and returns a report whose
    ``estimate`` says what a run would take. ``write=False`` leaves every file alone and returns all the pairs
    the run produced in ``report.new_pairs``, even those whose id is already in the file (for callers that merge
    pairs themselves, such as refresh).
    """
    settings = settings or load_settings(ws, {"concurrency": concurrency})
    if concurrency is not None:
        settings = settings.model_copy(update={"concurrency": concurrency})
    if dry_run:
        est = estimate(
            ws,
            chunks=chunks,
            chunk_ids=chunk_ids,
            limit=limit,
            docs=docs,
            all_chunks=all_chunks,
            no_cache=no_cache,
            settings=settings,
            model=model,
        )
        return GenerationReport(
            chunks=est.chunks, skipped_small=est.skipped_small, already_done=est.already_done, estimate=est
        )
    from goldset.llm import CallJournal, LLMClient, resolve_endpoint

    if ws is None:
        raise InputError("generate needs a workspace (for the endpoint settings and the call journal)")
    overrides: dict[str, Any] = {}
    if settings.concurrency is not None:
        overrides["concurrency"] = settings.concurrency
    if model is not None:
        overrides["model"] = model
    endpoint = resolve_endpoint(ws, "generate", overrides=overrides)
    existing = _read_existing(ws)
    kb, selection = _select(
        ws,
        chunks,
        limit=limit,
        docs=docs,
        all_chunks=all_chunks,
        chunk_ids=chunk_ids,
        settings=settings,
        existing=existing,
    )
    plan_for = _planner_for_run(selection.chunks, kb, settings, ws.prompts_dir)
    snapshot_id = kb_snapshot_id(ws)
    n_chunks = len(selection.chunks)
    report = GenerationReport(chunks=n_chunks, skipped_small=selection.too_small, already_done=selection.already_done)
    sink = _Sink(ws if write else None, existing if write else [], settings.flush_seconds)
    state = GenerationProgress(chunks_total=n_chunks)
    endpoint_name = endpoint.name
    started = time.monotonic()
    if progress is not None:
        progress(state)

    def on_result(plan: CallPlan, res: CallResult) -> None:
        state.chunks_done += 1
        usage = getattr(res, "usage", None)
        if res.cached:
            state.cache_hits += 1
        else:
            state.calls += 1
            if usage is not None:
                state.prompt_tokens += usage.prompt_tokens or 0
                state.completion_tokens += usage.completion_tokens or 0
            if res.cost_usd is None:
                state.unpriced_calls += 1
            else:
                state.cost_usd += res.cost_usd
        if res.value is None:
            state.failed_calls += 1
            report.failures.append(
                GenerationFailure(
                    id=hash_obj(["call", res.key]),
                    kind="call",
                    chunk_ids=[c.id for c in plan.chunks],
                    reason=f"reply never validated: {res.error or 'no reason given'}",
                    call_key=res.key,
                )
            )
        else:
            prov = Provenance(
                model=res.model or endpoint.model,
                endpoint=endpoint_name,
                prompt_id=plan.prompt.id,
                prompt_hash=plan.prompt.hash,
                kb_snapshot_id=snapshot_id,
                chunk_hashes={c.id: c.content_hash for c in plan.chunks},
                call_key=res.key,
            )
            outcome = validate_reply(res.value, plan, prov)
            report.failures.extend(outcome.failures)
            report.items_failed += len(outcome.failures)
            before = sink.added
            sink.add(outcome.pairs)
            new = sink.new_pairs[before:]
            state.pairs += sum(1 for p in new if p.status is not PairStatus.rejected)
            state.rejected += sum(1 for p in new if p.status is PairStatus.rejected)
        if progress is not None:
            progress(state)

    async def run() -> None:
        with CallJournal(ws.cache_path) as journal:
            async with LLMClient(endpoint, journal, use_cache=not no_cache) as client:
                await _run_plans(
                    client, selection.chunks, plan_for, on_result, settings, bound=_task_bound(endpoint, settings)
                )

    completed = False
    try:
        with _frozen_gc():
            asyncio.run(run())
        completed = True
    except BaseExceptionGroup as group:
        # A task group wraps the first error (e.g. EndpointError on a 401); show that one, not the group.
        raise _first_error(group) from None
    finally:
        if not (completed and write):
            sink.flush()  # what a stopped run received is kept; a whole run's file is written just below
        report.seconds = time.monotonic() - started
    report.calls = state.calls
    report.cache_hits = state.cache_hits
    report.failed_calls = state.failed_calls
    report.prompt_tokens = state.prompt_tokens
    report.completion_tokens = state.completion_tokens
    report.cost_usd = state.cost_usd
    report.unpriced_calls = state.unpriced_calls
    report.pairs_kept = state.pairs
    report.pairs_rejected = state.rejected
    report.pairs_existing = sink.existing_hits
    report.new_pairs = sink.new_pairs
    if write:
        from goldset.dataset import write_dataset

        try:
            chunks_path = ws.data_dir / "chunks.jsonl"
            old_chunks = read_jsonl(chunks_path, Chunk) if chunks_path.exists() else []
            all_chunks_by_id = {c.id: c for c in old_chunks} | {c.id: c for c in kb}
            # writes the candidates file first (sink.pairs, as sink.flush would), then chunks and manifest
            write_dataset(ws.data_dir, sink.pairs.values(), all_chunks_by_id.values(), kb_snapshot_id=snapshot_id)
        except BaseException:
            sink.flush()  # the pairs of this run are kept even when the dataset files cannot be written
            raise
        report.pairs_path = ws.pairs_path
        report.failures_path = _write_failures(ws, report.failures, {c.id for c in selection.chunks})
    return report


@contextlib.contextmanager
def _frozen_gc() -> Iterator[None]:
    """Leave the objects that exist before the run (modules, the KB, existing pairs) out of the garbage collector's
    passes during the run (``gc.freeze``): a full collection otherwise walks all of them while the event loop
    waits (~35 ms for a few hundred chunks, more on larger workspaces). Garbage made during the run is collected as
    usual. Skipped when the process has frozen objects of its own (unfreezing would release those too)."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _first_error(group: BaseExceptionGroup) -> BaseException:
    first: BaseException = group
    while isinstance(first, BaseExceptionGroup) and first.exceptions:
        first = first.exceptions[0]
    return first


def _task_bound(endpoint: Endpoint, settings: GenerateSettings) -> int:
    return max(1, settings.concurrency or endpoint.settings.concurrency) * 2


async def _run_plans(
    client: LLMClient,
    chunks: Sequence[Chunk],
    plan_for: Callable[[Chunk], CallPlan],
    on_result: Callable[[CallPlan, CallResult], None],
    settings: GenerateSettings,
    *,
    bound: int,
) -> None:
    """Plan and run the calls, in the order of ``chunks``, with at most ``bound`` in flight (the client enforces
    the endpoint's own limit; the bound keeps memory flat on large KBs). The first unexpected error cancels the
    rest; results already received are flushed by the caller."""
    queue: asyncio.Queue[Chunk | None] = asyncio.Queue()
    for chunk in chunks:
        queue.put_nowait(chunk)

    async def worker() -> None:
        while True:
            try:
                chunk = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            if chunk is None:
                return
            plan = plan_for(chunk)
            res = await client.complete_json(
                plan.messages(), GeneratedPairs, schema_name=SCHEMA_NAME, seed=settings.seed
            )
            try:
                # The call slot this one freed has a waiter (another worker, its request ready): let it send first,
                # then check and merge this reply (~0.5 ms) while that request is on the wire.
                await asyncio.sleep(0)
            finally:
                on_result(plan, res)  # also when cancelled meanwhile: a received result is always recorded

    async with asyncio.TaskGroup() as tg:
        for _ in range(min(bound, len(chunks))):
            tg.create_task(worker())


make_module_callable(__name__, "generate")

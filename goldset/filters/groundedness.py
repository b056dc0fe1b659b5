"""Check 5 (LLM judge, optional): is every claim of the answer supported by the evidence chunk(s) alone?

An answer that rests on outside knowledge rewards a RAG system for hallucinating the same outside fact. The
judge gets the question, the answer and the sources and returns a structured verdict
(:class:`GroundednessVerdict`); a pair whose answer adds facts fails. For ``unanswerable`` pairs the check
inverts: the sources (the chunk it was generated from plus the KB chunks most related to the question) must
*not* answer the question. For ``ambiguous`` and ``open_ended`` pairs the judge is told what their answers are
made of (:data:`TYPE_NOTES`): naming a question's readings, asking which one is meant, or framing a list of key
points is not a claim; what the answer says about each reading, and each key point, must be supported.

A verdict whose fields disagree is a failed judgement, not a pass (:func:`contradiction`): ``supported: true`` with
``unsupported_claims`` listed, or with a reason saying the answer is not supported. The pair is left unjudged (a
candidate, not passed) with the reason in the report's judge errors, and counted in its judge self-consistency.

Calls go through :class:`goldset.llm.LLMClient` with the call journal, so a re-run with the same pair, sources,
prompt and model is a cache hit; the model and prompt hash are part of the check's settings hash.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from goldset.filters.base import CheckSettings, CheckSpec, ChunkMap, result
from goldset.filters.textsim import token_set
from goldset.schema import CheckResult, Chunk, QAPair, QuestionType

if TYPE_CHECKING:
    from goldset.llm import LLMClient
    from goldset.prompts import Prompt

NAME = "groundedness"
PROMPT_ID = "judge_groundedness"
SCHEMA_NAME = "groundedness"
#: What the judge is told of a type whose answer is not a plain statement, in the prompt's ``$question_type``
#: (other types are sent as their bare name). Said there rather than in the template so the judge prompt, and so
#: every other pair's verdict and journaled call, stays as it was.
TYPE_NOTES = {
    QuestionType.ambiguous: (
        "ambiguous (the question has several readings in the documentation; the answer names them and answers each "
        "or says which applies when. Naming the readings, or asking which one is meant, is not a claim; what the "
        "answer says about each reading is, and must be supported)"
    ),
    QuestionType.open_ended: (
        "open_ended (the answer lists key points for a design or what-to-consider question. Framing such as "
        "'consider' or 'keep in mind' is not a claim; each key point is, and must be supported)"
    ),
}


class Settings(CheckSettings):
    """Settings of the LLM judge (``filter.checks.groundedness``); its model and prompt hash join its settings hash."""

    enabled: bool | None = Field(  # type: ignore[assignment]
        None, description="None (default): on when a judge endpoint is configured; true: required; false: off."
    )
    max_source_chars: int = Field(12000, ge=500, description="Sources longer than this are cut (prompt size).")


class GroundednessVerdict(BaseModel):
    """The judge's structured reply."""

    model_config = ConfigDict(extra="ignore")

    supported: bool = Field(description="Every claim in the answer is supported by the sources alone.")
    answerable: bool = Field(description="The sources contain what is needed to answer the question.")
    unsupported_claims: list[str] = Field(
        default_factory=list, description="The answer's claims the sources do not support (empty when supported)."
    )
    reason: str = Field("", description="One sentence: why the judge decided so.")


class RelatedChunks:
    """The ``k`` KB chunks sharing the most question tokens (a cheap lexical retrieval for unanswerable pairs);
    each chunk's token set is computed once, however many questions ask."""

    def __init__(self, chunks: Sequence[Chunk], k: int) -> None:
        self.k = k
        self._chunks = sorted(chunks, key=lambda c: c.id)
        self._tokens: list[frozenset[str]] | None = None

    def __call__(self, question: str) -> list[Chunk]:
        if self.k <= 0 or not self._chunks:
            return []
        if self._tokens is None:
            self._tokens = [frozenset(token_set(c.text)) for c in self._chunks]
        q = token_set(question)
        scored = [(n, c.id, c) for c, t in zip(self._chunks, self._tokens, strict=True) if (n := len(q & t)) > 0]
        scored.sort(key=lambda s: (-s[0], s[1]))
        return [c for _, _, c in scored[: self.k]]


def related_for(pair: QAPair, related: RelatedChunks | None) -> list[Chunk]:
    """The related KB chunks the judge sees besides the pair's own sources: only unanswerable pairs get them."""
    if related is None or pair.question_type != QuestionType.unanswerable:
        return []
    return related(pair.question)


def source_ids(pair: QAPair, related: Sequence[Chunk] = ()) -> list[str]:
    """The chunk ids whose text the judge reads for ``pair``, in the order :func:`sources_for` shows them."""
    ids = list(pair.chunk_ids)
    if pair.question_type == QuestionType.unanswerable:
        ids += sorted(pair.provenance.chunk_hashes)
        ids += [c.id for c in related]
    return list(dict.fromkeys(ids))


def sources_for(pair: QAPair, chunks: ChunkMap, related: Sequence[Chunk] = ()) -> list[tuple[str, str]]:
    """(chunk id, text) of what the judge sees: the evidence chunks (else quotes); for unanswerable pairs also
    the chunks it was generated from and the related chunks."""
    seen: dict[str, str] = {}
    related_text = {c.id: c.text for c in related}
    for cid in source_ids(pair, related):
        chunk = chunks.get(cid)
        if chunk is not None:
            seen[cid] = chunk.text
        elif cid in related_text:
            seen[cid] = related_text[cid]
        else:
            quotes = [e.quote for e in pair.evidence if e.chunk_id == cid]
            if quotes:
                seen[cid] = "\n".join(quotes)
    return list(seen.items())


def render_messages(
    pair: QAPair, sources: list[tuple[str, str]], prompt: Prompt, settings: Settings
) -> list[dict[str, str]]:
    text = "\n\n".join(f'<source id="{cid}">\n{body}\n</source>' for cid, body in sources)
    if len(text) > settings.max_source_chars:
        text = text[: settings.max_source_chars] + "\n[...]"
    qtype = TYPE_NOTES.get(pair.question_type, pair.question_type.value)
    return prompt.render(question=pair.question, answer=pair.answer, question_type=qtype, sources=text)


#: A reason saying the answer, or a claim of it, is not supported *by the sources*: worded about the answer or its
#: claims, or naming the sources, so a reason that reports what the sources say ("the docs say HTTP/3 is not
#: supported") does not count. A match preceded in its clause by a negation ("no claim is unsupported") says the
#: opposite and does not count either.
_NOT_SUPPORTED_RE = re.compile(
    r"\b(?:answer|claims?|statements?|it|this|that)\s+(?:is|are|was|were)\s+(?:not|un)\s*(?:supported|grounded)\b"
    r"|\b(?:answer|claims?|statements?|it|this|that)\s+(?:isn't|aren't|wasn't|weren't)\s+(?:supported|grounded)\b"
    r"|\bnot\s+(?:supported|grounded|backed)\s+by\s+the\s+(?:sources?|context|evidence|documentation|text|chunks?)\b"
    r"|\bunsupported\s+(?:claims?|statements?|by)\b"
    r"|\bnot\s+(?:in|from|found\s+in|mentioned\s+in|stated\s+in)\s+the\s+(?:sources?|context|evidence|documentation)\b"
    r"|没有依据|无依据|来源中没有|来源未提及|资料中没有|不受来源支持",
    re.IGNORECASE,
)
_DOUBLE_NEGATION_RE = re.compile(r"\b(?:no|nothing|none|without|any|never)\b", re.IGNORECASE)
_CLAUSE_END = ".;:,!?。；：，！？"


def says_not_supported(reason: str) -> bool:
    """The judge's reason says the answer, or a claim of it, is not supported by the sources."""
    for m in _NOT_SUPPORTED_RE.finditer(reason):
        before = reason[: m.start()]
        cut = max(before.rfind(c) for c in _CLAUSE_END)
        if not _DOUBLE_NEGATION_RE.search(before[cut + 1 :] if m.group(0)[0].isascii() else ""):
            return True
    return False


def contradiction(pair: QAPair, verdict: GroundednessVerdict) -> str | None:
    """Why ``verdict`` contradicts itself, or None: ``supported: true`` with unsupported claims listed, or with a
    reason saying it is not supported (answerable pairs; an unanswerable pair's verdict is its ``answerable``)."""
    if pair.question_type == QuestionType.unanswerable or not verdict.supported:
        return None
    claims = [c.strip() for c in verdict.unsupported_claims if c.strip()]
    if claims:
        return f"the judge said supported but listed unsupported claims ({'; '.join(claims)[:200]})"
    if says_not_supported(verdict.reason):
        return f"the judge said supported but its reason says otherwise ({verdict.reason.strip()[:200]})"
    return None


def interpret(pair: QAPair, verdict: GroundednessVerdict) -> CheckResult:
    """Turn the judge's verdict into the check result (inverted for unanswerable pairs)."""
    why = verdict.reason.strip()
    if pair.question_type == QuestionType.unanswerable:
        if verdict.answerable:
            return result(False, 1.0, f"unanswerable pair, but the KB answers it: {why}".rstrip(": "))
        return result(True, 0.0, f"the KB does not answer it: {why}".rstrip(": "))
    if verdict.supported:
        return result(True, 1.0, f"supported: {why}".rstrip(": "))
    claims = "; ".join(c.strip() for c in verdict.unsupported_claims if c.strip())
    detail = f"unsupported claims: {claims}" if claims else why
    return result(False, 0.0, f"answer goes beyond its sources ({detail})")


@dataclass
class GroundednessOutcome:
    """One pair's judging: the verdict, or the error of a call that failed (the pair is judged next run), or of a
    verdict that contradicts itself (``inconsistent``: the pair is left unjudged, not passed)."""

    pair_id: str
    check: CheckResult | None
    error: str | None = None
    inconsistent: bool = False


async def judge_many(
    pairs: Sequence[QAPair],
    chunks: ChunkMap,
    settings: Settings,
    client: LLMClient,
    prompt: Prompt,
    *,
    kb_chunks: Sequence[Chunk] = (),
    kb_context_chunks: int = 3,
    on_done: Callable[[], Any] | None = None,
    seed: int | None = None,
    related: RelatedChunks | None = None,
) -> list[GroundednessOutcome]:
    """Judge every pair concurrently (:func:`~goldset.llm.fan_out`; the client bounds the requests and their rate);
    a failed call is an error, not a verdict, so the pair is judged again on the next run. ``seed`` is sent with
    each request and is part of its journal key: another seed is another call (judge calibration's repeats), None
    is the filters' call. ``related``: the related-chunk lookup for unanswerable pairs (default: over ``kb_chunks``,
    ``kb_context_chunks`` each), given when the caller also hashes what the judge reads."""
    from goldset.llm.fanout import fan_out, fan_out_limit

    index = related if related is not None else RelatedChunks(kb_chunks, kb_context_chunks)

    async def one(pair: QAPair) -> GroundednessOutcome:
        sources = sources_for(pair, chunks, related_for(pair, index))
        if not sources:
            out = GroundednessOutcome(pair.id, result(False, None, "no evidence to judge the answer against"))
        else:
            res = await client.complete_json(
                render_messages(pair, sources, prompt, settings), GroundednessVerdict, schema_name=SCHEMA_NAME,
                seed=seed,
            )
            why = contradiction(pair, res.value) if res.value is not None else None
            if res.value is None:
                out = GroundednessOutcome(pair.id, None, res.error or "judge call failed")
            elif why is not None:
                out = GroundednessOutcome(pair.id, None, f"{why}: a failed judgement, the pair is left unjudged", True)
            else:
                out = GroundednessOutcome(pair.id, interpret(pair, res.value))
        if on_done is not None:
            on_done()
        return out

    return await fan_out(pairs, one, limit=fan_out_limit(client.endpoint))


SPEC = CheckSpec(
    name=NAME,
    settings_model=Settings,
    kind="llm",
    summary="answer is supported by its sources alone (LLM judge)",
    reads=("question", "answer", "question_type", "evidence"),
    uses_chunks=True,
)

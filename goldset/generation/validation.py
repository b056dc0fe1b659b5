"""Checks every item of a reply before it becomes a pair: fields, type, evidence quotes found in their chunk,
language. A pair that fails is kept as rejected with the reason; an item too broken to be a pair is a failure."""

from __future__ import annotations

import copy
import functools
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import Protocol, TypeVar

from pydantic import BaseModel

from goldset.generation.keypoints import key_points
from goldset.generation.planning import CallPlan
from goldset.generation.reply import GeneratedPairs
from goldset.hashing import hash_obj
from goldset.kb.blocks import prose_text
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
from goldset.schema.generation import GenerationFailure
from goldset.text import detect_language, normalize_ws

CHECK_NAME = "generation"
#: The languages :func:`goldset.text.detect_language` tells apart; pairs asked in another language are not checked.
DETECTABLE = ("en", "zh", "ja", "ko")
#: An ambiguous question has at least this many readings, each with its own quote.
MIN_READINGS = 2
#: An open_ended answer lists at least this many key points, and cites at least this many quotes.
MIN_KEY_POINTS = 2

# ---------------------------------------------------------------------------------------------- validation


_ELLIPSIS_RE = re.compile(r"^(?:\.\.\.|…)\s*|\s*(?:\.\.\.|…)$")


def _quote_form(text: str) -> str:
    return normalize_ws(unicodedata.normalize("NFKC", text))


@functools.lru_cache(maxsize=4096)
def chunk_form(text: str) -> str:
    """:func:`_quote_form` of a chunk's text, kept: a chunk is shown in several calls of a run (as a multi-hop
    partner, again with ``--all``), and normalising a whole chunk costs more than the rest of checking a quote."""
    return _quote_form(text)


def quote_in_text(quote: str, text: str, *, text_form: str | None = None) -> bool:
    """The quote occurs in the text once whitespace is normalised (and NFKC-folded, so full-width punctuation
    a model re-typed in half-width still matches); a leading or trailing ellipsis is ignored.
    ``text_form`` is ``text`` already normalised, for callers checking many quotes against one chunk."""
    q = _quote_form(_ELLIPSIS_RE.sub("", quote.strip()))
    return bool(q) and q in (text_form if text_form is not None else _quote_form(text))


class Quoted(Protocol):
    """A quote a model gave as evidence: the chunk it names and the words it copied."""

    chunk_id: str
    quote: str


def check_evidence(
    cited: Sequence[Quoted],
    by_id: Mapping[str, Chunk],
    *,
    forms: Mapping[str, str] | None = None,
    shown: str = "in the prompt",
) -> tuple[list[Evidence], list[str]]:
    """The evidence of a reply and what is wrong with it: each quote must name a chunk the model was shown
    (``shown`` says where, for the reason) and occur in it verbatim (:func:`quote_in_text`; ``forms``: the chunks'
    texts already normalised); no quote at all is a reason too. A quote not found is kept, with its reason."""
    evidence: list[Evidence] = []
    reasons: list[str] = []
    for ev in cited:
        chunk = by_id.get(ev.chunk_id.strip())
        if chunk is None:
            reasons.append(f"evidence names chunk {ev.chunk_id!r}, which was not {shown}")
            continue
        if not ev.quote.strip():
            reasons.append(f"empty evidence quote for chunk {chunk.id}")
            continue
        form = forms.get(chunk.id) if forms is not None else None
        if not quote_in_text(ev.quote, chunk.text, text_form=form):
            reasons.append(f"evidence quote not found verbatim in chunk {chunk.id}: {ev.quote[:60]!r}")
        evidence.append(Evidence(chunk_id=chunk.id, doc_id=chunk.doc_id, quote=ev.quote.strip()))
    if not cited:
        reasons.append("no evidence quote")
    return evidence, reasons


@dataclass
class ReplyOutcome:
    """What one reply gave: its pairs (kept or rejected, each with its ``generation`` check) and its items too
    broken to be pairs."""

    pairs: list[QAPair] = field(default_factory=list)
    failures: list[GenerationFailure] = field(default_factory=list)

    @property
    def rejected(self) -> int:
        """Pairs rejected by a check."""
        return sum(1 for p in self.pairs if p.status is PairStatus.rejected)


def validate_reply(reply: GeneratedPairs, plan: CallPlan, provenance: Provenance) -> ReplyOutcome:
    """Turn the model's items into pairs; each item is kept, rejected with reasons, or recorded as a failure."""
    by_id = {c.id: c for c in plan.chunks}
    forms = {c.id: chunk_form(c.text) for c in plan.chunks}
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
            evidence, reasons = check_evidence(item.evidence, by_id, forms=forms)
            reasons += _type_rules(qtype, answer, evidence, plan)
        asked = plan.language.split("-")[0]  # zh-TW is written in Chinese characters: detected as zh
        if asked in DETECTABLE and detect_language(prose_text(question + " " + answer)) != asked:
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
    return out


def _type_rules(qtype: QuestionType, answer: str, evidence: list[Evidence], plan: CallPlan) -> list[str]:
    """What a type asks of an answerable pair beyond real quotes: multi_hop quotes both chunks; ambiguous quotes
    each reading (and both chunks when the call showed two); open_ended lists key points, with quotes for them."""
    chunks = len({e.chunk_id for e in evidence})
    quotes = len({(e.chunk_id, normalize_ws(e.quote)) for e in evidence})
    if qtype is QuestionType.multi_hop and chunks < 2:
        return ["multi_hop evidence must come from both chunks"]
    if qtype is QuestionType.ambiguous:
        if quotes < MIN_READINGS:
            return [f"ambiguous evidence must support each reading: at least {MIN_READINGS} different quotes"]
        if plan.partner is not None and chunks < 2:
            return ["ambiguous evidence must come from both chunks (one reading each, as shown)"]
    if qtype is QuestionType.open_ended:
        out = []
        if len(key_points(answer)) < MIN_KEY_POINTS:
            out.append(f"open_ended answer must list its key points (at least {MIN_KEY_POINTS}, one per line)")
        if quotes < MIN_KEY_POINTS:
            out.append(f"open_ended key points need evidence: at least {MIN_KEY_POINTS} different quotes")
        return out
    return []


_IMMUTABLE = (str, int, float, bool, type(None), datetime, Enum)
R = TypeVar("R", bound=BaseModel)


def _own_copy(record: R) -> R:
    """``record.model_copy(deep=True)`` for a flat record such as :class:`Provenance`: a shallow copy whose
    mutable fields (the chunk_hashes dict, the revisions list) are deep-copied, the strings and datetimes shared.
    The generic deep copy walks every field and was a third of :func:`validate_reply`'s time."""
    out = record.model_copy()
    fields = out.__dict__
    for name, value in fields.items():
        if not isinstance(value, _IMMUTABLE):
            fields[name] = copy.deepcopy(value)
    return out

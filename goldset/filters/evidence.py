"""Check 0: the pair's evidence is real. Every cited chunk is in the KB, its doc id is the chunk's document,
and its quote occurs in the chunk's text.

Every other check trusts the evidence: a copy check against a chunk that does not exist compares with nothing,
and a pair citing a vanished chunk can never be retrieved by the system under test. Generation checks quotes
when it writes a pair; this check holds for every pair on every run: imported or hand-edited pairs, and pairs
whose chunks changed or left the KB since. Quotes are matched the way generation matches them (whitespace and
Unicode width folded, a leading or trailing ellipsis ignored: :func:`quote_found` agrees with
:func:`goldset.generation.validation.quote_in_text`, which the tests check), so the two never disagree.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from pydantic import Field

from goldset.filters.base import CheckSettings, CheckSpec, ChunkMap, Severity, verdict
from goldset.schema import CheckResult, QAPair, QuestionType
from goldset.text import normalize_ws

NAME = "evidence"


class Settings(CheckSettings):
    """Settings of the evidence check (``filter.checks.evidence``)."""

    check_quotes: bool = Field(True, description="Also require each quote to occur in its chunk's text.")
    severity: Severity = Field("reject", description="A pair whose evidence is not real cannot pass.")


_ELLIPSIS_RE = re.compile(r"^(?:\.\.\.|…)\s*|\s*(?:\.\.\.|…)$")


@lru_cache(maxsize=4096)
def _form(text: str) -> str:
    """Whitespace collapsed and NFKC-folded (a model re-typing full-width punctuation half-width still matches);
    cached: a chunk is cited by many pairs."""
    return normalize_ws(unicodedata.normalize("NFKC", text))


def quote_found(quote: str, text: str) -> bool:
    """The quote occurs in the text once both are folded (:func:`_form`); a leading or trailing ellipsis is
    ignored. Defined here rather than imported so the filters do not load the generation package."""
    q = _quote_form(quote)
    return bool(q) and q in _form(text)


@lru_cache(maxsize=1 << 14)
def _quote_form(quote: str) -> str:
    """The folded quote without a leading or trailing ellipsis; cached: the ellipsis pattern is tried at every
    position of the quote, and quotes recur (pairs generated from one chunk quote the same sentences)."""
    return _form(_ELLIPSIS_RE.sub("", quote.strip()))


def check(pair: QAPair, chunks: ChunkMap, settings: Settings) -> CheckResult:
    """Fail a pair whose evidence names a chunk the KB lacks, the wrong document, or a quote its chunk lacks."""
    problems: list[str] = []
    if not pair.evidence and pair.question_type is not QuestionType.unanswerable:
        problems.append("no evidence: the pair cites no chunk")
    for ev in pair.evidence:
        chunk = chunks.get(ev.chunk_id)
        if chunk is None:
            problems.append(f"chunk {ev.chunk_id} is not in the KB (re-ingest, or fix the chunk id)")
        elif ev.doc_id != chunk.doc_id:
            problems.append(f"chunk {ev.chunk_id} belongs to {chunk.doc_id}, not to {ev.doc_id}")
        elif settings.check_quotes and not quote_found(ev.quote, chunk.text):
            problems.append(f"quote not found in chunk {ev.chunk_id}: {ev.quote[:60]!r}")
    if problems:
        return verdict(settings, False, None, "; ".join(dict.fromkeys(problems)))
    n = len({ev.chunk_id for ev in pair.evidence})  # len(pair.chunk_ids), without sorting them
    return verdict(settings, True, None, f"{n} cited chunk(s) found, quotes in place" if n else "no evidence needed")


SPEC = CheckSpec(
    name=NAME,
    settings_model=Settings,
    kind="pair",
    summary="cited chunks exist, belong to the cited documents and hold their quotes",
    reads=("question_type", "evidence", "cited_chunks"),
    func=check,
)

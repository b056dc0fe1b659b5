"""QA pairs and everything that happens to them: provenance, check verdicts, review decisions, status.

Review state, check verdicts and provenance live on the pair from the start, so review, release and refresh
only add values to a pair, never a new shape.
"""

from __future__ import annotations

import sys
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from goldset.hashing import short_hash
from goldset.schema.base import Record, share_fields_set, utcnow
from goldset.text import normalize


class QuestionType(StrEnum):
    """What kind of question a pair asks: its type decides the prompt's instructions, the filters' plausibility
    checks and how evaluation scores it (unanswerable pairs are scored on refusals).

    ``ambiguous``: the question has several readings in the KB ("How do I set a default?": of a query parameter
    or of a body field?); the reference answer names the readings and answers each briefly (or says which applies
    when), with evidence for each. ``open_ended``: "how would you design / what should one consider when …"; the
    reference answer is a short list of key points, each supported by evidence, synthesised from several chunks.
    New members go at the end: the order is the order of a chunk's drawn types in its prompt.
    """

    factual = "factual"
    reasoning = "reasoning"
    comparison = "comparison"
    multi_hop = "multi_hop"
    procedural = "procedural"
    unanswerable = "unanswerable"
    ambiguous = "ambiguous"
    open_ended = "open_ended"


class PairStatus(StrEnum):
    """candidate → passed | rejected (checks) → accepted (review); stale / retired after doc changes."""

    candidate = "candidate"
    passed = "passed"
    rejected = "rejected"
    accepted = "accepted"
    stale = "stale"
    retired = "retired"


class _Part(BaseModel):
    """A part of a record (strict about unknown fields, like the record). A complete one (read from a file, or
    built with every field) shares its fields set with the others of its kind
    (:func:`~goldset.schema.base.share_fields_set`; ``model_post_init`` runs for ``model_construct`` too)."""

    model_config = ConfigDict(extra="forbid")

    def model_post_init(self, context: Any, /) -> None:
        share_fields_set(self)


class Evidence(_Part):
    """A verbatim span (``quote``) of chunk ``chunk_id`` that supports the answer."""

    chunk_id: str = Field(description="The chunk the quote was taken from.")
    doc_id: str = Field(description="That chunk's document (path relative to the KB root).")
    quote: str = Field(description="A verbatim span of the chunk's text (whitespace may differ).")

    @field_validator("quote")
    @classmethod
    def _quote_not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("evidence quote is empty")
        return v


class Revision(_Part):
    """An earlier text of a pair, kept whenever the pair is rewritten (repair, reviewer edit)."""

    question: str = Field(description="The question before the change.")
    answer: str = Field(description="The answer before the change.")
    at: datetime = Field(default_factory=utcnow, description="When it was replaced (UTC).")
    reason: str = Field(description="Why it changed, e.g. 'paraphrase-repair' or 'review-edit'.")
    by: str = Field("", description="Model or reviewer that made the change.")


class Provenance(_Part):
    """Where a pair came from: the model, endpoint, prompt and KB snapshot of its generation call, and its earlier
    texts."""

    source: Literal["llm", "human", "import", "real"] = Field(
        "llm", description="Written by an LLM, a person or imported; 'real': a real user's question (answer drafted)."
    )
    model: str | None = Field(None, description="The model that wrote it.")
    endpoint: str | None = Field(None, description="Endpoint *name* from goldset.yaml; never a URL with a key.")
    prompt_id: str | None = Field(None, description="The prompt template (e.g. 'generate', 'generate_multi_hop').")
    prompt_hash: str | None = Field(None, description="Hash of that template's text: an edited prompt shows here.")
    generated_at: datetime = Field(default_factory=utcnow, description="When it was generated (UTC).")
    kb_snapshot_id: str | None = Field(None, description="The KB snapshot its chunks came from.")
    chunk_hashes: dict[str, str] = Field(
        default_factory=dict, description="chunk id → content_hash the pair was generated from."
    )
    call_key: str | None = Field(None, description="Key of the LLM call in the journal that produced it.")
    revisions: list[Revision] = Field(
        default_factory=list, description="Earlier texts, oldest first (paraphrase repair, reviewer edits)."
    )
    count: int | None = Field(None, description="A real question: how often users asked it (merged copies summed).")
    origins: list[str] = Field(
        default_factory=list, description="A real question: where its copies came from (file:line)."
    )


class CheckResult(_Part):
    """One check's verdict on one pair, with what it ran on so filtering can be incremental."""

    passed: bool = Field(description="The pair passed this check.")
    score: float | None = Field(None, description="The measure the check compared with its threshold, if any.")
    reason: str = Field("", description="Why, in one line (shown to reviewers).")
    settings_hash: str = Field("", description="Hash of the check's settings/thresholds.")
    input_hash: str = Field("", description="Hash of the pair fields the check read.")
    duplicate_of: str | None = Field(None, description="For duplicate checks: the id of the pair kept.")
    checked_at: datetime = Field(default_factory=utcnow, description="When the verdict was made (UTC).")
    severity: Literal["reject", "flag"] = Field(
        "reject",
        description="What a failure does: 'reject' rejects the pair; 'flag' lets it pass but marks it for review "
        "(heuristics that cannot be precise enough to reject on their own). Files written before flags: 'reject'.",
    )

    def model_post_init(self, context: Any, /) -> None:
        """Shared fields set, and the reason interned: 50,000 pairs' 500,000 verdicts say a few thousand reasons."""
        share_fields_set(self)
        self.__dict__["reason"] = sys.intern(self.reason)

    @property
    def flagged(self) -> bool:
        """Failed, but only as a flag: the pair may still pass, and review should look at it first."""
        return not self.passed and self.severity == "flag"

    @property
    def rejects(self) -> bool:
        """Failed with severity 'reject': the pair cannot pass while this verdict stands."""
        return not self.passed and self.severity == "reject"


class ReviewDecision(_Part):
    """One expert's decision on a pair (from Label Studio or a file), kept in the pair's review history."""

    reviewer: str = Field(description="Who decided (the Label Studio user's email or name).")
    at: datetime = Field(description="When the decision was made (UTC).")
    verdict: Literal["accept", "reject", "edit"] = Field(description="Accept as is, reject, or accept edited text.")
    question: str | None = Field(None, description="Edited question (verdict 'edit').")
    answer: str | None = Field(None, description="Edited answer (verdict 'edit').")
    criteria: list[str] = Field(
        default_factory=list, description="The review criteria the reviewer ticked (question clear, supported…)."
    )
    comment: str = Field("", description="The reviewer's comment.")
    source: str = Field("", description="Where the decision came from, e.g. 'label-studio:project 3 task 12'.")
    reason: str = Field(
        "", description="Why a pair was rejected: the criteria the reviewer did not tick, then the comment."
    )
    resolved_from: list[str] = Field(
        default_factory=list,
        description="Several annotators: 'reviewer:verdict' of every vote this decision resolved (see review docs).",
    )


class Review(_Part):
    """A pair's expert review: whether and how it was sampled, every decision made on it, and the outcome."""

    sampled: bool = Field(False, description="Drawn into the expert-review sample.")
    stratum: str | None = Field(
        None, description="Stratum of the sample round the pair belonged to (question type|language|document)."
    )
    decisions: list[ReviewDecision] = Field(default_factory=list, description="Every decision, oldest first.")
    outcome: Literal["accepted", "rejected", "edited"] | None = Field(
        None, description="What the decisions came to; None until an expert decided (review then owns the status)."
    )
    round: int | None = Field(
        None, description="Sample round whose population held the pair (drawn or not); None = never in one."
    )
    random: bool = Field(
        False, description="Drawn in the uniformly random part of the sample (the part the estimate rests on)."
    )
    weight: float | None = Field(
        None,
        description="Random part: pairs of its stratum's remainder this pair stands for (1 / inclusion probability).",
    )
    seed: int | None = Field(None, description="Seed of the sample round that drew the pair.")
    risk: list[str] = Field(
        default_factory=list, description="Why the risk-first part drew it: 'flag:verbatim', 'borderline:...', ..."
    )


class QAPair(Record):
    """One question/answer pair of a golden dataset, with everything that happened to it: where it came from, every
    check's verdict, its expert review and its status. One line of ``pairs.jsonl``."""

    id: str = Field(description="Stable id: a hash of its chunks, type and normalised question (kept when edited).")
    question: str = Field(description="The question, self-contained (it must make sense without the document).")
    answer: str = Field(description="The reference answer; for 'unanswerable' it says the KB does not answer.")
    question_type: QuestionType = Field(description="The kind of question.")
    language: str = Field("en", description="Language of question and answer (en, zh, ja, ko…).")
    evidence: list[Evidence] = Field(
        default_factory=list, description="Verbatim quotes supporting the answer (none for 'unanswerable')."
    )
    provenance: Provenance = Field(default_factory=Provenance, description="Where the pair came from.")
    checks: dict[str, CheckResult] = Field(default_factory=dict, description="Check name -> its verdict.")
    review: Review = Field(default_factory=Review, description="Its expert review.")
    status: PairStatus = Field(PairStatus.candidate, description="Where it stands (see PairStatus).")
    tags: list[str] = Field(default_factory=list, description="Free labels (refresh marks what it touched).")

    def model_post_init(self, context: Any, /) -> None:  # as a part does (_Part)
        share_fields_set(self)

    @field_validator("question", "answer")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("must not be empty")
        return v

    @property
    def chunk_ids(self) -> list[str]:
        """The chunks its evidence cites, sorted."""
        return sorted({e.chunk_id for e in self.evidence})

    @property
    def flags(self) -> dict[str, str]:
        """Check name -> reason of every verdict that failed as a flag (sorted by name): what review should look
        at first. A flagged pair still passes; these raise its review priority."""
        return {name: res.reason for name, res in sorted(self.checks.items()) if res.flagged}

    @property
    def doc_ids(self) -> list[str]:
        """The documents its evidence cites, sorted."""
        return sorted({e.doc_id for e in self.evidence})


def pair_id(chunk_ids: list[str], question_type: str, question: str) -> str:
    """Stable id from what the pair is about: its chunks, type and (normalised) question text.

    The same generation re-run gives the same id; the id is assigned once and kept when a reviewer or the
    repair step rewrites the text later.
    """
    key = "\x1f".join([*sorted(chunk_ids), question_type, normalize(question)])
    return "qa-" + short_hash(key)


class DuplicateLabel(Record):
    """One labelled pair of questions for calibrating the semantic-duplicate threshold (`goldset judge
    duplicate-threshold`): whether an expert found them the same question."""

    question_a: str = Field(description="One question.")
    question_b: str = Field(description="The other question.")
    same: bool = Field(description="They ask for the same information (one answer serves both).")

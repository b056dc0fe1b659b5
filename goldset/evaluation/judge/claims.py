"""Claim verdicts: the answer decomposed into atomic claims, each judged against the retrieved contexts.

One call (``judge_claims``) does both the decomposition and the verdicts: the reply is a list of claims, each with
its verdict (``supported`` / ``contradicted`` / ``not_found``), the number of the context that supports or
contradicts it with a verbatim quote, and (answerable pairs) its verdict against the reference answer. Asking for
claims and verdicts together halves the calls of the two-step designs (RAGAS: statements, then verdicts) and keeps
each verdict attached to the claim it judges.

The tally feeds faithfulness, hallucination, contradiction, context_utilization and reference_contradiction
(:mod:`goldset.evaluation.metrics.judged`). A cited context number outside the contexts the judge read is dropped;
each quote is checked against its context (``quote_verified``, :func:`.consistency.quote_found`).
A claim marked *supported* whose quote is not found in the context it names (or that names none) counts as
*not found* (``downgraded``): a verdict with nothing to show for it is not a supported claim
(:mod:`goldset.evaluation.judge.consistency`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from goldset.evaluation.judge.consistency import quote_found
from goldset.evaluation.metrics.judged import ClaimTally
from goldset.schema.runs import JudgedClaim, ReferenceVerdict, Verdict

PROMPT_ID = "judge_claims"
SCHEMA_NAME = "judge_claims"


def _token(value: Any) -> Any:
    """``"Not found"`` / ``"not-found"`` → ``"not_found"``: the spelling differences models make, not errors."""
    if isinstance(value, str):
        return "_".join(value.strip().lower().replace("-", " ").split())
    return value


class ClaimVerdict(BaseModel):
    """One claim of the answer and what the judge found about it."""

    model_config = ConfigDict(extra="ignore")

    claim: str = Field(description="One atomic claim of the answer, self-contained, in the answer's language.")
    verdict: Verdict = Field(
        description="supported: a context states it or it follows directly; contradicted: a context states "
        "something incompatible; not_found: no context states it or its opposite."
    )
    context: int | None = Field(
        None, description="Number of the context that supports or contradicts the claim; null when not_found."
    )
    quote: str = Field(
        "", description="Shortest verbatim passage of that context supporting or contradicting it; '' if not_found."
    )
    reference: ReferenceVerdict | None = Field(
        None,
        description="Against the reference answer: agrees, contradicts, not_in_reference; null when no reference.",
    )

    @field_validator("verdict", "reference", mode="before")
    @classmethod
    def _spelling(cls, v: Any) -> Any:
        return _token(v)


class ClaimsReply(BaseModel):
    """The judge's reply to ``judge_claims``: every atomic claim of the answer with its verdicts."""

    model_config = ConfigDict(extra="ignore")

    claims: list[ClaimVerdict] = Field(description="The answer's atomic claims (empty when it states no fact).")


def tally(reply: ClaimsReply, contexts: Sequence[str], has_reference: bool) -> tuple[ClaimTally, list[JudgedClaim]]:
    """The counts the claim metrics read, and the claims as stored with the sample's scores. A supported claim
    whose quote is not found in the context it names counts as not found (``ClaimTally.downgraded``)."""
    counts = {"supported": 0, "contradicted": 0, "not_found": 0}
    used: set[int] = set()
    ref_judged = ref_contradicted = 0
    said_supported = downgraded = 0
    stored: list[JudgedClaim] = []
    for c in reply.claims:
        if not c.claim.strip():
            continue
        index = c.context if c.context is not None and 1 <= c.context <= len(contexts) else None
        if c.verdict == "not_found":
            index = None
        verified: bool | None = None
        if index is not None and c.quote.strip():
            verified = quote_found(c.quote, contexts[index - 1])
        verdict: Verdict = c.verdict
        if verdict == "supported":
            said_supported += 1
            if not verified:
                verdict = "not_found"
                downgraded += 1
        counts[verdict] += 1
        if verdict == "supported" and index is not None:
            used.add(index)
        reference = c.reference if has_reference else None
        if reference is not None:
            ref_judged += 1
            ref_contradicted += reference == "contradicts"
        stored.append(
            JudgedClaim(
                claim=c.claim,
                verdict=verdict,
                context=index,
                quote=c.quote if index is not None or verdict != c.verdict else "",
                quote_verified=verified,
                reference=reference,
                downgraded=verdict != c.verdict,
            )
        )
    result = ClaimTally(
        supported=counts["supported"],
        contradicted=counts["contradicted"],
        not_found=counts["not_found"],
        contexts_used=len(used),
        n_contexts=len(contexts),
        ref_judged=ref_judged,
        ref_contradicted=ref_contradicted,
        said_supported=said_supported,
        downgraded=downgraded,
    )
    return result, stored

"""What every check shares: its settings base model, its registry entry, and the evidence it reads."""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Generic, Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from goldset.schema import CheckResult, Chunk, QAPair
from goldset.schema.base import all_fields

Kind = Literal["pair", "set", "llm"]
#: What a failed check does to its pair: ``reject`` makes it rejected; ``flag`` lets it pass, marked for a closer
#: look in review (for heuristics that cannot be precise enough to throw a pair away on their own).
Severity = Literal["reject", "flag"]
ChunkMap = Mapping[str, Chunk]


class CheckSettings(BaseModel):
    """Thresholds of one check (``filter.checks.<name>`` in goldset.yaml). Unknown keys are errors.

    ``severity`` has a default per check (a check's model overrides it); it is not part of the check's settings
    hash, because it changes what a verdict *does*, not what the check finds: the pipeline re-stamps it on
    existing verdicts instead of recomputing them.
    """

    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(True, description="Run this check (false: its verdicts are neither made nor counted).")
    severity: Severity = Field(
        "reject", description="What a failure does: 'reject' the pair, or 'flag' it for review and let it pass."
    )


S = TypeVar("S", bound=CheckSettings)
S_contra = TypeVar("S_contra", bound=CheckSettings, contravariant=True)


class PairCheck(Protocol[S_contra]):
    """``check(pair, chunks, settings) -> CheckResult``: the pure function each pair-check module defines."""

    def __call__(self, pair: QAPair, chunks: ChunkMap, settings: S_contra, /) -> CheckResult: ...


class KBSentenceCheck(Protocol[S_contra]):
    """A pair check that also takes the near-matching sentences of the whole KB (found by the pipeline)."""

    def __call__(
        self, pair: QAPair, chunks: ChunkMap, settings: S_contra, kb_sentences: Sequence[str], /
    ) -> CheckResult: ...


@dataclass(frozen=True)
class KBSentences(Generic[S]):
    """Declares that a pair check compares the question with sentences of the *whole* KB, not only its evidence.

    The pipeline then builds one sentence index of the KB, finds each question's near-matching sentences (at
    ``min_similarity`` or above) in one batched query, calls ``check`` with them, and makes the KB's content part
    of the check's input hash (a KB change re-runs it). ``wanted(settings)`` says whether these settings ask for it.
    """

    check: KBSentenceCheck[S]
    wanted: Callable[[S], bool]
    min_similarity: float = 0.5


@dataclass(frozen=True)
class CheckSpec(Generic[S]):
    """A registered check, typed by its settings model.

    ``kind``: ``pair`` checks are pure functions ``func(pair, chunks, settings) -> CheckResult``; ``set`` checks
    look at all pairs at once (duplicates); ``llm`` checks call the judge endpoint. ``reads`` names the pair
    fields a check depends on and ``uses_chunks`` whether it reads the evidence chunks' text: together they make
    the input hash that lets a re-run skip unchanged pairs. ``version`` is bumped when the algorithm changes, so
    old verdicts are recomputed even with unchanged thresholds. ``kb_sentences``: see :class:`KBSentences`.
    """

    name: str
    settings_model: type[S]
    kind: Kind
    summary: str
    reads: tuple[str, ...]
    uses_chunks: bool = False
    version: int = 1
    func: PairCheck[S] | None = None
    kb_sentences: KBSentences[S] | None = None


def evidence_texts(pair: QAPair, chunks: ChunkMap) -> list[str]:
    """The text of each evidence chunk; a chunk missing from the KB contributes its quote instead."""
    if len(pair.evidence) == 1:  # the common case, without building the sorted id list
        ev = pair.evidence[0]
        chunk = chunks.get(ev.chunk_id)
        return [chunk.text if chunk is not None else ev.quote]
    texts: list[str] = []
    for cid in pair.chunk_ids:
        chunk = chunks.get(cid)
        if chunk is not None:
            texts.append(chunk.text)
        else:
            texts.extend(e.quote for e in pair.evidence if e.chunk_id == cid)
    return texts


def result(
    passed: bool,
    score: float | None,
    reason: str,
    *,
    severity: Severity = "reject",
    duplicate_of: str | None = None,
) -> CheckResult:
    """A CheckResult with the score rounded (files diff cleanly; 4 digits is plenty for a threshold test).

    Built without validation (see :func:`make_result`): a run makes one per check per pair, validating each showed
    up at 50,000 candidates, and every value here is already of its field's type (the casts make sure)."""
    return make_result(
        bool(passed), None if score is None else float(round(score, 4)), str(reason), severity, duplicate_of,
        _now_to_the_second(),
    )  # fmt: skip


def make_result(
    passed: bool,
    score: float | None,
    reason: str,
    severity: Severity,
    duplicate_of: str | None,
    checked_at: datetime,
    settings_hash: str = "",
    input_hash: str = "",
) -> CheckResult:
    """A CheckResult of values already of their fields' types, equal to (and serialised as) the one
    ``CheckResult.model_construct`` makes of them, at a fraction of its cost: the instance's state is set
    directly, as ``model_construct`` itself does once it has looked at every field (half a million verdicts at
    50,000 candidates)."""
    if not _FAST:
        return CheckResult.model_construct(
            _FIELDS_SET, passed=passed, score=score, reason=reason, settings_hash=settings_hash,
            input_hash=input_hash, duplicate_of=duplicate_of, checked_at=checked_at, severity=severity,
        )  # fmt: skip
    m = _new(CheckResult)
    # the fields in their order, as model_construct lists them
    _setattr(
        m,
        "__dict__",
        {
            "passed": passed,
            "score": score,
            "reason": reason,
            "settings_hash": settings_hash,
            "input_hash": input_hash,
            "duplicate_of": duplicate_of,
            "checked_at": checked_at,
            "severity": severity,
        },
    )
    _setattr(m, "__pydantic_fields_set__", _FIELDS_SET)  # what CheckResult.model_post_init does, done here
    m.__dict__["reason"] = _intern(reason)
    _setattr(m, "__pydantic_extra__", None)
    _setattr(m, "__pydantic_private__", None)
    return m


def verdict(
    settings: CheckSettings, passed: bool, score: float | None, reason: str, *, duplicate_of: str | None = None
) -> CheckResult:
    """:func:`result` carrying the check's severity, so a check used on its own says what its failure does."""
    return result(passed, score, reason, severity=settings.severity, duplicate_of=duplicate_of)


#: The ``model_fields_set`` every verdict shares (:func:`goldset.schema.base.share_fields_set`): every field is
#: given, so assigning one later (the pipeline sets the hashes) adds nothing to it.
_FIELDS_SET = all_fields(CheckResult)
_new = object.__new__
_setattr = object.__setattr__
_intern = sys.intern
#: The direct path of :func:`make_result` holds while CheckResult has no private attributes or extra fields (what
#: ``model_construct`` would handle besides the fields and the post-init hook, whose two steps make_result does
#: itself); the listed fields make sure a new field is not left out (a test compares both paths).
_FAST = (
    not CheckResult.__private_attributes__
    and CheckResult.model_config.get("extra") != "allow"
    and list(CheckResult.model_fields)
    == ["passed", "score", "reason", "settings_hash", "input_hash", "duplicate_of", "checked_at", "severity"]
)

_stamp: tuple[int, datetime] = (-1, datetime.fromtimestamp(0, UTC))


def _now_to_the_second() -> datetime:
    """``goldset.schema.base.utcnow()`` (UTC, microseconds dropped), one datetime object per second: a check
    run makes 100,000s of verdicts a second apart at most, and building the datetime each time showed up."""
    global _stamp
    sec = math.floor(time.time())
    if _stamp[0] != sec:
        _stamp = (sec, datetime.fromtimestamp(sec, UTC))
    return _stamp[1]

"""What every check shares: its settings base model, its registry entry, and the evidence it reads."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict

from goldset.schema import CheckResult, Chunk, QAPair

Kind = Literal["pair", "set", "llm"]
ChunkMap = Mapping[str, Chunk]


class CheckSettings(BaseModel):
    """Thresholds of one check (``filter.checks.<name>`` in goldset.yaml). Unknown keys are errors."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True


@dataclass(frozen=True)
class CheckSpec:
    """A registered check.

    ``kind``: ``pair`` checks are pure functions ``check(pair, chunks, settings) -> CheckResult``; ``set``
    checks look at all pairs at once (duplicates); ``llm`` checks call the judge endpoint. ``reads`` names the
    pair fields a check depends on and ``uses_chunks`` whether it reads the evidence chunks' text: together
    they make the input hash that lets a re-run skip unchanged pairs. ``version`` is bumped when the algorithm
    changes, so old verdicts are recomputed even with unchanged thresholds.
    """

    name: str
    settings_model: type[CheckSettings]
    kind: Kind
    summary: str
    reads: tuple[str, ...]
    uses_chunks: bool = False
    version: int = 1
    func: Callable[[QAPair, ChunkMap, CheckSettings], CheckResult] | None = None


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


def result(passed: bool, score: float | None, reason: str, **extra: object) -> CheckResult:
    """A CheckResult with the score rounded (files diff cleanly; 4 digits is plenty for a threshold test)."""
    extra.setdefault("checked_at", _now_to_the_second())
    return CheckResult(passed=passed, score=None if score is None else round(score, 4), reason=reason, **extra)


_stamp: tuple[int, datetime] = (-1, datetime.fromtimestamp(0, UTC))


def _now_to_the_second() -> datetime:
    """``goldset.schema.base.utcnow()`` (UTC, microseconds dropped), one datetime object per second: a check
    run makes 100,000s of verdicts a second apart at most, and building the datetime each time showed up."""
    global _stamp
    sec = math.floor(time.time())
    if _stamp[0] != sec:
        _stamp = (sec, datetime.fromtimestamp(sec, UTC))
    return _stamp[1]

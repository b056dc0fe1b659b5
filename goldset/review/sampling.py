"""The expert-review sample: stratified, risk first, with a uniformly random part that the estimate rests on.

A *round* draws from the passed pairs that no earlier round held (its *population*). Each pair of it gets a
*stratum* (question type | language | first evidence document, see ``review.strata``). Then, in this order:

1. **Risk part.** The riskiest pairs of the population, whatever their stratum: pairs with a flag (a failed check
   on a pair that still passed, :func:`flags_of`), a borderline score (a passed check within
   ``review.borderline_margin`` of its threshold), a risky type (``multi_hop``, ``unanswerable``, ``ambiguous``,
   ``open_ended``: :data:`RISKY_TYPES`), or evidence chunks that changed since generation. Highest risk score
   first; ties in a seeded random order. It gets ``size - random part`` places at most, and only pairs with some
   risk.
2. **Random part.** At least ``review.random_share`` of the sample (and at least one pair per stratum when the
   sample is that large), allocated to strata in proportion to what each stratum has left after step 1 (largest
   remainder, at least one each), drawn within each stratum by a seeded shuffle. Each random pair records its
   weight: the pairs of its stratum's remainder it stands for (``remainder / drawn``), the inverse of its
   inclusion probability. The unreviewed rest of a stratum is a uniformly random part of that same remainder,
   so the weighted acceptance rate of the random part estimates the rest's without bias (``review/estimate.py``).

The same population, size and seed always give the same sample (one generator per stratum, seeded by seed,
round and stratum). Each pair records ``review.round``, ``stratum``, ``sampled``, ``random``, ``weight``, ``seed``
and ``risk``; the manifest records the round (seed, sizes).
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from goldset.errors import UsageError
from goldset.hashing import short_hash
from goldset.schema import Chunk, PairStatus, QAPair, QuestionType

if TYPE_CHECKING:
    from goldset.filters.settings import FilterSettings
    from goldset.workspace import WorkspaceLike

#: Statuses of a pair whose failed checks are flags rather than rejections.
KEPT = frozenset({PairStatus.passed, PairStatus.accepted})

#: The threshold settings a check's score is compared with (the check fails at or above the lowest of them).
THRESHOLDS: dict[str, tuple[str, ...]] = {
    "verbatim": ("max_containment", "max_lcs_ratio", "max_edit_similarity"),
    "question_overlap": ("max_similarity", "max_containment"),
    "leakage": ("max_token_share",),
    "duplicate": ("threshold",),
}

#: Risk points per kind of signal (a pair's risk score is their sum).
RISK_POINTS = {"flag": 8, "borderline": 4, "changed": 4, "type": 2}
#: Types whose pairs go wrong more often and that no cheap check can vouch for: two chunks to combine (multi_hop),
#: an absence to confirm (unanswerable), readings the KB must really have, each answered (ambiguous), key points
#: to synthesise from several chunks (open_ended).
RISKY_TYPES = (QuestionType.multi_hop, QuestionType.unanswerable, QuestionType.ambiguous, QuestionType.open_ended)


def flags_of(pair: QAPair) -> list[str]:
    """The checks that flagged a pair which is still passed or accepted (:attr:`QAPair.flags`): review looks at
    those first."""
    return sorted(pair.flags) if pair.status in KEPT else []


def borderline_of(pair: QAPair, filters: FilterSettings | None, margin: float) -> list[str]:
    """Passed checks whose score came within ``margin`` of the lowest threshold it is compared with."""
    out = []
    for name, fields in THRESHOLDS.items():
        res = pair.checks.get(name)
        if res is None or not res.passed or res.score is None:
            continue
        try:
            st = filters.for_check(name) if filters is not None else None
        except Exception:  # a check the filters no longer know: nothing to compare with
            continue
        limits = [v for f in fields if isinstance(v := getattr(st, f, None), int | float)]
        if limits and res.score >= min(limits) - margin:
            out.append(name)
    return out


def changed_chunks_of(pair: QAPair, chunks: Mapping[str, Chunk]) -> list[str]:
    """Evidence chunks whose content changed (or left the KB) since the pair was generated from them."""
    out = []
    for cid, generated in pair.provenance.chunk_hashes.items():
        now = chunks.get(cid)
        if now is None or now.content_hash != generated:
            out.append(cid)
    return sorted(out)


def risk_of(
    pair: QAPair, chunks: Mapping[str, Chunk], filters: FilterSettings | None, margin: float
) -> tuple[int, list[str]]:
    """(risk score, reasons) of one pair; 0 and [] for a pair with nothing that makes it risky."""
    reasons = [f"flag:{n}" for n in flags_of(pair)]
    reasons += [f"borderline:{n}" for n in borderline_of(pair, filters, margin)]
    if pair.question_type in RISKY_TYPES:
        reasons.append(f"type:{pair.question_type.value}")
    if changed_chunks_of(pair, chunks):
        reasons.append("changed:chunk")
    score = sum(RISK_POINTS[r.split(":", 1)[0]] for r in reasons)
    return score, reasons


def stratum_of(pair: QAPair, dimensions: Sequence[str]) -> str:
    """``factual|en|guide/intro.md``: the values of the chosen dimensions, in that order."""
    values = {
        "question_type": pair.question_type.value,
        "language": pair.language,
        "doc": pair.doc_ids[0] if pair.doc_ids else "-",
    }
    return "|".join(values[d] for d in dimensions) or "all"


def allocate(sizes: Mapping[str, int], n: int) -> dict[str, int]:
    """``n`` places shared by strata in proportion to ``sizes`` (largest remainder, ties by name); at least one
    each when ``n`` covers every non-empty stratum."""
    strata = sorted(k for k, v in sizes.items() if v > 0)
    total = sum(sizes[k] for k in strata)
    if n >= total:
        return {k: sizes[k] for k in strata}
    if n <= 0:
        return {k: 0 for k in strata}
    if n >= len(strata):
        from goldset.evaluation.sampling import allocate as allocate_min_one

        return allocate_min_one({k: sizes[k] for k in strata}, n)
    quotas = {k: n * sizes[k] / total for k in strata}
    counts = {k: int(quotas[k]) for k in strata}
    left = n - sum(counts.values())
    for k in sorted(strata, key=lambda s: (-(quotas[s] - counts[s]), s)):
        if left <= 0:
            break
        counts[k] += 1
        left -= 1
    return counts


@dataclass
class Draw:
    """One round's choice: which pairs, in which part, with which weights and reasons."""

    strata: dict[str, str] = field(default_factory=dict)  # every population pair id -> stratum
    risk: dict[str, list[str]] = field(default_factory=dict)  # risk-part pair id -> reasons
    random: dict[str, float] = field(default_factory=dict)  # random-part pair id -> weight
    reasons: dict[str, list[str]] = field(default_factory=dict)  # every sampled pair id -> its risk reasons

    @property
    def sampled(self) -> list[str]:
        return sorted({*self.risk, *self.random})


def draw(
    population: Sequence[QAPair],
    size: int,
    *,
    seed: int,
    round_no: int,
    random_share: float,
    dimensions: Sequence[str],
    risk: Mapping[str, tuple[int, list[str]]],
) -> Draw:
    """The pure part of sampling: choose ``size`` pairs of ``population`` (see the module doc)."""
    out = Draw()
    groups: dict[str, list[QAPair]] = defaultdict(list)
    for p in population:
        s = stratum_of(p, dimensions)
        out.strata[p.id] = s
        groups[s].append(p)
    size = min(size, len(population))
    if size <= 0:
        return out
    n_random_min = max(round(random_share * size), min(len(groups), size))
    risk_budget = size - n_random_min

    def tiebreak(pid: str) -> str:
        return short_hash(f"{seed}:{round_no}:{pid}")

    risky = sorted((p for p in population if risk.get(p.id, (0, []))[0] > 0),
                   key=lambda p: (-risk[p.id][0], tiebreak(p.id)))  # fmt: skip
    for p in risky[:risk_budget]:
        out.risk[p.id] = risk[p.id][1]
    remainder = {s: [p for p in members if p.id not in out.risk] for s, members in groups.items()}
    counts = allocate({s: len(m) for s, m in remainder.items()}, size - len(out.risk))
    for s in sorted(remainder):
        members = sorted(remainder[s], key=lambda p: p.id)
        take = counts.get(s, 0)
        if not take:
            continue
        # One generator per stratum: another stratum growing does not reshuffle this one.
        random.Random(f"{seed}:{round_no}:{s}").shuffle(members)
        weight = round(len(members) / take, 6)
        for p in members[:take]:
            out.random[p.id] = weight
    for pid in out.sampled:
        out.reasons[pid] = risk.get(pid, (0, []))[1]
    return out


def waiting(pairs: Sequence[QAPair]) -> list[QAPair]:
    """Sampled pairs that still need a decision (passed, no outcome yet)."""
    return [p for p in pairs if p.review.sampled and p.review.outcome is None and p.status == PairStatus.passed]


def eligible(pairs: Sequence[QAPair]) -> list[QAPair]:
    """Pairs a new round draws from: passed, in no earlier round, with no review decision."""
    return [p for p in pairs if p.status == PairStatus.passed and p.review.round is None and not p.review.decisions]


@dataclass
class SampleReport:
    """What ``sample`` drew: sizes of the round, its parts and strata, and the strata it could not cover."""

    round: int | None = None
    seed: int = 0
    population: int = 0
    sampled: int = 0
    risk: int = 0
    random: int = 0
    strata: int = 0
    per_stratum: dict[str, tuple[int, int, int]] = field(default_factory=dict)  # stratum -> (pairs, risk, random)
    risk_reasons: dict[str, int] = field(default_factory=dict)
    uncovered: list[str] = field(default_factory=list)
    discarded: int = 0  # --redraw: pairs of the previous draw released
    written: bool = False
    path: Path | None = None


def sample(
    ws: WorkspaceLike = None,
    *,
    fraction: float | None = None,
    size: int | None = None,
    seed: int | None = None,
    random_share: float | None = None,
    redraw: bool = False,
) -> SampleReport:
    """Draw a new review round from the passed pairs no earlier round held, and record it on the pairs and in
    the manifest. ``fraction`` (default ``review.fraction``) or ``size`` (a number of pairs) sets how many;
    ``seed`` (default ``review.seed``) makes it reproducible. ``redraw`` first discards the latest round when
    none of its pairs has a decision yet (to draw it again with other parameters)."""
    from goldset.config import load_settings
    from goldset.review import store
    from goldset.schema.manifest import ReviewRound
    from goldset.workspace import resolve_workspace

    ws = resolve_workspace(ws)
    if fraction is not None and size is not None:
        raise UsageError("give fraction or size, not both")
    if size is not None and size <= 0:
        raise UsageError(f"size must be a positive number of pairs, got {size}")
    all_settings = load_settings(ws, review={"fraction": fraction, "seed": seed, "random_share": random_share})
    settings = all_settings.review
    bench = store.load(ws)
    report = SampleReport(seed=settings.seed, path=ws.pairs_path)

    open_rounds = sorted({p.review.round for p in waiting(bench.pairs) if p.review.round is not None})
    if redraw:
        if not bench.rounds and not open_rounds:
            raise UsageError("redraw: there is no sample round to discard")
        last = max([r.round for r in bench.rounds] + open_rounds)
        decided = [p.id for p in bench.pairs if p.review.round == last and (p.review.decisions or p.review.outcome)]
        if decided:
            raise UsageError(
                f"redraw: round {last} already has decisions ({len(decided)} pairs, e.g. {decided[0]}); "
                "it cannot be drawn again without biasing the estimate"
            )
        for i, p in enumerate(bench.pairs):
            if p.review.round == last:
                bench.pairs[i] = p.model_copy(update={"review": type(p.review)()})
                report.discarded += 1
        bench.rounds = [r for r in bench.rounds if r.round != last]
    elif open_rounds:
        raise UsageError(
            f"{len(waiting(bench.pairs))} sampled pairs of round {open_rounds[-1]} have no decision yet; review them "
            "(`goldset review push`, then `pull`) before drawing another round, or pass redraw to draw it again"
        )

    population = eligible(bench.pairs)
    report.population = len(population)
    n = size if size is not None else round(settings.fraction * len(population))
    if population and n == 0:
        n = 1
    filters = all_settings.filter
    risk = {p.id: risk_of(p, bench.chunks, filters, settings.borderline_margin) for p in population}
    round_no = max([r.round for r in bench.rounds] + [p.review.round or 0 for p in bench.pairs] + [0]) + 1
    chosen = draw(population, n, seed=settings.seed, round_no=round_no, random_share=settings.random_share,
                  dimensions=settings.strata, risk=risk)  # fmt: skip
    if not population:
        return report

    report.round = round_no
    report.sampled = len(chosen.sampled)
    report.risk = len(chosen.risk)
    report.random = len(chosen.random)
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for pid, s in chosen.strata.items():
        counts[s][0] += 1
        counts[s][1] += pid in chosen.risk
        counts[s][2] += pid in chosen.random
    report.per_stratum = {s: (c[0], c[1], c[2]) for s, c in sorted(counts.items())}
    report.strata = len(counts)
    report.uncovered = [s for s, c in report.per_stratum.items() if c[1] + c[2] == 0]
    for reasons in chosen.risk.values():
        for r in reasons:
            key = r.split(":", 1)[0]
            report.risk_reasons[key] = report.risk_reasons.get(key, 0) + 1

    for i, p in enumerate(bench.pairs):
        stratum = chosen.strata.get(p.id)
        if stratum is None:
            continue
        review = p.review.model_copy(update={
            "round": round_no,
            "stratum": stratum,
            "sampled": p.id in chosen.risk or p.id in chosen.random,
            "random": p.id in chosen.random,
            "weight": chosen.random.get(p.id),
            "seed": settings.seed if p.id in chosen.risk or p.id in chosen.random else None,
            "risk": chosen.reasons.get(p.id, []),
        })  # fmt: skip
        bench.pairs[i] = p.model_copy(update={"review": review})
    bench.rounds.append(ReviewRound(round=round_no, seed=settings.seed, population=len(population),
                                    sampled=report.sampled, random=report.random, risk=report.risk,
                                    strata=report.strata))  # fmt: skip
    store.save(ws, bench, settings)
    report.written = True
    return report

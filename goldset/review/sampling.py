"""The expert-review sample: stratified, risk first, with a uniformly random part that the estimate rests on.

A *round* draws ``size`` pairs from the passed pairs that no earlier round held (its *population*), in this order:

1. **The split.** The random part gets ``review.random_share`` of the size (rounded; at least one pair when the
   share is above 0), the risk part the rest. The strata never change this split: they are fitted to the random
   part afterwards (step 3), so risky pairs always get their places.
2. **Risk part.** The riskiest pairs of the population, whatever their stratum, up to its places: pairs whose
   evidence changed (a ``refresh:new``, ``refresh:rechecked`` or ``refresh:review`` tag a refresh left, or evidence
   chunks whose text changed since generation, :func:`changed_chunks_of`) first, then flags (a failed check on a
   pair that still passed, :func:`flags_of`), borderline scores (a passed check within ``review.borderline_margin``
   of its threshold) and risky types (``multi_hop``, ``unanswerable``, ``ambiguous``, ``open_ended``:
   :data:`RISKY_TYPES`). Real users' questions (``provenance.source == "real"``, risk reason ``real``) come before
   all of them, the most asked first; then highest risk score first (:data:`RISK_POINTS`); ties in a seeded random
   order. Only pairs with some risk; places it cannot fill go to the random part.
3. **Strata fitted to the random part.** A stratum is made of the values of ``review.strata`` (question type |
   language | first evidence document: ``factual|en|guide/intro.md``). With ``R`` random places, ``L`` pairs left
   after step 2 and ``m = review.min_random_per_stratum``, a stratum (or a coarser key: ``factual|en``,
   ``factual``) is *big* when it has at least ``m * L / R`` pairs left: in proportion it earns ``m`` draws.
   Each pair goes into the finest big key of its own; the pairs of a key that none of its big sub-strata holds
   form that key's pool, named ``<key>|other`` (or ``<key>`` when no sub-stratum of it is big), and a pool that
   is not big itself joins its coarser key's pool, up to one ``other`` (or ``all``) stratum. When that leaves more
   than ``max(1, R // m)`` strata with pairs left, the last dimension is dropped (by default ``doc``, then
   ``language``, then ``question_type``) and the rule applied again, down to a single ``all`` stratum
   (:func:`fit_strata`). So the strata fit the random part, never the other way round: every stratum with pairs
   left gets a random pair (``m`` when ``R`` allows) and the estimate speaks for the whole remainder (none of it
   when ``R`` is 0, ``random_share: 0``: :class:`SampleReport` says so). The rule reads only the population, the
   risk part and the sizes, never the random draws, so the estimate stays unbiased within the strata used.
4. **Random part.** ``R`` places allocated to the fitted strata in proportion to what each has left after step 2
   (``m`` each first, or one each when ``R`` is too small for that; largest remainder), drawn within each stratum
   by a seeded shuffle. Each random pair records its weight: the pairs of its stratum's remainder it stands for
   (``remainder / drawn``), the inverse of its inclusion probability. The unreviewed rest of a stratum is a
   uniformly random part of that same remainder, so the weighted acceptance rate of the random part estimates the
   rest's without bias (``review/estimate.py``).

The same population, size and seed always give the same sample (one generator per stratum, seeded by seed,
round and stratum). Each pair records ``review.round``, ``stratum`` (the fitted one), ``sampled``, ``random``,
``weight``, ``seed`` and ``risk``; the manifest records the round (seed, sizes).
"""

from __future__ import annotations

import math
import random
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from goldset.errors import UsageError
from goldset.hashing import short_hash
from goldset.schema import Chunk, PairStatus, QAPair, QuestionType

if TYPE_CHECKING:
    from goldset.context import Context
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

#: Risk points per kind of signal (a pair's risk score is their sum): what changed in the documents first (a
#: refresh's tag, evidence whose text changed), then flags, borderline scores, risky types.
RISK_POINTS = {"real": 32, "refresh": 16, "changed": 16, "flag": 8, "borderline": 4, "type": 2}
#: The tags ``goldset refresh`` leaves on the pairs it generated or re-checked (``versioning/refresh.py``; review
#: does not import versioning, a test holds them equal).
REFRESH_TAGS = ("refresh:new", "refresh:rechecked", "refresh:review")
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
    reasons = ["real"] if pair.provenance.source == "real" else []  # a real user's question: reviewed first
    reasons += [f"flag:{n}" for n in flags_of(pair)]
    reasons += [f"borderline:{n}" for n in borderline_of(pair, filters, margin)]
    reasons += [t for t in REFRESH_TAGS if t in pair.tags]
    if pair.question_type in RISKY_TYPES:
        reasons.append(f"type:{pair.question_type.value}")
    if changed_chunks_of(pair, chunks):
        reasons.append("changed:chunk")
    score = sum(RISK_POINTS[r.split(":", 1)[0]] for r in reasons)
    return score, reasons


def values_of(pair: QAPair, dimensions: Sequence[str]) -> tuple[str, ...]:
    """The pair's values of the chosen dimensions, in that order."""
    values = {
        "question_type": pair.question_type.value,
        "language": pair.language,
        "doc": pair.doc_ids[0] if pair.doc_ids else "-",
    }
    return tuple(values[d] for d in dimensions)


def name_of(key: tuple[str, ...]) -> str:
    return "|".join(key) or "all"


def stratum_of(pair: QAPair, dimensions: Sequence[str]) -> str:
    """``factual|en|guide/intro.md``: the values of the chosen dimensions, in that order (before any fitting)."""
    return name_of(values_of(pair, dimensions))


@dataclass
class Strata:
    """The strata a round's random part uses, fitted to its size (see the module doc, step 3)."""

    of: dict[str, str] = field(default_factory=dict)  # every population pair id -> stratum
    dimensions: list[str] = field(default_factory=list)  # the dimensions pooled on (the last dropped if need be)
    merged: dict[str, list[str]] = field(default_factory=dict)  # pooled stratum -> the strata it holds


def _pooled(keys: Mapping[str, tuple[str, ...]], left_ids: Sequence[str], depth: int, below: float) -> Strata:
    """Strata of the ``depth``-long ``keys``: the big ones (``below`` pairs left or more) kept, the small ones pooled
    in their nearest coarser key's ``|other`` part (module doc, step 3)."""
    size: Counter[tuple[str, ...]] = Counter()
    for pid in left_ids:
        for j in range(depth + 1):
            size[keys[pid][:j]] += 1
    children: dict[tuple[str, ...], set[tuple[str, ...]]] = defaultdict(set)
    for key in keys.values():
        for j in range(depth):
            children[key[:j]].add(key[: j + 1])
    # Bottom-up: the pairs left in each key's pool (what none of its big sub-strata holds) and which pools stand.
    own: dict[tuple[str, ...], int] = {}
    kept: set[tuple[str, ...]] = {k for k in set(keys.values()) if size[k] >= below}
    for node in sorted(children, key=len, reverse=True):
        own[node] = sum(size[c] if size[c] < below else (0 if c in kept else own[c]) for c in children[node])
        if not node or own[node] >= below:
            kept.add(node)
    has_kept_below = {k[:j] for k in kept for j in range(len(k))}

    def home(key: tuple[str, ...]) -> tuple[str, ...]:
        j = max((j for j in range(depth + 1) if size[key[:j]] >= below), default=0)
        node = key[:j]
        while node not in kept:
            node = node[:-1]
        return node

    out = Strata()
    homes = {key: home(key) for key in set(keys.values())}
    names = {node: name_of(node if node not in has_kept_below else (*node, "other")) for node in set(homes.values())}
    out.of = {pid: names[homes[key]] for pid, key in keys.items()}
    pooled: dict[str, list[str]] = defaultdict(list)
    for key, node in homes.items():
        pooled[names[node]].append(name_of(key))
    out.merged = {s: sorted(ks) for s, ks in sorted(pooled.items()) if len(ks) > 1 or ks != [s]}
    return out


def fit_strata(
    population: Sequence[QAPair], left: Sequence[QAPair], n_random: int, dimensions: Sequence[str], least: int
) -> Strata:
    """The strata of ``dimensions`` for which ``n_random`` random places give each stratum with pairs ``left``
    (the population less the risk part) ``least`` draws (module doc, step 3)."""
    cap = max(1, n_random // least)
    below = least * len(left) / n_random if n_random else math.inf
    values = {p.id: values_of(p, dimensions) for p in population}
    left_ids = [p.id for p in left]
    for depth in range(len(dimensions), 0, -1):
        strata = _pooled({pid: v[:depth] for pid, v in values.items()}, left_ids, depth, below)
        if len({strata.of[pid] for pid in left_ids}) <= cap:
            strata.dimensions = list(dimensions[:depth])
            return strata
    return Strata(of=dict.fromkeys(values, "all"))


def allocate(sizes: Mapping[str, int], n: int, least: int = 1) -> dict[str, int]:
    """``n`` places shared by strata in proportion to ``sizes`` (largest remainder, ties by name): each non-empty
    stratum first gets ``least`` (or all it has) when ``n`` covers that, else one when ``n`` covers that."""
    strata = sorted(k for k, v in sizes.items() if v > 0)
    total = sum(sizes[k] for k in strata)
    if n >= total:
        return {k: sizes[k] for k in strata}
    if n <= 0:
        return {k: 0 for k in strata}
    base = {k: min(least, sizes[k]) for k in strata}
    if sum(base.values()) > n:
        base = {k: 1 if len(strata) <= n else 0 for k in strata}
    room = {k: sizes[k] - base[k] for k in strata}
    rest = n - sum(base.values())
    quotas = {k: rest * room[k] / sum(room.values()) for k in strata}
    counts = {k: base[k] + int(quotas[k]) for k in strata}
    left = n - sum(counts.values())
    for k in sorted(strata, key=lambda s: (-(quotas[s] - int(quotas[s])), s)):
        if left <= 0:
            break
        if counts[k] < sizes[k]:
            counts[k] += 1
            left -= 1
    return counts


@dataclass
class Draw:
    """One round's choice: which pairs, in which part, with which weights and reasons, in which strata."""

    strata: dict[str, str] = field(default_factory=dict)  # every population pair id -> (fitted) stratum
    risk: dict[str, list[str]] = field(default_factory=dict)  # risk-part pair id -> reasons
    random: dict[str, float] = field(default_factory=dict)  # random-part pair id -> weight
    reasons: dict[str, list[str]] = field(default_factory=dict)  # every sampled pair id -> its risk reasons
    dimensions: list[str] = field(default_factory=list)  # the dimensions pooled on (the last dropped if need be)
    merged: dict[str, list[str]] = field(default_factory=dict)  # pooled stratum -> the strata it holds

    @property
    def sampled(self) -> list[str]:
        return sorted({*self.risk, *self.random})


def split(size: int, random_share: float) -> int:
    """Random places of a sample of ``size``: ``random_share`` of it, rounded, at least one when the share is
    above 0 (the rest is the risk part's)."""
    n_random = min(size, round(random_share * size))
    return max(n_random, 1) if random_share > 0 and size > 0 else n_random


def draw(
    population: Sequence[QAPair],
    size: int,
    *,
    seed: int,
    round_no: int,
    random_share: float,
    dimensions: Sequence[str],
    risk: Mapping[str, tuple[int, list[str]]],
    min_random_per_stratum: int = 2,
) -> Draw:
    """The pure part of sampling: choose ``size`` pairs of ``population`` (see the module doc)."""
    out = Draw()
    size = min(size, len(population))

    def tiebreak(pid: str) -> str:
        return short_hash(f"{seed}:{round_no}:{pid}")

    def order(p: QAPair) -> tuple[bool, int, int, str]:
        # real users' questions first, the most asked first (their count is their weight), then by risk score
        real = "real" in risk[p.id][1]
        return (not real, -(p.provenance.count or 1) if real else 0, -risk[p.id][0], tiebreak(p.id))

    risky = sorted((p for p in population if risk.get(p.id, (0, []))[0] > 0), key=order)
    for p in risky[: max(0, size - split(size, random_share))]:
        out.risk[p.id] = risk[p.id][1]
    left = [p for p in population if p.id not in out.risk]
    n_random = size - len(out.risk)
    strata = fit_strata(population, left, n_random, dimensions, min_random_per_stratum)
    out.strata, out.dimensions, out.merged = strata.of, strata.dimensions, strata.merged
    remainder: dict[str, list[QAPair]] = defaultdict(list)
    for p in left:
        remainder[out.strata[p.id]].append(p)
    counts = allocate({s: len(m) for s, m in remainder.items()}, n_random, min_random_per_stratum)
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
    """What ``sample`` drew: sizes of the round, its parts and strata (as fitted to the random part), and what the
    estimate speaks for."""

    round: int | None = None
    seed: int = 0
    population: int = 0
    sampled: int = 0
    risk: int = 0
    random: int = 0
    strata: int = 0
    per_stratum: dict[str, tuple[int, int, int]] = field(default_factory=dict)  # stratum -> (pairs, risk, random)
    risk_reasons: dict[str, int] = field(default_factory=dict)
    #: the strata the round used: review.strata as configured, the dimensions kept, and the pooled strata
    configured_strata: list[str] = field(default_factory=list)
    dimensions: list[str] = field(default_factory=list)
    merged: dict[str, list[str]] = field(default_factory=dict)  # pooled stratum -> the strata it holds
    min_random_per_stratum: int = 0
    fine_strata: int = 0  # strata of the configured dimensions in the population, before fitting
    #: strata with pairs left after the risk part but no random pair: the estimate says nothing of them
    uncovered: list[str] = field(default_factory=list)
    #: pairs the estimate speaks for: the random pairs and the rest of their strata (the sum of their weights)
    speaks_for: int = 0
    discarded: int = 0  # --redraw: pairs of the previous draw released
    written: bool = False
    path: Path | None = None

    @property
    def remainder(self) -> int:
        """Pairs outside the risk part: what the estimate should speak for."""
        return self.population - self.risk

    @property
    def covered_share(self) -> float:
        """Share of the population that is known after review: the risk part (reviewed one by one) and the pairs
        the estimate speaks for. 1.0 when every stratum with pairs left has a random pair."""
        return (self.risk + self.speaks_for) / self.population if self.population else 1.0


def sample(
    ws: WorkspaceLike | Context = None,
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
    from goldset.context import Context
    from goldset.filters.settings import FilterSettings
    from goldset.review import store
    from goldset.review.settings import ReviewSettings
    from goldset.schema.manifest import ReviewRound

    ctx = Context.of(ws, review={"fraction": fraction, "seed": seed, "random_share": random_share})
    ws = ctx.workspace
    if fraction is not None and size is not None:
        raise UsageError("give fraction or size, not both")
    if size is not None and size <= 0:
        raise UsageError(f"size must be a positive number of pairs, got {size}")
    settings = ctx.section(ReviewSettings)
    bench = store.load(ctx.data)
    report = SampleReport(seed=settings.seed, path=ctx.data.pairs_path)

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
    filters = ctx.section(FilterSettings)
    risk = {p.id: risk_of(p, bench.chunks, filters, settings.borderline_margin) for p in population}
    round_no = max([r.round for r in bench.rounds] + [p.review.round or 0 for p in bench.pairs] + [0]) + 1
    chosen = draw(population, n, seed=settings.seed, round_no=round_no, random_share=settings.random_share,
                  dimensions=settings.strata, risk=risk,
                  min_random_per_stratum=settings.min_random_per_stratum)  # fmt: skip
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
    report.configured_strata = list(settings.strata)
    report.dimensions, report.merged = chosen.dimensions, chosen.merged
    report.min_random_per_stratum = settings.min_random_per_stratum
    report.fine_strata = len({stratum_of(p, settings.strata) for p in population})
    report.uncovered = [s for s, (n_s, r_s, x_s) in report.per_stratum.items() if n_s > r_s and not x_s]
    report.speaks_for = sum(n_s - r_s for n_s, r_s, x_s in report.per_stratum.values() if x_s)
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
    store.save(ctx.data, bench, settings)
    report.written = True
    return report

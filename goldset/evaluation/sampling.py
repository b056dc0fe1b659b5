"""A stratified subset of a dataset for fast runs (``goldset eval --sample N --seed S``).

A pull-request job cannot afford the full set, but a plain random subset of 30 questions often misses a whole
question type, and a regression in that type goes unseen. Every question type present gets at least one question;
the rest of ``N`` is shared out in proportion to the type's size (largest remainder), and the choice inside a type
is a seeded shuffle of the ids, so the same ``N``, ``seed`` and dataset always give the same subset.
"""

from __future__ import annotations

import random
from collections import defaultdict

from goldset.errors import UsageError
from goldset.schema import QAPair


def allocate(sizes: dict[str, int], n: int) -> dict[str, int]:
    """How many to draw from each stratum: at least one each, then proportional (largest remainder)."""
    total = sum(sizes.values())
    if n >= total:
        return dict(sizes)
    strata = sorted(k for k, v in sizes.items() if v > 0)
    if n < len(strata):
        raise UsageError(
            f"sample {n} is smaller than the number of question types ({len(strata)}: {', '.join(strata)}); "
            f"sample {len(strata)} questions or more so every type is represented"
        )
    counts = {k: 1 for k in strata}
    rest = n - len(strata)
    room = {k: sizes[k] - 1 for k in strata}
    room_total = sum(room.values())
    quotas = {k: rest * room[k] / room_total if room_total else 0.0 for k in strata}
    for k in strata:
        counts[k] += int(quotas[k])
    left = n - sum(counts.values())
    # Largest remainder first; ties by name so the result does not depend on dict order.
    for k in sorted(strata, key=lambda s: (-(quotas[s] - int(quotas[s])), s)):
        if left <= 0:
            break
        if counts[k] < sizes[k]:
            counts[k] += 1
            left -= 1
    return counts


def stratified_sample(pairs: list[QAPair], n: int, seed: int = 0) -> list[QAPair]:
    """``n`` pairs with every question type represented; deterministic for a given ``seed``. Sorted by id."""
    if n <= 0:
        raise UsageError(f"sample {n}: must be a positive number of questions")
    groups: dict[str, list[QAPair]] = defaultdict(list)
    for p in pairs:
        groups[p.question_type.value].append(p)
    counts = allocate({k: len(v) for k, v in groups.items()}, n)
    chosen: list[QAPair] = []
    for stratum in sorted(groups):
        members = sorted(groups[stratum], key=lambda p: p.id)
        # One generator per stratum, seeded by (seed, stratum): adding a type elsewhere does not reshuffle this one.
        random.Random(f"{seed}:{stratum}").shuffle(members)
        chosen.extend(members[: counts.get(stratum, 0)])
    return sorted(chosen, key=lambda p: p.id)

"""Importing real questions: near-duplicate merging on logs of distinct questions (8 random words of 3,000 each).

``python benchmarks/bench_queries.py`` prints seconds per size. The reference is the first version's linear scan
(every new question compared with every distinct one so far); results in benchmarks/RESULTS.md.
"""

from __future__ import annotations

import random
import tempfile
import time
from pathlib import Path

from goldset.queries.intake import import_queries
from goldset.workspace import Workspace


def main() -> None:
    words = [f"w{i}" for i in range(3000)]
    rng = random.Random(1)
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        (root / "goldset.yaml").write_text("{}\n", encoding="utf-8")
        for n in (2000, 8000):
            path = root / f"q{n}.txt"
            path.write_text("\n".join(" ".join(rng.sample(words, 8)) + "?" for _ in range(n)) + "\n", encoding="utf-8")
            started = time.perf_counter()
            report = import_queries(path, Workspace(root), store=False)
            print(f"{n} rows, {len(report.questions)} distinct: {time.perf_counter() - started:.2f} s")


if __name__ == "__main__":
    main()

"""Run ``goldset`` in this process with the phases of an evaluation timed from outside (``bench_eval.py``'s
phase breakdown starts it): ``python bench_eval_phases.py OUT.json eval --dataset ... --run ...``.

Only the standard library is imported before goldset's own CLI, so the start-up it measures is goldset's. Each
timed function is replaced by a wrapper on its module (``evaluate`` looks them up there when it runs); OUT.json
gets {name: [start, seconds]} on the monotonic clock, which all processes of the machine share, and "end".
"""

from __future__ import annotations

import functools
import importlib
import json
import sys
import time
from pathlib import Path
from typing import Any

PHASES = (
    ("goldset.evaluation.datasets", "resolve_dataset"),
    ("goldset.evaluation.evaluator", "_from_file"),
    ("goldset.evaluation.scoring", "score_run"),
    ("goldset.evaluation.scoring", "summarize"),
    ("goldset.evaluation.runs", "write_run"),
)


def main() -> None:
    out, args = Path(sys.argv[1]), sys.argv[2:]
    marks: dict[str, list[float]] = {}

    def wrap(module: Any, name: str) -> None:
        fn = getattr(module, name)

        @functools.wraps(fn)
        def timed_call(*a: Any, **k: Any) -> Any:
            start = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                marks[name] = [start, time.perf_counter() - start]

        setattr(module, name, timed_call)

    for module_name, name in PHASES:
        wrap(importlib.import_module(module_name), name)
    from goldset.cli import main as cli_main

    sys.argv = ["goldset", *args]
    try:
        cli_main()
    except SystemExit as exc:
        if exc.code:
            raise
    marks["end"] = [time.perf_counter(), 0.0]
    out.write_text(json.dumps(marks), encoding="utf-8")


if __name__ == "__main__":
    main()

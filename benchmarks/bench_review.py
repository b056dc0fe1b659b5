"""Benchmark: push 400 review tasks to a local Label Studio and pull 400 annotated ones (targets ≤ 10 s, ≤ 5 s).

A workspace of 2,000 passed pairs (tests/helpers/review_data.py) gets a 400-pair sample; ``push`` imports it
(project creation, config, bulk import with predictions); a second push shows the idempotent path; then every
task gets an annotation through the API as a reviewer (70% accept, 15% reject, 10% edit, 5% skip; not timed
as goldset's work) and ``pull`` applies them (export, validation, re-check of the edits, write-back).

Uses the server in LABEL_STUDIO_URL / LABEL_STUDIO_API_KEY, else starts one from .ls-venv on a free port with a
fresh data dir (and reports how long that start took).

Run: ``.venv/bin/python benchmarks/bench_review.py`` (writes the ``## review: Label Studio push and pull``
section of RESULTS.md).
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from _results import machine, write_section  # noqa: E402

from goldset.review import pull, push, sample  # noqa: E402
from tests.helpers import labelstudio as lsh  # noqa: E402
from tests.helpers.review_data import make_workspace  # noqa: E402

SECTION = "## review: Label Studio push and pull"
N_PAIRS, N_SAMPLE = 2000, 400


def load() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def run(server: lsh.Server, started_in: float | None) -> str:
    os.environ["LABEL_STUDIO_URL"], os.environ["LABEL_STUDIO_API_KEY"] = server.url, server.api_key
    import subprocess

    import label_studio_sdk

    t = time.perf_counter()  # in a fresh process: what the first push or pull of a command pays once
    subprocess.run([sys.executable, "-c", "from label_studio_sdk import LabelStudio"], check=True)
    sdk_import = time.perf_counter() - t
    root = Path(tempfile.mkdtemp(prefix="bench-review-"))
    ws = make_workspace(root / "ws", N_PAIRS)
    t = time.perf_counter()
    sample(ws, size=N_SAMPLE, seed=1)
    t_sample = time.perf_counter() - t
    load_start = load()

    t = time.perf_counter()
    first = push(ws)
    t_push = time.perf_counter() - t
    t = time.perf_counter()
    again = push(ws)
    t_repush = time.perf_counter() - t
    assert first.imported == N_SAMPLE and again.imported == 0, (first, again)

    ls = server.client()
    tasks = {k: v[0] for k, v in lsh.tasks_by_pair(ls, first.project).items()}
    t = time.perf_counter()
    for i, (_, task) in enumerate(sorted(tasks.items())):
        k = i % 20
        if k < 14:
            result = [lsh.choices("verdict", "accept")]
        elif k < 17:
            result = [lsh.choices("verdict", "reject"), lsh.textarea("comment", "wrong premise", "question")]
        elif k < 19:
            result = [lsh.choices("verdict", "edit"),
                      lsh.textarea("edited_answer", f"A corrected answer number {i}, in plain words.", "answer")]
        else:
            lsh.annotate(ls, task.id, [], cancelled=True)
            continue
        lsh.annotate(ls, task.id, result)
    t_annotate = time.perf_counter() - t

    t = time.perf_counter()
    pulled = pull(ws)
    t_pull = time.perf_counter() - t
    t = time.perf_counter()
    repull = pull(ws)
    t_repull = time.perf_counter() - t
    load_end = load()
    changed = ", ".join(f"{k} {v}" for k, v in sorted(pulled.changed.items()))
    start_line = (f"Label Studio started from scratch (fresh data dir, migrations) in {started_in:.1f} s.\n"
                  if started_in is not None else "Label Studio: an already running server.\n")  # fmt: skip
    return (
        f"{SECTION}\n\n"
        f"Machine: {machine()}. Label Studio 1.23.2 on 127.0.0.1, label-studio-sdk "
        f"{label_studio_sdk.__version__ if hasattr(label_studio_sdk, '__version__') else '2.x'}.\n"
        f"{start_line}\n"
        f"| step | wall | target |\n|---|---|---|\n"
        f"| sample 400 of {N_PAIRS:,} pairs (write-back included) | {t_sample:.2f} s | |\n"
        f"| push 400 tasks (SDK load, new project, one bulk import with predictions) | {t_push:.2f} s | ≤ 10 s |\n"
        f"| push again (nothing to import: idempotent) | {t_repush:.2f} s | |\n"
        f"| pull 400 annotated tasks ({pulled.annotations} annotations; {changed}; "
        f"{pulled.cancelled} skipped) | {t_pull:.2f} s | ≤ 5 s |\n"
        f"| pull again (nothing new, nothing written) | {t_repull:.2f} s | |\n\n"
        f"The first push includes loading the SDK's client (`from label_studio_sdk import LabelStudio` alone, in a "
        f"fresh process: {sdk_import:.2f} s), as a `goldset review push` command pays it. Posting the 400 "
        f"annotations through the API (the reviewers' side, not goldset's): {t_annotate:.1f} s. Load average "
        f"(1/5/15 min) at the start: {load_start}; at the end: {load_end}. Re-pull wrote nothing: "
        f"{not repull.written}.\n"
    )


def main() -> int:
    lsh.stop_on_sigterm()
    if os.environ.get("LABEL_STUDIO_URL") and os.environ.get("LABEL_STUDIO_API_KEY"):
        text = run(lsh.Server(os.environ["LABEL_STUDIO_URL"], os.environ["LABEL_STUDIO_API_KEY"]), None)
    else:
        with contextlib.ExitStack() as stack:
            server, seconds = stack.enter_context(lsh.started(Path(os.environ.get("LABEL_STUDIO_BIN")
                                                                   or lsh.DEFAULT_BIN)))  # fmt: skip
            text = run(server, seconds)
    print(text)
    write_section(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Run every benchmark script in this folder, one after the other (``make bench``).

Each ``bench_*.py`` prints its figures and updates its own section of ``benchmarks/RESULTS.md``. Benchmarks read
the real documentation in ``../shared/kb`` and are never part of the test suite.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    failed = []
    for script in sorted(HERE.glob("bench_*.py")):
        print(f"== {script.name}", flush=True)
        if subprocess.run([sys.executable, str(script)], cwd=HERE.parent, check=False).returncode != 0:
            failed.append(script.name)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

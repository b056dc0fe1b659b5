"""Release the bundled example golden set (examples/golden) as a version of this repository, with goldset's own
release code: `python examples/release_example.py 0.2.0 -m "what changed"`.

The repository root is not a goldset workspace (it has no goldset.yaml, so nothing inside the repository finds it
by accident), but the release code only needs a workspace's folders: the root's `data/` (the released folder,
tracked by the top-level `data.dvc`) and `.goldset/kb` (git-ignored working state). So this script ingests the
example documents (examples/kb/docs) as the corpus, copies the hand-written pairs into `data/pairs.jsonl` and calls
`goldset.versioning.release.release` with `Workspace(<repo root>)`. The DVC remote is `examples/dvc-remote/`, a
folder committed to git so that a fresh clone can load every release offline (see the README).
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from goldset.kb import ingest
from goldset.versioning.release import release
from goldset.workspace import Workspace

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("version", help="version number, e.g. 0.2.0")
    parser.add_argument("-m", "--message", required=True, help="what changed in this release")
    args = parser.parse_args(argv)
    ws = Workspace(ROOT)
    ingest(ROOT / "examples" / "kb" / "docs", ws)
    ws.data_dir.mkdir(exist_ok=True)
    shutil.copyfile(ROOT / "examples" / "golden" / "pairs.jsonl", ws.pairs_path)
    report = release(args.version, message=args.message, ws=ws)
    m = report.manifest
    print(f"released {report.version} ({len(m.golden_ids)} golden pairs, {m.n_chunks} corpus chunks); "
          f"commit {report.commit[:10]}; {report.pushed} object(s) pushed to {report.remote}")  # fmt: skip


if __name__ == "__main__":
    main()

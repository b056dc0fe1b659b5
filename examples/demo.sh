#!/usr/bin/env bash
# `make demo`: goldset's main job on the bundled example (FastAPI tutorial pages, English and Chinese), in
# ./demo-workspace. Needs only the virtualenv `make setup` makes; runs offline without an LLM endpoint.
#   1. init a workspace (git + DVC) and, with an LLM endpoint (OPENAI_API_KEY or OPENAI_BASE_URL set), build a
#      golden set of its own from the example KB with `goldset build`; without one, say so in one line and only
#      ingest the example KB (what needs no LLM);
#   2. load this repository's released example golden set (the release the top-level data.dvc tracks; its files
#      come from the DVC remote committed in examples/dvc-remote/, checked against the release's hashes);
#   3. evaluate the built-in BM25 baseline against it (retrieval and lexical metrics; no LLM judge: its answers
#      are the retrieved text), write the run and the HTML report;
#   4. print where everything went and the headline numbers.
# Knobs: DEMO_WORKSPACE (folder, default demo-workspace), DEMO_LIMIT (chunks to generate from, default 10),
# DEMO_PYTHON (the Python that has goldset, default .venv/bin/python).
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${DEMO_PYTHON:-.venv/bin/python}"
WS="${DEMO_WORKSPACE:-demo-workspace}"
gs() { "$PY" -m goldset "$@"; }
# Released versions are materialised (and re-checked) here, so everything the demo writes is in one folder.
case "$WS" in /*) WS_ABS="$WS" ;; *) WS_ABS="$PWD/$WS" ;; esac
export GOLDSET_CACHE_DIR="${GOLDSET_CACHE_DIR:-$WS_ABS/.goldset/cache}"

echo "== 1. workspace $WS"
gs init "$WS"
if [ -n "${OPENAI_API_KEY:-}${OPENAI_BASE_URL:-}" ]; then
  # The whole loop: ingest → generate → filter → review sample → export (stops before release).
  gs build examples/kb/docs -w "$WS" --limit "${DEMO_LIMIT:-10}"
else
  echo "No LLM endpoint (OPENAI_API_KEY and OPENAI_BASE_URL are unset): skipping generation and running what needs no LLM; set OPENAI_API_KEY (or OPENAI_BASE_URL=http://localhost:11434/v1 GOLDSET_MODEL=qwen2.5 for a local Ollama) to generate too."
  gs ingest examples/kb/docs -w "$WS"
fi

echo "== 2. the released example golden set"
VERSION="$("$PY" -c 'from goldset.versioning.record import parse_record
r = parse_record(open("data.dvc", "rb").read())
print(r.version if r else "")')"
if [ -z "$VERSION" ]; then
  echo "error: data.dvc records no release; run python examples/release_example.py VERSION -m MESSAGE" >&2
  exit 2
fi
gs versions --repo .
"$PY" - "$VERSION" <<'EOF'
import sys

import goldset

version = sys.argv[1]
df = goldset.load(version, repo=".")  # checks every file against the hashes the release recorded
langs = ", ".join(f"{k} {n}" for k, n in df["language"].value_counts().sort_index().items())
types = ", ".join(f"{k} {n}" for k, n in df["question_type"].value_counts().sort_index().items())
print(f"loaded {version}: {len(df)} golden pairs ({langs})")
print(f"  by type: {types}")
EOF

echo "== 3. BM25 baseline against $VERSION"
RUN="$WS/runs/bm25-$VERSION"
rm -rf "$RUN"  # the previous demo's run of the same version
gs eval --dataset "$VERSION" --baseline bm25 --no-judge --out "$RUN" --html "$WS/report.html"

echo "== 4. summary"
"$PY" - "$WS" "$VERSION" "$RUN" <<'EOF'
import json
import sys
from pathlib import Path

from goldset.versioning.load import resolve_dataset_version

ws, version, run = sys.argv[1:4]
summary = json.loads((Path(run) / "summary.json").read_text(encoding="utf-8"))
m = summary["overall"]
figures = "  ".join(f"{k} {m[k]:.3f}" for k in ("recall@5", "mrr", "ndcg@10", "hit@1") if k in m)
snapshot = json.loads((Path(ws) / ".goldset" / "kb" / "snapshot.json").read_text(encoding="utf-8"))
print(f"BM25 on {version}: {figures}  ({summary['n_samples']} questions, {summary['n_failed']} failed); overall score {summary['overall_score']:.3f}")
print(f"golden set {version} of this repository (data.dvc), files in {resolve_dataset_version(version, repo='.')}")
print(f"workspace  {ws}/ (KB {snapshot['id']}: {len(snapshot['documents'])} documents)")
print(f"run        {run}/ ({', '.join(sorted(p.name for p in Path(run).iterdir()))})")
print(f"report     {ws}/report.html")
EOF

#!/usr/bin/env bash
# `make demo`: the main job on the bundled example, from a fresh workspace in ./demo-workspace.
#   1. init a workspace (git + DVC), 2. ingest the example KB (English and Chinese FastAPI docs),
#   3. generate and filter QA pairs when an LLM endpoint is configured (otherwise say how to configure one),
#   4. evaluate the built-in BM25 baseline against the hand-written example golden set and write a report.
set -euo pipefail
cd "$(dirname "$0")/.."
GOLDSET="${GOLDSET:-.venv/bin/goldset}"
WS="${DEMO_WORKSPACE:-demo-workspace}"

"$GOLDSET" init "$WS"
"$GOLDSET" ingest examples/kb/docs -w "$WS"

if [ -n "${OPENAI_API_KEY:-}${OPENAI_BASE_URL:-}" ]; then
  "$GOLDSET" generate -w "$WS" --limit "${DEMO_LIMIT:-10}"
  "$GOLDSET" filter -w "$WS"
else
  echo "No LLM endpoint configured, so generation is skipped: set OPENAI_API_KEY (OpenAI), or OPENAI_BASE_URL=http://localhost:11434/v1 GOLDSET_MODEL=qwen2.5 (a local Ollama), and run make demo again."
fi

"$GOLDSET" eval -w "$WS" --dataset examples/golden --baseline bm25 --kb examples/kb/docs \
  --html "$WS/report.html"
"$GOLDSET" status -w "$WS"
# The same example set is released as v0.1.0 of this repository (DVC; its remote is examples/dvc-remote/):
"$GOLDSET" versions --repo .
echo "Report: $WS/report.html"

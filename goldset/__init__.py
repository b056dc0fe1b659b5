"""goldset: build, check, review, version and evaluate against golden QA datasets for RAG systems.

Public names are imported lazily (module ``__getattr__``), so ``import goldset`` and ``goldset --help`` do not
pay for pydantic, pandas, openai or dvc until a name that needs them is used.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

#: public name → module that defines it
_EXPORTS: dict[str, str] = {
    # errors
    "GoldsetError": "goldset.errors",
    "ConfigError": "goldset.errors",
    "InputError": "goldset.errors",
    "RecordError": "goldset.errors",
    "WorkspaceError": "goldset.errors",
    "EndpointError": "goldset.errors",
    # records
    "Chunk": "goldset.schema",
    "KBSnapshot": "goldset.schema",
    "QAPair": "goldset.schema",
    "Evidence": "goldset.schema",
    "CheckResult": "goldset.schema",
    "ReviewDecision": "goldset.schema",
    "Manifest": "goldset.schema",
    "QuestionType": "goldset.schema",
    "PairStatus": "goldset.schema",
    # datasets and workspaces
    "Dataset": "goldset.dataset",
    "read_dataset": "goldset.dataset",
    "write_dataset": "goldset.dataset",
    "Workspace": "goldset.workspace",
    "find_workspace": "goldset.workspace",
    # knowledge-base ingestion
    "ingest": "goldset.kb",
    "load_chunks": "goldset.kb",
    "load_snapshot": "goldset.kb",
    "chunk_document": "goldset.kb",
    "diff_snapshots": "goldset.kb",
    "KBSettings": "goldset.kb",
    # LLM client layer
    "LLMClient": "goldset.llm",
    "CallJournal": "goldset.llm",
    "CallResult": "goldset.llm",
    "resolve_endpoint": "goldset.llm",
    # generation
    "generate": "goldset.generation.runner",
    # filters
    "run_filters": "goldset.filters",
    "FilterReport": "goldset.filters",
    # evaluation runs, gates, comparison, reports
    "evaluate": "goldset.evaluation.evaluator",
    "EvalResult": "goldset.evaluation.evaluator",
    "GateFailed": "goldset.errors",
    "read_run": "goldset.evaluation.runs",
    "compare_runs": "goldset.evaluation.compare",
    "write_report": "goldset.evaluation.report",
    # evaluation metrics, relevance matcher, scoring
    "EvalSettings": "goldset.evaluation.settings",
    "Matcher": "goldset.evaluation.matcher",
    "score_sample": "goldset.evaluation.scoring",
    "score_run": "goldset.evaluation.scoring",
    "summarize": "goldset.evaluation.scoring",
    "list_metrics": "goldset.evaluation.metrics",
    # versions (DVC releases)
    "load": "goldset.versioning.load",
    "load_dataset": "goldset.versioning.load",
}

__all__ = ["__version__", *sorted(_EXPORTS)]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'goldset' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__

"""goldset: build, check, review, version and evaluate against golden QA datasets for RAG systems.

Public names are imported lazily (:mod:`goldset._lazy`), so ``import goldset`` and ``goldset --help`` do not pay for
pydantic, pandas, openai or dvc until a name that needs them is used. The ``TYPE_CHECKING`` block gives type
checkers and editors the same names (a test keeps the two lists equal).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from goldset._lazy import lazy_exports

#: public name → module that defines it
_EXPORTS: dict[str, str] = {
    # errors
    "GoldsetError": "goldset.errors",
    "UsageError": "goldset.errors",
    "ConfigError": "goldset.errors",
    "WorkspaceError": "goldset.errors",
    "InputError": "goldset.errors",
    "RecordError": "goldset.errors",
    "EndpointError": "goldset.errors",
    "RunFailed": "goldset.errors",
    "GateFailed": "goldset.errors",
    # records (one pydantic model per file format)
    "Chunk": "goldset.schema",
    "KBSnapshot": "goldset.schema",
    "QAPair": "goldset.schema",
    "Evidence": "goldset.schema",
    "CheckResult": "goldset.schema",
    "Review": "goldset.schema",
    "ReviewDecision": "goldset.schema",
    "Manifest": "goldset.schema",
    "QuestionType": "goldset.schema",
    "PairStatus": "goldset.schema",
    "RunSample": "goldset.schema",
    "LogSample": "goldset.schema",
    "RunMeta": "goldset.schema",
    "RunSummary": "goldset.schema",
    "SampleScores": "goldset.schema",
    # workspaces and settings
    "Workspace": "goldset.workspace",
    "find_workspace": "goldset.workspace",
    "init_workspace": "goldset.scaffold",
    "Settings": "goldset.config",
    "load_settings": "goldset.config",
    "Progress": "goldset.progress",
    # dataset folders
    "Dataset": "goldset.dataset",
    "read_dataset": "goldset.data",
    "write_dataset": "goldset.data",
    # knowledge-base ingestion
    "ingest": "goldset.kb",
    "load_chunks": "goldset.kb",
    "load_snapshot": "goldset.kb",
    "chunk_document": "goldset.kb",
    "diff_snapshots": "goldset.kb",
    "KBSettings": "goldset.kb",
    # the LLM client layer
    "LLMClient": "goldset.llm",
    "CallJournal": "goldset.llm",
    "CallResult": "goldset.llm",
    "resolve_endpoint": "goldset.llm",
    # generation
    "generate": "goldset.generation.runner",
    "GenerationReport": "goldset.generation.runner",
    # real user questions
    "import_queries": "goldset.queries.intake",
    "draft_answers": "goldset.queries.drafting",
    "coverage": "goldset.queries.coverage",
    # filters
    "run_filters": "goldset.filters.pipeline",
    "FilterReport": "goldset.filters.report",
    # evaluation
    "evaluate": "goldset.evaluation.evaluator",
    "EvalResult": "goldset.evaluation.evaluator",
    "EvalSettings": "goldset.evaluation.settings",
    "read_run": "goldset.evaluation.runs",
    "compare_runs": "goldset.evaluation.compare",
    "write_report": "goldset.evaluation.report",
    "Matcher": "goldset.evaluation.matcher",
    "score_sample": "goldset.evaluation.scoring",
    "score_run": "goldset.evaluation.scoring",
    "summarize": "goldset.evaluation.scoring",
    "list_metrics": "goldset.evaluation.metrics",
    "trend": "goldset.evaluation.trend",
    "Trend": "goldset.evaluation.trend",
    "write_trend_page": "goldset.evaluation.trend_page",
    # versions (DVC releases)
    "release": "goldset.versioning.release",
    "load": "goldset.versioning.load",
    "load_dataset": "goldset.versioning.load",
    # the whole loop
    "build": "goldset.loop.runner",
    "BuildReport": "goldset.loop.runner",
    "BuildState": "goldset.schema.build",
}

__all__ = ["__version__", *sorted(_EXPORTS)]
_lazy_getattr, _dir = lazy_exports(__name__, _EXPORTS)


def __getattr__(name: str) -> object:
    if name == "__version__":  # read on first use: the installed distribution's version, one source of truth
        value = _installed_version()
        globals()["__version__"] = value
        return value
    return _lazy_getattr(name)


def _installed_version() -> str:
    """The version of the installed ``goldset`` distribution (pyproject.toml's, as pip recorded it); ``0+unknown``
    when goldset runs from a source tree nobody installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("goldset")
    except PackageNotFoundError:
        return "0+unknown"


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:
    __version__: str
    from goldset.config import Settings, load_settings
    from goldset.data import read_dataset, write_dataset
    from goldset.dataset import Dataset
    from goldset.errors import (
        ConfigError,
        EndpointError,
        GateFailed,
        GoldsetError,
        InputError,
        RecordError,
        RunFailed,
        UsageError,
        WorkspaceError,
    )
    from goldset.evaluation.compare import compare_runs
    from goldset.evaluation.evaluator import EvalResult, evaluate
    from goldset.evaluation.matcher import Matcher
    from goldset.evaluation.metrics import list_metrics
    from goldset.evaluation.report import write_report
    from goldset.evaluation.runs import read_run
    from goldset.evaluation.scoring import score_run, score_sample, summarize
    from goldset.evaluation.settings import EvalSettings
    from goldset.evaluation.trend import Trend, trend
    from goldset.evaluation.trend_page import write_trend_page
    from goldset.filters.pipeline import run_filters
    from goldset.filters.report import FilterReport
    from goldset.generation.runner import GenerationReport, generate
    from goldset.kb import KBSettings, chunk_document, diff_snapshots, ingest, load_chunks, load_snapshot
    from goldset.llm import CallJournal, CallResult, LLMClient, resolve_endpoint
    from goldset.loop.runner import BuildReport, build
    from goldset.progress import Progress
    from goldset.queries.coverage import coverage
    from goldset.queries.drafting import draft_answers
    from goldset.queries.intake import import_queries
    from goldset.scaffold import init_workspace
    from goldset.schema import (
        CheckResult,
        Chunk,
        Evidence,
        KBSnapshot,
        LogSample,
        Manifest,
        PairStatus,
        QAPair,
        QuestionType,
        Review,
        ReviewDecision,
        RunMeta,
        RunSample,
        RunSummary,
        SampleScores,
    )
    from goldset.schema.build import BuildState
    from goldset.versioning.load import load, load_dataset
    from goldset.versioning.release import release
    from goldset.workspace import Workspace, find_workspace

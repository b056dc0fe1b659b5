"""Real user questions: intake (import, redaction, merging), drafting (reference answers from the KB) and coverage
(how much of real traffic the golden set covers)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from goldset._lazy import lazy_exports

_EXPORTS = {
    "import_queries": "goldset.queries.intake",
    "read_queries": "goldset.queries.intake",
    "QueryImport": "goldset.queries.intake",
    "draft_answers": "goldset.queries.drafting",
    "DraftReport": "goldset.queries.drafting",
    "coverage": "goldset.queries.coverage",
    "CoverageReport": "goldset.queries.coverage",
    "QueriesSettings": "goldset.queries.settings",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from goldset.queries.coverage import CoverageReport, coverage
    from goldset.queries.drafting import DraftReport, draft_answers
    from goldset.queries.intake import QueryImport, import_queries, read_queries
    from goldset.queries.settings import QueriesSettings


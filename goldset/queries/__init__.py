"""Real user questions: intake (import, redaction, merging) and drafting (reference answers from the KB)."""

from __future__ import annotations

from goldset._lazy import lazy_exports

_EXPORTS = {
    "import_queries": "goldset.queries.intake",
    "read_queries": "goldset.queries.intake",
    "QueryImport": "goldset.queries.intake",
    "draft_answers": "goldset.queries.drafting",
    "DraftReport": "goldset.queries.drafting",
    "QueriesSettings": "goldset.queries.settings",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

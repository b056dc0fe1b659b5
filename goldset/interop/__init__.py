"""Interop with the tools teams already use: export a dataset's pairs (or a run) in their formats, and import
pairs back.

Formats (one module each, :mod:`goldset.interop.registry` by name): ``ragas`` (an ``EvaluationDataset`` as JSON
Lines), ``deepeval`` (goldens JSON), ``hf`` (a Hugging Face ``datasets`` folder with a dataset card),
``labelstudio`` (the task JSON ``goldset review push`` sends), ``csv`` (for spreadsheets, formula cells escaped).
Each module's docstring maps every goldset field to the format's field and lists what the format does not carry;
:mod:`goldset.interop.fields` holds the helpers they share (which pairs, reference contexts, rows back to pairs).

- ``export_pairs(format, out=None, *, dataset=None, status="golden", contexts=None, license=None, ws=None)``
  -> ``ExportReport`` (``contexts`` None: the format's default, ragas ``chunks``, deepeval ``quotes``)
- ``export_run(run, out=None, *, dataset=None, contexts="chunks", ws=None)`` -> ``ExportReport`` (RAGAS rows)
- ``import_pairs(format, path, *, out=None, corpus=None, question_type=None, ws=None)`` -> ``ImportReport``
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from goldset._lazy import lazy_exports

_EXPORTS = {
    "export_pairs": "goldset.interop.exporter",
    "export_run": "goldset.interop.exporter",
    "ExportReport": "goldset.interop.exporter",
    "import_pairs": "goldset.interop.importer",
    "ImportReport": "goldset.interop.importer",
    "FORMATS": "goldset.interop.registry",
    "get_format": "goldset.interop.registry",
    "Format": "goldset.interop.base",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


if TYPE_CHECKING:  # the same names, for type checkers (a test holds the two lists equal)
    from goldset.interop.base import Format
    from goldset.interop.exporter import ExportReport, export_pairs, export_run
    from goldset.interop.importer import ImportReport, import_pairs
    from goldset.interop.registry import FORMATS, get_format

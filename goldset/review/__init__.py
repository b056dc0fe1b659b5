"""Expert review of a sample of the pairs in Label Studio, and what the sample says about the rest.

Library entry points (each takes the workspace as ``ws``: a Workspace, a path inside one, or None for the one
around the current folder; each returns a small report object):

- ``sample(ws, *, fraction=None, size=None, seed=None, random_share=None, redraw=False)`` -> ``SampleReport``
- ``push(ws, *, url=None, progress=None)`` -> ``PushReport``
- ``pull(ws, *, url=None, progress=None)`` -> ``ApplyReport``
- ``status(ws, *, server=None, url=None)`` -> ``StatusReport`` (``.gate(0.9)`` raises GateFailed below it)
- ``export(path, ws)`` -> ``ExportReport``; ``import_results(path, ws, *, config=None)`` -> ``ApplyReport``
- ``calibrate(ws, *, samples=1, progress=None)`` -> ``CalibrationReport``: the groundedness judge against the
  experts' decisions (``goldset judge calibrate``), stored in the manifest

Modules: settings (the ``review`` section), sampling, config (the labeling XML), tasks (pair -> task),
labelstudio (the only user of label_studio_sdk), decisions (annotations -> decisions, several annotators,
kappa), apply (decisions -> pairs), estimate (Wilson), offline (files), project (push, pull, status), store,
calibration (the judge against the experts).
Names are imported lazily, so ``import goldset.review`` costs nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from goldset._lazy import lazy_exports

_EXPORTS = {
    "sample": "goldset.review.sampling",
    "SampleReport": "goldset.review.sampling",
    "push": "goldset.review.project",
    "PushReport": "goldset.review.project",
    "pull": "goldset.review.project",
    "status": "goldset.review.project",
    "StatusReport": "goldset.review.project",
    "ApplyReport": "goldset.review.apply",
    "export": "goldset.review.offline",
    "ExportReport": "goldset.review.offline",
    "import_results": "goldset.review.offline",
    "ReviewSettings": "goldset.review.settings",
    "wilson": "goldset.review.estimate",
    "cohen_kappa": "goldset.review.decisions",
    "fleiss_kappa": "goldset.review.decisions",
    "calibrate": "goldset.review.calibration",
    "CalibrationReport": "goldset.review.calibration",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


if TYPE_CHECKING:  # the same names, for type checkers (a test holds the two lists equal)
    from goldset.review.apply import ApplyReport
    from goldset.review.calibration import CalibrationReport, calibrate
    from goldset.review.decisions import cohen_kappa, fleiss_kappa
    from goldset.review.estimate import wilson
    from goldset.review.offline import ExportReport, export, import_results
    from goldset.review.project import PushReport, StatusReport, pull, push, status
    from goldset.review.sampling import SampleReport, sample
    from goldset.review.settings import ReviewSettings

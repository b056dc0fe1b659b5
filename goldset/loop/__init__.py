"""The whole loop in one call: ingest → generate → filter → review sample → push to Label Studio (or export the
review tasks) → release when asked (:func:`build`, ``goldset build``).

Each stage is one existing library entry point, called as its own command calls it; this module only orders them,
decides what each needs and reports. Resuming needs nothing of its own, because every stage already is:

- ingest replaces the KB snapshot and says whether it changed;
- generate asks only about chunks that have no pair yet, keeps what a stopped run received, and takes repeated
  calls from the call journal (``.goldset/calls.sqlite``);
- filter reuses every verdict whose pair, evidence and settings are unchanged;
- sample draws a new round only from passed pairs no round held (an open round is pushed again, not redrawn);
- push is idempotent (the pair id is in the task: no duplicate task); export rewrites its file;
- release refuses a version that exists, and a dataset the previous release already holds.

``.goldset/build.json`` (:class:`goldset.schema.build.BuildState`) records how each stage of the last build ended,
so the next one can say "generate: resumed at chunk 7 of 12". A failed stage stops the loop: :class:`BuildStopped`
carries its error (and its exit code) and the report of the stages that ran.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from goldset._lazy import lazy_exports

_EXPORTS = {
    "build": "goldset.loop.runner",
    "BuildReport": "goldset.loop.runner",
    "BuildPlan": "goldset.loop.runner",
    "BuildStopped": "goldset.loop.runner",
    "read_state": "goldset.loop.runner",
    "state_path": "goldset.loop.runner",
    "STAGES": "goldset.loop.stages",
    "ReviewTarget": "goldset.loop.stages",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


if TYPE_CHECKING:  # the same names, for type checkers (a test holds the two lists equal)
    from goldset.loop.runner import BuildPlan, BuildReport, BuildStopped, build, read_state, state_path
    from goldset.loop.stages import STAGES, ReviewTarget

"""The state record of ``goldset build`` (``.goldset/build.json``): which stages of the last build ran and how
each ended, so a rerun can say what it resumes. Rebuildable working state: every stage keeps its own progress
(the KB snapshot, the call journal and the candidates file, the verdicts on the pairs, the review rounds, the
release tags), and this record only reports on them; deleting it loses nothing but the "resumed" wording."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from goldset.schema.base import Record, utcnow

BUILD_STATE_FILE = "build.json"

StageName = Literal["ingest", "generate", "filter", "sample", "review", "release"]
StageStatus = Literal["done", "unchanged", "resumed", "incomplete", "skipped", "failed", "interrupted"]


class StageRecord(Record):
    """How one stage of a build ended."""

    name: StageName = Field(description="The stage: ingest, generate, filter, sample, review or release.")
    status: StageStatus = Field(
        description="done; unchanged (nothing to do); resumed (finished work a previous build left); incomplete "
        "(ran, but some of its work failed: a rerun does the rest); skipped (not asked for, or not needed); failed "
        "(raised an error: the build stopped there); interrupted (stopped from outside, e.g. Ctrl-C)."
    )
    summary: str = Field("", description="One line saying what the stage did, as the build's summary shows it.")
    counts: dict[str, int] = Field(
        default_factory=dict, description="The stage's figures (chunks, calls, pairs, tasks, …) by name."
    )
    outputs: dict[str, str] = Field(
        default_factory=dict, description="Where the stage's outputs went: label -> file path, URL or tag."
    )
    error: str | None = Field(None, description="The error that stopped the stage (failed, interrupted), one line.")
    finished_at: datetime = Field(default_factory=utcnow, description="When the stage ended (UTC).")


class BuildState(Record):
    """The last ``goldset build`` of a workspace: its options and its stages in the order they ran."""

    docs_dir: str | None = Field(None, description="The documents folder the build ingested.")
    started_at: datetime = Field(default_factory=utcnow, description="When the build started (UTC).")
    finished_at: datetime | None = Field(None, description="When it ended (UTC); None while it runs.")
    release: str | None = Field(None, description="The version the build was asked to release, if any.")
    stages: list[StageRecord] = Field(
        default_factory=list, description="The stages that ran (or were skipped), in order."
    )
    stopped_at: StageName | None = Field(
        None, description="The stage that failed or was interrupted; None when the build went through."
    )

    def stage(self, name: str) -> StageRecord | None:
        """The record of stage ``name``, if the build reached it."""
        return next((s for s in self.stages if s.name == name), None)

"""Coverage of real traffic (`goldset coverage --queries FILE`): which real questions one dataset version's golden
set covers, kept so the run report can show it beside the runs of that very version.

One JSON file per dataset content, ``.goldset/coverage/<manifest_hash>.json`` (:mod:`goldset.data`), keyed by the
dataset's fingerprint (the ``manifest_hash`` a run records), so a report never shows a coverage computed for other
data as its own. The questions in it were redacted at intake (`goldset.privacy.redact_personal`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from goldset.schema.base import Record, utcnow

#: The workspace's folder of coverage records, under ``.goldset/`` (one ``<manifest_hash>.json`` each).
COVERAGE_DIR = "coverage"


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CoverageMatch(_Part):
    """One distinct real question and its nearest golden question."""

    question_id: str = Field(description="The real question's id (a hash of its normalised, redacted text).")
    question: str = Field(description="The real question, personal data redacted.")
    count: int = Field(1, ge=1, description="How often it was asked (merged copies summed).")
    language: str = Field("en", description="Its language (en, zh, ja, ko…).")
    nearest: str | None = Field(None, description="The most similar golden question.")
    nearest_id: str | None = Field(None, description="Id of the golden pair of that question.")
    similarity: float = Field(description="Similarity to it (cosine or token Dice, per the record's method).")
    covered: bool = Field(description="similarity ≥ the record's threshold.")


class CoverageCluster(_Part):
    """Uncovered real questions on one topic (greedy token-Dice clusters), largest first."""

    topic: str = Field(description="Its most shared words.")
    question_ids: list[str] = Field(description="Ids of the real questions in it.")
    asked: int = Field(ge=0, description="Times they were asked, summed.")
    examples: list[str] = Field(default_factory=list, description="A few of its questions, most asked first.")


class CoverageRecord(Record):
    """What `goldset coverage` found for one dataset version: the figures, every match and the uncovered topics.

    The four counts are stored for readers of the file and checked against ``matches`` when it is read: a record
    whose figures do not add up is refused, not shown."""

    computed_at: datetime = Field(default_factory=utcnow, description="When the coverage was computed (UTC).")
    source: str = Field(description="The file of real questions it was computed from (its name as given).")
    dataset: str = Field(description="The dataset folder or release it was computed against, as given.")
    dataset_version: str | None = Field(None, description="That dataset's release name; None for a working copy.")
    manifest_hash: str = Field(
        description="Fingerprint of that dataset's content (as a run's `manifest_hash`): the report shows this "
        "coverage only for runs of the same content."
    )
    method: Literal["embedding", "lexical"] = Field(
        description="How the nearest golden question was found: embedding cosine, or token-set Dice (CJK "
        "characters one token each)."
    )
    embedding_model: str | None = Field(None, description="The embedding model, when the method is embedding.")
    threshold: float = Field(description="Similarity at or above which a real question counts as covered.")
    golden: int = Field(ge=0, description="Golden pairs compared with.")
    questions: int = Field(ge=0, description="Distinct real questions.")
    covered: int = Field(ge=0, description="Of those, the covered ones.")
    asked: int = Field(ge=0, description="Times the real questions were asked, summed.")
    asked_covered: int = Field(ge=0, description="Of those, the times a covered question was asked.")
    redacted: dict[str, int] = Field(
        default_factory=dict, description="Personal data removed from the questions at intake: kind → count."
    )
    matches: list[CoverageMatch] = Field(default_factory=list, description="Every real question, most asked first.")
    clusters: list[CoverageCluster] = Field(
        default_factory=list, description="Topic clusters of the uncovered questions, most asked first."
    )

    @model_validator(mode="after")
    def _figures_add_up(self) -> CoverageRecord:
        want = (len(self.matches), sum(m.covered for m in self.matches), sum(m.count for m in self.matches),
                sum(m.count for m in self.matches if m.covered))  # fmt: skip
        got = (self.questions, self.covered, self.asked, self.asked_covered)
        if want != got:
            raise ValueError(
                f"figures (questions, covered, asked, asked_covered) {got} do not add up to the matches' {want}"
            )
        return self

    @property
    def share(self) -> float:
        """Covered share of the distinct questions."""
        return self.covered / self.questions if self.questions else 0.0

    @property
    def weighted_share(self) -> float:
        """Covered share of the times questions were asked (weighted by count)."""
        return self.asked_covered / self.asked if self.asked else 0.0

    @property
    def label(self) -> str:
        """The dataset as a reader names it: its version (or 'working copy') and its content hash."""
        return f"{self.dataset} (version {self.dataset_version or 'working copy'}, hash {self.manifest_hash})"

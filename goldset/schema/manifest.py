"""The manifest of a dataset folder (``pairs.jsonl`` + ``chunks.jsonl`` + ``manifest.json``).

It also holds the latest judge calibration (:class:`JudgeCalibration`, written by ``goldset judge calibrate``,
released with the dataset) and the few pure functions every reader of that record shares (release, report):
:meth:`JudgeCalibration.status`, :func:`calibration_summary`, :func:`review_fingerprint`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from goldset.hashing import hash_obj
from goldset.schema.base import Record, utcnow

if TYPE_CHECKING:
    from goldset.schema.pairs import QAPair

# The file names, defined once (read and written by goldset.data alone, which re-exports them): a dataset folder
# holds PAIRS_FILE, CHUNKS_FILE (the cited chunks) and MANIFEST_FILE; a KB folder (.goldset/kb) CHUNKS_FILE (every
# chunk) and SNAPSHOT_FILE; a release folder PAIRS_FILE, MANIFEST_FILE, SNAPSHOT_FILE and corpus/ (goldset.corpus).
PAIRS_FILE = "pairs.jsonl"
CHUNKS_FILE = "chunks.jsonl"
MANIFEST_FILE = "manifest.json"
SNAPSHOT_FILE = "snapshot.json"
#: The fixed layout of a dataset folder, shared by every command.
DATASET_FILES = (PAIRS_FILE, CHUNKS_FILE, MANIFEST_FILE)


class AcceptanceEstimate(BaseModel):
    """The acceptance rate of the pairs nobody reviewed, estimated from the reviewed random part of the sample."""

    model_config = ConfigDict(extra="forbid")

    population: int = Field(0, description="Pairs the estimate speaks for (the random part and the unreviewed rest).")
    random: int = Field(0, description="Pairs in the random part.")
    reviewed: int = Field(0, description="Random-part pairs with a decision: what the estimate rests on.")
    accepted: int = Field(0, description="Of those, accepted as they were.")
    effective_n: float | None = Field(None, description="Kish effective sample size (= reviewed when unweighted).")
    acceptance_rate: float | None = Field(None, description="Estimated acceptance rate (weighted).")
    ci_low: float | None = Field(None, description="Wilson interval, lower bound.")
    ci_high: float | None = Field(None, description="Wilson interval, upper bound.")


class ReviewRound(BaseModel):
    """One draw of the expert-review sample."""

    model_config = ConfigDict(extra="forbid")

    round: int = Field(description="Round number, from 1.")
    seed: int = Field(description="Seed the round was drawn with.")
    drawn_at: datetime = Field(default_factory=utcnow, description="When it was drawn (UTC).")
    population: int = Field(0, description="Passed, unreviewed pairs the round drew from.")
    sampled: int = Field(0, description="Pairs drawn.")
    random: int = Field(0, description="Drawn uniformly at random within strata.")
    risk: int = Field(0, description="Drawn risk first (flags, borderline scores, risky types, changed chunks).")
    strata: int = Field(0, description="Strata (question type|language|document) of the population.")


class ReviewSampleStats(BaseModel):
    """The human review of a random sample of the dataset's pairs, and what it says about the whole."""

    model_config = ConfigDict(extra="forbid")

    sampled: int = Field(0, description="Pairs drawn for review.")
    reviewed: int = Field(0, description="Pairs a reviewer decided on.")
    accepted: int = Field(0, description="Pairs accepted as they were.")
    rejected: int = Field(0, description="Pairs rejected.")
    edited: int = Field(0, description="Pairs accepted after an edit.")
    acceptance_rate: float | None = Field(
        None, description="Estimated acceptance rate of the pairs nobody reviewed, from the random part of the sample."
    )
    ci_low: float | None = Field(None, description="Wilson interval of the acceptance rate, lower bound.")
    ci_high: float | None = Field(None, description="Wilson interval of the acceptance rate, upper bound.")
    confidence: float | None = Field(None, description="Confidence level of the Wilson intervals.")
    random: int = Field(0, description="Pairs in the random part of the sample.")
    random_reviewed: int = Field(0, description="Random-part pairs reviewed: what acceptance_rate rests on.")
    effective_n: float | None = Field(None, description="Kish effective sample size of the random part.")
    population: int = Field(0, description="Pairs the overall estimate speaks for.")
    edits_count_as_accepted: bool = Field(False, description="Edited pairs counted as accepted in the rate.")
    rounds: list[ReviewRound] = Field(default_factory=list, description="Every sample round, oldest first.")
    strata: dict[str, AcceptanceEstimate] = Field(default_factory=dict, description="Per stratum of the sample.")
    by_question_type: dict[str, AcceptanceEstimate] = Field(default_factory=dict, description="Per question type.")
    by_language: dict[str, AcceptanceEstimate] = Field(default_factory=dict, description="Per language.")
    estimated_at: datetime | None = Field(None, description="When the estimate was computed (UTC).")
    last_decision_at: datetime | None = Field(
        None, description="The newest review decision on a pair still in the set: how old what it rests on is."
    )
    golden: int = Field(
        0, description="Golden pairs of the dataset the coverage figures refer to (0 in files written before them)."
    )
    covered: int = Field(
        0,
        description="Golden pairs the review speaks for: reviewed ones, and unreviewed ones of a sample round's "
        "stratum whose random part still has a reviewed pair in the set.",
    )
    outside: int = Field(0, description="Golden pairs the estimate does not speak for (golden - covered).")
    unsampled: int = Field(
        0, description="Of the outside pairs, those in no sample round (added since the last round; never drawn)."
    )
    retired_since: int = Field(
        0,
        description="Pairs of the sample rounds' random remainders that left the set since they were drawn "
        "(retired, stale, or rejected by the filters): no longer counted, their strata's weights recomputed.",
    )
    random_retired: int = Field(
        0, description="Of those, pairs of the random part: their decisions no longer count in the estimate."
    )

    @property
    def coverage(self) -> float | None:
        """Share of the golden pairs the estimate speaks for (None when the coverage was not recorded)."""
        return self.covered / self.golden if self.golden else None


# ------------------------------------------------------------------------------------------ judge calibration

#: The two labels of a calibration: what the groundedness check should say of a pair. For ``unanswerable`` pairs
#: "grounded" means the documents indeed do not answer the question (the check passes).
GROUNDED, NOT_GROUNDED = "grounded", "not grounded"
CalibrationStatus = Literal["agrees", "below", "too_few", "undefined"]


def kappa_strength(kappa: float) -> str:
    """Landis & Koch's (1977) word for a kappa: poor (< 0), slight, fair, moderate, substantial, almost perfect."""
    if kappa < 0:
        return "poor"
    for bound, word in ((0.2, "slight"), (0.4, "fair"), (0.6, "moderate"), (0.8, "substantial")):
        if kappa <= bound:
            return word
    return "almost perfect"


class JudgeAgreement(BaseModel):
    """The judge's labels against the experts' on a set of pairs: accuracy, Cohen's kappa and the 2x2 table
    (rows: the expert; columns: the judge). "Not grounded" is what the judge is there to catch."""

    model_config = ConfigDict(extra="forbid")

    pairs: int = Field(0, description="Pairs with both an expert label and a judge label.")
    accuracy: float | None = Field(None, description="Share of pairs where the judge gave the expert's label.")
    kappa: float | None = Field(
        None, description="Cohen's kappa of judge vs. expert; None when undefined (one label only on both sides)."
    )
    both_grounded: int = Field(0, description="Expert: grounded; judge: grounded.")
    false_alarms: int = Field(0, description="Expert: grounded; judge: not grounded (a good pair the judge rejects).")
    missed: int = Field(0, description="Expert: not grounded; judge: grounded (an unsupported answer it lets pass).")
    both_not_grounded: int = Field(0, description="Expert: not grounded; judge: not grounded (caught).")

    @property
    def expert_labels(self) -> set[str]:
        """The labels the experts gave on these pairs."""
        got = set()
        if self.both_grounded or self.false_alarms:
            got.add(GROUNDED)
        if self.missed or self.both_not_grounded:
            got.add(NOT_GROUNDED)
        return got


class JudgeVariance(BaseModel):
    """The judge asked ``samples`` times about the same pairs (``--judge-samples``): how much its figures move."""

    model_config = ConfigDict(extra="forbid")

    samples: int = Field(1, description="Times every pair was judged (the first is the filters' own call).")
    accuracy: list[float | None] = Field(default_factory=list, description="Accuracy of each repeat, in order.")
    kappa: list[float | None] = Field(default_factory=list, description="Cohen's kappa of each repeat, in order.")
    unstable_pairs: int = Field(0, description="Pairs whose label was not the same in every repeat.")
    mean_flip_rate: float = Field(
        0.0, description="Mean over the pairs of their flip rate (0 when every repeat agrees, at most 0.5)."
    )
    flip_rates: dict[str, float] = Field(
        default_factory=dict,
        description="Unstable pair id -> its flip rate: the share of repeats that gave the pair's minority label.",
    )


class JudgeCalibration(BaseModel):
    """The groundedness judge compared with the experts on the reviewed pairs (``goldset judge calibrate``): how
    each pair got its expert label, the agreement overall, per language and per question type, and (with several
    samples) the judge's variance. The latest one is kept in the manifest and released with the dataset."""

    model_config = ConfigDict(extra="forbid")

    calibrated_at: datetime = Field(default_factory=utcnow, description="When the calibration ran (UTC).")
    check: str = Field("groundedness", description="The judged check (the filters' groundedness judge).")
    model: str = Field("", description="The judge's model.")
    endpoint: str = Field("", description="The judge endpoint's *name* in goldset.yaml (never a URL or key).")
    prompt_id: str = Field("", description="The judge's prompt template.")
    prompt_hash: str = Field("", description="Hash of that template's text.")
    temperature: float | None = Field(None, description="The judge's sampling temperature.")
    samples: int = Field(1, description="Times every pair was judged (--judge-samples).")
    min_kappa: float = Field(0.6, description="review.calibration.min_kappa when it ran.")
    min_pairs: int = Field(10, description="review.calibration.min_pairs when it ran.")
    reviewed: int = Field(0, description="Pairs with an expert decision (review outcome).")
    labelled: int = Field(0, description="Of those, pairs the decision gives a groundedness label (see rules).")
    rules: dict[str, int] = Field(default_factory=dict, description="Rule that gave the expert label -> pairs.")
    left_out: dict[str, int] = Field(
        default_factory=dict, description="Why a reviewed pair is not in the figures -> pairs."
    )
    judged_pre_edit: int = Field(
        0, description="Pairs an expert edited, judged on the text the expert was shown (before the edit)."
    )
    overall: JudgeAgreement = Field(
        default_factory=JudgeAgreement, description="Agreement over every labelled pair judged (the first sample)."
    )
    by_language: dict[str, JudgeAgreement] = Field(default_factory=dict, description="Agreement per language.")
    by_question_type: dict[str, JudgeAgreement] = Field(
        default_factory=dict, description="Agreement per question type."
    )
    variance: JudgeVariance | None = Field(None, description="With --judge-samples N > 1: the judge's variance.")
    disagreements: dict[str, str] = Field(
        default_factory=dict, description="Pair id -> 'missed' or 'false alarm' (first sample), for a reviewer."
    )
    review_fingerprint: str = Field(
        "", description="Hash of the review decisions it was computed from (a later decision makes it stale)."
    )

    def status(self, min_kappa: float | None = None) -> CalibrationStatus:
        """'too_few' (fewer labelled pairs than min_pairs), 'undefined' (kappa cannot measure agreement: the
        experts gave one label only), 'below' (kappa under ``min_kappa``, default the one it ran with), 'agrees'."""
        threshold = self.min_kappa if min_kappa is None else min_kappa
        o = self.overall
        if o.pairs < self.min_pairs:
            return "too_few"
        if o.kappa is None or len(o.expert_labels) < 2:
            return "undefined"
        return "below" if o.kappa < threshold else "agrees"

    def headline(self) -> str:
        """One line: the judge, the pairs and the agreement (a kappa only when it means something)."""
        o = self.overall
        who = f"{self.check} judge {self.model or '?'} (prompt {self.prompt_id} {self.prompt_hash[:12]})"
        figures = f"{o.pairs} expert-labelled pairs"
        if o.accuracy is not None:
            figures += f", accuracy {o.accuracy:.0%}"
        if o.pairs >= self.min_pairs and o.kappa is not None and len(o.expert_labels) == 2:
            figures += f", Cohen's kappa {o.kappa:.2f} ({kappa_strength(o.kappa)})"
        samples = f"; {self.samples} samples" if self.samples > 1 else ""
        return f"{who}, {self.calibrated_at.date().isoformat()}: {figures}{samples}"

    def warning(self, min_kappa: float | None = None) -> str | None:
        """What a release (or a report) must say about this calibration, or None when the judge agrees."""
        threshold = self.min_kappa if min_kappa is None else min_kappa
        o = self.overall
        status = self.status(threshold)
        if status == "below" and o.kappa is not None:
            return (
                f"judge agreement below review.calibration.min_kappa: Cohen's kappa {o.kappa:.2f} "
                f"({kappa_strength(o.kappa)}) < {threshold:.2f} on {o.pairs} expert-labelled pairs; the groundedness "
                "judge's verdicts do not stand in for an expert's (see its disagreements in the manifest)"
            )
        if status == "too_few":
            return (
                f"judge calibration rests on {o.pairs} expert-labelled pairs (fewer than {self.min_pairs}): how well "
                "the judge agrees with the experts is unknown; review more pairs and re-run `goldset judge calibrate`"
            )
        if status == "undefined":
            only = next(iter(o.expert_labels), "no")
            return (
                f"judge agreement unmeasured: the experts labelled all {o.pairs} pairs '{only}', so Cohen's kappa "
                f"cannot show agreement beyond chance (accuracy {o.accuracy or 0:.0%}); review pairs with both outcomes"
            )
        return None


@dataclass(frozen=True)
class CalibrationRow:
    """One row of the agreement table: a group (all, a language, a question type) and its figures. ``kappa`` is
    None when there are too few pairs for it to mean anything (``too_few``) or it is undefined."""

    group: str
    pairs: int
    accuracy: float | None
    kappa: float | None
    too_few: bool
    agreement: JudgeAgreement


@dataclass(frozen=True)
class CalibrationSummary:
    """What a report shows of a dataset's judge calibration (:func:`calibration_summary`)."""

    status: CalibrationStatus
    headline: str
    warning: str | None
    rows: list[CalibrationRow] = field(default_factory=list)
    record: JudgeCalibration | None = None


def calibration_summary(
    source: Manifest | JudgeCalibration | None, min_kappa: float | None = None
) -> CalibrationSummary | None:
    """The judge calibration of a dataset (its manifest, or the record a run carries) for a report: status,
    headline, warning, and one table row overall, per language and per question type; None when the dataset was
    never calibrated. ``min_kappa``: the threshold to judge it by (default: the one it ran with)."""
    cal = source.calibration if isinstance(source, Manifest) else source
    if cal is None:
        return None
    rows = []
    groups = [("all", cal.overall)]
    groups += [(f"language {k}", v) for k, v in sorted(cal.by_language.items())]
    groups += [(f"type {k}", v) for k, v in sorted(cal.by_question_type.items())]
    for name, a in groups:
        too_few = a.pairs < cal.min_pairs
        kappa = None if too_few or len(a.expert_labels) < 2 else a.kappa
        rows.append(CalibrationRow(name, a.pairs, a.accuracy, kappa, too_few, a))
    return CalibrationSummary(cal.status(min_kappa), cal.headline(), cal.warning(min_kappa), rows, cal)


def review_fingerprint(pairs: Iterable[QAPair]) -> str:
    """A hash of every expert decision on ``pairs`` (pair id, decision source, time and verdict): a calibration
    whose fingerprint differs from the dataset's was made before some of its review decisions."""
    decided = sorted(
        (p.id, sorted((d.source, d.at.isoformat(), d.verdict) for d in p.review.decisions))
        for p in pairs
        if p.review.outcome is not None
    )
    return hash_obj(decided)


class Manifest(Record):
    """What a dataset folder holds, written with it: counts, the prompts that made it, the review, and the sha256
    of each content file. Evaluation checks those hashes against the files (a stale manifest is an error)."""

    version: str | None = Field(None, description="Release name (e.g. 'v1'); None for a working copy.")
    created_at: datetime = Field(default_factory=utcnow, description="When the folder was written (UTC).")
    goldset_version: str = Field("", description="The goldset version that wrote it.")
    kb_snapshot_id: str | None = Field(None, description="The KB snapshot the pairs were generated from.")
    n_pairs: int = Field(0, description="Pairs in pairs.jsonl, whatever their status.")
    n_chunks: int = Field(0, description="Chunks in chunks.jsonl (the ones the pairs cite).")
    counts_by_status: dict[str, int] = Field(default_factory=dict, description="pair status → count.")
    counts_by_type: dict[str, int] = Field(default_factory=dict, description="question type → count.")
    counts_by_language: dict[str, int] = Field(default_factory=dict, description="language → count.")
    prompt_hashes: dict[str, str] = Field(default_factory=dict, description="prompt id → content hash.")
    review: ReviewSampleStats | None = Field(None, description="The sample review, once one was done.")
    calibration: JudgeCalibration | None = Field(
        None, description="The latest judge calibration against the experts (goldset judge calibrate), if any."
    )
    files: dict[str, str] = Field(default_factory=dict, description="file name → sha256 of its bytes.")

    # -- set by `goldset release` (absent from working-copy manifests and from manifests written before releases)
    message: str = Field("", description="The release message (`goldset release -m`).")
    previous_version: str | None = Field(None, description="The release this one was diffed against.")
    golden_ids: list[str] = Field(
        default_factory=list, description="Ids of the pairs that form the golden set (accepted, and passed if allowed)."
    )
    unreviewed_ids: list[str] = Field(
        default_factory=list, description="Golden pairs that passed the filters but were not reviewed one by one."
    )
    golden_counts_by_type: dict[str, int] = Field(default_factory=dict, description="Golden pairs per type.")
    golden_counts_by_language: dict[str, int] = Field(
        default_factory=dict, description="Golden pairs per language."
    )
    n_documents: int = Field(0, description="Documents in the release's corpus (corpus/<doc_id>.jsonl shards).")
    golden_rule: str | None = Field(None, description="versioning.golden when the release was made.")

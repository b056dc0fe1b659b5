"""The ``review`` section of goldset.yaml: the expert-review sample, the estimate and the Label Studio project.

An entry point reads it from its context: ``Context.of(ws, review={...}).section(ReviewSettings)``.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

Dimension = Literal["question_type", "language", "doc"]
DEFAULT_STRATA: tuple[Dimension, ...] = ("question_type", "language", "doc")


class LabelStudioSettings(BaseModel):
    """Where the review project lives. The API key is never here: it is read from the variable ``api_key_env``
    names (environment, then the workspace's ``.env``)."""

    model_config = ConfigDict(extra="forbid")

    url: str | None = Field(
        None, description="Label Studio's address; unset: the LABEL_STUDIO_URL variable (environment or .env)."
    )
    api_key_env: str = Field(
        "LABEL_STUDIO_API_KEY", description="NAME of the variable holding the API token (legacy token or a PAT)."
    )
    project_title: str = Field("goldset review", description="Project to create, or reuse when one has this title.")
    project_id: int | None = Field(None, description="Use this project instead of finding one by title.")
    config_file: str = Field(
        "labeling/review.xml",
        description="Labeling config (relative to the workspace); results are checked against it.",
    )
    guidelines_dir: str = Field(
        "labeling/guidelines",
        description="Reviewer guidelines, one <language>.html per language; those of the dataset's languages become "
        "the project's instructions.",
    )
    annotators_per_task: int = Field(
        1, ge=1, le=10, description="Annotations wanted per task (Label Studio's overlap); 2+ measures agreement."
    )
    batch_size: int = Field(500, ge=1, le=10000, description="Tasks per import request.")
    timeout_s: float = Field(60.0, gt=0, description="Seconds per request to Label Studio.")


class CalibrationSettings(BaseModel):
    """How the groundedness judge is compared with the experts (``goldset judge calibrate``) and when a release
    warns about it."""

    model_config = ConfigDict(extra="forbid")

    min_kappa: float = Field(
        0.6,
        ge=-1,
        le=1,
        description="Cohen's kappa (judge vs. experts) a release expects; below it the release says so. 0.6 is where "
        "'substantial' agreement starts on Landis & Koch's (1977) scale (0.41-0.60 is only 'moderate').",
    )
    min_pairs: int = Field(
        10,
        ge=2,
        description="Fewest expert-labelled pairs for which a kappa is shown as a figure (overall, per language, "
        "per question type); with fewer, the output says the figure is too uncertain instead.",
    )
    criterion: str = Field(
        "answer_supported",
        description="The review criterion (its value in the labeling config) saying the answer is fully supported "
        "by the document: the expert's groundedness label of answerable pairs.",
    )
    unanswerable_criterion: str = Field(
        "type_right",
        description="The criterion that says an unanswerable pair really is unanswerable (the documents do not "
        "answer it): the expert's label for those pairs, whose judge verdict is inverted.",
    )


class ReviewSettings(BaseModel):
    """How the expert-review sample is drawn, how its results are read, and where it is reviewed."""

    section: ClassVar[str] = "review"

    model_config = ConfigDict(extra="forbid")

    fraction: float = Field(
        0.15,
        gt=0,
        le=1,
        description="Share of the passed pairs drawn for expert review (0.15-0.20 recommended).",
    )
    seed: int = Field(0, description="Seeds the sample, so the same pairs are drawn again.")
    random_share: float = Field(
        0.5,
        ge=0,
        le=1,
        description="Share of the sample drawn uniformly at random within strata (the part the quality estimate "
        "rests on; at least one pair when above 0); the rest goes to the riskiest pairs, and to the random part when "
        "fewer pairs are risky. The strata are fitted to this part, never the other way round.",
    )
    strata: list[Dimension] = Field(
        default_factory=lambda: list(DEFAULT_STRATA),
        description="What a stratum is made of, finest first: question_type, language, doc (the first evidence "
        "document). Fitted to the random part: strata too small for min_random_per_stratum draws are pooled "
        "(<key>|other), and dimensions dropped from the last one if that is not enough.",
    )
    min_random_per_stratum: int = Field(
        2,
        ge=1,
        description="Random draws each stratum should get; the strata are coarsened until the random part can give "
        "them that (so the estimate speaks for every pair outside the risk part).",
    )
    borderline_margin: float = Field(
        0.1,
        ge=0,
        le=1,
        description="A passed check whose score is within this of its threshold counts as a risk (borderline).",
    )
    confidence: float = Field(0.95, gt=0.5, lt=1, description="Confidence level of the Wilson intervals.")
    edits_count_as_accepted: bool = Field(
        False,
        description="Count pairs an expert had to edit as acceptable in the estimate (default: only pairs accepted "
        "as they were count; an unreviewed pair like an edited one would have gone out with its flaw).",
    )
    label_studio: LabelStudioSettings = Field(
        default_factory=LabelStudioSettings, description="The Label Studio server and project."
    )
    calibration: CalibrationSettings = Field(
        default_factory=CalibrationSettings,
        description="Judge calibration against the experts' decisions (goldset judge calibrate).",
    )

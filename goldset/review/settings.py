"""The ``review`` section of goldset.yaml."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ReviewSettings(BaseModel):
    """How the expert-review sample is drawn."""

    model_config = ConfigDict(extra="forbid")

    fraction: float = Field(
        0.15,
        gt=0,
        le=1,
        description="Share of the passed pairs drawn for expert review (0.15-0.20 recommended).",
    )
    seed: int = Field(0, description="Seeds the sample, so the same pairs are drawn again.")

"""The ``filter`` section of goldset.yaml: which checks run and their thresholds.

```yaml
filter:
  checks:
    verbatim: {max_containment: 0.6}
    duplicate: {threshold: 0.85}
    groundedness: {enabled: false}
```

Every check has defaults, so a missing entry means "enabled with default thresholds". An unknown check name or
an invalid threshold is a ConfigError before any work is done.
"""

from __future__ import annotations

from typing import Any, ClassVar, overload

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from goldset.filters.base import CheckSettings, CheckSpec, S


class CopyJudgeSettings(BaseModel):
    """The ``filter.copy_judge`` section: the LLM judge deciding the verbatim check's borderline band
    (:mod:`goldset.filters.copy_judge`)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool | None = Field(
        None,
        description="None (default): on when a judge endpoint is configured and the verbatim check runs; true: "
        "required (no endpoint is an error); false: off, the band is decided lexically.",
    )
    borderline: float = Field(
        0.1,
        ge=0,
        le=0.5,
        description="The band the judge decides: pairs whose verbatim margin (the highest measure minus its "
        "threshold) lies in [-borderline, +borderline); 0 asks about no pair.",
    )
    max_source_chars: int = Field(12000, ge=500, description="Passages longer than this are cut (prompt size).")


class FilterSettings(BaseModel):
    """The ``filter`` section: per-check settings (validated by each check's own model) and report options.

    Defined here, next to the checks, and composed into :class:`goldset.config.Settings`; this module must not
    import :mod:`goldset.config` (the config module imports it).
    """

    section: ClassVar[str] = "filter"

    model_config = ConfigDict(extra="forbid")

    checks: dict[str, CheckSettings] = Field(
        default_factory=dict, description="Settings per check name; a missing check runs with its defaults."
    )
    examples: int = Field(3, ge=0, description="Failure examples per check in the report.")
    kb_context_chunks: int = Field(
        3, ge=0, description="For unanswerable pairs, how many related KB chunks the judge also sees."
    )
    copy_judge: CopyJudgeSettings = Field(
        default_factory=CopyJudgeSettings,
        description="The judge deciding the verbatim check's borderline band (a judge endpoint needed).",
    )
    judge_rejected: bool = Field(
        False,
        description="Also ask the LLM judges (groundedness, duplicate judge) about pairs a cheaper check, "
        "generation or an expert already rejected (default: no call is made on such a pair).",
    )

    workers: int | None = Field(
        None,
        ge=1,
        description="Processes computing the pair checks (1: in this process; default: up to 2, as many as there "
        "are CPUs, when at least 2,000 verdicts are to be checked or made; needs the 'fork' start method, else 1). "
        "The verdicts do not depend on it.",
    )

    @field_validator("checks", mode="before")
    @classmethod
    def _parse_checks(cls, value: Any) -> dict[str, CheckSettings]:
        from goldset.filters.registry import CHECKS, unknown_check

        value = value or {}
        if not isinstance(value, dict):
            raise ValueError("must be a mapping of check name to its settings")
        problem = unknown_check(value)
        if problem is not None:
            raise ValueError(problem)
        parsed: dict[str, CheckSettings] = {}
        for name, spec in CHECKS.items():
            raw = value.get(name)
            if isinstance(raw, CheckSettings):
                parsed[name] = raw
                continue
            if isinstance(raw, str) and raw.lower() in ("true", "false"):  # from an environment variable
                raw = raw.lower() == "true"
            if isinstance(raw, bool):  # `verbatim: false` as a shorthand
                raw = {"enabled": raw}
            if raw is not None and not isinstance(raw, dict):
                raise ValueError(f"{name}: expected a mapping of thresholds (or true/false)")
            try:
                parsed[name] = spec.settings_model.model_validate(raw or {})
            except ValidationError as exc:
                err = exc.errors()[0]
                loc = ".".join(str(p) for p in err.get("loc", ()))
                msg = "unknown setting; check its spelling" if err.get("type") == "extra_forbidden" else err["msg"]
                raise ValueError(f"{name}.{loc}: {msg}" if loc else f"{name}: {msg}") from None
        return parsed

    @overload
    def for_check(self, check: CheckSpec[S]) -> S: ...
    @overload
    def for_check(self, check: str) -> CheckSettings: ...

    def for_check(self, check: CheckSpec[Any] | str) -> CheckSettings:
        """The settings of one check (its defaults when goldset.yaml says nothing), typed when given its spec."""
        from goldset.filters.registry import get

        spec = get(check) if isinstance(check, str) else check
        got = self.checks.get(spec.name)
        return got if isinstance(got, spec.settings_model) else spec.settings_model()

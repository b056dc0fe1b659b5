"""The checks, by name, in the order the pipeline runs them (cheap lexical checks first, the LLM judge last)."""

from __future__ import annotations

from typing import Any

from goldset.filters import (
    answer_present,
    duplicates,
    evidence,
    groundedness,
    leakage,
    length,
    question_form,
    question_overlap,
    self_contained,
    type_plausible,
    verbatim,
)
from goldset.filters.base import CheckSpec

#: name -> spec; each spec is typed by its own settings model, so the mapping holds ``CheckSpec[Any]``.
CHECKS: dict[str, CheckSpec[Any]] = {
    m.SPEC.name: m.SPEC
    for m in (
        evidence,
        answer_present,
        length,
        question_form,
        self_contained,
        type_plausible,
        leakage,
        verbatim,
        question_overlap,
        duplicates,
        groundedness,
    )
}


def get(name: str) -> CheckSpec[Any]:
    """The spec of a check by name; an unknown name is a ConfigError listing the known ones."""
    from goldset.errors import ConfigError

    try:
        return CHECKS[name]
    except KeyError:
        raise ConfigError(f"unknown check {name!r}; known checks: {', '.join(CHECKS)}") from None

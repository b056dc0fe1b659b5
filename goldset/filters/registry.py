"""The checks, by name, in the order the pipeline runs them (cheap lexical checks first, the LLM judge last)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from goldset.filters import (
    answer_present,
    closed_book,
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
        closed_book,
    )
}


def unknown_check(names: Iterable[str]) -> str | None:
    """The one message about check names the registry does not know (the first of them), or None when every name is
    known. goldset.yaml's ``filter.checks``, ``run_filters(checks=...)`` and ``goldset filter --check`` all use it."""
    unknown = next((n for n in names if n not in CHECKS), None)
    return None if unknown is None else f"unknown check {unknown!r}; known checks: {', '.join(CHECKS)}"


def get(name: str) -> CheckSpec[Any]:
    """The spec of a check by name; an unknown name is a ConfigError listing the known ones (:func:`unknown_check`)."""
    from goldset.errors import ConfigError

    problem = unknown_check([name])
    if problem is not None:
        raise ConfigError(problem)
    return CHECKS[name]

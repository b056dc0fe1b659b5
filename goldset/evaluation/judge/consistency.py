"""Judge self-consistency: every verdict of the evaluation judge checked against the evidence it cites.

A judge is a model, and models are wrong in ways a program can see. These checks cost no call and run on every
reply; what they find is counted per run (``RunSummary.judge_consistency``, the report's "judge self-consistency"):

``supported_quotes``
    A claim the judge marks *supported* counts as supported only when it names a context it read and its quote is
    found in that context (the matcher's token sequences: :func:`goldset.evaluation.matcher.canonical`, so case,
    punctuation, whitespace and Unicode width do not matter). Otherwise it counts as *not found*: a judge whose
    quotes are found nowhere does not score faithfulness 1.0.
``key_points``
    A claim (key point) of the reference the judge lists for completeness counts only when it is found in the
    reference: more than :data:`POINT_MIN_SHARE` of its content words (:func:`goldset.filters.textsim.content_units`)
    occur there. A judge that writes the system answer's own claims as the reference's does not score a non-answer
    1.0; a sample left with no point of the reference has its completeness failed (left out, counted).
``reverse_questions``
    With an embedding model, a relevance reply must carry at least one usable reverse question (two or more word
    tokens with a letter: not ``""``, not ``"2"``); junk ones are dropped, and a reply left with none has its
    ``answer_relevancy_embedding`` failed (left out, counted), not silently missing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from goldset.evaluation.matcher import canonical
from goldset.filters.textsim import content_units
from goldset.text import tokenize

SUPPORTED_QUOTES = "supported_quotes"
KEY_POINTS = "key_points"
REVERSE_QUESTIONS = "reverse_questions"

#: What each check counts, and what is done with the verdicts it catches (the report and the notes say it).
CHECKS: dict[str, tuple[str, str]] = {
    SUPPORTED_QUOTES: (
        "claims the judge marked supported",
        "quote not found in the context it names: counted as not found",
    ),
    KEY_POINTS: (
        "key points the judge listed for completeness",
        "not found in the reference: not counted (a sample left with none: completeness failed)",
    ),
    REVERSE_QUESTIONS: (
        "relevance replies asked for reverse questions",
        "no usable reverse question (empty, or junk such as a bare number): answer_relevancy_embedding failed",
    ),
}

#: A key point is the reference's when the reference holds more than this share of its content words ("The answer
#: is 3." shares one of its two, the 3, with "Python 3.11 or newer.": not the reference's).
POINT_MIN_SHARE = 0.5


def quote_found(quote: str, context: str) -> bool:
    """The quote's tokens occur, in order and on token boundaries, in the context (an empty quote is not found)."""
    q = canonical(quote)
    return bool(q) and q in canonical(context)


def point_in_reference(point: str, reference_units: frozenset[str]) -> bool:
    """More than :data:`POINT_MIN_SHARE` of the point's content words are in the reference's (``content_units``)."""
    units = content_units(point)
    if not units:
        return False
    return len(units & reference_units) > POINT_MIN_SHARE * len(units)


def usable_question(text: str) -> bool:
    """A reverse question worth embedding: two or more word tokens, one with a letter (not ``"2"``, not ``"?"``)."""
    tokens = tokenize(text)
    return len(tokens) >= 2 and any(ch.isalpha() for t in tokens for ch in t)


def rates(counts: Iterable[Mapping[str, tuple[int, int]]]) -> dict[str, tuple[int, int]]:
    """Per check, (verdicts checked, verdicts caught) summed over the samples' counts."""
    out: dict[str, tuple[int, int]] = {}
    for per_sample in counts:
        for name, (checked, caught) in per_sample.items():
            a, b = out.get(name, (0, 0))
            out[name] = (a + checked, b + caught)
    return {name: out[name] for name in CHECKS if name in out}


def note(totals: Mapping[str, tuple[int, int]]) -> str | None:
    """One line for the run's notes when a check caught something, else None."""
    parts = []
    for name, (checked, caught) in totals.items():
        if caught:
            what, effect = CHECKS[name]
            parts.append(f"{caught} of {checked} {what} ({caught / checked:.0%}): {effect}")
    if not parts:
        return None
    return "judge self-consistency: " + "; ".join(parts)

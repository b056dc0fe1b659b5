"""The verbatim check on hand-written copies, light edits and paraphrases (tests/fixtures/filters/copy_cases.jsonl)."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

from goldset.filters import verbatim
from tests.helpers.filter_data import FIXTURES, fixture_chunks, pair

CHUNKS = fixture_chunks()
CASES = [json.loads(line) for line in (FIXTURES / "copy_cases.jsonl").read_text(encoding="utf-8").splitlines()]
S = verbatim.Settings()


def _case(case_id: str) -> dict:
    return next(c for c in CASES if c["id"] == case_id)


def _check(case: dict, question: str | None = None) -> verbatim.CheckResult:
    p = pair(case["id"], question or case["question"], case["answer"], chunks=tuple(case["chunks"]))
    return verbatim.check(p, CHUNKS, S)


def test_the_fixture_covers_both_languages_and_every_kind() -> None:
    kinds = {(c["id"][:2], c["kind"]) for c in CASES}
    assert kinds == {(lang, k) for lang in ("en", "zh") for k in ("copy", "light_edit", "paraphrase")}
    assert sum(1 for c in CASES if c["kind"] == "copy" and len(c["chunks"]) > 1) >= 4
    assert all(cid in CHUNKS for c in CASES for cid in c["chunks"])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_copies_light_edits_and_paraphrases(lang: str) -> None:
    """Targets: every verbatim copy caught, ≥ 90% of light edits caught, ≥ 95% of good paraphrases passing."""
    right: dict[str, list[bool]] = defaultdict(list)
    for case in CASES:
        if case["id"][:2] == lang:
            right[case["kind"]].append(_check(case).passed is (case["kind"] == "paraphrase"))
    rates = {kind: sum(ok) / len(ok) for kind, ok in right.items()}
    assert rates["copy"] == 1.0, rates
    assert rates["light_edit"] >= 0.9, rates
    assert rates["paraphrase"] >= 0.95, rates


def test_a_copy_stitched_from_three_chunks_is_measured_across_them() -> None:
    case = _case("en-copy-10")
    assert len(case["chunks"]) == 3
    res = _check(case)
    assert not res.passed and "copies the evidence" in res.reason
    # No single chunk holds most of it: measured chunk by chunk, it would pass.
    per_chunk = [verbatim.measure(case["answer"], [CHUNKS[c].text], S, question=case["question"])
                 for c in case["chunks"]]  # fmt: skip
    assert all(m["containment"] < S.max_containment and m["overlap"] < S.max_sentence_overlap for m in per_chunk)


@pytest.mark.parametrize("case_id", ["en-edit-6", "zh-edit-1", "en-edit-24", "zh-edit-18"])
def test_swapped_clauses_are_caught_in_any_order(case_id: str) -> None:
    res = _check(_case(case_id))
    assert not res.passed and "in any order" in res.reason, res.reason


def test_words_the_question_asks_with_are_not_copying() -> None:
    """'for a Not Found response' is half of this 10-token answer, but the question said it first."""
    case = _case("en-para-15")
    assert "for a Not Found response" in case["question"] and "for a Not Found response" in case["answer"]
    assert _check(case).passed
    # The same answer to a question that does not say it: the copied run counts.
    other = _check(case, question="Which code is meant for things that are missing?")
    assert not other.passed and "copied run" in other.reason


def test_a_failing_pair_names_the_first_measure_over_its_threshold() -> None:
    res = _check(_case("en-copy-1"))
    assert not res.passed and res.score == 1.0 and "100% similar" in res.reason
    ok = _check(_case("en-para-1"))
    assert ok.passed and all(name in ok.reason for name in verbatim.MEASURES)

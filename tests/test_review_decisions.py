"""Annotations read as decisions (checked against the config), several annotators resolved, kappa by hand."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from goldset.errors import ConfigError
from goldset.review.config import load, parse
from goldset.review.decisions import (
    RULE,
    Problem,
    Vote,
    agreement,
    cohen_kappa,
    fleiss_kappa,
    parse_export,
    read_annotation,
    resolve,
)
from goldset.schema import ReviewDecision

CONFIG = load(Path(__file__).resolve().parents[1] / "labeling" / "review.xml")
TASK = {"id": 7, "project": 3, "data": {"pair_id": "qa-1", "question": "What is X?", "answer": "X is a thing."},
        "meta": {}}  # fmt: skip


def ann(*result: dict[str, Any], aid: int = 11, who: int = 2, at: str = "2026-01-02T03:04:05.123Z",
        cancelled: bool = False) -> dict[str, Any]:  # fmt: skip
    return {"id": aid, "completed_by": who, "result": list(result), "was_cancelled": cancelled, "updated_at": at}


def choice(name: str, *values: str) -> dict[str, Any]:
    return {"from_name": name, "to_name": "question", "type": "choices", "value": {"choices": list(values)}}


def text(name: str, value: str) -> dict[str, Any]:
    to = "answer" if name == "edited_answer" else "question"
    return {"from_name": name, "to_name": to, "type": "textarea", "value": {"text": [value]}}


def read(a: dict[str, Any], task: dict[str, Any] = TASK) -> Vote | Problem | None:
    return read_annotation(task, a, CONFIG, {2: "ann@example.com"})


def test_accept_with_reviewer_time_and_source() -> None:
    same = text("edited_answer", "X is a thing.")
    v = read(ann(choice("verdict", "accept"), choice("criteria", "question_clear"), same))
    assert isinstance(v, Vote)
    d = v.decision
    assert (d.verdict, d.reviewer, d.criteria, d.question, d.answer) == ("accept", "ann@example.com",
                                                                         ["question_clear"], None, None)  # fmt: skip
    assert d.at == datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert d.source == "label-studio:project 3 task 7 annotation 11"


def test_reject_keeps_the_unticked_criteria_and_comment_as_reason() -> None:
    v = read(ann(choice("verdict", "reject"), choice("criteria", "question_clear", "type_right"),
                 text("comment", "the answer adds a claim")))  # fmt: skip
    assert isinstance(v, Vote)
    assert v.decision.reason == "criteria not met: answer_supported, answer_not_copied; the answer adds a claim"


def test_edit_takes_the_corrected_texts_and_an_accept_with_changes_is_an_edit() -> None:
    v = read(ann(choice("verdict", "edit"), text("edited_answer", "X is a small thing.")))
    assert isinstance(v, Vote) and v.decision.verdict == "edit"
    assert (v.decision.question, v.decision.answer) == (None, "X is a small thing.")
    v = read(ann(choice("verdict", "accept"), text("edited_question", "What is X exactly?")))
    assert isinstance(v, Vote) and v.decision.verdict == "edit" and v.decision.question == "What is X exactly?"
    assert "counted as edit" in v.note
    v = read(ann(choice("verdict", "edit"), text("edited_question", "What is X?")))
    assert isinstance(v, Vote) and v.decision.verdict == "accept" and "without any change" in v.note


def test_skips_change_nothing_and_results_not_in_the_config_are_problems() -> None:
    assert read(ann(cancelled=True)) is None
    bad_choice = read(ann(choice("verdict", "maybe")))
    assert isinstance(bad_choice, Problem) and "'maybe' is not one of its choices" in str(bad_choice)
    unknown = read(ann(choice("verdict", "accept"), {"from_name": "quality", "to_name": "answer", "type": "rating",
                                                     "value": {"rating": 3}}))  # fmt: skip
    assert isinstance(unknown, Problem) and "'quality', which is not a control" in str(unknown)
    wrong_type = read(ann({**choice("verdict", "accept"), "type": "textarea"}))
    assert isinstance(wrong_type, Problem) and "of type 'textarea'" in str(wrong_type)
    no_verdict = read(ann(choice("criteria", "question_clear")))
    assert isinstance(no_verdict, Problem) and "no verdict" in str(no_verdict)
    two = read(ann(choice("verdict", "accept", "reject")))
    assert isinstance(two, Problem) and "single-choice" in str(two)


def test_an_annotation_older_than_the_tasks_text_is_a_problem() -> None:
    task = {**TASK, "meta": {"goldset_text_at": "2026-01-02T03:04:06Z"}}
    stale = read(ann(choice("verdict", "accept"), at="2026-01-02T03:04:05.9Z"), task)
    assert isinstance(stale, Problem) and "earlier text" in str(stale)
    fresh = read(ann(choice("verdict", "accept"), at="2026-01-02T03:04:07Z"), task)
    assert isinstance(fresh, Vote)


def d(reviewer: str, verdict: str, minute: int, answer: str | None = None) -> ReviewDecision:
    return ReviewDecision(reviewer=reviewer, verdict=verdict, at=datetime(2026, 1, 1, 0, minute, tzinfo=UTC),
                          answer=answer, source=f"label-studio:project 1 task 1 annotation {minute}")  # fmt: skip


def test_resolution_rule_majority_then_caution_then_latest() -> None:
    assert "tie goes to the more cautious" in RULE
    r = resolve([d("a", "accept", 1), d("b", "accept", 2), d("c", "reject", 3)])
    assert r.decision.verdict == "accept" and r.disagreement
    assert r.votes == ["a:accept", "b:accept", "c:reject"] and r.decision.resolved_from == r.votes
    assert resolve([d("a", "accept", 1), d("b", "reject", 2)]).decision.verdict == "reject"
    assert resolve([d("a", "accept", 1), d("b", "edit", 2, "new")]).decision.verdict == "edit"
    tie_edits = resolve([d("a", "edit", 1, "first"), d("b", "edit", 5, "second")])
    assert tie_edits.decision.answer == "second" and not tie_edits.disagreement
    # one annotator changing their mind: only their latest annotation counts
    again = resolve([d("a", "reject", 1), d("a", "accept", 9), d("b", "accept", 3)])
    assert again.decision.verdict == "accept" and again.votes == ["a:accept", "b:accept"]


def test_cohen_kappa_by_hand() -> None:
    # 50 items: both yes 20, a yes/b no 5, a no/b yes 10, both no 15 -> po 0.7, pe 0.5, kappa 0.4
    a = ["y"] * 20 + ["y"] * 5 + ["n"] * 10 + ["n"] * 15
    b = ["y"] * 20 + ["n"] * 5 + ["y"] * 10 + ["n"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert cohen_kappa(["accept", "reject"], ["accept", "reject"]) == pytest.approx(1.0)
    assert cohen_kappa(["accept"] * 3, ["accept"] * 3) is None, "undefined: chance agreement is 1"
    assert cohen_kappa([], []) is None


def test_fleiss_kappa_by_hand() -> None:
    # Fleiss (1971) worked example as reproduced on Wikipedia: 10 subjects, 14 raters, 5 categories -> 0.210
    rows = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
            [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]  # fmt: skip
    table = [{str(j): c for j, c in enumerate(row) if c} for row in rows]
    assert fleiss_kappa(table) == pytest.approx(0.2099, abs=1e-4)
    # two raters: 3 items agree (accept, accept, reject), 1 disagrees -> by hand
    two = [{"accept": 2}, {"accept": 2}, {"reject": 2}, {"accept": 1, "reject": 1}]
    p_bar = (1 + 1 + 1 + 0) / 4
    p_e = (5 / 8) ** 2 + (3 / 8) ** 2
    assert fleiss_kappa(two) == pytest.approx((p_bar - p_e) / (1 - p_e))
    with pytest.raises(ValueError):
        fleiss_kappa([{"a": 2}, {"a": 3}])


def test_agreement_over_items_with_several_annotators() -> None:
    verdicts = {"p1": {"a": "accept", "b": "accept"}, "p2": {"a": "reject", "b": "reject"},
                "p3": {"a": "accept", "b": "reject"}, "p4": {"a": "accept"}}  # fmt: skip
    ag = agreement(verdicts)
    assert ag is not None and ag.fleiss_items == 3 and ag.raters_per_item == 2
    k, n = ag.cohen[("a", "b")]
    assert n == 3 and k == pytest.approx(cohen_kappa(["accept", "reject", "accept"], ["accept", "reject", "reject"]))
    assert agreement({"p": {"a": "accept"}}) is None


def test_a_choice_is_read_by_its_alias_its_displayed_text_or_another_case() -> None:
    """Label Studio's UI stores a Choice's alias; a script posting results often sends the text the UI shows
    ("Accept"), or another case of either. All name one choice, stored as the alias."""
    for given in ("accept", "Accept", "ACCEPT", " accept "):
        v = read(ann(choice("verdict", given)))
        assert isinstance(v, Vote) and v.decision.verdict == "accept", given
    edit = read(ann(choice("verdict", "Edit (corrected below)"), text("edited_answer", "X is a small thing.")))
    assert isinstance(edit, Vote) and edit.decision.verdict == "edit"
    rej = read(ann(choice("verdict", "Reject"), choice("criteria", "Question is clear and unambiguous", "TYPE_RIGHT")))
    assert isinstance(rej, Vote) and rej.decision.criteria == ["question_clear", "type_right"]
    assert rej.decision.reason == "criteria not met: answer_supported, answer_not_copied"
    bad = read(ann(choice("verdict", "Maybe")))
    assert isinstance(bad, Problem) and bad.pair_id == "qa-1"
    assert str(bad).startswith("qa-1: ") and "'Maybe' is not one of its choices: accept ('Accept')" in str(bad)
    assert "task 7, annotation 11 by ann@example.com" in str(bad)


def test_a_config_without_aliases_takes_its_values_in_any_case() -> None:
    xml = """<View><Text name="question" value="$question"/><Text name="answer" value="$answer"/>
      <Choices name="verdict" toName="question"><Choice value="Accept"/><Choice value="Reject"/>
      <Choice value="Edit"/></Choices></View>"""
    cfg = parse(xml, "ui.xml")
    cfg.check_for_goldset()
    for given, verdict in (("Accept", "accept"), ("accept", "accept"), ("REJECT", "reject")):
        v = read_annotation(TASK, ann(choice("verdict", given)), cfg, {})
        assert isinstance(v, Vote) and v.decision.verdict == verdict, given
    ambiguous = parse(xml.replace('<Choice value="Edit"/>', '<Choice value="Edit"/><Choice value="ACCEPT"/>'), "a")
    with pytest.raises(ConfigError, match="no choice 'accept'"):
        ambiguous.check_for_goldset()


def test_each_reviewers_latest_annotation_decides_what_is_a_problem() -> None:
    """A reviewer's unreadable annotation that their later one replaced is only a note (else every later pull
    would fail on it); a vote that their later unreadable annotation replaced is not applied."""
    fixed = {**TASK, "annotations": [ann(choice("verdict", "maybe"), aid=1, at="2026-01-02T03:00:00Z"),
                                     ann(choice("verdict", "accept"), aid=2, at="2026-01-02T04:00:00Z")]}  # fmt: skip
    parsed = parse_export([fixed], CONFIG, {2: "ann@example.com"})
    assert not parsed.problems and [v.decision.verdict for v in parsed.votes] == ["accept"]
    assert any("superseded" in n for n in parsed.notes)
    broken = {**TASK, "annotations": [ann(choice("verdict", "accept"), aid=1, at="2026-01-02T03:00:00Z"),
                                      ann(choice("verdict", "maybe"), aid=2, at="2026-01-02T04:00:00Z")]}  # fmt: skip
    parsed = parse_export([broken], CONFIG, {2: "ann@example.com"})
    assert not parsed.votes and [p.pair_id for p in parsed.problems] == ["qa-1"]
    other = {**TASK, "annotations": [ann(choice("verdict", "accept"), aid=1, who=3, at="2026-01-02T03:00:00Z"),
                                     ann(choice("verdict", "maybe"), aid=2, at="2026-01-02T04:00:00Z")]}  # fmt: skip
    parsed = parse_export([other], CONFIG, {2: "ann@example.com"})
    assert len(parsed.votes) == 1 and len(parsed.problems) == 1, "another reviewer's vote still counts"

"""Builders for the judge-calibration tests (no tests here): expert decisions as a Label Studio JSON export, applied
with goldset's own import (``goldset review import``), so pairs carry the decisions, revisions and outcomes a real
review leaves.

A decision is ``Decision(verdict, criteria, answer=..., question=...)``: ``criteria`` are the aliases ticked in
``labeling/review.xml`` (``ALL`` = every one); ``answer`` / ``question`` are the reviewer's corrected texts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from goldset.io import read_jsonl
from goldset.review import import_results
from goldset.schema import QAPair
from goldset.workspace import Workspace

ALL = ("question_clear", "answer_supported", "answer_not_copied", "type_right")


@dataclass(frozen=True)
class Decision:
    verdict: str
    criteria: tuple[str, ...] = ()
    answer: str | None = None
    question: str | None = None
    reviewer: int = 1


def _choice(name: str, *values: str) -> dict[str, Any]:
    return {"from_name": name, "to_name": "question", "type": "choices", "value": {"choices": list(values)}}


def _text(name: str, value: str) -> dict[str, Any]:
    to = "answer" if name == "edited_answer" else "question"
    return {"from_name": name, "to_name": to, "type": "textarea", "value": {"text": [value]}}


def export_tasks(pairs: dict[str, QAPair], decisions: dict[str, Decision | list[Decision]]) -> list[dict[str, Any]]:
    """A Label Studio JSON export: one task per pair in ``decisions`` showing its current text, one annotation per
    decision (several: several annotators)."""
    tasks = []
    for n, (pid, got) in enumerate(sorted(decisions.items()), start=1):
        pair = pairs[pid]
        annotations = []
        for k, d in enumerate(got if isinstance(got, list) else [got]):
            result = [_choice("verdict", d.verdict)]
            if d.criteria:
                result.append(_choice("criteria", *d.criteria))
            if d.question is not None:
                result.append(_text("edited_question", d.question))
            if d.answer is not None:
                result.append(_text("edited_answer", d.answer))
            annotations.append({
                "id": n * 10 + k, "completed_by": d.reviewer, "result": result, "was_cancelled": False,
                "updated_at": f"2026-01-02T03:{n % 60:02d}:{k:02d}.000Z",
            })  # fmt: skip
        data = {"pair_id": pid, "question": pair.question, "answer": pair.answer}
        tasks.append({"id": n, "project": 1, "data": data, "meta": {}, "annotations": annotations})
    return tasks


def review(ws: Workspace, decisions: dict[str, Decision | list[Decision]], tmp: Path) -> None:
    """Apply ``decisions`` to the workspace's pairs through goldset's import of a Label Studio export."""
    pairs = {p.id: p for p in read_jsonl(ws.pairs_path, QAPair)}
    path = tmp / f"export-{len(list(tmp.glob('export-*.json')))}.json"
    path.write_text(json.dumps(export_tasks(pairs, decisions), ensure_ascii=False), encoding="utf-8")
    report = import_results(path, ws)
    if report.problems:
        raise AssertionError(f"the export did not apply cleanly: {report.problems[:3]}")

"""DeepEval: goldens as a JSON array (``EvaluationDataset().add_goldens_from_json_file(path)`` reads it).

| DeepEval field | goldset field |
|---|---|
| ``input`` | ``question`` |
| ``expected_output`` | ``answer`` |
| ``context`` | ``evidence[].quote``, one per quote (``contexts="chunks"``: each cited chunk's whole text) |
| ``additional_metadata.goldset_id`` | ``id`` |
| ``additional_metadata.question_type`` | ``question_type`` |
| ``additional_metadata.language`` | ``language`` |
| ``additional_metadata.evidence`` | ``evidence[].chunk_id`` / ``doc_id``: one ``{chunk_id, doc_id}`` per context |
| ``additional_metadata.tags`` | ``tags`` |
| ``source_file`` | the documents the evidence cites, comma-separated (for reading; not read back) |

Not carried: ``status``, ``provenance``, ``checks``, ``review``. ``actual_output`` and ``retrieval_context`` are
a system's output, not part of a pair: they are written empty, and ignored on import. Goldens DeepEval wrote
itself (``save_as``) carry no goldset metadata: their rows need ``question_type=`` on import, their language is
detected, their ids computed and their contexts located.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goldset.errors import InputError
from goldset.interop.base import Context, ExportJob, FieldMap, Format, Lost, ReadResult, Row
from goldset.interop.fields import optional_str, read_json_records, reference_contexts, str_list

if TYPE_CHECKING:
    from goldset.schema import QAPair

META = "additional_metadata"
FIELDS = (
    FieldMap("question", "input"),
    FieldMap("answer", "expected_output"),
    FieldMap("evidence[].quote", "context", "one context per quote"),
    FieldMap("evidence[].chunk_id", f"{META}.evidence[].chunk_id", "aligned with context"),
    FieldMap("evidence[].doc_id", f"{META}.evidence[].doc_id", "aligned with context; also source_file"),
    FieldMap("id", f"{META}.goldset_id"),
    FieldMap("question_type", f"{META}.question_type"),
    FieldMap("language", f"{META}.language"),
    FieldMap("tags", f"{META}.tags"),
)
LOST = (
    Lost("status", "not in the format; imported pairs start as candidates"),
    Lost("provenance", "not in the format; imported pairs get source 'import'"),
    Lost("checks", "not in the format; `goldset filter` checks imported pairs again"),
    Lost("review", "not in the format"),
)


def golden(pair: QAPair, job: ExportJob) -> dict[str, Any]:
    """One pair as a DeepEval golden (module docstring)."""
    refs = reference_contexts(pair, job.chunks, job.contexts, job.notes)
    return {
        "input": pair.question,
        "actual_output": None,
        "expected_output": pair.answer,
        "context": [t for t, _, _ in refs] or None,
        "retrieval_context": None,
        "source_file": ", ".join(pair.doc_ids) or None,
        META: {
            "goldset_id": pair.id,
            "question_type": pair.question_type.value,
            "language": pair.language,
            "evidence": [{"chunk_id": c, "doc_id": d} for _, c, d in refs],
            "tags": list(pair.tags),
        },
    }


def write(job: ExportJob, out: Path) -> list[Path]:
    from goldset.io import atomic_write_text

    goldens = [golden(p, job) for p in job.pairs]
    atomic_write_text(out, json.dumps(goldens, ensure_ascii=False, indent=1) + "\n")
    return [out]


def read(path: Path) -> ReadResult:
    """Rows of a DeepEval goldens file: a JSON array (``save_as("json")``) or JSON Lines."""
    rows: list[Row] = []
    outputs = 0
    for where, obj in read_json_records(path, "DeepEval golden"):
        if obj.get("scenario"):
            raise InputError(f"{where}: a conversational golden (scenario/turns); goldset pairs are single-turn")
        meta = obj.get(META) or {}
        if not isinstance(meta, dict):
            raise InputError(f"{where}: {META} must be a JSON object")
        texts = str_list(obj.get("context"), where, "context")
        hints = meta.get("evidence")
        if hints is None:
            hints = [{}] * len(texts)
        if not isinstance(hints, list) or len(hints) != len(texts) or not all(isinstance(h, dict) for h in hints):
            raise InputError(
                f"{where}: {META}.evidence must list one {{chunk_id, doc_id}} object per context item "
                f"({len(texts)} contexts)"
            )
        contexts = [
            Context(t, optional_str(h.get("chunk_id"), where, "chunk_id"),
                    optional_str(h.get("doc_id"), where, "doc_id"))
            for t, h in zip(texts, hints, strict=True)
        ]  # fmt: skip
        if obj.get("actual_output") or obj.get("retrieval_context"):
            outputs += 1
        rows.append(Row(
            where=where,
            question=obj.get("input"),
            answer=obj.get("expected_output"),
            question_type=optional_str(meta.get("question_type"), where, f"{META}.question_type"),
            language=optional_str(meta.get("language"), where, f"{META}.language"),
            id=optional_str(meta.get("goldset_id"), where, f"{META}.goldset_id"),
            contexts=contexts,
            tags=str_list(meta.get("tags"), where, f"{META}.tags"),
        ))  # fmt: skip
    notes = []
    if outputs:
        notes.append(
            f"{outputs} golden(s) also hold actual_output / retrieval_context (a system's output, not part of a "
            "pair): not imported"
        )
    return ReadResult(rows=rows, notes=notes)


FORMAT = Format(
    name="deepeval",
    summary="DeepEval goldens, a JSON array (EvaluationDataset.add_goldens_from_json_file)",
    default_out="deepeval.json",
    fields=FIELDS,
    lost=LOST,
    write=write,
    read=read,
    has_contexts=True,
)

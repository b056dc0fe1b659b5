"""RAGAS: an ``EvaluationDataset`` as JSON Lines (``EvaluationDataset.from_jsonl(path)`` reads it).

One row per pair, the ``SingleTurnSample`` columns:

| RAGAS column | goldset field |
|---|---|
| ``user_input`` | ``question`` |
| ``reference`` | ``answer`` |
| ``reference_contexts`` | each cited chunk's text, once (``contexts="quotes"``: ``evidence[].quote``, one per quote) |
| ``reference_context_ids`` | ``evidence[].chunk_id``, aligned with ``reference_contexts`` |

and four extra columns RAGAS ignores when it loads the file (``SingleTurnSample`` drops unknown keys) but an
import reads back: ``goldset_id`` (``id``), ``question_type`` (RAGAS has no question type: carried here, not
dropped), ``language``, ``reference_doc_ids`` (``evidence[].doc_id``). Not carried: ``status``, ``tags``,
``provenance``, ``checks``, ``review``. A file RAGAS wrote itself (``to_jsonl``) has no extra columns: its rows
need ``question_type=`` on import, their language is detected, their ids computed, their contexts located.

Lines are ASCII JSON (non-ASCII text as ``\\uXXXX`` escapes): ``from_jsonl`` opens the file in the platform's
default encoding, and escaped JSON reads the same in any encoding.

**A run** (:func:`run_rows`): a run's samples as rows with ``response`` (the system's answer),
``retrieved_contexts`` (its contexts' texts, in rank order) and ``retrieved_context_ids`` (their chunk ids when
every context has one), beside the pair's ``user_input`` / ``reference`` / ``reference_contexts``, so RAGAS scores
the same answers goldset scored. Extra columns: ``goldset_id``, ``question_type``, ``language``, ``error`` (a failed
sample: empty response, as goldset scores it) and ``goldset_scores`` (goldset's metric values for the sample, from a
run folder) to compare the two tools sample by sample.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goldset.errors import InputError
from goldset.interop.base import Context, ExportJob, FieldMap, Format, Lost, ReadResult, Row
from goldset.interop.fields import aligned, json_text, optional_str, read_json_records, reference_contexts, str_list

if TYPE_CHECKING:
    from goldset.interop.base import ContextMode
    from goldset.schema import Chunk, QAPair, RunSample, SampleScores

FIELDS = (
    FieldMap("question", "user_input"),
    FieldMap("answer", "reference"),
    FieldMap("evidence[].quote", "reference_contexts", "the cited chunks' texts by default (RAGAS' metrics compare "
             "whole contexts); one per quote with contexts=quotes"),
    FieldMap("evidence[].chunk_id", "reference_context_ids", "aligned with reference_contexts"),
    FieldMap("evidence[].doc_id", "reference_doc_ids", "extra column"),
    FieldMap("id", "goldset_id", "extra column"),
    FieldMap("question_type", "question_type", "extra column: RAGAS has no question type"),
    FieldMap("language", "language", "extra column"),
)
LOST = (
    Lost("status", "not in the format; imported pairs start as candidates"),
    Lost("tags", "not in the format"),
    Lost("provenance", "not in the format; imported pairs get source 'import'"),
    Lost("checks", "not in the format; `goldset filter` checks imported pairs again"),
    Lost("review", "not in the format"),
)


def pair_row(pair: QAPair, chunks: Mapping[str, Chunk], contexts: ContextMode, notes: list[str]) -> dict[str, Any]:
    """One pair as a RAGAS row (module docstring)."""
    refs = reference_contexts(pair, chunks, contexts, notes)
    return {
        "user_input": pair.question,
        "reference": pair.answer,
        "reference_contexts": [t for t, _, _ in refs],
        "reference_context_ids": [c for _, c, _ in refs],
        "reference_doc_ids": [d for _, _, d in refs],
        "goldset_id": pair.id,
        "question_type": pair.question_type.value,
        "language": pair.language,
    }


def write(job: ExportJob, out: Path) -> list[Path]:
    from goldset.io import atomic_write_text

    rows = [pair_row(p, job.chunks, job.contexts, job.notes) for p in job.pairs]
    atomic_write_text(out, json_text(rows, ascii_only=True))
    return [out]


def run_rows(
    samples: Mapping[str, RunSample],
    pairs: Mapping[str, QAPair],
    chunks: Mapping[str, Chunk],
    contexts: ContextMode,
    notes: list[str],
    scores: Mapping[str, SampleScores] | None = None,
) -> list[dict[str, Any]]:
    """A run's samples as RAGAS rows, sorted by pair id (module docstring); every sample's pair must be in
    ``pairs``."""
    rows = []
    for pid in sorted(samples):
        sample, pair = samples[pid], pairs[pid]
        row = pair_row(pair, chunks, contexts, notes)
        ids = [c.chunk_id for c in sample.contexts]
        score = scores.get(pid) if scores is not None else None
        rows.append({
            "user_input": sample.question or pair.question,
            "response": sample.answer,
            "retrieved_contexts": [c.text for c in sample.contexts],
            "retrieved_context_ids": ids if all(ids) else None,
            **{k: v for k, v in row.items() if k != "user_input"},
            "error": sample.error,
            "goldset_scores": dict(score.metrics) if score is not None else None,
        })  # fmt: skip
    return rows


def read(path: Path) -> ReadResult:
    """Rows of a RAGAS JSON Lines file (or a JSON array of the same objects)."""
    rows: list[Row] = []
    notes: list[str] = []
    with_response = 0
    for where, obj in read_json_records(path, "RAGAS sample"):
        if isinstance(obj.get("user_input"), list):
            raise InputError(f"{where}: a multi-turn sample (user_input is a list of messages); goldset pairs are "
                             "single-turn")  # fmt: skip
        texts = str_list(obj.get("reference_contexts"), where, "reference_contexts")
        ids = aligned(texts, obj.get("reference_context_ids"), where, "reference_context_ids")
        docs = aligned(texts, obj.get("reference_doc_ids"), where, "reference_doc_ids")
        if obj.get("response") not in (None, ""):
            with_response += 1
        rows.append(Row(
            where=where,
            question=obj.get("user_input"),
            answer=obj.get("reference"),
            question_type=optional_str(obj.get("question_type"), where, "question_type"),
            language=optional_str(obj.get("language"), where, "language"),
            id=optional_str(obj.get("goldset_id"), where, "goldset_id"),
            contexts=[Context(t, c, d) for t, c, d in zip(texts, ids, docs, strict=True)],
        ))  # fmt: skip
    if with_response:
        notes.append(
            f"{with_response} row(s) also hold a system's response and retrieved contexts: a run, not part of a "
            "pair; only the question, reference and reference contexts were imported"
        )
    return ReadResult(rows=rows, notes=notes)


FORMAT = Format(
    name="ragas",
    summary="RAGAS EvaluationDataset, JSON Lines (EvaluationDataset.from_jsonl)",
    default_out="ragas.jsonl",
    fields=FIELDS,
    lost=LOST,
    write=write,
    read=read,
    has_contexts=True,
    default_contexts="chunks",
)

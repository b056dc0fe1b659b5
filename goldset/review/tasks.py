"""A pair as a Label Studio task: its data, and predictions that pre-fill the reviewer's answer.

The evidence chunks are sent as plain text (``$evidence``, one section per chunk under a ``── document ›
heading`` line, the document with its page or slide when it has them: ``── handbook.pdf, p. 12 › Travel``) and
each evidence quote is highlighted by a prediction region of the ``quote`` Labels control over it. Region offsets
are computed on the exact text sent, in UTF-16 code units (JavaScript string indices, which the web UI uses; they
equal Python indices unless the text has characters outside the BMP, e.g. emoji).
A quote is found verbatim, else with any run of whitespace matching any other, else ignoring case; a quote not
found is listed in the task's meta line instead of highlighted.

The edited_question / edited_answer text areas are pre-filled with the pair's text through the same
prediction, so a reviewer corrects in place. ``text_hash`` in the data identifies what was sent: a push
updates a task whose pair's text (or evidence, or flags) changed since.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from goldset.hashing import hash_obj
from goldset.review.config import EDITED_ANSWER, EDITED_QUESTION, QUOTE, LabelConfig
from goldset.review.labelstudio import MODEL_VERSION
from goldset.schema import Chunk, QAPair

QUOTE_LABEL = "quote"
NO_EVIDENCE = (
    "No evidence: this question is meant to be unanswerable from the documents. "
    "Check that they really do not answer it."
)


def utf16_len(text: str) -> int:
    """Length of ``text`` in UTF-16 code units (a JavaScript string's ``length``)."""
    return len(text.encode("utf-16-le")) // 2


def find_span(text: str, quote: str) -> tuple[int, int] | None:
    """Where ``quote`` is in ``text`` (Python indices): verbatim, then whitespace-insensitive, then ignoring case."""
    quote = quote.strip()
    if not quote:
        return None
    i = text.find(quote)
    if i >= 0:
        return i, i + len(quote)
    pattern = r"\s+".join(re.escape(t) for t in quote.split())
    for flags in (0, re.IGNORECASE):
        m = re.search(pattern, text, flags)
        if m:
            return m.start(), m.end()
    return None


def evidence_view(pair: QAPair, chunks: Mapping[str, Chunk]) -> tuple[str, list[tuple[int, int]], list[str]]:
    """(plain text of the evidence chunks, quote spans in it as Python indices, quotes not found)."""
    if not pair.evidence:
        return NO_EVIDENCE, [], []
    parts: list[str] = []
    spans: list[tuple[int, int]] = []
    missing: list[str] = []
    offset = 0
    for cid in pair.chunk_ids:
        quotes = [e for e in pair.evidence if e.chunk_id == cid]
        chunk = chunks.get(cid)
        if chunk is not None:
            where = " › ".join([chunk.location, *chunk.heading_titles])
            body = chunk.text
        else:
            where = f"{quotes[0].doc_id} (chunk {cid} is no longer in the KB; its quotes follow)"
            body = "\n".join(e.quote for e in quotes)
        head = f"── {where}\n"
        if parts:
            head = "\n\n" + head
        start = offset + len(head)
        for e in quotes:
            span = find_span(body, e.quote)
            if span is None:
                missing.append(e.quote)
            else:
                spans.append((start + span[0], start + span[1]))
        parts.append(head + body)
        offset += len(head) + len(body)
    return "".join(parts), sorted(set(spans)), missing


def flag_lines(pair: QAPair, risk: list[str]) -> str:
    """What the filters said that a reviewer should look at first: flags (failed checks on a passed pair),
    borderline scores, changed chunks. "none" when there is nothing."""
    from goldset.review.sampling import flags_of

    lines = []
    for name in flags_of(pair):
        lines.append(f"⚑ {name}: {pair.checks[name].reason}")
    for r in risk:
        kind, _, what = r.partition(":")
        if kind == "borderline" and what in pair.checks:
            res = pair.checks[what]
            lines.append(f"≈ {what}: close to failing (score {res.score}); {res.reason}")
        elif kind == "changed":
            lines.append("Δ an evidence chunk changed since this pair was generated")
    return "\n".join(lines) or "none"


def task_data(pair: QAPair, chunks: Mapping[str, Chunk]) -> tuple[dict[str, Any], list[tuple[int, int]]]:
    """The task's data (every field of :data:`goldset.review.config.DATA_FIELDS` and ``text_hash``) and the
    quote spans in ``data["evidence"]``."""
    evidence, spans, missing = evidence_view(pair, chunks)
    r = pair.review
    if not r.sampled:
        part = "no (exported outside the sample)"
    else:
        part = "random part" if r.random else ("risk: " + ", ".join(r.risk) if r.risk else "risk part")
    meta = [pair.id, f"type: {pair.question_type.value}", f"language: {pair.language}",
            f"document: {', '.join(pair.doc_ids) or '-'}", f"sampled: {part}"]  # fmt: skip
    if missing:
        meta.append(f"quote not found in its chunk: {missing[0][:60]!r}")
    data: dict[str, Any] = {
        "pair_id": pair.id,
        "question": pair.question,
        "answer": pair.answer,
        "question_type": pair.question_type.value,
        "language": pair.language,
        "evidence": evidence,
        "flags": flag_lines(pair, pair.review.risk),
        "meta": " · ".join(meta),
        "doc": ", ".join(pair.doc_ids) or "-",
    }
    data["text_hash"] = hash_obj(data)
    return data, spans


def predictions(data: Mapping[str, Any], spans: list[tuple[int, int]], config: LabelConfig) -> list[dict[str, Any]]:
    """One prediction: the text areas pre-filled with the pair's text, the quotes highlighted. Only controls the
    config has are filled."""
    result: list[dict[str, Any]] = []
    for name, key in ((EDITED_QUESTION, "question"), (EDITED_ANSWER, "answer")):
        c = config.controls.get(name)
        if c is not None:
            result.append({"id": f"gs-{name}", "from_name": name, "to_name": c.to_names[0], "type": "textarea",
                           "value": {"text": [data[key]]}})  # fmt: skip
    quote = config.controls.get(QUOTE)
    # Highlights only where the quote control labels the object that shows $evidence (the spans are its).
    if quote is not None and quote.tag == "Labels" and QUOTE_LABEL in quote.values \
            and config.shows.get(quote.to_names[0]) == "evidence":
        text = data["evidence"]
        for i, (s, e) in enumerate(spans):
            result.append({
                "id": f"gs-quote-{i}", "from_name": QUOTE, "to_name": quote.to_names[0], "type": "labels",
                "value": {"start": utf16_len(text[:s]), "end": utf16_len(text[:e]), "text": text[s:e],
                          "labels": [QUOTE_LABEL]},
            })  # fmt: skip
    return [{"model_version": MODEL_VERSION, "score": 1.0, "result": result}]


def task_of(pair: QAPair, chunks: Mapping[str, Chunk], config: LabelConfig) -> dict[str, Any]:
    """A Label Studio import item: ``{"data": ..., "predictions": [...]}``."""
    data, spans = task_data(pair, chunks)
    return {"data": data, "predictions": predictions(data, spans, config)}

"""Builders shared by the filter tests (no tests here): fixture chunks, pairs and a workspace on disk."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from goldset.hashing import sha256_hex
from goldset.io import write_jsonl
from goldset.schema import Chunk, Evidence, QAPair
from goldset.text import count_tokens, detect_language, normalize
from goldset.workspace import Workspace

FIXTURES = Path(__file__).parent / "fixtures" / "filters"


def chunk(cid: str, text: str, doc_id: str | None = None) -> Chunk:
    return Chunk(
        id=cid,
        doc_id=doc_id or f"{cid.rsplit('-', 1)[0]}.md",
        text=text,
        content_hash=sha256_hex(normalize(text)),
        raw_hash=sha256_hex(text),
        language=detect_language(text),
        n_tokens=count_tokens(text),
        char_start=0,
        char_end=len(text),
    )


def fixture_chunks() -> dict[str, Chunk]:
    raw = json.loads((FIXTURES / "chunks.json").read_text(encoding="utf-8"))
    return {cid: chunk(cid, text) for cid, text in raw.items()}


def pair(
    pid: str,
    question: str,
    answer: str,
    *,
    qtype: str = "factual",
    chunks: tuple[str, ...] = ("en-body-1",),
    quote: str = "request body",
    **extra: Any,
) -> QAPair:
    evidence = [] if qtype == "unanswerable" else [
        Evidence(chunk_id=c, doc_id=f"{c.rsplit('-', 1)[0]}.md", quote=quote) for c in chunks
    ]  # fmt: skip
    return QAPair(
        id=pid,
        question=question,
        answer=answer,
        question_type=qtype,
        language=detect_language(question + answer),
        evidence=evidence,
        **extra,
    )


def make_workspace(
    root: Path, pairs: list[QAPair], config: str = "", chunks: dict[str, Chunk] | None = None
) -> Workspace:
    """A workspace folder: goldset.yaml, the KB snapshot's chunks and data/pairs.jsonl."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "goldset.yaml").write_text(config or "kb:\n  path: docs\n", encoding="utf-8")
    ws = Workspace(root)
    write_jsonl(ws.kb_dir / "chunks.jsonl", list((chunks or fixture_chunks()).values()))
    write_jsonl(ws.pairs_path, pairs)
    return ws

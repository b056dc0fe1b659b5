"""Builders shared by the filter tests (no tests here): fixture chunks, pairs and a workspace on disk."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from goldset.hashing import sha256_hex
from goldset.io import write_jsonl
from goldset.schema import Chunk, Evidence, QAPair
from goldset.text import count_tokens, detect_language, normalize
from goldset.workspace import Workspace

FIXTURES = Path(__file__).parents[1] / "fixtures" / "filters"


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


@cache
def _raw_chunks() -> dict[str, str]:
    return json.loads((FIXTURES / "chunks.json").read_text(encoding="utf-8"))


def fixture_chunks() -> dict[str, Chunk]:
    return {cid: chunk(cid, text) for cid, text in _raw_chunks().items()}


def fixture_quote(cid: str) -> str:
    """A real quote of a fixture chunk (its first eight words), or a stand-in for a chunk that is not one."""
    text = _raw_chunks().get(cid)
    return " ".join(text.split()[:8]) if text else "request body"


def pair(
    pid: str,
    question: str,
    answer: str,
    *,
    qtype: str = "factual",
    chunks: tuple[str, ...] = ("en-body-1",),
    quote: str | None = None,
    **extra: Any,
) -> QAPair:
    """A pair citing fixture ``chunks`` with a real quote of each (``quote``: the same quote for every chunk)."""
    evidence = [] if qtype == "unanswerable" else [
        Evidence(chunk_id=c, doc_id=f"{c.rsplit('-', 1)[0]}.md", quote=quote or fixture_quote(c)) for c in chunks
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


# Answers to the question about a body on GET, over chunk en-body-2: a copy, a light edit, a paraphrase.
COPY = (
    "Sending a body with a GET request has an undefined behavior in the specifications, nevertheless, it is "
    "supported by FastAPI, only for very complex/extreme use cases."
)
# The same sentence with a few words swapped or changed.
SWAPPED = (
    "Sending a body with a GET request has undefined behaviour in the specification; nevertheless FastAPI "
    "supports it, only for very extreme/complex use cases."
)
PARAPHRASE = (
    "The HTTP specs leave a GET carrying a payload undefined. FastAPI still accepts it, but it is meant only "
    "for unusual edge situations."
)
ZH_COPY = "规范中没有定义用 GET 请求发送请求体的行为，但 FastAPI 仍支持这种方式，只用于非常复杂/极端的用例。"
ZH_SWAPPED = "规范里没有定义用 GET 请求发送请求体的行为，不过 FastAPI 依然支持这种方式，仅用于非常极端/复杂的用例。"
ZH_PARAPHRASE = "HTTP 标准并未规定带有载荷的 GET 该如何处理；框架虽然接受这种写法，却只建议在罕见的特殊场景下采用。"

"""The built-in BM25 baseline: lexical retrieval over the knowledge base the dataset was built from, extractive
answers.

``goldset eval --dataset data/ --baseline bm25`` (or ``--target bm25``) gives any user a reference run with no
LLM at all: the retrieval metrics are a real floor to beat, and the "answer" is the first sentences of the top
context (the run is labelled ``bm25-baseline`` in its id and metadata). It refuses only when no passage shares a
word with the question, so on unanswerable questions it behaves like a system without a refusal policy.

Tokens come from :func:`goldset.text.tokenize` (bm25s's own tokenizer drops CJK text), passed to bm25s as lists.
Outside ``goldset eval`` the module-level :func:`answer` reads its corpus from ``$GOLDSET_BM25_CORPUS`` (a dataset
folder, a ``chunks.jsonl`` file, a folder holding one, or a documents folder, chunked as ``goldset ingest`` does).
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goldset.errors import InputError
from goldset.text import tokenize

if TYPE_CHECKING:
    from goldset.dataset import Dataset
    from goldset.workspace import Workspace

CORPUS_ENV = "GOLDSET_BM25_CORPUS"
#: When no passage shares a term with the question the baseline refuses (in words the refusal patterns know).
NO_HIT_ANSWER = "I cannot find this in the knowledge base."
_SENTENCE_RE = re.compile(r"(?<=[.!?。！？])\s*")


@dataclass(frozen=True)
class Passage:
    """One searchable text and the ids the baseline reports for it."""

    text: str
    doc_id: str | None = None
    chunk_id: str | None = None


class BM25Index:
    """A bm25s index over passages, searched with goldset's tokenizer (CJK-aware)."""

    def __init__(self, passages: Iterable[Passage]) -> None:
        import bm25s

        self.passages = [p for p in passages if p.text.strip()]
        if not self.passages:
            raise InputError("bm25 baseline: the corpus holds no text to index; give it a KB folder or chunks.jsonl")
        self._retriever = bm25s.BM25()
        self._retriever.index([tokenize(p.text) or [""] for p in self.passages], show_progress=False)
        # bm25s keeps scratch state per call; one query at a time keeps threaded targets safe.
        self._lock = threading.Lock()

    def search(self, query: str, k: int = 5) -> list[tuple[Passage, float]]:
        """Top ``k`` passages with a positive score, best first."""
        tokens = tokenize(query)
        if not tokens:
            return []
        k = min(k, len(self.passages))
        with self._lock:
            docs, scores = self._retriever.retrieve([tokens], k=k, show_progress=False, n_threads=1)
        out = []
        for idx, score in zip(docs[0].tolist(), scores[0].tolist(), strict=True):
            if score > 0:
                out.append((self.passages[int(idx)], float(score)))
        return out


def extractive_answer(text: str, max_sentences: int = 2, max_chars: int = 400) -> str:
    """The first sentences of ``text``: the baseline's "answer" (clearly not generated)."""
    sentences = [s.strip() for s in _SENTENCE_RE.split(" ".join(text.split())) if s.strip()]
    picked = " ".join(sentences[:max_sentences]) or text.strip()
    return picked[:max_chars]


def passages_from_dataset(dataset: Dataset) -> list[Passage]:
    """The dataset's evidence chunks (``chunks.jsonl``)."""
    if not dataset.chunks:
        where = dataset.path or "the dataset"
        raise InputError(f"{where}: no chunks.jsonl for the bm25 baseline to index; give it a KB folder (kb)")
    return [Passage(c.text, c.doc_id, c.id) for c in sorted(dataset.chunks.values(), key=lambda c: c.id)]


def passages_from_path(path: str | Path, ws: Workspace | None = None) -> list[Passage]:
    """A corpus on disk: a dataset folder or any folder with ``chunks.jsonl`` (e.g. ``.goldset/kb``), a
    ``chunks.jsonl`` file, or a folder of documents, chunked by goldset's own ingestion (with the workspace's
    ``kb`` settings) so the baseline's chunk ids are the ones the dataset's evidence cites."""
    import tempfile

    from goldset.data import CHUNKS_FILE, read_kb_chunks
    from goldset.io import read_jsonl
    from goldset.kb import ingest
    from goldset.schema import Chunk

    path = Path(path)
    if path.is_file() and path.suffix == ".jsonl":
        return [Passage(c.text, c.doc_id, c.id) for c in read_jsonl(path, Chunk)]
    if path.is_dir() and (path / CHUNKS_FILE).is_file():
        return passages_from_path(path / CHUNKS_FILE)
    if not path.is_dir():
        raise InputError(f"{path}: no such KB folder or chunks.jsonl for the bm25 baseline")
    with tempfile.TemporaryDirectory(prefix="goldset-bm25-") as tmp:
        ingest(path, ws, out_dir=Path(tmp))
        chunks = read_kb_chunks(Path(tmp))
    return [Passage(c.text, c.doc_id, c.id) for c in chunks]


@dataclass
class Corpus:
    """What the baseline searches: the passages, a label for the run's metadata, and the notes a reader of its
    scores must see (a corpus smaller than the knowledge base makes retrieval look easier than it is)."""

    passages: list[Passage]
    label: str
    notes: list[str] = field(default_factory=list)


def baseline_corpus(dataset: Dataset, *, kb: str | Path | None = None, ws: Workspace | None = None) -> Corpus:
    """The corpus the dataset was built from: ``kb`` when given, else a release's own corpus (its pinned KB
    snapshot), else the workspace's knowledge base (``.goldset/kb``), else only the chunks the dataset cites, with a
    note saying so.

    The dataset's ``chunks.jsonl`` holds only the chunks its pairs cite; searched alone, every chunk is relevant to
    some question and recall comes out far above what the same search gives over the whole knowledge base.
    """
    from goldset.data import WorkspaceData, snapshot_id

    if kb is not None:
        passages = passages_from_path(kb, ws)
        return Corpus(passages, f"kb {kb}, {len(passages)} chunks")
    if dataset.whole_corpus:
        passages = passages_from_dataset(dataset)
        return Corpus(passages, f"the release's corpus, {len(passages)} chunks")
    chunks = WorkspaceData(ws).kb_chunks() if ws is not None else []
    if chunks:
        notes = []
        built_from = dataset.manifest.kb_snapshot_id if dataset.manifest else None
        current = snapshot_id(chunks)
        if built_from and built_from != current:
            notes.append(
                f"the bm25 baseline searched the workspace's knowledge base as it is now ({current}), not the snapshot "
                f"the dataset was built from ({built_from}): documents changed since"
            )
        passages = [Passage(c.text, c.doc_id, c.id) for c in chunks]
        return Corpus(passages, f"workspace kb {ws.kb_dir if ws else ''}, {len(passages)} chunks", notes)
    passages = passages_from_dataset(dataset)
    note = (
        f"the bm25 baseline searched only the {len(passages)} chunks the dataset cites, not the knowledge base it "
        f"was built from (no kb given, no ingested .goldset/kb in a workspace): every chunk it can find is evidence "
        f"for some question, so its retrieval scores are optimistic; give it the documents (kb, --kb DOCS_DIR)"
    )
    return Corpus(passages, f"dataset chunks only, {len(passages)} chunks", [note])


def make_target(passages: Iterable[Passage], *, k: int = 5) -> Callable[[str], dict[str, Any]]:
    """A target callable ``fn(question) -> {answer, contexts, latency}`` searching ``passages``."""
    index = BM25Index(passages)

    def bm25_baseline(question: str) -> dict[str, Any]:
        start = time.perf_counter()
        hits = index.search(question, k=k)
        retrieval_ms = (time.perf_counter() - start) * 1000
        contexts = [
            {"text": p.text, "doc_id": p.doc_id, "chunk_id": p.chunk_id, "score": round(score, 6)} for p, score in hits
        ]
        answer = extractive_answer(hits[0][0].text) if hits else NO_HIT_ANSWER
        return {"answer": answer, "contexts": contexts, "latency": {"retrieval_ms": retrieval_ms}}

    return bm25_baseline


_default: Callable[[str], dict[str, Any]] | None = None
_default_lock = threading.Lock()


def answer(question: str) -> dict[str, Any]:
    """``--target goldset.baselines.bm25:answer`` outside ``goldset eval``: corpus from ``$GOLDSET_BM25_CORPUS``.

    (``goldset eval`` itself recognises this target and searches the corpus of :func:`baseline_corpus`.)
    """
    global _default
    with _default_lock:
        if _default is None:
            corpus = os.environ.get(CORPUS_ENV)
            if not corpus:
                raise InputError(
                    f"bm25 baseline: set {CORPUS_ENV} to a dataset folder, chunks.jsonl or KB folder "
                    f"(or run it as `goldset eval --baseline bm25`)"
                )
            _default = make_target(passages_from_path(corpus))
    return _default(question)

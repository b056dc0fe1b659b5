"""The hand-written example golden set (examples/golden, over examples/kb/docs): every question type, both
languages, verbatim evidence, multi-hop pairs across two documents, and every pair passing goldset's own filters
(without the LLM judge) in a workspace that ingested the example KB: none fails and none is flagged."""

from __future__ import annotations

import importlib.util
from collections import Counter
from pathlib import Path

import pytest

from goldset.data import read_dataset, write_dataset
from goldset.filters import run_filters
from goldset.filters.registry import CHECKS
from goldset.kb import ingest
from goldset.scaffold import init_workspace
from goldset.schema import PairStatus, QAPair, QuestionType
from goldset.text import normalize_ws
from goldset.workspace import Workspace
from tests.helpers.versioning_data import REPO_ROOT

EXAMPLES = REPO_ROOT / "examples"
DOCS = EXAMPLES / "kb" / "docs"


@pytest.fixture(scope="module")
def golden() -> list[QAPair]:
    return read_dataset(EXAMPLES / "golden").pairs


def test_every_type_and_both_languages(golden: list[QAPair]) -> None:
    types = Counter(p.question_type for p in golden)
    langs = Counter(p.language for p in golden)
    assert set(types) == set(QuestionType), f"missing: {set(QuestionType) - set(types)}"
    assert set(langs) == {"en", "zh"} and langs["zh"] >= 12 and len(golden) >= 40
    assert {p.question_type for p in golden if p.language == "zh"} == set(QuestionType), "Chinese covers every type"
    assert all(p.status == PairStatus.accepted and p.provenance.source == "human" for p in golden)
    assert len({p.id for p in golden}) == len({p.question.casefold() for p in golden}) == len(golden)


def test_evidence_is_verbatim_from_the_example_kb(golden: list[QAPair], tmp_path: Path) -> None:
    chunks = {c.id: c for c in ingest(DOCS, out_dir=tmp_path).chunks}
    for p in golden:
        for e in p.evidence:
            assert e.chunk_id in chunks and chunks[e.chunk_id].doc_id == e.doc_id, (p.id, e.chunk_id)
            assert normalize_ws(e.quote) in normalize_ws(chunks[e.chunk_id].text), (p.id, e.quote)
        if p.question_type == QuestionType.unanswerable:
            assert not p.evidence
        else:
            assert p.evidence, p.id
        if p.question_type == QuestionType.multi_hop:
            assert len({e.doc_id for e in p.evidence}) >= 2, f"{p.id}: a multi-hop pair cites two documents"


def test_every_pair_passes_goldsets_filters(golden: list[QAPair], tmp_path: Path) -> None:
    init_workspace(tmp_path / "ws", dvc=False)
    ws = Workspace(tmp_path / "ws")
    result = ingest(DOCS, ws)
    write_dataset(ws.data_dir, [p.model_copy(update={"status": PairStatus.candidate}) for p in golden], result.chunks)
    report = run_filters(ws, use_llm=False)
    checked = read_dataset(ws.data_dir).pairs
    assert len(checked) == len(golden)
    ran = set(report.checks)
    assert ran == set(CHECKS) - {"groundedness", "closed_book"}, "every check but the LLM ones ran"
    problems = {
        p.id: [f"{name}: {r.reason}" for name, r in p.checks.items() if not r.passed]  # failed or flagged
        for p in checked
    }
    assert {pid: found for pid, found in problems.items() if found} == {}
    assert all(set(p.checks) >= ran and p.status == PairStatus.passed for p in checked)


def test_examples_golden_is_what_make_golden_writes(golden: list[QAPair], tmp_path: Path) -> None:
    """The committed files are up to date with the pairs written in examples/make_golden.py."""
    spec = importlib.util.spec_from_file_location("make_golden", EXAMPLES / "make_golden.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result = ingest(DOCS, out_dir=tmp_path)
    built = module.build_pairs(result.chunks, result.snapshot.id)
    assert [p.model_dump(exclude={"checks"}) for p in sorted(built, key=lambda p: p.id)] == [
        p.model_dump(exclude={"checks"}) for p in golden
    ]

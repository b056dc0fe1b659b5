"""The built-in BM25 baseline: retrieval over dataset chunks or a KB folder, English and Chinese."""

from __future__ import annotations

from pathlib import Path

import pytest

from goldset.baselines import bm25
from goldset.data import read_dataset
from goldset.errors import InputError
from goldset.evaluation.evaluator import evaluate
from goldset.evaluation.runs import read_run
from tests.helpers.eval_data import CHUNK_TEXTS, make_dataset

FIXTURE_KB = Path(__file__).parent / "fixtures" / "kb"


def test_index_ranks_the_right_chunk_in_english_and_chinese() -> None:
    index = bm25.BM25Index(bm25.Passage(text, doc, cid) for cid, (doc, text) in CHUNK_TEXTS.items())
    hits = index.search("how do I clear the cache", k=3)
    assert hits[0][0].chunk_id == "c-cache"
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    zh = index.search("默认端口", k=2)  # bm25s's own tokenizer would drop these characters
    assert zh and zh[0][0].chunk_id == "c-zh"
    assert index.search("zzzz qqqq") == []
    assert index.search("???") == []
    assert len(index.search("quokka", k=50)) <= len(CHUNK_TEXTS)


def test_target_answers_extractively_and_refuses_without_hits(tmp_path: Path) -> None:
    target = bm25.make_target(bm25.passages_from_dataset(read_dataset(make_dataset(tmp_path / "data"))), k=2)
    out = target("How do I clear the quokka cache?")
    assert out["contexts"][0]["chunk_id"] == "c-cache" and len(out["contexts"]) <= 2
    assert out["answer"] == "The cache keeps responses for ten minutes. Clear it with quokka cache clear."
    assert out["latency"]["retrieval_ms"] >= 0
    assert target("xylophone zeppelin")["answer"] == bm25.NO_HIT_ANSWER


def test_extractive_answer_cuts_sentences() -> None:
    assert bm25.extractive_answer("One. Two! Three? Four.") == "One. Two!"
    assert bm25.extractive_answer("第一句。第二句。第三句。") == "第一句。 第二句。"


def test_baseline_run_over_the_dataset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    data = make_dataset(tmp_path / "data")
    result = evaluate(data, target="bm25", out_dir=tmp_path / "out")
    assert result.summary.n_failed == 0
    assert result.summary.overall["recall@5"] > 0.8  # lexical questions over five chunks: BM25 finds them
    assert result.meta.target == "target:goldset.baselines.bm25:answer (dataset chunks only, 5 chunks)"
    assert "bm25-baseline" in result.run_id
    stored = read_run(tmp_path / "out")
    assert all(c.chunk_id in CHUNK_TEXTS for s in stored.samples.values() for c in s.contexts)
    frame = stored.to_pandas()
    assert len(frame) == result.summary.n_samples
    assert frame["recall@5"].mean() == pytest.approx(result.summary.overall["recall@5"])


def test_baseline_over_a_kb_folder_of_documents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from goldset.kb import ingest, load_chunks

    passages = bm25.passages_from_path(FIXTURE_KB / "en")
    assert {p.doc_id for p in passages} >= {"query-params.md", "body.md"}
    # chunked exactly as `goldset ingest` does, so chunk ids match a dataset's evidence
    ingest(FIXTURE_KB / "en", out_dir=tmp_path / "kb")
    assert [p.chunk_id for p in passages] == [c.id for c in load_chunks(out_dir=tmp_path / "kb")]
    index = bm25.BM25Index(passages)
    hits = index.search("optional query parameters default value", k=3)
    assert hits and hits[0][0].doc_id == "query-params.md"
    zh = bm25.BM25Index(bm25.passages_from_path(FIXTURE_KB / "zh")).search("查询参数", k=1)
    assert zh and zh[0][0].doc_id == "query-params.md"


def test_module_answer_reads_its_corpus_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bm25, "_default", None)
    monkeypatch.delenv(bm25.CORPUS_ENV, raising=False)
    with pytest.raises(InputError, match=bm25.CORPUS_ENV):
        bm25.answer("anything")
    make_dataset(tmp_path / "data")
    monkeypatch.setenv(bm25.CORPUS_ENV, str(tmp_path / "data"))  # a folder holding chunks.jsonl
    assert bm25.answer("default port of quokka")["contexts"][0]["chunk_id"] == "c-config"


def test_empty_corpus_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "kb").mkdir()
    with pytest.raises(InputError, match="no supported documents"):
        bm25.passages_from_path(tmp_path / "kb")
    with pytest.raises(InputError, match="no text to index"):
        bm25.BM25Index([bm25.Passage("   ")])


#: Chunks of the same KB the dataset does not cite: they share the questions' words, as the rest of a real KB does.
OTHER_CHUNKS = {
    f"c-other-{i}": (f"other-{i}.md", text)
    for i, text in enumerate(
        [
            "Quokka install notes: install quokka plugins with quokka plugin install, not with pip.",
            "The default port of the quokka admin console is 9090; the quokka port setting does not change it.",
            "Verbose output of quokka tests: run quokka test with the debug flag.",
            "The quokka cache of plugins is cleared by quokka plugin cache clear.",
            "Quokka start-up is slow when many plugins load; the cache is not involved.",
            "Authenticate quokka plugins with a plugin token from quokka token new plugin.",
            "Which Python does quokka's plugin builder need? Python 3.12 or newer.",
            "快袋鼠的管理端口是九零九零，默认端口设置不影响它。",
        ]
    )
}


def _workspace_with_kb(root: Path) -> Path:
    """A workspace whose ingested KB (.goldset/kb) holds the dataset's chunks and the rest of the KB."""
    from goldset.io import write_jsonl
    from tests.helpers.eval_data import make_chunk

    root.mkdir()
    (root / "goldset.yaml").write_text("eval:\n  ks: [1, 5]\n", encoding="utf-8")
    chunks = [make_chunk(cid, doc, text) for cid, (doc, text) in {**CHUNK_TEXTS, **OTHER_CHUNKS}.items()]
    write_jsonl(root / ".goldset" / "kb" / "chunks.jsonl", chunks)
    make_dataset(root / "data")
    return root


def test_the_baseline_searches_the_whole_kb_of_the_workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The trust issue: over the dataset's cited chunks only, recall was far above the same search over the KB."""
    root = _workspace_with_kb(tmp_path / "ws")
    monkeypatch.chdir(root)
    whole = evaluate("data", target="bm25", out_dir=tmp_path / "whole")
    assert whole.meta.target == (
        f"target:goldset.baselines.bm25:answer (workspace kb {root / '.goldset' / 'kb'}, "
        f"{len(CHUNK_TEXTS) + len(OTHER_CHUNKS)} chunks)"
    )
    retrieved = {c.chunk_id for s in whole.samples.values() for c in s.contexts}
    assert retrieved & set(OTHER_CHUNKS)  # the rest of the KB competes for the top ranks
    assert not any("only" in n for n in whole.summary.notes)
    monkeypatch.chdir(tmp_path)  # outside the workspace: only the cited chunks are at hand, and it says so
    cited = evaluate(root / "data", target="bm25", out_dir=tmp_path / "cited")
    assert cited.summary.overall["recall@5"] > whole.summary.overall["recall@5"]
    note = next(n for n in cited.notes if "searched only the 5 chunks the dataset cites" in n)
    assert note in read_run(tmp_path / "cited").summary.notes  # stored in summary.json
    from goldset.evaluation.report import render_html

    assert "searched only the 5 chunks the dataset cites" in render_html(read_run(tmp_path / "cited"))
    given = evaluate(root / "data", target="bm25", kb=root / ".goldset" / "kb", out_dir=tmp_path / "given")
    assert given.summary.overall["recall@5"] == whole.summary.overall["recall@5"]
    assert "kb " in given.meta.target and not given.summary.notes

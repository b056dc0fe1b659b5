"""Exports read by the tools they are for: the Hugging Face folder by ``datasets`` (in the test extra), RAGAS and
DeepEval files checked against the schema those libraries document, and loaded by the libraries themselves when
an interpreter has them (``GOLDSET_RAGAS_PYTHON`` / ``GOLDSET_DEEPEVAL_PYTHON``: their pins do not fit in
goldset's virtualenv, see ``tests/helpers/interop_data.py``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel, ConfigDict

from goldset.interop import export_pairs, import_pairs
from goldset.io import read_json, write_json
from goldset.schema import Manifest, ReviewSampleStats
from tests.helpers.interop_data import (
    DEEPEVAL_LOAD,
    LIBRARY_ENV,
    RAGAS_LOAD,
    library_python,
    make_dataset,
    make_pairs,
    run_with_library,
)


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    return make_dataset(tmp_path / "ds")


def _load_datasets(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    try:
        import datasets
    except ImportError:
        pytest.fail("datasets is in the test extra; install it: pip install -e '.[test]'", pytrace=False)
    return datasets


def _item(feature: Any) -> Any:
    """The item type of a list feature (datasets >= 4: List(feature); older: [feature])."""
    return feature.feature if hasattr(feature, "feature") else feature[0]


def _front_matter(card: str) -> dict[str, Any]:
    assert card.startswith("---\n")
    return yaml.safe_load(card.split("---\n", 2)[1])


def test_the_hugging_face_folder_loads_with_datasets(
    dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    datasets = _load_datasets(monkeypatch, tmp_path)
    folder = tmp_path / "hf"
    export_pairs("hf", folder, dataset=dataset, status="all", license="mit")
    cache = str(tmp_path / "hf-cache")
    pairs = datasets.load_dataset(str(folder), cache_dir=cache)["test"]
    corpus = datasets.load_dataset(str(folder), "corpus", cache_dir=cache)["corpus"]
    assert pairs.num_rows == len(make_pairs()) and corpus.num_rows == 7
    assert _item(pairs.features["evidence"])["quote"].dtype == "string"
    assert pairs.features["golden"].dtype == "bool"
    rows = {r["id"]: r for r in pairs}
    assert rows["p-zh-comparison"]["answer"] == "缓存保留十五分钟；\n每个客户端每秒最多十个请求。"
    assert rows["p-en-multihop"]["doc_ids"] == ["guide/config.md", "guide/setup.md"]
    assert rows["p-en-unanswerable"]["evidence"] == []
    assert rows["p-rejected"]["golden"] is False and rows["p-en-factual"]["reviewed"] is True
    assert {r["id"] for r in corpus} >= {"k-ports", "z-cache"}
    # the same through the plain JSON loader the card mentions
    plain = datasets.load_dataset("json", data_files=str(folder / "data" / "test.jsonl"), cache_dir=cache)
    assert plain["train"].num_rows == pairs.num_rows


def test_a_set_without_any_evidence_still_loads_with_typed_columns(
    dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    datasets = _load_datasets(monkeypatch, tmp_path)
    folder = tmp_path / "hf"
    # only the two unanswerable pairs: evidence is [] in every row, its type comes from the card
    from goldset.data import write_dataset
    from tests.helpers.interop_data import chunks

    only = tmp_path / "only"
    write_dataset(only, [p for p in make_pairs() if p.question_type.value == "unanswerable"], chunks().values())
    export_pairs("hf", folder, dataset=only)
    pairs = datasets.load_dataset(str(folder), cache_dir=str(tmp_path / "c"))["test"]
    assert pairs.num_rows == 2
    assert _item(pairs.features["evidence"])["chunk_id"].dtype == "string"


def test_a_corpus_with_pdf_pages_loads_with_its_page_column(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    datasets = _load_datasets(monkeypatch, tmp_path)
    from goldset.data import write_dataset
    from tests.helpers.interop_data import chunks

    corpus_chunks = chunks()
    first = min(corpus_chunks)
    corpus_chunks[first] = corpus_chunks[first].model_copy(update={"doc_id": "handbook.pdf", "page": 12})
    ds = tmp_path / "ds"
    write_dataset(ds, make_pairs(), corpus_chunks.values())
    export_pairs("hf", tmp_path / "hf", dataset=ds)
    corpus = datasets.load_dataset(str(tmp_path / "hf"), "corpus", cache_dir=str(tmp_path / "c"))["corpus"]
    pages = {r["id"]: r["page"] for r in corpus}
    assert corpus.features["page"].dtype == "int64" and pages[first] == 12
    assert {p for cid, p in pages.items() if cid != first} == {None}, "chunks without pages have none"


def test_the_dataset_card_states_version_counts_and_quality(dataset: Path, tmp_path: Path) -> None:
    manifest = read_json(dataset / "manifest.json", Manifest)
    manifest.version = "v1.4.0"
    manifest.message = "More Chinese pairs"
    manifest.review = ReviewSampleStats(sampled=6, reviewed=5, accepted=4, rejected=1, acceptance_rate=0.8,
                                        ci_low=0.5, ci_high=0.95, confidence=0.95, random=4, random_reviewed=4,
                                        effective_n=4.0, population=12)  # fmt: skip
    write_json(dataset / "manifest.json", manifest)
    folder = tmp_path / "hf"
    report = export_pairs("hf", folder, dataset=dataset, license="cc-by-4.0")
    card = (folder / "README.md").read_text(encoding="utf-8")
    meta = _front_matter(card)
    assert meta["license"] == "cc-by-4.0" and meta["language"] == ["en", "zh"]
    assert meta["size_categories"] == ["n<1K"] and meta["task_categories"] == ["question-answering"]
    assert [c["config_name"] for c in meta["configs"]] == ["default", "corpus"]
    body = card.split("---\n", 2)[2]
    assert "| version | v1.4.0 |" in body and "More Chinese pairs" in body
    assert f"| pairs | {report.rows}: the golden set (passed and accepted pairs) |" in body
    golden = [p for p in make_pairs() if p.status.value in ("passed", "accepted")]
    multi_hop = sum(p.question_type.value == "multi_hop" for p in golden)
    zh, accepted = sum(p.language == "zh" for p in golden), sum(p.status.value == "accepted" for p in golden)
    assert f"| multi_hop | {multi_hop} |" in body and f"| zh | {zh} |" in body and f"| accepted | {accepted} |" in body
    assert "Experts reviewed 5 of 6 sampled pairs: 4 accepted, 1 rejected, 0 edited." in body
    assert "**80.0%** (95% Wilson interval 50.0%–95.0%)" in body
    unreviewed = tmp_path / "hf2"
    export_pairs("hf", unreviewed, dataset=make_dataset(tmp_path / "ds2"))
    text = (unreviewed / "README.md").read_text(encoding="utf-8")
    assert "No expert review is recorded" in text and _front_matter(text)["license"] == "unknown"


# ------------------------------------------------------------------------------------------------ RAGAS


class RagasSingleTurnSample(BaseModel):
    """ragas.dataset_schema.SingleTurnSample (ragas 0.4): the columns an EvaluationDataset row may have."""

    model_config = ConfigDict(extra="forbid")
    user_input: str | None = None
    retrieved_contexts: list[str] | None = None
    reference_contexts: list[str] | None = None
    retrieved_context_ids: list[str | int] | None = None
    reference_context_ids: list[str | int] | None = None
    response: str | None = None
    multi_responses: list[str] | None = None
    reference: str | None = None
    rubrics: dict[str, str] | None = None
    persona_name: str | None = None
    query_style: str | None = None
    query_length: str | None = None


RAGAS_EXTRA = {"goldset_id", "question_type", "language", "reference_doc_ids"}


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="ascii").splitlines()]


def test_ragas_rows_follow_the_single_turn_sample_schema(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "ragas.jsonl"
    export_pairs("ragas", out, dataset=dataset, status="all")
    rows = _jsonl(out)  # ASCII: from_jsonl reads it in any default encoding
    assert len(rows) == len(make_pairs())
    for row in rows:
        assert set(row) - set(RagasSingleTurnSample.model_fields) == RAGAS_EXTRA
        RagasSingleTurnSample.model_validate({k: v for k, v in row.items() if k not in RAGAS_EXTRA})
        assert len(row["reference_contexts"]) == len(row["reference_context_ids"]) == len(row["reference_doc_ids"])
    zh = next(r for r in rows if r["goldset_id"] == "p-zh-factual")
    assert zh["user_input"] == "袋熊需要哪个版本的 Python？"
    chunk = "用 pip install wombat 安装袋熊。袋熊需要 Python 3.12 或更高版本。"
    assert zh["reference_contexts"] == [chunk], "the cited chunk's whole text (the default)"


def _library(library: str) -> None:
    if library_python(library) is None:
        pytest.fail(f"{library} is not installed here; run `make test` (it installs {library} in .interop-venv) or "
                    f"set {LIBRARY_ENV[library]} to a python that has it", pytrace=False)  # fmt: skip


def test_ragas_loads_the_export(dataset: Path, tmp_path: Path) -> None:
    _library("ragas")
    out = tmp_path / "ragas.jsonl"
    export_pairs("ragas", out, dataset=dataset, status="all")
    samples = run_with_library("ragas", RAGAS_LOAD, str(out))
    rows = _jsonl(out)
    assert len(samples) == len(rows)
    for sample, row in zip(samples, rows, strict=True):
        assert sample["user_input"] == row["user_input"] and sample["reference"] == row["reference"]
        assert sample.get("reference_contexts", []) == row["reference_contexts"]
        assert not set(sample) & RAGAS_EXTRA, "RAGAS drops the extra columns when it loads the file"


# ------------------------------------------------------------------------------------------------ DeepEval

#: The keys EvaluationDataset.add_goldens_from_json_file reads (deepeval 4), with the types Golden gives them.
DEEPEVAL_KEYS: dict[str, Any] = {
    "input": str, "actual_output": (str, type(None)), "expected_output": (str, type(None)),
    "context": (list, type(None)), "retrieval_context": (list, type(None)), "source_file": (str, type(None)),
    "additional_metadata": (dict, type(None)),
}  # fmt: skip


def test_deepeval_goldens_follow_the_golden_schema(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "deepeval.json"
    export_pairs("deepeval", out, dataset=dataset, status="all")
    goldens = json.loads(out.read_text(encoding="utf-8"))
    assert isinstance(goldens, list) and len(goldens) == len(make_pairs())
    for golden in goldens:
        assert set(golden) == set(DEEPEVAL_KEYS)
        for key, kind in DEEPEVAL_KEYS.items():
            assert isinstance(golden[key], kind), key
        assert all(isinstance(c, str) for c in golden["context"] or [])
    multi = next(g for g in goldens if g["additional_metadata"]["goldset_id"] == "p-zh-multihop")
    assert multi["additional_metadata"]["evidence"] == [{"chunk_id": "z-setup", "doc_id": "zh/setup.md"},
                                                        {"chunk_id": "z-cache", "doc_id": "zh/cache.md"}]  # fmt: skip
    assert multi["source_file"] == "zh/cache.md, zh/setup.md"


def test_deepeval_loads_the_export(dataset: Path, tmp_path: Path) -> None:
    _library("deepeval")
    out = tmp_path / "deepeval.json"
    export_pairs("deepeval", out, dataset=dataset, status="all")
    goldens = run_with_library("deepeval", DEEPEVAL_LOAD, str(out))
    written = json.loads(out.read_text(encoding="utf-8"))
    assert [g["input"] for g in goldens] == [g["input"] for g in written]
    assert [g.get("context") for g in goldens] == [g["context"] for g in written]
    assert [g["additional_metadata"] for g in goldens] == [g["additional_metadata"] for g in written]


def test_files_the_libraries_write_themselves_import_with_a_type(dataset: Path, tmp_path: Path) -> None:
    """A RAGAS or DeepEval file without goldset's extra columns: ids computed, language detected, contexts located
    in the corpus, the type given."""
    from goldset.schema import pair_id

    ragas_file = tmp_path / "theirs.jsonl"
    ragas_file.write_text(json.dumps({"user_input": "怎样立即清空袋熊的缓存？", "reference": "运行 wombat purge。",
                                      "reference_contexts": ["运行 wombat purge 可以立即清空缓存。"]},
                                     ensure_ascii=False) + "\n", encoding="utf-8")  # fmt: skip
    deepeval_file = tmp_path / "theirs.json"
    deepeval_file.write_text(json.dumps([{"input": "Which port does wombat use?", "expected_output": "7070.",
                                          "context": ["Wombat listens on port  7070 unless WOMBAT_PORT is set."]}]),
                             encoding="utf-8")  # fmt: skip
    for fmt, path, chunk in (("ragas", ragas_file, "z-cache"), ("deepeval", deepeval_file, "k-ports")):
        report = import_pairs(fmt, path, out=tmp_path / f"in-{fmt}", corpus=dataset, question_type="procedural")
        (pair,) = report.pairs
        assert pair.evidence[0].chunk_id == chunk
        assert pair.id == pair_id([chunk], "procedural", pair.question)
        assert pair.language == ("zh" if fmt == "ragas" else "en")
    assert report.evidence == {"folded": 1}, "two spaces where the chunk has one: found once whitespace is folded"


def test_ragas_run_rows_follow_the_schema_and_load(tmp_path: Path) -> None:
    from goldset.interop import export_run
    from tests.helpers import eval_data

    ds = eval_data.make_dataset(tmp_path / "eval-ds")
    run_file = eval_data.write_run_file(tmp_path / "run.jsonl",
                                        [eval_data.perfect_sample(p) for p in eval_data.evaluated_pairs()])  # fmt: skip
    out = tmp_path / "run-ragas.jsonl"
    export_run(run_file, out, dataset=ds)
    rows = _jsonl(out)
    extra = RAGAS_EXTRA | {"error", "goldset_scores"}
    for row in rows:
        assert set(row) - set(RagasSingleTurnSample.model_fields) == extra
        sample = RagasSingleTurnSample.model_validate({k: v for k, v in row.items() if k not in extra})
        assert sample.response is not None and sample.retrieved_contexts is not None
    if library_python("ragas") is None:
        return  # the schema check above stands; the library's own load runs where an interpreter has it
    loaded = run_with_library("ragas", RAGAS_LOAD, str(out))
    assert [s["response"] for s in loaded] == [r["response"] for r in rows]
    assert [s.get("retrieved_contexts", []) for s in loaded] == [r["retrieved_contexts"] for r in rows]


#: RAGAS' non-LLM context recall and precision (ragas 0.4: string similarity of whole contexts) of the export in
#: argv[2], the retrieved contexts being the cited chunks (the reference contexts of the chunks export in argv[1]).
RAGAS_NON_LLM_SCORES = """
import asyncio, json, sys, warnings
warnings.simplefilter("ignore")
from ragas import EvaluationDataset
from ragas.dataset_schema import SingleTurnSample
from ragas.metrics import NonLLMContextPrecisionWithReference, NonLLMContextRecall
chunks = EvaluationDataset.from_jsonl(sys.argv[1]).samples
refs = EvaluationDataset.from_jsonl(sys.argv[2]).samples
recall, precision = NonLLMContextRecall(), NonLLMContextPrecisionWithReference()
async def main():
    out = []
    for c, r in zip(chunks, refs, strict=True):
        if not c.reference_contexts:
            continue  # an unanswerable pair cites nothing: recall is undefined (nan)
        s = SingleTurnSample(user_input=r.user_input, retrieved_contexts=c.reference_contexts,
                             reference_contexts=r.reference_contexts)
        out.append([await recall.single_turn_ascore(s), await precision.single_turn_ascore(s)])
    return out
print(json.dumps(asyncio.run(main())))
"""


def test_ragas_non_llm_context_metrics_score_the_export(dataset: Path, tmp_path: Path) -> None:
    """The cited chunks as reference contexts (the default) are what RAGAS' non-LLM context metrics can compare:
    retrieving exactly the cited chunks scores 1; the quotes (``contexts="quotes"``) score far lower (0.34 / 0.37
    here, where the fixture's chunks are one or two sentences and a quote is often most of its chunk; 0.000 on real
    chunks, issue 21)."""
    _library("ragas")
    chunks, quotes = tmp_path / "chunks.jsonl", tmp_path / "quotes.jsonl"
    export_pairs("ragas", chunks, dataset=dataset, status="all")
    export_pairs("ragas", quotes, dataset=dataset, status="all", contexts="quotes")

    def means(ref: Path) -> tuple[float, float]:
        scores = run_with_library("ragas", RAGAS_NON_LLM_SCORES, str(chunks), str(ref))
        assert len(scores) == sum(1 for p in make_pairs() if p.evidence) > 0
        return sum(s[0] for s in scores) / len(scores), sum(s[1] for s in scores) / len(scores)

    recall, precision = means(chunks)
    assert recall >= 0.99 and precision >= 0.99, (recall, precision)
    q_recall, q_precision = means(quotes)
    assert q_recall <= 0.5 and q_precision <= 0.5, (q_recall, q_precision)

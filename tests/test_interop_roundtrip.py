"""Export then import gives back every field a format carries, for every format and both languages; the fields
a format cannot hold are the ones its exporter lists, and they come back as an import defines them."""

from __future__ import annotations

from pathlib import Path

import pytest

from goldset.data import read_dataset
from goldset.interop import FORMATS, export_pairs, import_pairs
from goldset.schema import PairStatus, QAPair, QuestionType
from tests.helpers.interop_data import carried_view, make_dataset, make_pairs

PAIR_FIELDS = set(QAPair.model_fields) - {"schema_version"}
#: Label Studio shows evidence by chunk, so it comes back in that order.
UNORDERED = {"labelstudio"}


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    return make_dataset(tmp_path / "ds")


def _round_trip(name: str, dataset: Path, tmp_path: Path, **options: object) -> tuple[dict[str, QAPair], object]:
    fmt = FORMATS[name]
    out = tmp_path / "export" / fmt.default_out
    report = export_pairs(name, out, dataset=dataset, status="all", **options)  # type: ignore[arg-type]
    back = import_pairs(name, out, out=tmp_path / "imported", corpus=dataset)
    return {p.id: p for p in back.pairs}, report


def test_every_pair_field_is_either_carried_or_listed_as_lost() -> None:
    assert set(FORMATS) == {"ragas", "deepeval", "hf", "labelstudio", "csv"}
    for fmt in FORMATS.values():
        lost = {x.field for x in fmt.lost}
        assert fmt.carried | lost == PAIR_FIELDS, fmt.name
        assert not fmt.carried & lost, fmt.name
        assert {"question", "answer", "question_type", "language", "evidence", "id"} <= fmt.carried, fmt.name


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_round_trip_keeps_what_the_format_carries(name: str, dataset: Path, tmp_path: Path) -> None:
    fmt = FORMATS[name]
    back, report = _round_trip(name, dataset, tmp_path, contexts="quotes")  # quotes: the evidence exactly
    original = {p.id: p for p in make_pairs()}
    assert set(back) == set(original), "ids are carried by every format"
    ordered = name not in UNORDERED
    for pid, pair in original.items():
        assert carried_view(back[pid], fmt.carried, ordered=ordered) == carried_view(pair, fmt.carried, ordered=ordered)
    assert {p.language for p in back.values()} == {"en", "zh"}
    assert {p.question_type for p in back.values()} == set(QuestionType), "every question type, both languages"
    # what is lost is listed by the exporter, and an import defines it
    assert report.lost == fmt.losses()  # type: ignore[attr-defined]
    listed = " ".join(report.lost)  # type: ignore[attr-defined]
    for field in PAIR_FIELDS - fmt.carried:
        assert field in listed, (name, field)
    for pair in back.values():
        assert pair.status is PairStatus.candidate
        assert pair.provenance.source == "import" and not pair.checks and not pair.review.decisions
        if "tags" not in fmt.carried:
            assert pair.tags == []
    ports = read_dataset(dataset).chunks["k-ports"]
    assert back["p-en-factual"].provenance.chunk_hashes == {"k-ports": ports.content_hash}
    # the imported folder is a dataset: its chunks are the cited ones
    folder = read_dataset(tmp_path / "imported")
    assert {c for p in folder.pairs for c in p.chunk_ids} == set(folder.chunks)


@pytest.mark.parametrize("name", ["ragas", "deepeval"])
def test_contexts_as_whole_chunks_come_back_citing_the_whole_chunk(name: str, dataset: Path, tmp_path: Path) -> None:
    back, report = _round_trip(name, dataset, tmp_path, contexts="chunks")
    assert "evidence[].quote" in report.lost[0]  # type: ignore[attr-defined]
    chunks = read_dataset(dataset).chunks
    for pair in make_pairs():
        got = back[pair.id]
        assert got.chunk_ids == pair.chunk_ids and got.question == pair.question
        cited = dict.fromkeys(e.chunk_id for e in pair.evidence)
        assert [e.quote for e in got.evidence] == [chunks[c].text for c in cited]


def test_contexts_chunks_is_refused_for_a_format_without_contexts(dataset: Path, tmp_path: Path) -> None:
    from goldset.errors import UsageError

    with pytest.raises(UsageError, match="csv format has no reference contexts"):
        export_pairs("csv", tmp_path / "x.csv", dataset=dataset, contexts="chunks")


def test_the_golden_set_is_exported_by_default(dataset: Path, tmp_path: Path) -> None:
    report = export_pairs("csv", tmp_path / "golden.csv", dataset=dataset)
    expected = sorted(p.id for p in make_pairs() if p.status in (PairStatus.passed, PairStatus.accepted))
    back = import_pairs("csv", tmp_path / "golden.csv", out=tmp_path / "back", corpus=dataset)
    assert sorted(p.id for p in back.pairs) == expected and report.rows == len(expected)
    assert "passed and accepted" in report.selection
    only = export_pairs("csv", tmp_path / "rejected.csv", dataset=dataset, status="rejected")
    assert only.rows == 1


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_import_into_the_workspace_adds_new_pairs_and_leaves_existing_ones(
    name: str, dataset: Path, tmp_path: Path
) -> None:
    from goldset.data import write_dataset
    from goldset.io import read_jsonl, write_jsonl
    from goldset.scaffold import init_workspace
    from goldset.workspace import Workspace
    from tests.helpers.interop_data import chunks

    ws_root = tmp_path / "ws"
    init_workspace(ws_root, dvc=False)
    write_jsonl(Workspace(ws_root).kb_dir / "chunks.jsonl", chunks().values())  # the ingested KB
    existing = [p for p in make_pairs() if p.id == "p-en-factual"]
    existing[0].answer = "An answer the workspace already has."
    write_dataset(ws_root / "data", existing, chunks().values())
    out = tmp_path / "export" / FORMATS[name].default_out
    export_pairs(name, out, dataset=dataset)
    report = import_pairs(name, out, ws=ws_root)
    assert report.already_there == ["p-en-factual"]
    pairs = {p.id: p for p in read_jsonl(ws_root / "data" / "pairs.jsonl", QAPair)}
    assert pairs["p-en-factual"].answer == "An answer the workspace already has.", "an existing pair is never replaced"
    assert len(report.added) == len(pairs) - 1 > 5
    assert all(pairs[i].status is PairStatus.candidate for i in report.added)
    assert not report.unlocated, "the workspace's KB locates every quote"
    assert set(read_dataset(ws_root / "data").chunks) == {c for p in pairs.values() for c in p.chunk_ids}
    again = import_pairs(name, out, ws=ws_root)
    assert again.added == [] and len(again.already_there) == len(report.pairs), "a second import adds nothing"

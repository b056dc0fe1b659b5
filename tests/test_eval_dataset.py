"""Dataset resolution, pair selection, fingerprints and stratified sampling for evaluation."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from goldset.data import read_dataset, write_dataset
from goldset.errors import GoldsetError, InputError, UsageError
from goldset.evaluation.datasets import dataset_fingerprint, resolve_dataset, select_pairs
from goldset.evaluation.sampling import allocate, stratified_sample
from tests.helpers.eval_data import CHUNK_TEXTS, PAIR_SPECS, evaluated_pairs, make_chunk, make_dataset, make_pairs


def test_resolve_dataset_reads_a_folder_and_a_name_outside_a_repository_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = make_dataset(tmp_path / "data")
    ds = resolve_dataset(str(folder))
    assert len(ds.pairs) == len(PAIR_SPECS)
    monkeypatch.chdir(tmp_path)  # not a git repository: a version name cannot be resolved
    with pytest.raises(GoldsetError) as err:
        resolve_dataset("v1")
    assert "v1" in str(err.value) and "goldset release" in str(err.value) and "\n" not in str(err.value)


def test_select_pairs_prefers_passed_and_accepted(tmp_path: Path) -> None:
    ds = read_dataset(make_dataset(tmp_path / "data"))
    pairs, note = select_pairs(ds)
    assert {p.id for p in pairs} == {p.id for p in evaluated_pairs()}
    assert "qa-rejected" not in {p.id for p in pairs}
    assert note is None


def test_select_pairs_falls_back_to_non_rejected_with_a_note(tmp_path: Path) -> None:
    statuses = {pid: "candidate" for pid, *_ in PAIR_SPECS}
    statuses["qa-rejected"] = "rejected"
    statuses["qa-port"] = "retired"
    ds = read_dataset(make_dataset(tmp_path / "data", statuses))
    pairs, note = select_pairs(ds)
    ids = {p.id for p in pairs}
    assert "qa-rejected" not in ids and "qa-port" not in ids
    assert len(ids) == len(PAIR_SPECS) - 2
    assert note is not None and "non-rejected" in note


def test_fingerprint_ignores_rewrites_of_identical_content(tmp_path: Path) -> None:
    chunks = [make_chunk(cid, doc, text) for cid, (doc, text) in CHUNK_TEXTS.items()]
    pairs = make_pairs()  # the same records written twice (made twice, a second may tick between their timestamps)
    write_dataset(tmp_path / "a", pairs, chunks)
    write_dataset(tmp_path / "b", pairs, chunks)
    a = dataset_fingerprint(read_dataset(tmp_path / "a"))
    b = dataset_fingerprint(read_dataset(tmp_path / "b"))
    c = dataset_fingerprint(read_dataset(make_dataset(tmp_path / "c", {"qa-port": "rejected"})))
    assert a == b
    assert a != c


def test_allocate_keeps_every_stratum_and_the_total() -> None:
    sizes = {"factual": 50, "procedural": 30, "reasoning": 15, "unanswerable": 4, "multi_hop": 1}
    counts = allocate(sizes, 20)
    assert sum(counts.values()) == 20
    assert all(counts[k] >= 1 for k in sizes)
    assert counts["factual"] > counts["procedural"] > counts["reasoning"]
    with pytest.raises(UsageError, match="every type"):
        allocate(sizes, 4)


def test_stratified_sample_is_deterministic_and_covers_every_type() -> None:
    pairs = evaluated_pairs()
    types = {p.question_type for p in pairs}
    a = stratified_sample(pairs, len(types), seed=3)
    b = stratified_sample(pairs, len(types), seed=3)
    assert [p.id for p in a] == [p.id for p in b]
    assert {p.question_type for p in a} == types
    seeds = {tuple(p.id for p in stratified_sample(pairs, 5, seed=s)) for s in range(10)}
    assert len(seeds) > 1  # the seed matters
    assert len(stratified_sample(pairs, 100, seed=0)) == len(pairs)


def _repoint_evidence(folder: Path) -> None:
    """Point every pair's evidence at another chunk, as a hand edit would, leaving manifest.json as it was."""
    import json

    lines = (folder / "pairs.jsonl").read_text(encoding="utf-8").splitlines()
    edited = []
    for line in lines:
        record = json.loads(line)
        for ev in record["evidence"]:
            ev["chunk_id"] = "c-auth" if ev["chunk_id"] != "c-auth" else "c-cache"
        edited.append(json.dumps(record, ensure_ascii=False))
    (folder / "pairs.jsonl").write_text("\n".join(edited) + "\n", encoding="utf-8")


def test_the_fingerprint_comes_from_the_files_and_a_stale_manifest_is_an_error(tmp_path: Path) -> None:
    folder = make_dataset(tmp_path / "data")
    plain = tmp_path / "plain"
    shutil.copytree(folder, plain)  # the same content (made again, its timestamps could differ by a second)
    before = dataset_fingerprint(read_dataset(folder))
    manifest = (folder / "manifest.json").read_bytes()
    _repoint_evidence(folder)
    assert (folder / "manifest.json").read_bytes() == manifest
    with pytest.raises(InputError, match=r"manifest\.json: .*pairs\.jsonl.*changed after the manifest was written"):
        dataset_fingerprint(read_dataset(folder))
    # without its manifest the folder is identified by its files: another identity than the original content
    (folder / "manifest.json").unlink()
    assert dataset_fingerprint(read_dataset(folder)) != before
    # and the same content gives the same identity with or without a manifest (runs stay comparable)
    (plain / "manifest.json").unlink()
    assert dataset_fingerprint(read_dataset(plain)) == before


def test_a_folder_without_a_manifest_is_evaluated_with_a_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from goldset.evaluation.evaluator import evaluate
    from tests.helpers.eval_data import perfect_sample, write_run_file

    monkeypatch.chdir(tmp_path)
    folder = make_dataset(tmp_path / "data")
    (folder / "manifest.json").unlink()
    run = write_run_file(tmp_path / "run.jsonl", [perfect_sample(p) for p in evaluated_pairs()])
    result = evaluate(folder, run=run, out_dir=tmp_path / "out")
    notes = [n for n in result.notes if "no manifest.json" in n]
    assert notes and "identified by the hash of its files" in notes[0]
    assert notes[0] in result.summary.notes

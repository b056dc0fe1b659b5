"""Dataset resolution, pair selection, fingerprints and stratified sampling for evaluation."""

from __future__ import annotations

from pathlib import Path

import pytest

from goldset.dataset import read_dataset
from goldset.errors import InputError, UsageError
from goldset.evaluation.datasets import dataset_fingerprint, resolve_dataset, select_pairs
from goldset.evaluation.sampling import allocate, stratified_sample
from tests.helpers.eval_data import PAIR_SPECS, evaluated_pairs, make_dataset


def test_resolve_dataset_reads_a_folder_and_refuses_a_version_name(tmp_path: Path) -> None:
    folder = make_dataset(tmp_path / "data")
    ds = resolve_dataset(str(folder))
    assert len(ds.pairs) == len(PAIR_SPECS)
    with pytest.raises(InputError, match="goldset release"):
        resolve_dataset("v1")


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
    a = dataset_fingerprint(read_dataset(make_dataset(tmp_path / "a")))
    b = dataset_fingerprint(read_dataset(make_dataset(tmp_path / "b")))
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

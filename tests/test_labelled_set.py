"""Integrity of the hand-labelled QA set (tests/fixtures/labelled): its shape, its quotes, its links and its counts.

The set measures the filters (benchmarks/bench_filter_accuracy.py); a broken quote or a dangling link would make
those figures wrong without anyone noticing. The held-out set has its own test (test_heldout_set.py) on the same
checks (tests/helpers/labelled_sets.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from goldset.io import read_jsonl
from goldset.kb import ingest
from goldset.schema import Chunk
from tests.helpers.labelled_sets import (
    LANGS,
    TYPES,
    LabelledSet,
    problems_chunks,
    problems_copies,
    problems_counts,
    problems_groups,
    problems_quotes,
    problems_shape,
    problems_variants,
)

LABELLED = LabelledSet(Path(__file__).resolve().parent / "fixtures" / "labelled")


def test_ids_are_unique_and_records_have_the_agreed_shape() -> None:
    assert LABELLED.records
    assert not problems_shape(LABELLED)


def test_every_quote_is_in_its_document_and_only_answerable_pairs_quote() -> None:
    assert not problems_quotes(LABELLED)


@pytest.fixture(scope="module")
def chunks(tmp_path_factory: pytest.TempPathFactory) -> list[Chunk]:
    out = tmp_path_factory.mktemp("labelled-kb")
    ingest(LABELLED.docs, out_dir=out)
    return read_jsonl(out / "chunks.jsonl", Chunk)


def test_each_quote_lies_in_one_chunk_and_multi_hop_pairs_span_two(chunks: list[Chunk]) -> None:
    """The benchmark places each pair in the chunk holding its quote; a multi-hop pair needs two chunks."""
    assert not problems_chunks(LABELLED, chunks)


def test_variants_point_to_good_pairs_and_copy_their_question() -> None:
    assert not problems_variants(LABELLED)


def test_copies_are_made_of_their_evidence_and_light_edits_differ_from_their_copy() -> None:
    assert not problems_copies(LABELLED)


def test_groups_hold_one_good_pair_and_pairs_of_one_kind() -> None:
    assert not problems_groups(LABELLED)


@pytest.mark.parametrize("lang", LANGS)
def test_counts(lang: str) -> None:
    assert not problems_counts(LABELLED, lang, good=30, per_type=3, dup_groups=6, cd_groups=6, self_refs=8)


def test_every_question_type_appears_in_both_languages() -> None:
    for lang in LANGS:
        assert {r["question_type"] for r in LABELLED.of(lang, "good")} == set(TYPES), lang

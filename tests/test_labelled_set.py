"""Integrity of the two hand-labelled QA sets (tests/fixtures/labelled, the one the filters were tuned on, and
tests/fixtures/heldout, written afterwards over other pages): shape, quotes, links and counts.

The sets measure the filters (benchmarks/bench_filter_accuracy.py); a broken quote or a dangling link would make
those figures wrong without anyone noticing. What only the held-out set promises is in test_heldout_set.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

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

FIXTURES = Path(__file__).resolve().parent / "fixtures"
#: set -> (the set, the sizes it promises per language)
SETS: dict[str, tuple[LabelledSet, dict[str, int]]] = {
    "labelled": (
        LabelledSet(FIXTURES / "labelled"),
        {"good": 30, "per_type": 3, "dup_groups": 6, "cd_groups": 6, "self_refs": 8},
    ),
    "heldout": (
        LabelledSet(FIXTURES / "heldout"),
        {"good": 20, "per_type": 2, "dup_groups": 5, "cd_groups": 5, "self_refs": 6},
    ),
}


@pytest.fixture(params=sorted(SETS), scope="module")
def labelled(request: pytest.FixtureRequest) -> tuple[LabelledSet, dict[str, int]]:
    return SETS[request.param]


def test_ids_are_unique_and_records_have_the_agreed_shape(labelled: tuple[LabelledSet, Any]) -> None:
    s, _ = labelled
    assert s.records
    assert not problems_shape(s)


def test_every_quote_is_in_its_document_and_only_answerable_pairs_quote(labelled: tuple[LabelledSet, Any]) -> None:
    assert not problems_quotes(labelled[0])


def test_each_quote_lies_in_one_chunk_and_multi_hop_pairs_span_two(
    labelled: tuple[LabelledSet, Any], tmp_path: Path
) -> None:
    """The benchmark places each pair in the chunk holding its quote; a multi-hop pair needs two chunks."""
    s, _ = labelled
    ingest(s.docs, out_dir=tmp_path)
    assert not problems_chunks(s, read_jsonl(tmp_path / "chunks.jsonl", Chunk))


def test_variants_point_to_good_pairs_and_copy_their_question(labelled: tuple[LabelledSet, Any]) -> None:
    assert not problems_variants(labelled[0])


def test_copies_are_made_of_their_evidence_and_light_edits_differ_from_their_copy(
    labelled: tuple[LabelledSet, Any],
) -> None:
    assert not problems_copies(labelled[0])


def test_groups_hold_one_good_pair_and_pairs_of_one_kind(labelled: tuple[LabelledSet, Any]) -> None:
    assert not problems_groups(labelled[0])


@pytest.mark.parametrize("lang", LANGS)
def test_counts(labelled: tuple[LabelledSet, dict[str, int]], lang: str) -> None:
    s, sizes = labelled
    assert not problems_counts(s, lang, **sizes)


def test_every_question_type_appears_in_both_languages(labelled: tuple[LabelledSet, Any]) -> None:
    for lang in LANGS:
        assert {r["question_type"] for r in labelled[0].of(lang, "good")} == set(TYPES), lang

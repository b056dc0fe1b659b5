"""Integrity of the held-out hand-labelled QA set (tests/fixtures/heldout): its shape, quotes, links and counts.

The set was written after the filters were tuned, over FastAPI pages the tuning never saw, so that
benchmarks/bench_filter_accuracy.py (``--set heldout``) measures them honestly; a broken quote or a dangling link
would make those figures wrong without anyone noticing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from goldset.io import read_jsonl
from goldset.kb import ingest
from goldset.schema import Chunk
from goldset.text import tokenize
from tests.helpers.labelled_sets import (
    LANGS,
    TYPES,
    LabelledSet,
    covered,
    problems_chunks,
    problems_copies,
    problems_counts,
    problems_groups,
    problems_quotes,
    problems_shape,
    problems_variants,
)

FIXTURES = Path(__file__).resolve().parent / "fixtures"
HELDOUT = LabelledSet(FIXTURES / "heldout")


def test_ids_are_unique_and_records_have_the_agreed_shape() -> None:
    assert HELDOUT.records
    assert not problems_shape(HELDOUT)


def test_every_quote_is_in_its_document_and_only_answerable_pairs_quote() -> None:
    assert not problems_quotes(HELDOUT)


@pytest.fixture(scope="module")
def chunks(tmp_path_factory: pytest.TempPathFactory) -> list[Chunk]:
    out = tmp_path_factory.mktemp("heldout-kb")
    ingest(HELDOUT.docs, out_dir=out)
    return read_jsonl(out / "chunks.jsonl", Chunk)


def test_each_quote_lies_in_one_chunk_and_multi_hop_pairs_span_two(chunks: list[Chunk]) -> None:
    """The benchmark places each pair in the chunk holding its quote; a multi-hop pair needs two chunks."""
    assert not problems_chunks(HELDOUT, chunks)


def test_variants_point_to_good_pairs_and_copy_their_question() -> None:
    assert not problems_variants(HELDOUT)


def test_copies_are_made_of_their_evidence_and_light_edits_differ_from_their_copy() -> None:
    assert not problems_copies(HELDOUT)


def test_light_edits_stay_close_to_the_copy_they_edit() -> None:
    """A light edit keeps most of its copy's words (a prefix, a swap, two or three synonyms): word-set Jaccard ≥ 0.6."""
    copy_of = {r["variant_of"]: r["answer"] for r in HELDOUT.records if r["label"] == "verbatim_copy"}
    far = []
    for r in HELDOUT.records:
        if r["label"] == "light_edit":
            a, b = set(tokenize(copy_of[r["variant_of"]])), set(tokenize(r["answer"]))
            if len(a & b) / len(a | b) < 0.6:
                far.append(r["id"])
    assert not far


def test_good_answers_are_not_copies_of_their_evidence() -> None:
    """Independent of goldset's verbatim check: under three quarters of a good answer's words sit in a run of three
    copied from its documents (identifiers and CJK characters make some overlap unavoidable)."""
    grams = {}
    for doc, text in HELDOUT.texts.items():
        toks = tokenize(text)
        grams[doc] = {tuple(toks[i : i + 3]) for i in range(len(toks) - 2)}
    copied = [
        (r["id"], round(share, 2))
        for r in HELDOUT.records
        if r["label"] in ("good", "duplicate", "close_different") and r["evidence"]
        for share in [covered(r["answer"], set().union(*(grams[e["doc_id"]] for e in r["evidence"])))]
        if share >= 0.75
    ]
    assert not copied


def test_groups_hold_one_good_pair_and_pairs_of_one_kind() -> None:
    assert not problems_groups(HELDOUT)


@pytest.mark.parametrize("lang", LANGS)
def test_counts(lang: str) -> None:
    assert not problems_counts(HELDOUT, lang, good=20, per_type=2, dup_groups=5, cd_groups=5, self_refs=6)


def test_every_question_type_appears_in_both_languages() -> None:
    for lang in LANGS:
        assert {r["question_type"] for r in HELDOUT.of(lang, "good")} == set(TYPES), lang


def test_documents_are_other_pages_than_the_tuning_set_and_the_same_in_both_languages() -> None:
    """Held out means other pages: none of the labelled set's documents, and each page in English and Chinese."""
    pages = {lang: {p.name for p in (HELDOUT.docs / lang).glob("*.md")} for lang in LANGS}
    tuned = {p.name for p in (FIXTURES / "labelled" / "docs").rglob("*.md")}
    assert pages["en"] == pages["zh"] and 4 <= len(pages["en"]) <= 6
    assert not pages["en"] & tuned
    assert (HELDOUT.root / "LICENSE-fastapi-docs.txt").is_file() and (HELDOUT.root / "README.md").is_file()
    cited = {e["doc_id"] for r in HELDOUT.records for e in r["evidence"]}
    assert cited == {f"{lang}/{name}" for lang in LANGS for name in pages[lang]}

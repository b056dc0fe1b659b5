"""Integrity of the held-out set of copy edits by operation (tests/fixtures/heldout-ops).

The set was written before the copy check was changed, by someone who did not read it, over FastAPI pages that no
other fixture holds, so that benchmarks/bench_copy_ops.py reports per edit operation how many light edits the check
catches. A broken quote, a dangling link or a mislabelled operation would make those figures wrong unnoticed.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from goldset.io import read_jsonl
from goldset.kb import ingest
from goldset.schema import Chunk
from tests.helpers.labelled_sets import (
    LANGS,
    LabelledSet,
    evidence_shares,
    problems_chunks,
    problems_copied_good_answers,
    problems_one_edit_per_operation,
    problems_operations,
    problems_pages,
    problems_quotes,
    problems_shape,
    problems_thin_copies,
    problems_variants,
)

FIXTURES = Path(__file__).resolve().parent / "fixtures"
OPS = LabelledSet(FIXTURES / "heldout-ops")
OPERATIONS = ("lead_in", "clause_swap", "synonym_swap", "cell_reorder", "sentence_merge")
#: The smallest count per language the set promises: good pairs, verbatim copies, light edits of each operation.
MIN_GOOD, MIN_COPIES, MIN_PER_OPERATION = 25, 10, 12


def test_records_have_the_shape_of_the_other_sets_and_an_operation_exactly_on_light_edits() -> None:
    assert OPS.records
    assert not problems_shape(OPS)
    assert not problems_operations(OPS, OPERATIONS)


def test_every_quote_is_in_its_document_and_lies_in_one_chunk(tmp_path: Path) -> None:
    """The benchmark places each pair in the chunk holding its quote; a multi-hop pair needs two chunks."""
    assert not problems_quotes(OPS)
    ingest(OPS.docs, out_dir=tmp_path)
    assert not problems_chunks(OPS, read_jsonl(tmp_path / "chunks.jsonl", Chunk))


def test_copies_point_to_good_pairs_and_each_good_pair_has_one_edit_per_operation_at_most() -> None:
    """One per operation: the benchmark judges each operation in its own workspace, where a pair's id comes from its
    question and chunks, so two edits of one pair and operation would collide."""
    assert not problems_variants(OPS)
    assert not problems_one_edit_per_operation(OPS)


def test_verbatim_copies_are_made_of_their_documents_words() -> None:
    assert not problems_thin_copies(OPS)


def test_light_edits_keep_their_evidence_words() -> None:
    """A light edit is its evidence with a lead-in, a reordering, a merge or up to three synonyms: at least 80% of
    its words come from the quotes, and it keeps at least 80% of the quotes' distinct words (link targets and
    Markdown aside, a copy drops nothing)."""
    far = []
    for r in OPS.records:
        if r["label"] == "light_edit":
            from_quotes, kept = evidence_shares(r)
            if from_quotes < 0.8 or kept < 0.8:
                far.append((r["id"], round(from_quotes, 2), round(kept, 2)))
    assert not far


def test_cell_reorders_edit_a_list_of_the_page() -> None:
    """No page of the set has a table, so every cell_reorder reorders the items of a Markdown list it quotes."""
    item = re.compile(r"(?m)^\s*\* \S")
    not_lists = [
        r["id"]
        for r in OPS.records
        if r.get("operation") == "cell_reorder" and not any(item.search(e["quote"]) for e in r["evidence"])
    ]
    assert not not_lists
    assert not [doc for doc, text in OPS.texts.items() if re.search(r"(?m)^\s*\|.*\|\s*$", text)]


def test_good_answers_are_not_copies_of_their_evidence() -> None:
    """Independent of goldset's copy check: under three quarters of a good answer's words sit in a run of three
    copied from its documents."""
    assert not problems_copied_good_answers(OPS)


def test_counts_per_language_and_operation() -> None:
    short = []
    for lang in LANGS:
        if len(OPS.of(lang, "good")) < MIN_GOOD:
            short.append(f"{lang}: fewer than {MIN_GOOD} good pairs")
        if len(OPS.of(lang, "verbatim_copy")) < MIN_COPIES:
            short.append(f"{lang}: fewer than {MIN_COPIES} verbatim copies")
        ops = Counter(r["operation"] for r in OPS.of(lang, "light_edit"))
        short += [f"{lang}: {ops[op]} {op} edits" for op in OPERATIONS if ops[op] < MIN_PER_OPERATION]
    assert not short


def test_documents_are_pages_no_other_fixture_holds_and_the_same_in_both_languages() -> None:
    assert not problems_pages(OPS, FIXTURES, ("labelled", "heldout", "kb", "generate"), (5, 6))

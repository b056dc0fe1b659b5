"""Integrity of the third held-out batch of copy edits (tests/fixtures/heldout-ops3).

Written for issue #22 before the copy check was changed (and before its baseline was measured), without reading the
check's code or thresholds, over three FastAPI pages in each language that no other fixture holds. One edit
operation per light edit, four edits per operation and language: ``lead_in``, ``clause_swap``, ``synonym_swap``,
``cell_reorder``, ``sentence_merge``, ``partial_copy``; good pairs in the writer's own words (ten of them, the hard
ones, with no edit made of them) and a few verbatim copies as the control. benchmarks/bench_copy_ops.py
(``--set heldout-ops3``) reports per operation how many the check catches; these tests keep a broken quote or an
edit that is not what its operation says from making those figures wrong unnoticed.
"""

from __future__ import annotations

import re
from collections import Counter
from difflib import SequenceMatcher
from pathlib import Path

from goldset.io import read_jsonl
from goldset.kb import ingest
from goldset.schema import Chunk
from goldset.text import tokenize
from tests.helpers.labelled_sets import (
    LANGS,
    LabelledSet,
    Record,
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
OPS3 = LabelledSet(FIXTURES / "heldout-ops3")
OPERATIONS = ("lead_in", "clause_swap", "synonym_swap", "cell_reorder", "sentence_merge", "partial_copy")
PER_OPERATION, HARD_GOOD, COPIES = 4, 10, 6
#: The lead-ins the batch uses, each followed by the quote unchanged (emphasis dropped, first letter lowered).
LEAD_INS = (
    "To sum up, ",
    "In short, ",
    "Put simply, ",
    "Basically, ",
    "总的来说，",
    "简而言之，",
    "简单来说，",
    "总之，",
)
#: The shortest clause a partial_copy copies, in tokens (a word in English, a character in Chinese).
MIN_COPIED_RUN = {"en": 7, "zh": 12}


def _plain(text: str) -> str:
    """Markdown emphasis and list markers dropped, as a model copying the rendered page would."""
    text = re.sub(r"\*\*(.+?)\*\*", r"\1", text)
    text = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"\1", text)
    return re.sub(r"^\s*\* ", "", text, flags=re.M)


def _edits(op: str) -> list[Record]:
    return [r for r in OPS3.records if r.get("operation") == op]


def _quote_tokens(r: Record) -> list[str]:
    return [w for e in r["evidence"] for w in tokenize(_plain(e["quote"]))]


def _hard_goods() -> list[Record]:
    bases = {r["variant_of"] for r in OPS3.records if r["variant_of"]}
    return [r for r in OPS3.records if r["label"] == "good" and r["id"] not in bases]


def test_records_have_the_shape_of_the_other_sets_and_an_operation_exactly_on_light_edits() -> None:
    assert OPS3.records
    assert not problems_shape(OPS3)
    assert not problems_operations(OPS3, OPERATIONS)
    assert not problems_variants(OPS3)
    assert not problems_one_edit_per_operation(OPS3)


def test_every_quote_is_in_its_document_and_lies_in_one_chunk(tmp_path: Path) -> None:
    assert not problems_quotes(OPS3)
    ingest(OPS3.docs, out_dir=tmp_path)
    assert not problems_chunks(OPS3, read_jsonl(tmp_path / "chunks.jsonl", Chunk))


def test_verbatim_copies_and_good_answers_are_what_their_labels_say() -> None:
    """Copies are made of their documents' words; under three quarters of a good answer sits in a copied run of
    three words (independent of goldset's copy check)."""
    assert not problems_thin_copies(OPS3)
    assert not problems_copied_good_answers(OPS3)


def test_lead_in_edits_are_a_lead_in_and_the_quote_unchanged() -> None:
    wrong = []
    for r in _edits("lead_in"):
        lead = next((x for x in LEAD_INS if r["answer"].startswith(x)), None)
        rest = r["answer"][len(lead) :] if lead else ""
        quote = _plain(r["evidence"][0]["quote"])
        if lead is None or len(r["evidence"]) != 1 or rest.lower() != quote.lower():
            wrong.append(r["id"])
    assert not wrong


def test_reorderings_keep_the_quotes_words_and_change_their_order() -> None:
    """clause_swap, cell_reorder, sentence_merge: at least 80% of the answer's tokens come from the quotes, it keeps
    at least 70% of them (connectives added, an opener or a trailing colon clause dropped), and (swaps and reorders)
    the order changed."""
    wrong = []
    for op in ("clause_swap", "cell_reorder", "sentence_merge"):
        for r in _edits(op):
            quote, answer = _quote_tokens(r), tokenize(r["answer"])
            q, a = Counter(quote), Counter(answer)
            from_quote = sum((a & q).values()) / len(answer)
            kept = sum((a & q).values()) / len(quote)
            longest = SequenceMatcher(None, quote, answer, autojunk=False).find_longest_match(
                0, len(quote), 0, len(answer)
            )
            reordered = longest.size < 0.9 * len(quote)
            if from_quote < 0.8 or kept < 0.7 or (op != "sentence_merge" and not reordered):
                wrong.append(f"{r['id']}: {from_quote:.2f} from the quote, {kept:.2f} kept, run {longest.size}")
    assert not wrong


def test_synonym_swaps_change_a_few_words_in_place() -> None:
    """Compared token by token, the order is kept and two to six spans of at most four tokens each changed."""
    wrong = []
    for r in _edits("synonym_swap"):
        quote, answer = _quote_tokens(r), tokenize(r["answer"])
        spans = [o for o in SequenceMatcher(None, quote, answer, autojunk=False).get_opcodes() if o[0] != "equal"]
        if not 2 <= len(spans) <= 6 or any(max(i2 - i1, j2 - j1) > 4 for _, i1, i2, j1, j2 in spans):
            wrong.append(f"{r['id']}: {spans}")
    assert not wrong


def test_partial_copies_copy_one_clause_and_word_the_rest_anew() -> None:
    """One run of at least 7 words / 12 characters from the quote, at most three quarters of the answer."""
    wrong = []
    for r in _edits("partial_copy"):
        quote, answer = _quote_tokens(r), tokenize(r["answer"])
        run = SequenceMatcher(None, answer, quote, autojunk=False).find_longest_match(0, len(answer), 0, len(quote))
        if run.size < MIN_COPIED_RUN[r["language"]] or run.size > 0.75 * len(answer):
            wrong.append(f"{r['id']}: a copied run of {run.size} tokens in {len(answer)}")
    assert not wrong


def test_counts_per_language_and_operation() -> None:
    short = []
    for lang in LANGS:
        ops = Counter(r["operation"] for r in OPS3.of(lang, "light_edit"))
        short += [f"{lang}: {ops[op]} {op} edits" for op in OPERATIONS if ops[op] != PER_OPERATION]
        if len([r for r in _hard_goods() if r["language"] == lang]) != HARD_GOOD:
            short.append(f"{lang}: hard good pairs")
        if len(OPS3.of(lang, "verbatim_copy")) != COPIES:
            short.append(f"{lang}: verbatim copies")
    assert not short


def test_documents_are_pages_no_other_fixture_holds_and_the_same_in_both_languages() -> None:
    others = ("labelled", "heldout", "heldout-ops", "heldout-ops2", "kb", "generate")
    assert not problems_pages(OPS3, FIXTURES, others, (3, 3))

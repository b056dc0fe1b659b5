"""Integrity of the second held-out batch of copy edits (tests/fixtures/heldout-ops2).

The batch was written after the heldout-ops baseline (every single-operation edit caught) and before the copy check
was changed, by someone who did not read the check, over FastAPI pages that no other fixture holds. It holds what an
LLM told "do not copy" writes: several operations on one quote (``combined``), a lead-in and a synonym on a quote of
one short sentence (``short_evidence``), one clause copied and the rest paraphrased (``partial_copy``), and good pairs
that share the source's names, identifiers and numbers in their own words. benchmarks/bench_copy_ops.py
(``--set heldout-ops2``) reports per operation how many the check catches; a broken quote, a mislabelled operation or
an edit that is not what its operation says would make those figures wrong unnoticed.
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
    doc_grams,
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
OPS2 = LabelledSet(FIXTURES / "heldout-ops2")
OPERATIONS = ("combined", "short_evidence", "partial_copy")
#: The smallest count per language the set promises, per operation, and of good pairs with no edit (the hard ones).
MIN_PER_OPERATION = {"combined": 15, "short_evidence": 12, "partial_copy": 12}
MIN_HARD_GOOD = 10
#: The length of a short_evidence quote in tokens (a word in English, a character in Chinese: goldset.text.tokenize).
SHORT_QUOTE = {"en": (8, 20), "zh": (12, 30)}
#: The shortest clause a partial_copy copies, in tokens: long enough to be contamination.
MIN_COPIED_RUN = {"en": 8, "zh": 15}
SENTENCE_END = {"en": re.compile(r"[.!?]\s+\S"), "zh": re.compile(r"[。！？]\s*\S")}


def _edits(op: str) -> list[Record]:
    return [r for r in OPS2.records if r.get("operation") == op]


def _quote_tokens(r: Record) -> list[str]:
    return [w for e in r["evidence"] for w in tokenize(e["quote"])]


def _hard_goods() -> list[Record]:
    """Good pairs no copy or edit is made of: the hard good pairs of the README."""
    bases = {r["variant_of"] for r in OPS2.records if r["variant_of"]}
    return [r for r in OPS2.records if r["label"] == "good" and r["id"] not in bases]


def test_records_have_the_shape_of_the_other_sets_and_an_operation_exactly_on_light_edits() -> None:
    assert OPS2.records
    assert not problems_shape(OPS2)
    assert not problems_operations(OPS2, OPERATIONS)


def test_every_quote_is_in_its_document_and_lies_in_one_chunk(tmp_path: Path) -> None:
    """The benchmark places each pair in the chunk holding its quote; a multi-hop pair needs two chunks."""
    assert not problems_quotes(OPS2)
    ingest(OPS2.docs, out_dir=tmp_path)
    assert not problems_chunks(OPS2, read_jsonl(tmp_path / "chunks.jsonl", Chunk))


def test_copies_point_to_good_pairs_and_each_good_pair_has_one_edit_per_operation_at_most() -> None:
    assert not problems_variants(OPS2)
    assert not problems_one_edit_per_operation(OPS2)


def test_verbatim_copies_are_made_of_their_documents_words_and_copy_the_short_quotes() -> None:
    """The verbatim copies are the control of the short_evidence edits: one for each pair with a short edit."""
    assert not problems_thin_copies(OPS2)
    copied = Counter(r["variant_of"] for r in OPS2.records if r["label"] == "verbatim_copy")
    assert copied == Counter(r["variant_of"] for r in _edits("short_evidence"))


def test_combined_edits_apply_two_or_three_operations_and_keep_most_of_the_wording() -> None:
    """The note lists the operations (``combined: op; op; …``, emphasis dropped aside); at least 80% of the answer's
    words come from the quotes and it keeps at least two thirds of their distinct words."""
    wrong = []
    for r in _edits("combined"):
        note = re.fullmatch(r"(?:combined|组合改写)[:：](.*)", r["note"], re.S)
        parts = re.split(r"[;；]", note.group(1)) if note else []
        listed = [o for o in parts if o.strip() and not re.search(r"emphasis|list markers|强调", o)]
        from_quotes, kept = evidence_shares(r)
        if not 2 <= len(listed) <= 3:
            wrong.append(f"{r['id']}: the note does not list two or three operations: {r['note']!r}")
        if from_quotes < 0.8 or kept < 2 / 3:
            wrong.append(f"{r['id']}: {from_quotes:.2f} of its words from the quotes, {kept:.2f} of theirs kept")
    assert not wrong


def test_short_evidence_edits_are_one_short_sentence_with_a_lead_in_and_one_synonym() -> None:
    """The quote is one sentence of 8-20 tokens (English) or 12-30 (Chinese); compared token by token, the answer
    differs from it by a lead-in at its start (which may replace the quote's first word or two) and at most one
    other span of up to four tokens (the synonym)."""
    wrong = []
    for r in _edits("short_evidence"):
        quote, answer = _quote_tokens(r), tokenize(r["answer"])
        low, high = SHORT_QUOTE[r["language"]]
        text = r["evidence"][0]["quote"].strip() if len(r["evidence"]) == 1 else ""
        if not text or not low <= len(quote) <= high or SENTENCE_END[r["language"]].search(text):
            wrong.append(f"{r['id']}: not one quote of one sentence of {low}-{high} tokens ({len(quote)})")
            continue
        spans = [o for o in SequenceMatcher(None, quote, answer, autojunk=False).get_opcodes() if o[0] != "equal"]
        lead_in = bool(spans) and spans[0][3] == 0 and spans[0][0] in ("insert", "replace")
        rest = spans[1:] if lead_in else spans
        changed = sum(max(i2 - i1, j2 - j1) for _, i1, i2, j1, j2 in rest)
        if not lead_in or len(rest) > 2 or changed > 4:
            wrong.append(f"{r['id']}: not a lead-in and one synonym ({spans})")
    assert not wrong


def test_partial_copies_copy_one_long_clause_and_paraphrase_the_rest() -> None:
    """A run of at least 8 tokens (English) or 15 (Chinese) is copied from a quote, and it is at most three quarters
    of the answer; of the answer's other tokens, under 60% sit in a run of three found in the documents."""
    wrong = []
    for r in _edits("partial_copy"):
        answer = tokenize(r["answer"])
        runs = []
        for e in r["evidence"]:
            quote = tokenize(e["quote"])
            runs.append(
                SequenceMatcher(None, answer, quote, autojunk=False).find_longest_match(0, len(answer), 0, len(quote))
            )
        run = max(runs, key=lambda m: m.size)
        grams = doc_grams(OPS2, [e["doc_id"] for e in r["evidence"]])
        hit = [False] * len(answer)
        for i in range(len(answer) - 2):
            if tuple(answer[i : i + 3]) in grams:
                hit[i : i + 3] = [True] * 3
        outside = [hit[i] for i in range(len(answer)) if not run.a <= i < run.a + run.size]
        if run.size < MIN_COPIED_RUN[r["language"]] or run.size > 0.75 * len(answer):
            wrong.append(f"{r['id']}: a copied run of {run.size} tokens in {len(answer)}")
        elif sum(outside) >= 0.6 * len(outside):
            wrong.append(f"{r['id']}: the rest is copied too ({sum(outside)}/{len(outside)} tokens)")
    assert not wrong


def test_good_answers_are_not_copies_and_the_hard_ones_share_the_sources_terms() -> None:
    """Independent of goldset's copy check: under three quarters of a good answer's words sit in a run of three
    copied from its documents. A hard good pair uses at least two of its quotes' identifiers or numbers (a
    backticked span of the answer, or a dotted version number, found in the quotes)."""
    assert not problems_copied_good_answers(OPS2)
    few = []
    for r in _hard_goods():
        quotes = " ".join(e["quote"] for e in r["evidence"])
        terms = set(re.findall(r"`([^`]+)`", r["answer"])) | set(re.findall(r"\d+(?:\.\d+)+", r["answer"]))
        if len({t for t in terms if t in quotes}) < 2:
            few.append(r["id"])
    assert not few


def test_counts_per_language_and_operation() -> None:
    short = []
    for lang in LANGS:
        ops = Counter(r["operation"] for r in OPS2.of(lang, "light_edit"))
        short += [f"{lang}: {ops[op]} {op} edits" for op, n in MIN_PER_OPERATION.items() if ops[op] < n]
        hard = [r for r in _hard_goods() if r["language"] == lang]
        if len(hard) < MIN_HARD_GOOD:
            short.append(f"{lang}: {len(hard)} hard good pairs")
    assert not short


def test_documents_are_pages_no_other_fixture_holds_and_the_same_in_both_languages() -> None:
    others = ("labelled", "heldout", "heldout-ops", "kb", "generate")
    assert not problems_pages(OPS2, FIXTURES, others, (5, 6))

"""What only the held-out hand-labelled QA set (tests/fixtures/heldout) promises; the checks both sets share are in
test_labelled_set.py.

The set was written after the filters were tuned, over FastAPI pages the tuning never saw, so that
benchmarks/bench_filter_accuracy.py (``--set heldout``) measures them honestly; a broken quote or a dangling link
would make those figures wrong without anyone noticing.
"""

from __future__ import annotations

from pathlib import Path

from goldset.text import tokenize
from tests.helpers.labelled_sets import LANGS, LabelledSet, covered

FIXTURES = Path(__file__).resolve().parent / "fixtures"
HELDOUT = LabelledSet(FIXTURES / "heldout")


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


def test_documents_are_other_pages_than_the_tuning_set_and_the_same_in_both_languages() -> None:
    """Held out means other pages: none of the labelled set's documents, and each page in English and Chinese."""
    pages = {lang: {p.name for p in (HELDOUT.docs / lang).glob("*.md")} for lang in LANGS}
    tuned = {p.name for p in (FIXTURES / "labelled" / "docs").rglob("*.md")}
    assert pages["en"] == pages["zh"] and 4 <= len(pages["en"]) <= 6
    assert not pages["en"] & tuned
    assert (HELDOUT.root / "LICENSE-fastapi-docs.txt").is_file() and (HELDOUT.root / "README.md").is_file()
    cited = {e["doc_id"] for r in HELDOUT.records for e in r["evidence"]}
    assert cited == {f"{lang}/{name}" for lang in LANGS for name in pages[lang]}

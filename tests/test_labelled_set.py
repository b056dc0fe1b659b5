"""Integrity of the hand-labelled QA set (tests/fixtures/labelled): its shape, its quotes, its links and its counts.

The set measures the filters (benchmarks/bench_filter_accuracy.py); a broken quote or a dangling link would make
those figures wrong without anyone noticing.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest

from goldset.generation.validation import quote_in_text
from goldset.io import read_jsonl
from goldset.kb import ingest
from goldset.schema import Chunk
from goldset.text import tokenize

ROOT = Path(__file__).resolve().parent / "fixtures" / "labelled"
DOCS = ROOT / "docs"
LANGS = ("en", "zh")
TYPES = ("factual", "reasoning", "comparison", "multi_hop", "procedural", "unanswerable")
LABELS = ("good", "verbatim_copy", "light_edit", "split_copy", "duplicate", "close_different", "self_reference")
COPIES = ("verbatim_copy", "light_edit", "split_copy")
KEYS = {"id", "language", "label", "question_type", "question", "answer", "evidence", "variant_of", "group", "note"}


def _load() -> list[dict[str, Any]]:
    records = []
    with (ROOT / "pairs.jsonl").open(encoding="utf-8") as f:
        for n, line in enumerate(f, start=1):
            assert line.strip(), f"pairs.jsonl:{n}: blank line"
            records.append(json.loads(line))
    return records


RECORDS = _load()
BY_ID = {r["id"]: r for r in RECORDS}


def _of(lang: str, label: str) -> list[dict[str, Any]]:
    return [r for r in RECORDS if r["language"] == lang and r["label"] == label]


def _answerable(r: dict[str, Any]) -> bool:
    return r["question_type"] != "unanswerable"


def test_ids_are_unique_and_records_have_the_agreed_shape() -> None:
    ids = [r["id"] for r in RECORDS]
    assert len(ids) == len(set(ids)), [i for i, c in Counter(ids).items() if c > 1]
    for r in RECORDS:
        assert set(r) == KEYS, (r["id"], set(r) ^ KEYS)
        assert r["language"] in LANGS, r["id"]
        assert r["label"] in LABELS, r["id"]
        assert r["question_type"] in TYPES, r["id"]
        assert r["id"].startswith(r["language"] + "-"), r["id"]
        assert r["question"].strip() and r["answer"].strip() and r["note"].strip(), r["id"]
        for e in r["evidence"]:
            assert set(e) == {"doc_id", "quote"}, r["id"]
            assert e["doc_id"].startswith(r["language"] + "/"), (r["id"], e["doc_id"])


def test_every_quote_is_in_its_document() -> None:
    texts = {p.relative_to(DOCS).as_posix(): p.read_text(encoding="utf-8") for p in DOCS.rglob("*.md")}
    missing = [
        (r["id"], e["doc_id"], e["quote"][:60])
        for r in RECORDS
        for e in r["evidence"]
        if e["doc_id"] not in texts or not quote_in_text(e["quote"], texts[e["doc_id"]])
    ]
    assert not missing, missing


def test_evidence_matches_the_question_type() -> None:
    for r in RECORDS:
        if r["question_type"] == "unanswerable":
            assert not r["evidence"], f"{r['id']}: an unanswerable pair has no evidence"
        else:
            assert r["evidence"], f"{r['id']}: an answerable pair quotes its evidence"


@pytest.fixture(scope="module")
def chunks(tmp_path_factory: pytest.TempPathFactory) -> list[Chunk]:
    out = tmp_path_factory.mktemp("labelled-kb")
    ingest(DOCS, out_dir=out)
    return read_jsonl(out / "chunks.jsonl", Chunk)


def test_each_quote_lies_in_one_chunk_and_multi_hop_pairs_span_two(chunks: list[Chunk]) -> None:
    """goldset's chunker keeps every quote whole (the benchmark places each pair in the chunk holding its quote),
    and a good multi-hop pair quotes sections that land in different chunks."""
    for r in RECORDS:
        ids = set()
        for e in r["evidence"]:
            hits = [c.id for c in chunks if c.doc_id == e["doc_id"] and quote_in_text(e["quote"], c.text)]
            assert len(hits) == 1, (r["id"], e["quote"][:60], len(hits))
            ids.update(hits)
        if r["label"] == "good" and r["question_type"] == "multi_hop":
            assert len(ids) >= 2, f"{r['id']}: a multi-hop pair needs evidence in two chunks"


def test_variants_point_to_good_pairs_and_copy_their_question() -> None:
    for r in RECORDS:
        if r["label"] in COPIES:
            base = BY_ID.get(r["variant_of"])
            assert base is not None and base["label"] == "good", r["id"]
            assert base["language"] == r["language"] and base["question_type"] == r["question_type"], r["id"]
            assert r["question"] == base["question"] and r["evidence"] == base["evidence"], r["id"]
            assert r["answer"] != base["answer"], r["id"]
            assert r["group"] is None, r["id"]
        else:
            assert r["variant_of"] is None or r["variant_of"] in BY_ID, r["id"]
        if r["label"] == "good":
            assert r["variant_of"] is None, r["id"]


def _covered(answer: str, source: set[tuple[str, ...]], n: int = 3) -> float:
    """Share of the answer's tokens inside some word n-gram that also occurs in the source (a stitched answer's
    seams cost nothing: the tokens on each side are covered by the n-grams of their own piece)."""
    toks = tokenize(answer)
    covered = [False] * len(toks)
    for i in range(len(toks) - n + 1):
        if tuple(toks[i : i + n]) in source:
            covered[i : i + n] = [True] * n
    return sum(covered) / len(toks)


def test_copies_are_made_of_their_evidence_and_light_edits_differ_from_their_copy() -> None:
    """A verbatim or split copy is made of its documents' words, runs of three at least; a light edit is not the
    copy it edits."""
    grams: dict[str, set[tuple[str, ...]]] = {}
    for p in DOCS.rglob("*.md"):
        toks = tokenize(p.read_text(encoding="utf-8"))
        grams[p.relative_to(DOCS).as_posix()] = {tuple(toks[i : i + 3]) for i in range(len(toks) - 2)}
    copy_of = {r["variant_of"]: r for r in RECORDS if r["label"] == "verbatim_copy"}
    for r in RECORDS:
        if r["label"] in ("verbatim_copy", "split_copy"):
            source = set().union(*(grams[e["doc_id"]] for e in r["evidence"]))
            share = _covered(r["answer"], source)
            assert share >= 0.95, f"{r['id']}: only {share:.0%} of its words are copied from its documents"
        if r["label"] == "light_edit":
            assert r["answer"] != copy_of[r["variant_of"]]["answer"], r["id"]


def test_groups_hold_one_good_pair_and_pairs_of_one_kind() -> None:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in RECORDS:
        if r["group"] is not None:
            groups[r["group"]].append(r)
    for r in RECORDS:
        if r["label"] in ("duplicate", "close_different"):
            assert r["group"] is not None, f"{r['id']}: needs a group"
    for g, members in groups.items():
        labels = Counter(m["label"] for m in members)
        assert labels["good"] == 1, (g, labels)
        kinds = set(labels) - {"good"}
        assert len(kinds) == 1 and kinds <= {"duplicate", "close_different"}, (g, labels)
        assert len({m["language"] for m in members}) == 1, g
        prefix = "dg" if kinds == {"duplicate"} else "cg"
        assert g.startswith(f"{members[0]['language']}-{prefix}-"), g


@pytest.mark.parametrize("lang", LANGS)
def test_counts(lang: str) -> None:
    good = _of(lang, "good")
    assert len(good) >= 30
    types = Counter(r["question_type"] for r in good)
    assert all(types[t] >= 3 for t in TYPES), types
    for label in ("verbatim_copy", "light_edit"):
        derived = Counter(r["variant_of"] for r in _of(lang, label))
        assert derived == Counter(r["id"] for r in good if _answerable(r)), label
    split = Counter(r["variant_of"] for r in _of(lang, "split_copy"))
    assert split == Counter(r["id"] for r in good if len(r["evidence"]) > 1)
    assert len({r["group"] for r in _of(lang, "duplicate")}) >= 6
    assert len({r["group"] for r in _of(lang, "close_different")}) >= 6
    assert len(_of(lang, "self_reference")) >= 8


def test_every_question_type_appears_in_both_languages() -> None:
    for lang in LANGS:
        assert {r["question_type"] for r in RECORDS if r["language"] == lang} == set(TYPES), lang

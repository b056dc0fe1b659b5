"""Near-duplicate detection: the MinHash/LSH index, duplicate groups, the survivor, and --against."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from goldset.filters import duplicates
from goldset.filters.neardup import (
    LSHParams,
    SentenceIndex,
    band_keys,
    duplicate_groups,
    minhash_signatures,
    similar_pairs,
)
from goldset.filters.textsim import canonical, edit_similarity
from goldset.schema import CheckResult, PairStatus
from tests.helpers.filter_data import pair

QUESTIONS = [
    "How do I declare a request body in FastAPI?",  # 0
    "How can I declare a request body in FastAPI?",  # 1 dup of 0
    "how do i declare a request-body in fastapi",  # 2 dup of 0 (case, punctuation)
    "Which HTTP methods should be used to send data?",  # 3
    "What does Swagger UI show for a body sent with GET?",  # 4
    "Which HTTP methods should one use to send data?",  # 5 dup of 3
    "如何在 FastAPI 中声明请求体？",  # 6
    "如何在FastAPI里声明请求体?",  # 7 dup of 6
    "FastAPI 的响应体是什么？",  # 8
]


def test_groups_found_english_and_chinese() -> None:
    groups, pairs = duplicate_groups(QUESTIONS, 0.85)
    assert groups == [[0, 1, 2], [3, 5], [6, 7]]
    assert all(0.85 <= p.similarity <= 1.0 for p in pairs)


def test_lsh_finds_what_brute_force_finds() -> None:
    """On a few hundred mutated sentences, LSH recall of the verified pairs against an exhaustive search."""
    rng = random.Random(7)
    words = "request body response model client server path query parameter header cookie form file".split()  # noqa: SIM905
    base = [" ".join(rng.choices(words, k=10)) + f" item{i}" for i in range(150)]
    texts = list(base)
    for b in base[:60]:
        w = b.split()
        i = rng.randrange(len(w) - 1)
        w[i], w[i + 1] = w[i + 1], w[i]
        texts.append(" ".join(w))
    found = {(p.i, p.j) for p in similar_pairs(texts, 0.85)}
    brute = {
        (i, j)
        for i in range(len(texts))
        for j in range(i + 1, len(texts))
        if edit_similarity(texts[i], texts[j]) >= 0.85
    }
    assert len(brute) >= 60
    assert found <= brute  # every reported pair is verified exactly
    assert len(found & brute) / len(brute) >= 0.95


def test_signatures_deterministic_and_identity() -> None:
    p = LSHParams(num_perm=16, bands=4)
    a = minhash_signatures([canonical(q) for q in QUESTIONS], p)
    b = minhash_signatures([canonical(q) for q in QUESTIONS], p)
    assert (a == b).all()
    assert (a[0] == minhash_signatures([canonical(QUESTIONS[0])], p)[0]).all()
    assert (a[0] != a[3]).any()


def test_empty_and_tiny_texts() -> None:
    groups, _ = duplicate_groups(["", "a", "a", "?", "b"], 0.9)
    assert [1, 2] in groups
    assert duplicate_groups([], 0.9) == ([], [])


def test_survivor_is_the_better_pair_and_duplicate_of_is_recorded() -> None:
    ps = [pair(f"qa-{i}", q, "An answer.") for i, q in enumerate(QUESTIONS)]
    # qa-1 has a failed copy check, qa-2 none: qa-0 and qa-2 tie on failures, so the rank decides.
    bad = CheckResult(passed=False, reason="copy")
    ps[0] = ps[0].model_copy(update={"checks": {"verbatim": bad}})
    ps[2] = ps[2].model_copy(update={"status": PairStatus.accepted})

    def rank(p):
        failed = sum(1 for c in p.checks.values() if not c.passed)
        return (0 if p.status == PairStatus.accepted else 1, failed)

    out = duplicates.find(ps, duplicates.Settings(), rank=rank)
    assert out["qa-2"].passed and "kept" in out["qa-2"].reason
    assert not out["qa-0"].passed and out["qa-0"].duplicate_of == "qa-2"
    assert not out["qa-1"].passed and out["qa-1"].duplicate_of == "qa-2"
    assert out["qa-0"].score is not None and out["qa-0"].score >= 0.85
    # The Chinese group: no rank difference, the lower id is kept.
    assert out["qa-6"].passed and out["qa-7"].duplicate_of == "qa-6"
    assert out["qa-4"].passed and out["qa-4"].duplicate_of is None


def test_against_previous_release() -> None:
    current = [pair("qa-new", "How can I declare a request body in FastAPI?", "x"), pair("qa-same", QUESTIONS[4], "x")]
    released = [pair("qa-old", QUESTIONS[0], "x"), pair("qa-same", QUESTIONS[4], "x")]
    out = duplicates.find(current, duplicates.Settings(), against=released)
    assert not out["qa-new"].passed and out["qa-new"].duplicate_of == "qa-old"
    assert "released" in out["qa-new"].reason
    assert out["qa-same"].passed  # the same pair in the release is not its own duplicate


def test_sentence_index_finds_near_copies_only() -> None:
    sentences = [
        "A request body is data sent by the client to your API.",
        "A response body is the data your API sends to the client.",
        "To send data, you should use one of POST, PUT, DELETE or PATCH.",
    ]
    index = SentenceIndex(sentences)
    hits = index.query_many(
        ["A request body is data sent by the client to your API?", "Totally unrelated text about cats."],
        threshold=0.5,
    )
    assert hits[0][0][0] == 0 and hits[0][0][1] > 0.95
    assert hits[1] == []
    assert index.candidates("to send data you should use one of post, put, delete or patch")[0] == sentences[2]


#: A is like B, B is like C, but A is not like C (similarities 0.96, 0.87, 0.84; threshold 0.85).
CHAIN = [
    "How do you read an optional header parameter in a FastAPI path operation function?",
    "How do you read an optional query parameter in a FastAPI path operation function?",
    "How do you get a required query parameter in a FastAPI path operation function?",
]


def test_no_chaining_through_a_third_pair() -> None:
    a, b, c = CHAIN
    assert edit_similarity(a, b) >= 0.85 and edit_similarity(b, c) >= 0.85 > edit_similarity(a, c)
    ps = [pair("qa-a", a, "x"), pair("qa-b", b, "x"), pair("qa-c", c, "x")]
    out = duplicates.find(ps, duplicates.Settings())  # rank: by id, so qa-a is settled first
    assert out["qa-a"].passed and out["qa-b"].duplicate_of == "qa-a"
    assert out["qa-c"].passed and out["qa-c"].duplicate_of is None  # only like qa-b, which is not kept
    # With qa-b the best, both others are duplicates of it, each above the threshold.
    out = duplicates.find(ps, duplicates.Settings(), rank=lambda p: p.id != "qa-b")
    assert out["qa-b"].passed and "best of 3 near-duplicates (qa-a, qa-c)" in out["qa-b"].reason
    for pid in ("qa-a", "qa-c"):
        assert out[pid].duplicate_of == "qa-b" and out[pid].score is not None and out[pid].score >= 0.85


def _crowd() -> list:
    """140 questions so alike that LSH buckets hold more than max_bucket (50) of them, and five exact repeats."""
    words = [f"{a}{b}" for a in "bcdfghklmnprstvz" for b in "aeiou"][:140]
    qs = [f"What does the {w} option of the FastAPI settings tutorial page do?" for w in words]
    qs += qs[:5]
    return [pair(f"qa-{i:03d}", q, "x") for i, q in enumerate(qs)]


def test_verdicts_do_not_depend_on_input_order() -> None:
    ps = _crowd()
    st = duplicates.Settings(distinct_identifiers=False)
    keys = band_keys(minhash_signatures(sorted({canonical(p.question) for p in ps}), st.lsh()), st.lsh())
    assert max(Counter(keys[:, b].tolist()).most_common(1)[0][1] for b in range(keys.shape[1])) > 50  # big buckets
    first = duplicates.find(ps, st)
    assert sum(not r.passed for r in first.values()) > 50
    for seed in (1, 2, 3):
        shuffled = list(ps)
        random.Random(seed).shuffle(shuffled)
        again = duplicates.find(shuffled, st)
        assert {k: (v.passed, v.score, v.reason, v.duplicate_of) for k, v in again.items()} == {
            k: (v.passed, v.score, v.reason, v.duplicate_of) for k, v in first.items()
        }
    # Every duplicate names a kept pair it is itself similar to.
    by_id = {p.id: p for p in ps}
    for pid, res in first.items():
        if res.duplicate_of:
            assert first[res.duplicate_of].passed
            assert edit_similarity(by_id[pid].question, by_id[res.duplicate_of].question) >= st.threshold


def test_similar_pairs_are_the_same_pairs_in_any_order() -> None:
    texts = [p.question for p in _crowd()]
    found = {frozenset((texts[p.i], texts[p.j])) for p in similar_pairs(texts, 0.85, max_bucket=4)}
    order = list(range(len(texts)))
    random.Random(5).shuffle(order)
    shuffled = [texts[i] for i in order]
    again = {frozenset((shuffled[p.i], shuffled[p.j])) for p in similar_pairs(shuffled, 0.85, max_bucket=4)}
    assert found == again and len(found) > 500


@pytest.mark.parametrize(
    ("q1", "q2", "same"),
    [
        ("What is the default value of `limit` in the `common_parameters` dependency?",
         "What is the default value of `skip` in the `common_parameters` dependency?", False),
        ("What is the difference between the 200 and 201 status codes?",
         "What is the difference between the 400 and 404 status codes?", False),
        ("依赖项 `common_parameters` 里的查询参数 `limit` 默认值是多少？",
         "依赖项 `common_parameters` 里的查询参数 `skip` 默认值是多少？", False),
        ("How do I declare a request body in a path operation?",
         "In FastAPI, how do I declare a request body in a path operation?", True),  # added, not swapped
    ],
)  # fmt: skip
def test_questions_naming_different_identifiers_are_not_duplicates(q1: str, q2: str, same: bool) -> None:
    assert edit_similarity(q1, q2) >= 0.85
    out = duplicates.find([pair("qa-1", q1, "x"), pair("qa-2", q2, "x")], duplicates.Settings())
    assert out["qa-2"].passed is not same
    assert not duplicates.find(
        [pair("qa-1", q1, "x"), pair("qa-2", q2, "x")], duplicates.Settings(distinct_identifiers=False)
    )["qa-2"].passed

"""Retrieval metrics: hand-computed values, and agreement with ir-measures (pytrec_eval) on random runs."""

from __future__ import annotations

import math
import random

import ir_measures
import pytest
from ir_measures import AP, RR, P, R, Success, nDCG

from goldset.evaluation.matcher import Matcher
from goldset.evaluation.metrics.retrieval import (
    RankedRelevance,
    average_precision,
    context_precision,
    context_recall,
    hit_at_k,
    mrr,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
)
from goldset.evaluation.scoring import score_run
from goldset.evaluation.settings import EvalSettings
from goldset.schema.pairs import Evidence, QAPair
from goldset.schema.runs import RetrievedContext, RunSample


def test_hand_computed_binary_vector() -> None:
    # ranks: miss, hit, miss, hit; 3 relevant units, one never retrieved
    r = RankedRelevance.from_binary([0, 1, 0, 1], 3)
    assert hit_at_k(r, 1) == 0.0
    assert hit_at_k(r, 3) == 1.0
    assert precision_at_k(r, 1) == 0.0
    assert precision_at_k(r, 3) == pytest.approx(1 / 3)
    assert precision_at_k(r, 10) == pytest.approx(2 / 10)  # P@k divides by k, not by the 4 retrieved
    assert recall_at_k(r, 3) == pytest.approx(1 / 3)
    assert recall_at_k(r, 5) == pytest.approx(2 / 3)
    assert mrr(r) == 0.5
    assert average_precision(r) == pytest.approx((1 / 2 + 2 / 4) / 3)
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    idcg = 1 / math.log2(2) + 1 / math.log2(3) + 1 / math.log2(4)
    assert ndcg_at_k(r, 5) == pytest.approx(dcg / idcg)
    assert ndcg_at_k(r, 2) == pytest.approx((1 / math.log2(3)) / (1 + 1 / math.log2(3)))
    assert context_precision(r) == pytest.approx((1 / 2 + 2 / 4) / 2)
    assert context_recall(r) == pytest.approx(2 / 3)


def test_no_relevant_units_and_no_contexts_score_zero() -> None:
    empty = RankedRelevance.from_binary([], 2)
    none_relevant = RankedRelevance.from_binary([0, 0], 0)
    for r in (empty, none_relevant):
        assert [hit_at_k(r, 3), precision_at_k(r, 3), recall_at_k(r, 3), ndcg_at_k(r, 3)] == [0.0] * 4
        assert [mrr(r), average_precision(r), context_precision(r), context_recall(r)] == [0.0] * 4


def test_duplicates_and_multi_unit_contexts() -> None:
    # rank 0 finds two quotes at once, rank 1 repeats one of them, rank 2 finds the third
    r = RankedRelevance(rel=(1, 0, 1), new_units=(2, 0, 1), matched=(1, 1, 1), n_relevant=3)
    assert recall_at_k(r, 1) == pytest.approx(2 / 3)  # both quotes of the first context are recalled
    assert precision_at_k(r, 2) == pytest.approx(1 / 2)  # but it counts once at its rank; the repeat is 0
    assert mrr(r) == 1.0
    assert context_precision(r) == pytest.approx(1.0)  # the repeat still holds evidence: useful context
    assert average_precision(r) == pytest.approx((1 + 2 / 3) / 3)


def _random_case(rng: random.Random, mode: str) -> tuple[list[Evidence], list[RetrievedContext]]:
    docs = [f"d{i}" for i in range(6)]
    chunk_doc = {f"c{i}": rng.choice(docs) for i in range(30)}
    chunks = list(chunk_doc)
    cited = rng.sample(chunks, rng.randint(1, 4))
    evidence = [Evidence(chunk_id=c, doc_id=chunk_doc[c], quote=f"quote {c}") for c in cited]
    if mode != "auto" and rng.random() < 0.3:  # the same chunk cited twice: one unit for the id matchers
        evidence.append(Evidence(chunk_id=cited[0], doc_id=chunk_doc[cited[0]], quote=f"other quote {cited[0]}"))
    n = rng.randint(0, 15)
    retrieved = [rng.choice(chunks) for _ in range(n)]  # repeats allowed, like a careless system
    contexts = [RetrievedContext(text="", chunk_id=c, doc_id=chunk_doc[c]) for c in retrieved]
    return evidence, contexts


@pytest.mark.parametrize("mode", ["chunk_id", "doc_id", "auto"])
def test_agrees_with_ir_measures_on_random_runs(mode: str) -> None:
    """qrels = the pair's units; run = contexts named by id, a repeated id renamed to a fresh non-relevant doc
    (trec_eval cannot hold a document twice; a repeat finds nothing new). Every metric agrees to 1e-9."""
    rng = random.Random(f"ir-{mode}")
    ks = [1, 2, 3, 5, 10, 20]
    settings = EvalSettings(matcher=mode, ks=ks)
    pairs, samples, qrels, run = [], {}, {}, {}
    for q in range(300):
        evidence, contexts = _random_case(rng, mode)
        pid = f"qa-{q:03d}"
        pairs.append(QAPair(id=pid, question="q?", answer="a.", question_type="factual", evidence=evidence))
        samples[pid] = RunSample(pair_id=pid, answer="a.", contexts=contexts)
        key = "doc_id" if mode == "doc_id" else "chunk_id"
        qrels[pid] = {getattr(e, key): 1 for e in evidence}
        seen: set[str] = set()
        run[pid] = {}
        for i, ctx in enumerate(contexts):
            name = getattr(ctx, key)
            if name in seen:
                name = f"dup-{i}"
            seen.add(name)
            run[pid][name] = float(len(contexts) - i)  # strictly decreasing: no tie-breaking by doc id
        if not run[pid]:
            run[pid]["nothing"] = 0.0  # trec_eval needs one row to score the query (it scores 0)
    measures = [RR, AP] + [m @ k for k in ks for m in (P, R, nDCG, Success)]
    ours = {s.pair_id: s.metrics for s in score_run(pairs, samples, settings)}
    names = {"RR": "mrr", "AP": "map", "P": "precision", "R": "recall", "nDCG": "ndcg", "Success": "hit"}
    checked = 0
    for m in ir_measures.iter_calc(measures, qrels, run):
        base = names[m.measure.NAME]
        cutoff = m.measure.params.get("cutoff")
        name = f"{base}@{cutoff}" if cutoff is not None else base
        assert ours[m.query_id][name] == pytest.approx(m.value, abs=1e-9), (m.query_id, name)
        checked += 1
    assert checked == 300 * len(measures)


def test_text_and_id_matchers_agree_when_contexts_are_the_chunks() -> None:
    """A system that returns goldset's own chunks: text and chunk-id matching give the same relevance."""
    rng = random.Random(7)
    words = [f"w{i}" for i in range(200)]
    chunks = {f"c{i}": " ".join(rng.choices(words, k=40)) for i in range(20)}
    for _ in range(50):
        cited = rng.sample(sorted(chunks), 2)
        evidence = [Evidence(chunk_id=c, doc_id="d", quote=" ".join(chunks[c].split()[5:25])) for c in cited]
        contexts = [RetrievedContext(text=chunks[c], chunk_id=c) for c in rng.sample(sorted(chunks), 8)]
        by_text = Matcher("text").relevance(evidence, contexts)
        by_id = Matcher("chunk_id").relevance(evidence, contexts)
        assert by_text == by_id

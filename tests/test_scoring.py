"""Per-sample scoring, failures, aggregation by type/language/document, system figures, the weighted score."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from goldset.config import load_settings
from goldset.errors import ConfigError
from goldset.evaluation.metrics import higher_is_better
from goldset.evaluation.scoring import MISSING, Scorer, score_run, score_sample, summarize, weighted_score
from goldset.evaluation.settings import DEFAULT_WEIGHTS, EvalSettings
from goldset.schema.pairs import Evidence, QAPair
from goldset.schema.runs import Latency, RetrievedContext, RunSample
from goldset.workspace import Workspace

EN_QUOTE = "Path operation functions can be declared with async def or with a normal def"
ZH_QUOTE = "依赖注入系统让你可以在路径操作函数中声明需要的依赖项"


def pair(pid: str, qtype: str = "factual", lang: str = "en", quote: str = EN_QUOTE, doc: str = "d1") -> QAPair:
    evidence = [] if qtype == "unanswerable" else [Evidence(chunk_id=f"c-{pid}", doc_id=doc, quote=quote)]
    answer = "The knowledge base does not say." if qtype == "unanswerable" else "With async def or def."
    return QAPair(id=pid, question="?", answer=answer, question_type=qtype, language=lang, evidence=evidence)


def sample(pid: str, answer: str, texts: list[str], **kw: object) -> RunSample:
    return RunSample(pair_id=pid, answer=answer, contexts=[RetrievedContext(text=t) for t in texts], **kw)


SETTINGS = EvalSettings(ks=[1, 3])


def test_answerable_sample_hand_computed() -> None:
    s = score_sample(pair("p1"), sample("p1", "With async def.", ["Other text.", "Intro. " + EN_QUOTE]), SETTINGS)
    m = s.metrics
    assert not s.failed
    assert (m["hit@1"], m["hit@3"], m["recall@3"], m["precision@3"], m["mrr"]) == (0.0, 1.0, 1.0, 1 / 3, 0.5)
    # answer "with async def" (3 tokens) vs reference "with async def or def" (5): LCS 3, P = 1, R = 3/5
    assert m["rouge_l"] == pytest.approx(2 * 1 * 0.6 / 1.6)
    assert m["exact_match"] == 0.0
    assert m["false_refusal"] == 0.0
    assert m["correct_refusal"] is None
    assert m["conciseness"] == 1.0
    assert "recall@5" not in m  # only the configured cut-offs
    assert s.doc_ids == ["d1"]
    assert (s.question_type, s.language) == ("factual", "en")


def test_unanswerable_pairs_are_scored_on_refusal_only() -> None:
    refused = score_sample(pair("u1", "unanswerable"), sample("u1", "文档中没有提及这一点。", ["x"]), SETTINGS)
    answered = score_sample(pair("u1", "unanswerable"), sample("u1", "It is 42.", ["x"]), SETTINGS)
    assert refused.metrics["correct_refusal"] == 1.0
    assert answered.metrics["correct_refusal"] == 0.0
    for s in (refused, answered):
        assert s.metrics["recall@1"] is None and s.metrics["mrr"] is None and s.metrics["rouge_l"] is None
        assert s.metrics["false_refusal"] is None


def test_failed_and_missing_samples_count_against_the_system() -> None:
    errored = sample("p1", "", [], error="HTTP 500 from the RAG service")
    for s in (score_sample(pair("p1"), errored, SETTINGS), score_sample(pair("p1"), None, SETTINGS)):
        assert s.failed
        assert s.metrics["recall@1"] == 0.0 and s.metrics["mrr"] == 0.0 and s.metrics["rouge_l"] == 0.0
        assert s.metrics["false_refusal"] is None  # a failure is not a refusal: left out, counted in error_rate
        assert s.metrics["correct_refusal"] is None
    assert score_sample(pair("p1"), None, SETTINGS).error == MISSING
    assert score_sample(pair("p1"), errored, SETTINGS).error == "HTTP 500 from the RAG service"
    unans = score_sample(pair("u1", "unanswerable"), None, SETTINGS)
    assert unans.metrics["correct_refusal"] == 0.0 and unans.metrics["recall@1"] is None


def _run() -> tuple[list[QAPair], dict[str, RunSample]]:
    pairs = [
        pair("p1", doc="d1"),
        pair("p2", doc="d2"),
        pair("p3", lang="zh", quote=ZH_QUOTE, doc="d2"),
        pair("u1", "unanswerable"),
        pair("p4", doc="d1"),  # missing from the run
    ]
    samples = {
        "p1": sample("p1", "With async def or def.", [EN_QUOTE], latency=Latency(total_ms=100, ttft_ms=10),
                     tokens_in=1000, tokens_out=10),
        "p2": sample("p2", "I don't know.", ["nothing", "nothing", EN_QUOTE], latency=Latency(total_ms=300),
                     tokens_in=2000, tokens_out=30),
        "p3": sample("p3", "使用依赖注入。", ["无关内容", ZH_QUOTE], latency=Latency(total_ms=200)),
        "u1": sample("u1", "The documents do not contain this.", [], latency=Latency(total_ms=400)),
        "extra": sample("extra", "not in the dataset", [], latency=Latency(total_ms=99999)),
    }  # fmt: skip
    return pairs, samples


def test_summarize_groups_and_failures() -> None:
    pairs, samples = _run()
    scores = score_run(pairs, samples, SETTINGS)
    assert [s.pair_id for s in scores] == ["p1", "p2", "p3", "u1", "p4"]
    summary = summarize("run-1", scores, samples, SETTINGS)
    assert (summary.n_samples, summary.n_failed) == (5, 1)
    # mrr over the four answerable pairs (u1 left out, p4 missing = 0): (1 + 1/3 + 1/2 + 0) / 4
    assert summary.overall["mrr"] == pytest.approx((1 + 1 / 3 + 1 / 2 + 0) / 4)
    assert summary.overall["hit@3"] == pytest.approx(3 / 4)
    assert summary.overall["correct_refusal"] == 1.0
    assert summary.overall["false_refusal"] == pytest.approx(1 / 3)  # p2 refused; p4 failed: not a refusal
    # the same means over the answered samples (p4 left out): what the diagnosis reads
    assert summary.answered["mrr"] == pytest.approx((1 + 1 / 3 + 1 / 2) / 3)
    assert summary.answered_by_type["factual"]["n"] == 3.0
    assert summary.by_type["factual"]["mrr"] == summary.overall["mrr"]
    assert summary.by_type["unanswerable"] == {"correct_refusal": 1.0, "conciseness": 1.0, "n": 1.0}
    assert summary.by_language["zh"]["mrr"] == 0.5 and summary.by_language["zh"]["n"] == 1.0
    assert summary.by_language["en"]["n"] == 4.0
    assert summary.by_doc["d1"]["mrr"] == pytest.approx((1 + 0) / 2)  # p1 and the missing p4
    assert summary.by_doc["d2"]["mrr"] == pytest.approx((1 / 3 + 1 / 2) / 2)
    assert set(summary.by_doc) == {"d1", "d2"}


def test_system_metrics() -> None:
    pairs, samples = _run()
    settings = EvalSettings(ks=[1], prices={"input_per_mtok": 1.0, "output_per_mtok": 10.0})
    system = summarize("r", score_run(pairs, samples, settings), samples, settings).system
    latencies = [100, 300, 200, 400]  # the extra sample outside the dataset is not counted
    for q in (50, 90, 95, 99):
        assert system[f"latency_p{q}_ms"] == pytest.approx(float(np.percentile(latencies, q)))
    assert system["latency_mean_ms"] == 250.0
    assert system["ttft_p50_ms"] == 10.0
    assert "generation_latency_p50_ms" not in system  # not reported by this run
    assert (system["tokens_in_total"], system["tokens_out_total"], system["tokens_out_mean"]) == (3000, 40, 20)
    assert system["output_tokens_per_s"] == pytest.approx(40 / 0.4)
    assert system["cost_usd_total"] == pytest.approx(3000 / 1e6 + 40 * 10 / 1e6)
    assert (system["error_rate"], system["n_missing"], system["n_errors"]) == (0.2, 1.0, 0.0)
    assert system["n_extra_samples"] == 1.0  # the run's row for a pair the dataset does not hold
    neutral = {k for k in system if k.startswith("tokens_")} | {"n_extra_samples"}
    assert all(higher_is_better(k) is not None for k in set(system) - neutral)  # gates and compare know directions


def test_weighted_overall_score_renormalises_and_reports_left_out() -> None:
    pairs, samples = _run()
    scores = score_run(pairs, samples, EvalSettings())
    summary = summarize("r", scores, samples, EvalSettings())
    assert summary.left_out == ["completeness", "faithfulness", "hallucination"]
    total = DEFAULT_WEIGHTS["recall@5"] + DEFAULT_WEIGHTS["mrr"] + DEFAULT_WEIGHTS["conciseness"]
    expected_weights = {k: DEFAULT_WEIGHTS[k] / total for k in ("recall@5", "mrr", "conciseness")}
    assert summary.weights_used == pytest.approx(expected_weights)
    o = summary.overall
    expected = sum(w * o[k] for k, w in summary.weights_used.items())
    assert summary.overall_score == pytest.approx(expected)

    # once a judge adds its metrics they are weighted, the hallucination rate as a penalty
    overall = {**o, "faithfulness": 0.8, "completeness": 0.6, "hallucination": 0.1}
    score, used, left_out = weighted_score(overall, DEFAULT_WEIGHTS, ["hallucination"])
    assert left_out == [] and sum(used.values()) == pytest.approx(1.0)
    assert score == pytest.approx(
        0.2 * o["recall@5"] + 0.1 * o["mrr"] + 0.25 * 0.8 + 0.2 * 0.6 + 0.1 * o["conciseness"] + 0.15 * 0.9
    )
    assert weighted_score({}, DEFAULT_WEIGHTS) == (None, {}, sorted(DEFAULT_WEIGHTS))
    # a registered lower-is-better metric is inverted too
    assert weighted_score({"false_refusal": 0.25}, {"false_refusal": 1.0})[0] == pytest.approx(0.75)


def test_scorer_reuse_gives_the_same_scores() -> None:
    pairs, samples = _run()
    scorer = Scorer(SETTINGS)
    first = [scorer.score(p, samples.get(p.id)) for p in pairs]
    assert first == [scorer.score(p, samples.get(p.id)) for p in pairs]  # the tokenisation cache changes nothing
    assert first == score_run(pairs, samples, SETTINGS)


def _ws(tmp_path: Path, yaml_text: str) -> Workspace:
    (tmp_path / "goldset.yaml").write_text(yaml_text, encoding="utf-8")
    return Workspace(tmp_path)


def test_settings_from_goldset_yaml_and_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = _ws(tmp_path, "eval:\n  ks: [10, 5, 5]\n  matcher: chunk_id\n  weights: {recall@10: 1.0}\n")
    monkeypatch.setenv("GOLDSET_EVAL__TEXT_MATCH_MIN", "0.7")
    s = load_settings(ws).eval
    assert (s.ks, s.matcher, s.text_match_min, s.weights) == ([5, 10], "chunk_id", 0.7, {"recall@10": 1.0})


@pytest.mark.parametrize(
    ("yaml_text", "field"),
    [
        ("eval:\n  matcher: fuzzy\n", "eval.matcher"),
        ("eval:\n  ks: [0, 5]\n", "eval.ks"),
        ("eval:\n  refusal_patterns: ['(unclosed']\n", "eval.refusal_patterns"),
        ("eval:\n  weights: {mrr: -1}\n", "eval.weights"),
        ("eval:\n  text_match_min: 1.5\n", "eval.text_match_min"),
        ("eval:\n  concisenes: {max_ratio: 2}\n", "eval.concisenes"),
    ],
)
def test_bad_settings_name_the_field(tmp_path: Path, yaml_text: str, field: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_settings(_ws(tmp_path, yaml_text))
    message = str(err.value)
    assert field in message and "goldset.yaml" in message
    assert "\n" not in message


def test_a_run_the_matcher_cannot_score_is_refused() -> None:
    pairs, samples = _run()  # contexts with text but no ids
    for mode in ("chunk_id", "doc_id"):
        with pytest.raises(ConfigError, match=rf"eval\.matcher is '{mode}' but no retrieved context"):
            score_run(pairs, samples, EvalSettings(matcher=mode))
    no_text = {"p1": RunSample(pair_id="p1", contexts=[RetrievedContext(text="", chunk_id="c-p1")])}
    with pytest.raises(ConfigError, match=r"eval\.matcher is 'text'"):
        score_run(pairs, no_text, EvalSettings(matcher="text"))
    scores = score_run(pairs, no_text, EvalSettings(matcher="auto"))  # auto falls back to the chunk id
    assert scores[0].metrics["recall@5"] == 1.0
    assert score_run(pairs, {}, EvalSettings(matcher="chunk_id"))[0].failed  # nothing retrieved: nothing to refuse


def test_score_sample_follows_changed_settings() -> None:
    settings = EvalSettings(ks=[1])
    p, smp = pair("p1"), sample("p1", "x", [EN_QUOTE])
    assert "recall@1" in score_sample(p, smp, settings).metrics
    settings.ks = [2]
    metrics = score_sample(p, smp, settings).metrics
    assert "recall@2" in metrics and "recall@1" not in metrics


def test_a_pair_citing_two_documents_counts_for_both() -> None:
    two = QAPair(
        id="p2d", question="?", answer="a", question_type="comparison",
        evidence=[Evidence(chunk_id="c1", doc_id="d1", quote=EN_QUOTE), Evidence(chunk_id="c2", doc_id="d2",
                  quote=ZH_QUOTE)],
    )  # fmt: skip
    one = pair("p1", doc="d1")
    samples = {"p2d": sample("p2d", "a", [ZH_QUOTE]), "p1": sample("p1", "a", ["nothing"])}
    summary = summarize("r", score_run([two, one], samples, SETTINGS), samples, SETTINGS)
    assert summary.by_doc["d2"] == {**summary.by_doc["d2"], "recall@1": 0.5, "n": 1.0}  # one of two quotes found
    assert summary.by_doc["d1"]["recall@1"] == pytest.approx((0.5 + 0.0) / 2) and summary.by_doc["d1"]["n"] == 2.0
    assert summary.by_type["comparison"]["recall@1"] == 0.5

"""The judge's pure parts: tallies from validated replies, the registered judge metrics, which metrics apply to
which question types (by their string names), weights and presets, and what a judged run records as its scoring
settings."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from goldset.config import load_settings
from goldset.errors import ConfigError, UsageError
from goldset.evaluation.compare import check_comparable
from goldset.evaluation.judge import claims, completeness, context_relevance
from goldset.evaluation.judge.calls import CALL_METRICS, JudgeItem, calls_for
from goldset.evaluation.judge.runner import applicable, failure_values
from goldset.evaluation.judge.settings import JudgeSettings
from goldset.evaluation.metrics import get_metric, higher_is_better, list_metrics
from goldset.evaluation.metrics.judged import (
    ClaimTally,
    ContextTally,
    CoverageTally,
    JudgedSample,
    RelevanceTally,
    cosine,
)
from goldset.evaluation.settings import DEFAULT_WEIGHTS, WEIGHT_PRESETS, EvalSettings
from goldset.schema import RunMeta
from goldset.workspace import Workspace

CONTEXTS = ("The port setting defaults to 8080. Set log_level to debug.", "The cache keeps responses for ten minutes.")


def _metrics(j: JudgedSample) -> dict[str, float | None]:
    return {m.name: m.fn(j) for m in list_metrics("judge")}


def test_claim_tally_counts_verdicts_contexts_and_reference_by_hand() -> None:
    reply = claims.ClaimsReply.model_validate(
        {
            "claims": [
                {"claim": "Debug output needs log_level debug.", "verdict": "supported", "context": 1,
                 "quote": "Set log_level to debug.", "reference": "agrees"},
                {"claim": "The port defaults to 9090.", "verdict": "Contradicted", "context": 1,
                 "quote": "The port setting defaults to 8080.", "reference": "Contradicts"},
                {"claim": "Responses are cached.", "verdict": "supported", "context": 7,  # no context 7: dropped
                 "quote": "cached", "reference": "not-in-reference"},
                {"claim": "It is written in Rust.", "verdict": "Not Found", "context": 2, "quote": "x"},
                {"claim": "The cache is kept.", "verdict": "supported", "context": 2, "quote": "kept for a day"},
                {"claim": "  ", "verdict": "supported"},  # a blank claim is no claim
            ]
        }
    )  # fmt: skip
    tally, stored = claims.tally(reply, CONTEXTS, has_reference=True)
    # the two "supported" claims with nothing to show (context 7 does not exist; "kept for a day" is not in context
    # 2) count as not found: only the first is supported
    assert tally == ClaimTally(
        supported=1, contradicted=1, not_found=3, contexts_used=1, n_contexts=2, ref_judged=3, ref_contradicted=1,
        said_supported=3, downgraded=2,
    )  # fmt: skip
    assert [c.context for c in stored] == [1, 1, None, None, 2]
    assert [c.quote_verified for c in stored] == [True, True, None, None, False]  # the last quote is not in ctx 2
    assert stored[3].quote == "" and stored[3].verdict == "not_found" and not stored[3].downgraded
    assert [c.downgraded for c in stored] == [False, False, True, False, True]
    assert stored[4].verdict == "not_found" and stored[4].quote == "kept for a day", "the reader sees what it cited"
    m = _metrics(JudgedSample("factual", claims=tally))
    assert m["faithfulness"] == pytest.approx(1 / 5)
    assert m["hallucination"] == pytest.approx(4 / 5)
    assert m["contradiction"] == pytest.approx(1 / 5)
    assert m["context_utilization"] == pytest.approx(1 / 2)
    assert m["reference_contradiction"] == pytest.approx(1 / 3)
    # without a reference (unanswerable pairs) the reference verdicts are ignored
    tally, stored = claims.tally(reply, CONTEXTS, has_reference=False)
    assert tally.ref_judged == 0 and all(c.reference is None for c in stored)
    assert _metrics(JudgedSample("unanswerable", claims=tally))["reference_contradiction"] is None


def test_an_answer_without_claims_has_no_faithfulness_rather_than_a_perfect_one() -> None:
    m = _metrics(JudgedSample("factual", claims=ClaimTally(0, 0, 0, 0, 3)))
    for name in CALL_METRICS["claims"]:
        assert m[name] is None, name


def test_coverage_readings_relevance_contexts_and_stance_by_type() -> None:
    cov = completeness.CoverageReply.model_validate(
        {"points": [{"point": "alpha", "covered": True}, {"point": "beta", "covered": False},
                    {"point": "gamma", "covered": True}, {"point": "The answer is 3.", "covered": True}],
         "readings_acknowledged": True}
    )  # fmt: skip
    reference = "Alpha, then beta; gamma last."
    tally, points = completeness.tally(cov, "ambiguous", reference)
    # the fourth "point" is not the reference's (the judge copied the answer's claim): listed, not counted
    assert tally == CoverageTally(2, 3, True, listed=4) and [p.covered for p in points] == [True, False, True, True]
    assert [p.in_reference for p in points] == [True, True, True, False]
    assert completeness.tally(cov, "open_ended", reference)[0].readings_acknowledged is None  # only ambiguous
    amb = _metrics(JudgedSample("ambiguous", coverage=tally))
    assert amb["completeness"] == pytest.approx(2 / 3) and amb["readings_acknowledged"] == 1.0
    assert _metrics(JudgedSample("open_ended", coverage=CoverageTally(3, 4)))["completeness"] == 0.75
    assert _metrics(JudgedSample("factual", coverage=tally))["readings_acknowledged"] is None

    verdicts = [context_relevance.ContextVerdict(index=i, relevant=r) for i, r in ((2, True), (1, False), (2, False),
                                                                                    (9, True))]  # fmt: skip
    ctx, stored = context_relevance.tally(verdicts, 3)
    assert ctx == ContextTally(relevant=1, judged=2) and [c.index for c in stored] == [1, 2]  # first verdict wins

    rel = _metrics(JudgedSample("factual", relevance=RelevanceTally(4, (0.5, 1.0)), contexts=ctx, stance="declined"))
    assert rel["answer_relevancy"] == 0.75 and rel["answer_relevancy_embedding"] == 0.75
    assert rel["context_relevance"] == 0.5
    assert rel["false_refusal_judged"] == 1.0 and rel["correct_refusal_judged"] is None
    unans = _metrics(JudgedSample("unanswerable", relevance=RelevanceTally(1), stance="hedged"))
    assert unans["correct_refusal_judged"] == 0.0, "a hedge guesses: it is not a refusal"
    assert unans["answer_relevancy"] is None and unans["false_refusal_judged"] is None
    assert _metrics(JudgedSample("unanswerable", stance="declined"))["correct_refusal_judged"] == 1.0
    assert cosine([1.0, 0.0], [1.0, 1.0]) == pytest.approx(1 / math.sqrt(2)) and cosine([0.0], [1.0]) == 0.0


def test_judge_metrics_are_registered_with_direction_description_and_citation() -> None:
    judge = {m.name: m for m in list_metrics("judge")}
    assert set(judge) == {m for names in CALL_METRICS.values() for m in names}
    lower = {"hallucination", "contradiction", "reference_contradiction", "false_refusal_judged"}
    for name, info in judge.items():
        assert info.description and info.citation, name
        assert higher_is_better(name) is (name not in lower), name
    assert "RAGAS" in get_metric("faithfulness").citation


def item(qtype: str, *, answer: str = "An answer.", reference: str = "The reference.", n_ctx: int = 2) -> JudgeItem:
    ref = reference if qtype != "unanswerable" else ""
    return JudgeItem("p", qtype, "A question?", ref, answer, tuple(f"context {i}" for i in range(n_ctx)))


def test_which_calls_and_metrics_apply_to_which_question_types() -> None:
    every = ["claims", "coverage", "relevance"]
    assert calls_for(item("factual"), every) == every  # 3 calls
    assert calls_for(item("open_ended"), every) == every
    assert calls_for(item("unanswerable"), every) == ["claims", "relevance"]  # no reference to cover
    assert calls_for(item("factual", answer="  "), every) == ["coverage", "relevance"]  # a blank answer claims nothing
    names = [m for ms in CALL_METRICS.values() for m in ms]
    assert "readings_acknowledged" in applicable(names, item("ambiguous"), False)
    assert "readings_acknowledged" not in applicable(names, item("open_ended"), False)
    assert "answer_relevancy_embedding" not in applicable(names, item("factual"), embeddings=False)
    unans = applicable(names, item("unanswerable"), True)
    assert "correct_refusal_judged" in unans and "completeness" not in unans and "answer_relevancy" not in unans
    assert "context_relevance" not in applicable(names, item("factual", n_ctx=0), False)
    # a sample the system failed on: worst value where its definition covers a failure, else left out
    failed = failure_values(names, item("factual", answer="", n_ctx=0), embeddings=False)
    assert failed["faithfulness"] == 0.0 and failed["completeness"] == 0.0 and failed["answer_relevancy"] == 0.0
    assert failed["hallucination"] is None and failed["false_refusal_judged"] is None
    assert failed["readings_acknowledged"] is None and failed["context_relevance"] is None
    assert failure_values(names, item("unanswerable", n_ctx=0), False)["correct_refusal_judged"] == 0.0


def test_default_weights_are_the_seeds_and_presets_cover_every_dimension(tmp_path: Path) -> None:
    assert DEFAULT_WEIGHTS == {"recall@5": 0.2, "mrr": 0.1, "faithfulness": 0.25, "completeness": 0.2,
                               "conciseness": 0.1, "hallucination": 0.15}  # fmt: skip
    for name, weights in WEIGHT_PRESETS.items():
        assert set(weights) == set(DEFAULT_WEIGHTS), name
        assert sum(weights.values()) == pytest.approx(1.0), name
    kb, faq, docs = WEIGHT_PRESETS["internal_kb"], WEIGHT_PRESETS["support_faq"], WEIGHT_PRESETS["tech_docs"]
    assert kb["faithfulness"] > DEFAULT_WEIGHTS["faithfulness"] and kb["completeness"] > DEFAULT_WEIGHTS["completeness"]
    assert faq["hallucination"] == max(p["hallucination"] for p in WEIGHT_PRESETS.values())
    assert docs["recall@5"] > DEFAULT_WEIGHTS["recall@5"] and docs["completeness"] > DEFAULT_WEIGHTS["completeness"]

    (tmp_path / "goldset.yaml").write_text("eval:\n  weights: {preset: tech_docs, mrr: 0.2}\n", encoding="utf-8")
    s = load_settings(Workspace(tmp_path)).eval
    assert s.weights == {**WEIGHT_PRESETS["tech_docs"], "mrr": 0.2}
    assert s.scoring()["weights"] == s.weights, "runs record the resolved weights, so compare sees the numbers"
    (tmp_path / "goldset.yaml").write_text("eval:\n  weights: {preset: legal}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"eval\.weights.*unknown weights preset 'legal'.*tech_docs"):
        load_settings(Workspace(tmp_path))


def test_judge_settings_and_what_a_judged_run_records() -> None:
    assert JudgeSettings(calls=["relevance", "claims", "claims"]).calls == ["claims", "relevance"]
    with pytest.raises(ValueError, match="at least one judge call"):
        JudgeSettings(calls=[])
    s = EvalSettings()
    assert "judge" not in s.scoring(), "an unjudged run records what runs made before the judge record"
    identity = {"model": "judge-a", "prompts": {"judge_claims": "h1"}}
    judged = s.scoring(identity)["judge"]
    assert judged["model"] == "judge-a" and judged["temperature"] == 0.0 and "enabled" not in judged

    def meta(config: dict[str, object]) -> RunMeta:
        return RunMeta(run_id="r", dataset="d", manifest_hash="h", metric_config=config)

    old = meta(EvalSettings().model_dump(mode="json", exclude={"endpoint", "runs_dir", "concurrency", "timeout_s",
                                                                "score_processes", "judge"}))  # fmt: skip
    assert check_comparable(old, meta(s.scoring())) == []
    with pytest.raises(UsageError, match=r"different settings: judge \(not set vs"):  # judged vs not
        check_comparable(meta(s.scoring()), meta(s.scoring(identity)))
    other_prompt = {"model": "judge-a", "prompts": {"judge_claims": "h2"}}
    differ = check_comparable(meta(s.scoring(identity)), meta(s.scoring(other_prompt)), allow_different_settings=True)
    assert differ == ['judge.prompts.judge_claims ("h1" vs "h2")']

"""The LLM judge through `goldset.evaluate`, against the fake OpenAI-compatible server and its deterministic judge
responders (tests/helpers/judge_responders.py: their rules are simple enough to compute each value by hand).

Covered: claim verdicts aggregated as computed by hand; refusals (declined, invented, hedged, false refusal);
Chinese answers; at most 3 calls per question, counted at the server; re-scoring makes no call and the dry run
sees the journal; malformed, schema-violating and cut-off judge replies fail their metrics for that sample only;
a dead judge endpoint; same-model warnings; ambiguous and open_ended questions by their type names; the
reverse-question relevancy with embeddings.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from goldset import evaluate
from goldset.context import Context
from goldset.data import write_dataset
from goldset.evaluation.evaluator import EvalResult
from goldset.evaluation.judge.calls import CALL_METRICS, JudgeItem
from goldset.evaluation.judge.estimate import estimate_judging
from goldset.evaluation.judge.runner import _judge_items, prepare_judge
from goldset.evaluation.metrics.judged import cosine
from goldset.evaluation.settings import EvalSettings
from goldset.llm import LLMClient
from goldset.schema import RunSample
from tests.helpers.eval_data import (
    CHUNK_TEXTS,
    evaluated_pairs,
    make_chunk,
    make_dataset,
    make_pairs,
    perfect_sample,
    write_run_file,
)
from tests.helpers.fake_openai import FakeOpenAI, Fault, fake_embedding
from tests.helpers.judge_responders import add_eval_judge_responders

CONFIG = CHUNK_TEXTS["c-config"][1]
CACHE = CHUNK_TEXTS["c-cache"][1]
AUTH = CHUNK_TEXTS["c-auth"][1]
ZH = CHUNK_TEXTS["c-zh"][1]

#: qa-debug ("How do I get verbose output from quokka?", reference "Set log_level to debug in quokka.toml."):
#: one supported claim, one a context contradicts (9090 vs 8080), one no context mentions.
DEBUG_ANSWER = "Set log_level to debug in quokka.toml. The port setting defaults to 9090. Quokka was written in Rust."


@pytest.fixture
def fake(fake_llm: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeOpenAI:
    add_eval_judge_responders(fake_llm)
    monkeypatch.chdir(tmp_path)  # no workspace: the journal goes beside the runs folder (runs/.calls.sqlite)
    return fake_llm


def sample(pid: str, answer: str, *contexts: str, **kw: Any) -> RunSample:
    return RunSample(pair_id=pid, answer=answer, contexts=[{"text": t} for t in contexts], **kw)


def run_eval(tmp_path: Path, samples: list[RunSample], name: str = "run", **kw: Any) -> EvalResult:
    data = tmp_path / "data"
    if not data.exists():
        make_dataset(data)
    run_file = write_run_file(tmp_path / f"{name}.jsonl", samples)
    return evaluate(data, run=run_file, out_dir=tmp_path / "runs" / name, **kw)


def by_id(result: EvalResult) -> dict[str, Any]:
    return {s.pair_id: s for s in result.scores}


def questions_asked(fake: FakeOpenAI) -> Counter[str]:
    """Chat requests per question, read from the requests the server received."""
    out: Counter[str] = Counter()
    for r in fake.chat_requests():
        user = next(m["content"] for m in r.body["messages"] if m["role"] == "user")
        m = re.search(r"<question>\n(.*?)\n</question>", user, re.DOTALL)
        out[m.group(1) if m else "?"] += 1
    return out


def test_claim_verdicts_aggregate_as_computed_by_hand(fake: FakeOpenAI, tmp_path: Path) -> None:
    result = run_eval(tmp_path, [sample("qa-debug", DEBUG_ANSWER, CONFIG, CACHE)])
    s = by_id(result)["qa-debug"]
    m = s.metrics
    # claims: supported (context 1), contradicted (context 1: 8080), not found → 1/3, 2/3, 1/3
    assert m["faithfulness"] == pytest.approx(1 / 3)
    assert m["hallucination"] == pytest.approx(2 / 3)
    assert m["contradiction"] == pytest.approx(1 / 3)
    assert m["context_utilization"] == pytest.approx(1 / 2)  # context 1 of 2 supports a claim
    assert m["reference_contradiction"] == 0.0  # the reference agrees with claim 1 and does not cover the others
    assert m["completeness"] == 1.0  # the reference's one claim is covered
    # relevance: 1 of the question's 5 content words (i, get, verbose, output, quokka) → rating 2 → 0.25;
    # context 1 holds 3 of 5 (relevant), context 2 holds 1 (not)
    assert m["answer_relevancy"] == 0.25 and m["context_relevance"] == 0.5
    assert m["false_refusal_judged"] == 0.0 and m["correct_refusal_judged"] is None
    assert m["readings_acknowledged"] is None
    claims = s.judge.claims
    assert [c.verdict for c in claims] == ["supported", "contradicted", "not_found"]
    assert claims[1].context == 1 and claims[1].quote == "The port setting defaults to 8080."
    assert claims[1].quote_verified is True and claims[2].context is None
    assert [c.reference for c in claims] == ["agrees", "not_in_reference", "not_in_reference"]
    assert s.judge.relevance_rating == 2 and s.judge.stance == "answered" and s.judge.calls == 3
    assert result.summary.judge_failed == {}
    # the summary's means are over the judged samples; pairs missing from the run score a failure's value
    assert result.summary.by_type["procedural"]["faithfulness"] == pytest.approx((1 / 3 + 0.0 + 0.0) / 3)
    assert result.meta.judge is not None and result.meta.judge.model == "fake-judge"
    assert result.meta.metric_config["judge"]["model"] == "fake-judge"
    assert set(result.meta.metric_config["judge"]["prompts"]) == {"judge_claims", "judge_coverage", "judge_relevance"}
    assert "faithfulness" not in result.summary.left_out and "hallucination" in result.summary.weights_used
    # what was written reads back the same (the run folder holds the verdicts)
    stored = [json.loads(line) for line in (tmp_path / "runs" / "run" / "scores.jsonl").read_text().splitlines()]
    debug = next(r for r in stored if r["pair_id"] == "qa-debug")
    assert debug["judge"]["claims"][1]["verdict"] == "contradicted"


def test_refusals_declined_invented_hedged_and_false(fake: FakeOpenAI, tmp_path: Path) -> None:
    cases = {
        "declined": "The documentation does not say whether quokka supports LDAP.",
        "invented": "Quokka supports LDAP login through its auth plugin.",
        "hedged": "The documentation does not say, but LDAP login probably works.",
    }
    got = {}
    for name, answer in cases.items():
        r = run_eval(tmp_path, [sample("qa-unans", answer, AUTH)], name=name)
        got[name] = by_id(r)["qa-unans"]
    assert got["declined"].metrics["correct_refusal_judged"] == 1.0
    assert got["declined"].metrics["faithfulness"] is None, "a refusal makes no claim to check"
    assert got["invented"].metrics["correct_refusal_judged"] == 0.0
    assert got["invented"].metrics["hallucination"] == 1.0  # its one claim is in no context
    assert got["hedged"].metrics["correct_refusal_judged"] == 0.0 and got["hedged"].judge.stance == "hedged"
    assert got["hedged"].metrics["correct_refusal"] == 1.0, "the patterns see a refusal where the judge sees a guess"
    for s in got.values():  # unanswerable: no reference to cover, so claims and relevance only
        assert s.judge.calls == 2 and s.judge.points is None
        assert s.metrics["completeness"] is None and s.metrics["false_refusal_judged"] is None

    r = run_eval(tmp_path, [sample("qa-port", "I cannot find this in the documentation.", CONFIG)], name="false")
    s = by_id(r)["qa-port"]
    assert s.metrics["false_refusal_judged"] == 1.0 and s.metrics["answer_relevancy"] == 0.0
    assert s.metrics["completeness"] == 0.0 and s.metrics["faithfulness"] is None


def test_chinese_answers_are_judged(fake: FakeOpenAI, tmp_path: Path) -> None:
    answer = "快袋鼠的默认端口是八零八零。它使用Rust编写。"
    r = run_eval(tmp_path, [sample("qa-zh-port", answer, ZH)])
    s = by_id(r)["qa-zh-port"]
    assert [c.claim for c in s.judge.claims] == ["快袋鼠的默认端口是八零八零。", "它使用Rust编写。"]
    assert [c.verdict for c in s.judge.claims] == ["supported", "not_found"]
    assert s.judge.claims[0].quote == "它的默认端口是八零八零。" and s.judge.claims[0].quote_verified
    assert s.metrics["faithfulness"] == 0.5 and s.metrics["completeness"] == 1.0
    # 7 of the question's 9 content characters are in the answer: rating 1 + round(4 × 7/9) = 4
    assert s.metrics["answer_relevancy"] == 0.75 and s.metrics["context_relevance"] == 1.0
    sent = [r.body for r in fake.chat_requests()]
    assert all(answer in next(m["content"] for m in b["messages"] if m["role"] == "user") for b in sent)
    assert all("whatever the language" in b["messages"][0]["content"].lower() for b in sent)


def test_at_most_three_calls_per_question_counted_at_the_server(fake: FakeOpenAI, tmp_path: Path) -> None:
    pairs = evaluated_pairs()
    samples = [perfect_sample(p) for p in pairs]
    r = run_eval(tmp_path, samples)
    asked = questions_asked(fake)
    assert sum(asked.values()) == fake.calls
    for p in pairs:
        assert asked[p.question] == (2 if p.question_type.value == "unanswerable" else 3), p.id
    assert max(asked.values()) <= 3
    assert r.meta.judge is not None and r.meta.judge.max_calls_per_sample == 3
    assert r.meta.judge.calls["calls"] == fake.calls and r.meta.judge.calls["requests"] == fake.calls
    assert sum(s.judge.calls for s in r.scores if s.judge) == fake.calls


def test_rescoring_makes_no_call_and_the_dry_run_sees_the_journal(fake: FakeOpenAI, tmp_path: Path) -> None:
    samples = [perfect_sample(p) for p in evaluated_pairs()]
    samples[0] = sample(samples[0].pair_id, DEBUG_ANSWER, CONFIG, CACHE)
    make_dataset(tmp_path / "data")
    run_file = write_run_file(tmp_path / "run.jsonl", samples)
    before = estimate_judging(tmp_path / "data", run=run_file)
    assert fake.calls == 0, "the dry run calls nothing"
    first = evaluate(tmp_path / "data", run=run_file, out_dir=tmp_path / "runs" / "a")
    assert (before.calls, before.cached, before.max_calls_per_sample) == (fake.calls, 0, 3)
    assert before.prompt_tokens > 0 and before.cost_usd is None  # the fake judge model has no price
    calls = fake.calls
    again = evaluate(tmp_path / "data", run=run_file, out_dir=tmp_path / "runs" / "b")
    assert fake.calls == calls, "re-scoring a run makes 0 judge calls"
    assert again.meta.judge is not None and again.meta.judge.calls["cache_hits"] == calls
    assert again.meta.judge.calls["calls"] == 0
    assert [s.metrics for s in again.scores] == [s.metrics for s in first.scores]
    after = estimate_judging(tmp_path / "data", run=run_file)
    assert (after.calls, after.cached, after.to_send, after.prompt_tokens) == (calls, calls, 0, 0)


def test_malformed_judge_replies_fail_their_metrics_for_that_sample_only(fake: FakeOpenAI, tmp_path: Path) -> None:
    samples = [
        sample("qa-debug", DEBUG_ANSWER + " BROKEN-claims", CONFIG, CACHE),  # not JSON, twice
        sample("qa-clear", "Clear it with quokka cache clear. BROKEN-relevance", CACHE),  # JSON against the schema
        sample("qa-port", "The port setting defaults to 8080.", CONFIG),
    ]
    r = run_eval(tmp_path, samples)
    s = by_id(r)
    debug, clear, port = s["qa-debug"], s["qa-clear"], s["qa-port"]
    assert set(debug.judge.failed) == {"claims"}
    assert "still invalid after one repair attempt" in debug.judge.failed["claims"]
    assert debug.metrics["faithfulness"] is None and debug.metrics["hallucination"] is None
    assert debug.metrics["completeness"] == 1.0, "the sample's other calls still count"
    assert set(clear.judge.failed) == {"relevance"} and "does not match the schema" in clear.judge.failed["relevance"]
    assert clear.metrics["answer_relevancy"] is None
    assert clear.metrics["faithfulness"] == 0.5  # its claims call stands: 1 of its 2 "claims" is in the context
    assert r.summary.judge_failed == {
        **dict.fromkeys(CALL_METRICS["claims"], 1),
        "answer_relevancy": 1,
        "context_relevance": 1,
        "false_refusal_judged": 1,
    }
    # a failed judgement is neither 0 nor 1: left out of the mean, which is over the other samples
    judged = [v for x in r.scores if (v := x.metrics["faithfulness"]) is not None]
    assert r.summary.overall["faithfulness"] == pytest.approx(sum(judged) / len(judged))
    assert port.metrics["faithfulness"] == 1.0 and len(judged) == len(r.scores) - 1
    assert any("left out of those means" in n and "faithfulness 1" in n for n in r.summary.notes)


def test_a_cut_off_judge_reply_marks_the_metrics_failed_with_its_reason(fake: FakeOpenAI, tmp_path: Path) -> None:
    fake.inject(*[Fault("length", keep=1.0)] * 3)  # the one judged sample's three calls, whole but cut off
    r = run_eval(tmp_path, [sample("qa-port", "The port setting defaults to 8080.", CONFIG)])
    s = by_id(r)["qa-port"]
    assert set(s.judge.failed) == {"claims", "coverage", "relevance"}
    assert all("cut off at max_tokens" in reason for reason in s.judge.failed.values())
    assert all(s.metrics[m] is None for m in ("faithfulness", "completeness", "answer_relevancy"))
    # counted only where the metric applied (a factual pair: no readings, no correct refusal, no embeddings)
    assert set(r.summary.judge_failed) == {
        "faithfulness", "hallucination", "contradiction", "context_utilization", "reference_contradiction",
        "completeness", "answer_relevancy", "context_relevance", "false_refusal_judged",
    }  # fmt: skip
    assert "faithfulness" not in r.summary.answered  # over the answered samples: no judged value, no mean, never 0
    assert fake.calls == 3, "a cut-off reply is not repaired (it would be cut off again)"


def test_a_dead_judge_endpoint_fails_every_judge_metric_and_the_run_is_written(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    fake.inject(*["401"] * 30)  # a revoked key: every request would be refused
    r = run_eval(tmp_path, [perfect_sample(p) for p in evaluated_pairs()])
    assert (tmp_path / "runs" / "run" / "scores.jsonl").is_file()
    needed = sum(3 if p.question_type.value != "unanswerable" else 2 for p in evaluated_pairs())
    assert fake.calls <= 8 < needed, "the first 401 stops every judge call not already in flight (concurrency 8)"
    judged = [s for s in r.scores if s.judge is not None]
    assert judged and all(s.judge.failed for s in judged)
    assert r.summary.judge_failed["faithfulness"] == len(judged)
    assert r.summary.overall["recall@5"] == 1.0, "the other metrics are unaffected"
    assert any("judge" in n and "401" in n for n in r.summary.notes)


def test_a_judge_of_the_same_model_is_warned_about(fake: FakeOpenAI, tmp_path: Path) -> None:
    pairs = make_pairs()
    for p in pairs[:2]:
        p.provenance.model = "fake-judge"
    write_dataset(tmp_path / "data", pairs, [make_chunk(c, doc, text) for c, (doc, text) in CHUNK_TEXTS.items()])
    r = run_eval(tmp_path, [sample("qa-port", "8080.", CONFIG, model="gpt-x")], system_model="fake-judge")
    assert any("also generated" in n and "fake-judge" in n for n in r.notes)
    assert not any(n.startswith("warning:") for n in r.notes)  # the CLI prints notes as "note: …"
    assert any("model of the system under test" in n for n in r.notes)
    assert r.meta.system_model == "fake-judge"
    quiet = run_eval(tmp_path, [sample("qa-port", "8080.", CONFIG, model="gpt-x")], name="other", system_model="m")
    assert not any("model of the system under test" in n for n in quiet.notes)


def test_ambiguous_and_open_ended_questions_are_judged_by_their_type_names(fake: FakeOpenAI) -> None:
    """The judge reads the question type as a string: types added after it are judged by their names."""
    settings = EvalSettings()
    plan = prepare_judge(Context.open(None), settings, True, None)
    assert plan is not None
    items = [
        JudgeItem("amb-1", "ambiguous", "How do I clear it?", "Run quokka cache clear, or delete the token.",
                  "Do you mean the cache or the token? For the cache run quokka cache clear.", (CACHE,)),
        JudgeItem("amb-2", "ambiguous", "How do I clear it?", "Run quokka cache clear, or delete the token.",
                  "Run quokka cache clear.", (CACHE,)),
        JudgeItem("open-1", "open_ended", "How would you set up quokka for a team?",
                  "- install quokka with pip\n- create a token per person\n- keep the cache under 2 GB",
                  "Install quokka with pip, then create a token per person.", (CONFIG, AUTH)),
    ]  # fmt: skip

    async def go() -> list[Any]:
        async with LLMClient(plan.endpoint) as client:
            return await _judge_items(plan, client, items, None)

    amb_yes, amb_no, open_ended = asyncio.run(go())
    assert amb_yes.details.readings_acknowledged is True and amb_no.details.readings_acknowledged is False
    from goldset.evaluation.metrics import list_metrics

    def metrics(res: Any) -> dict[str, Any]:
        return {m.name: m.fn(res.judged) for m in list_metrics("judge")}

    assert metrics(amb_yes)["readings_acknowledged"] == 1.0 and metrics(amb_no)["readings_acknowledged"] == 0.0
    assert [p.point for p in open_ended.details.points] == [
        "install quokka with pip", "create a token per person", "keep the cache under 2 GB"
    ]  # the key points, as the reference lists them
    assert [p.covered for p in open_ended.details.points] == [True, True, False]
    assert metrics(open_ended)["completeness"] == pytest.approx(2 / 3)
    assert metrics(open_ended)["readings_acknowledged"] is None
    sent = [next(m["content"] for m in r.body["messages"] if m["role"] == "user") for r in fake.chat_requests()]
    assert any("Question type: open_ended" in t for t in sent) and any("Question type: ambiguous" in t for t in sent)


def test_reverse_question_relevancy_with_embeddings(
    fake: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOLDSET_EMBEDDING_MODEL", "fake-embed")
    answer = "Set log_level to debug in quokka.toml."
    r = run_eval(tmp_path, [sample("qa-debug", answer, CONFIG), sample("qa-port", "8080.", CONFIG)])
    s = by_id(r)["qa-debug"]
    assert s.judge.reverse_questions == [f"What about {answer}?"] * 3  # eval.judge.reverse_questions: 3
    q = next(p.question for p in evaluated_pairs() if p.id == "qa-debug")
    expected = cosine(fake_embedding(q), fake_embedding(f"What about {answer}?"))
    assert s.metrics["answer_relevancy_embedding"] == pytest.approx(expected)
    assert r.meta.metric_config["judge"]["embedding_model"] == "fake-embed"
    assert r.meta.metric_config["judge"]["reverse_questions"] == 3
    assert fake.embedding_calls == 1, "the embeddings of every sample go out in one batch"
    assert max(questions_asked(fake).values()) <= 3, "embeddings add no chat call"


def test_no_judge_and_a_required_judge_without_endpoint(
    fake: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    r = run_eval(tmp_path, [sample("qa-port", "8080.", CONFIG)], judge=False)
    assert fake.calls == 0 and r.meta.judge is None and "judge" not in r.meta.metric_config
    assert "faithfulness" in r.summary.left_out and "faithfulness" not in r.scores[0].metrics
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "GOLDSET_MODEL", "GOLDSET_JUDGE_MODEL"):
        monkeypatch.delenv(name)
    quiet = run_eval(tmp_path, [sample("qa-port", "8080.", CONFIG)], name="auto")
    assert quiet.meta.judge is None, "by default the judge runs only when an endpoint is configured"
    from goldset.errors import EndpointError

    with pytest.raises(EndpointError, match="no LLM endpoint configured for judge"):
        run_eval(tmp_path, [sample("qa-port", "8080.", CONFIG)], name="required", judge=True)
    assert not (tmp_path / "runs" / "required").exists(), "a missing judge fails before the run"



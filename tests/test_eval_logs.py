"""Production logs (`goldset eval --log`): the reference-free metrics per sample, against the fake OpenAI server and
its deterministic judge responders (tests/helpers/judge_responders.py: a claim is supported by a context holding
all its content words, a context is relevant when it holds half the question's content words).

Covered: a log of 40 samples in English and Chinese, some with hallucinated answers and some with irrelevant
contexts, scored right per sample; personal data replaced before storing and judging; re-scoring makes no call;
lexical refusals and system figures without a judge; the stratified sample; the dry run; a log run is never
compared with a golden-set run; the questions exported for `goldset import --format queries`.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from goldset import evaluate
from goldset.cli import app
from goldset.errors import InputError
from goldset.evaluation.compare import check_comparable
from goldset.evaluation.logs import estimate_log, export_queries, read_log, sample_by_day
from goldset.evaluation.runs import read_run
from tests.helpers.eval_data import make_dataset, perfect_sample, write_run_file
from tests.helpers.fake_openai import FakeOpenAI
from tests.helpers.judge_responders import add_eval_judge_responders

EN_Q = "What is the default port of quokka?"
EN_CTX = "The default port of quokka is 8080."
ZH_Q = "快袋鼠的默认端口是什么？"
ZH_CTX = "快袋鼠是一个轻量的网络框架。它的默认端口是八零八零。"
OFF_TOPIC = "Bananas are yellow and grow in warm places."


@pytest.fixture
def fake(fake_llm: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeOpenAI:
    add_eval_judge_responders(fake_llm)
    monkeypatch.chdir(tmp_path)  # no workspace: the journal goes beside the runs folder
    return fake_llm


def line(i: int, kind: str, lang: str, day: str, **kw: Any) -> dict[str, Any]:
    """One log line: ``good`` (faithful, relevant context), ``halluc`` (a claim no context holds) or ``offtopic``
    (the only context retrieved is irrelevant, the answer a claim it does not hold)."""
    q, ctx = (EN_Q, EN_CTX) if lang == "en" else (ZH_Q, ZH_CTX)
    good = "The default port of quokka is 8080." if lang == "en" else "它的默认端口是八零八零。"
    bad = "Quokka listens on port 9999 and was written in Cobol." if lang == "en" else "它使用Cobol编写。"
    answer = {"good": good, "halluc": bad, "offtopic": good}[kind]
    contexts = [OFF_TOPIC] if kind == "offtopic" else [ctx]
    return {
        "id": f"{day}-{i:03d}",
        "question": q + (f" (#{i})" if lang == "en" else f"（{i}）"),
        "answer": answer,
        "contexts": [{"text": t} for t in contexts],
        "latency": {"total_ms": 100.0 + i % 40, "ttft_ms": 20.0},
        "tokens_in": 50,
        "tokens_out": 10,
        "cost_usd": 0.001,
        "timestamp": f"{day}T{10 + i % 10:02d}:00:00Z",
        "topic": "ports",
        **kw,
    }


def write_log(path: Path, rows: list[dict[str, Any]]) -> Path:
    for r in rows:
        r["pair_id"] = r.pop("id")
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def day_log(path: Path, day: str, n_halluc: int, n: int = 40, start: int = 0) -> Path:
    """``n`` lines, half English half Chinese; the first ``n_halluc`` hallucinate, the next 4 retrieve off topic.
    Questions are numbered from ``start``."""
    rows = []
    for i in range(n):
        kind = "halluc" if i < n_halluc else "offtopic" if i < n_halluc + 4 else "good"
        rows.append(line(start + i, kind, "en" if i % 2 == 0 else "zh", day))
    return write_log(path, rows)


def test_a_log_in_two_languages_is_scored_right_per_sample(fake: FakeOpenAI, tmp_path: Path) -> None:
    log = day_log(tmp_path / "day1.jsonl", "2026-03-01", n_halluc=6)
    r = evaluate(log=log, out_dir=tmp_path / "runs" / "day1")
    got = {s.pair_id: s for s in r.scores}
    assert len(got) == 40 and r.meta.reference_free and r.meta.manifest_hash is None
    for i in range(40):
        s = got[f"2026-03-01-{i:03d}"]
        assert s.language == ("en" if i % 2 == 0 else "zh") and s.day == "2026-03-01" and s.topic == "ports"
        m = s.metrics
        if i < 6:  # hallucinated: no claim is in the (relevant) context
            assert m["faithfulness"] == 0.0 and m["hallucination"] == 1.0, (i, m)
            assert m["context_relevance"] == 1.0
        elif i < 10:  # the answer is right but nothing retrieved supports it: hallucinated against the contexts
            assert m["context_relevance"] == 0.0 and m["hallucination"] == 1.0, (i, m)
            assert m["context_utilization"] == 0.0
        else:
            assert m["faithfulness"] == 1.0 and m["hallucination"] == 0.0 and m["context_relevance"] == 1.0, (i, m)
            assert m["context_utilization"] == 1.0
        assert m["refusal"] == 0.0 and m["refusal_judged"] == 0.0
        for absent in ("completeness", "reference_contradiction", "recall@5", "token_f1", "false_refusal_judged"):
            assert absent not in m, absent  # no reference: none of the golden-set metrics
        assert s.judge is not None and s.judge.calls == 2  # claims and relevance; never coverage
    o = r.summary.overall
    assert o["hallucination"] == pytest.approx(10 / 40) and o["context_relevance"] == pytest.approx(36 / 40)
    assert r.summary.by_language["zh"]["hallucination"] == pytest.approx(5 / 20)
    assert set(r.summary.by_day) == {"2026-03-01"} and r.summary.by_topic["ports"]["n"] == 40
    sysm = r.summary.system
    assert sysm["latency_p50_ms"] == pytest.approx(119.5) and sysm["ttft_p95_ms"] == 20.0
    assert sysm["cost_usd_total"] == pytest.approx(0.04) and sysm["error_rate"] == 0.0
    assert r.meta.judge is not None and r.meta.judge.calls["calls"] == 80 == fake.calls
    # the folder reads back as a run, marked reference-free
    back = read_run(r.folder)
    assert back.meta.reference_free and back.summary.by_day == r.summary.by_day

    again = evaluate(log=log, out_dir=tmp_path / "runs" / "again")
    assert fake.calls == 80, "re-scoring a log makes no judge call"
    assert again.summary.overall == r.summary.overall


def test_personal_data_is_replaced_before_storing_and_judging(fake: FakeOpenAI, tmp_path: Path) -> None:
    row = line(0, "good", "en", "2026-03-01")
    row["question"] = "My mail is jane.doe@example.com, call +44 20 7946 0958: what is the default port of quokka?"
    row["answer"] = "Jane, the default port of quokka is 8080. Card 4111 1111 1111 1111 noted."
    log = write_log(tmp_path / "pii.jsonl", [row])
    r = evaluate(log=log, out_dir=tmp_path / "runs" / "pii")
    sent = json.dumps([req.body for req in fake.chat_requests()])
    stored = json.dumps([s.model_dump(mode="json") for s in read_run(r.folder).samples.values()])
    for secret in ("jane.doe@example.com", "7946", "4111"):
        assert secret not in sent and secret not in stored, secret
    assert "[email]" in stored and "[phone]" in stored and "[number]" in stored
    assert r.meta.log is not None and r.meta.log["redacted"] == {"email": 1, "number": 1, "phone": 1}
    page = tmp_path / "pii.html"
    result = CliRunner().invoke(app, ["eval", "--log", str(log), "--out", str(tmp_path / "runs" / "cli"),
                                      "--html", str(page)])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "(reference-free)" in result.output and "personal data replaced" in result.output
    html = page.read_text(encoding="utf-8")
    assert "Production traffic over time" in html and "jane.doe" not in html and "<svg" in html


def test_without_a_judge_refusals_by_pattern_system_figures_and_errors(no_llm_env: None, tmp_path: Path) -> None:
    rows = [
        line(0, "good", "en", "2026-03-01", feedback="up"),
        line(1, "good", "zh", "2026-03-01", answer="抱歉，我无法回答这个问题。", feedback="down"),
        line(2, "good", "en", "2026-03-01", answer="I don't know.", feedback=True),
        line(3, "good", "en", "2026-03-01", answer="", error="timeout after 30 s"),
    ]
    r = evaluate(log=write_log(tmp_path / "l.jsonl", rows), out_dir=tmp_path / "runs" / "x")
    got = {s.pair_id: s.metrics for s in r.scores}
    assert r.meta.judge is None
    assert [got[f"2026-03-01-00{i}"]["refusal"] for i in range(4)] == [0.0, 1.0, 1.0, None]
    assert r.summary.overall["refusal"] == pytest.approx(2 / 3)
    assert r.summary.overall["feedback"] == pytest.approx(2 / 3)
    assert r.summary.system["error_rate"] == 0.25 and r.summary.n_failed == 1
    assert "faithfulness" not in r.summary.overall
    assert any("counted in error_rate, not judged" in n for n in r.notes)


def test_a_sample_is_stratified_by_day_and_the_dry_run_states_the_calls(fake: FakeOpenAI, tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    day_log(folder / "a.jsonl", "2026-03-01", n_halluc=2, n=30)
    day_log(folder / "b.jsonl", "2026-03-02", n_halluc=2, n=10, start=100)
    read = read_log(folder)
    assert read.per_day() == {"2026-03-01": 30, "2026-03-02": 10}
    chosen = sample_by_day(read.samples, read.days, 8, seed=1)
    days = [read.days[s.pair_id] for s in chosen]
    assert days.count("2026-03-01") == 6 and days.count("2026-03-02") == 2
    assert sample_by_day(read.samples, read.days, 8, seed=1) == chosen  # seeded
    assert [s.pair_id for s in sample_by_day(read.samples, read.days, 1, seed=0)] != []

    est = estimate_log(folder, sample=8, seed=1)
    assert est.enabled and est.n_samples == 8 and est.calls == 16 and est.cached == 0
    assert est.calls_by_kind == {"claims": 8, "relevance": 8} and fake.calls == 0
    result = CliRunner().invoke(app, ["eval", "--log", str(folder), "--sample", "8", "--seed", "1", "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "16 judge calls" in result.output and "0 already in the journal" in result.output
    assert fake.calls == 0 and not (tmp_path / "runs").exists()

    r = evaluate(log=folder, sample=8, seed=1, out_dir=tmp_path / "runs" / "s")
    assert r.summary.n_samples == 8 and fake.calls == 16
    assert r.meta.log is not None and r.meta.log["lines"] == 40 and r.meta.sample == {"n": 8, "seed": 1}
    assert estimate_log(folder, sample=8, seed=1).cached == 16  # the dry run sees the journal


def test_a_log_run_is_never_compared_with_a_golden_set_run(no_llm_env: None, tmp_path: Path) -> None:
    from tests.helpers.eval_data import evaluated_pairs

    data = make_dataset(tmp_path / "data")
    golden = evaluate(data, run=write_run_file(tmp_path / "run.jsonl", [perfect_sample(p) for p in evaluated_pairs()]),
                      out_dir=tmp_path / "runs" / "golden")  # fmt: skip
    log = evaluate(log=write_log(tmp_path / "l.jsonl", [line(0, "good", "en", "2026-03-01")]),
                   out_dir=tmp_path / "runs" / "log")  # fmt: skip
    with pytest.raises(InputError, match="reference-free"):
        check_comparable(golden.meta, log.meta)
    result = CliRunner().invoke(app, ["compare", str(golden.folder), str(log.folder)])
    assert result.exit_code == 2 and "reference-free" in result.output


def test_the_questions_go_to_a_queries_file(no_llm_env: None, tmp_path: Path) -> None:
    rows = [line(i, "good", "en", "2026-03-01", question=q) for i, q in
            enumerate(["How do I clear the cache?", "how do I clear the  cache?", "Mail me at a.b@example.org",
                       "快袋鼠的默认端口是什么？"])]  # fmt: skip
    log = write_log(tmp_path / "l.jsonl", rows)
    out = tmp_path / "queries.csv"
    assert export_queries(log, out) == 3
    with out.open(encoding="utf-8") as fh:
        got = list(csv.DictReader(fh))
    assert got[0] == {"question": "How do I clear the cache?", "count": "2"}
    assert {r["question"] for r in got[1:]} == {"Mail me at [email]", "快袋鼠的默认端口是什么？"}
    result = CliRunner().invoke(app, ["eval", "--log", str(log), "--export-queries", str(tmp_path / "q2.csv")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "q2.csv").read_text(encoding="utf-8") == out.read_text(encoding="utf-8")
    # ... in one step into `goldset import --format queries`: the counts carried over
    from goldset.queries.intake import import_queries
    from goldset.scaffold import init_workspace

    init_workspace(tmp_path / "ws", dvc=False)
    imported = import_queries(out, tmp_path / "ws")
    counts = {q.question: q.count for q in imported.questions}
    assert counts == {"How do I clear the cache?": 2, "Mail me at [email]": 1, "快袋鼠的默认端口是什么？": 1}


# --------------------------------------------------------------------------------------------------- trend


def test_more_hallucinations_a_day_later_are_a_drop_and_the_gate_fails(fake: FakeOpenAI, tmp_path: Path) -> None:
    from goldset.evaluation.trend import trend

    runs = tmp_path / "runs"
    evaluate(log=day_log(tmp_path / "d1.jsonl", "2026-03-01", n_halluc=6), out_dir=runs / "d1")
    ok = CliRunner().invoke(app, ["trend", "--gate"])
    assert ok.exit_code == 0, ok.output  # one day: nothing to drop from
    evaluate(log=day_log(tmp_path / "d2.jsonl", "2026-03-02", n_halluc=20, start=200), out_dir=runs / "d2")
    t = trend()
    assert t.labels == ["2026-03-01", "2026-03-02"] and t.by == "day" and t.reference_free
    hall = next(s for s in t.of("all") if s.metric == "hallucination")
    assert [p.value for p in hall.points] == [pytest.approx(10 / 40), pytest.approx(24 / 40)]
    assert all(p.low is not None and p.low < p.value < p.high for p in hall.points)  # type: ignore[operator]
    dropped = {d.metric for d in t.gated_drops()}
    assert {"hallucination", "faithfulness"} <= dropped
    assert "context_relevance" not in dropped and "latency_p50_ms" not in dropped  # unchanged: no false drop
    assert {g for g in t.groups()} >= {"all", "language en", "language zh", "topic ports"}
    zh = next(s for s in t.of("language zh") if s.metric == "hallucination")
    assert [p.value for p in zh.points] == [pytest.approx(5 / 20), pytest.approx(12 / 20)]
    # 20 questions a day per language: the same change is within Holm's bar there (p 0.017 before correction)
    assert not any(d.group == "language zh" and d.metric == "hallucination" for d in t.drops)

    result = CliRunner().invoke(app, ["trend", "--gate", "--html", str(tmp_path / "trend.html")])
    assert result.exit_code == 1, result.output
    assert "hallucination" in result.output and "trend gate failed" in result.output
    assert "▼" in result.output
    page = (tmp_path / "trend.html").read_text(encoding="utf-8")
    assert "hallucination (all): 0.250 on 2026-03-01 → 0.600 on 2026-03-02" in page

    compared = CliRunner().invoke(app, ["compare", str(runs / "d1"), str(runs / "d2")])
    assert compared.exit_code == 2 and "goldset trend" in compared.output  # other questions: no pairs to compare

    # the same traffic a day later is no drop
    evaluate(log=day_log(tmp_path / "d3.jsonl", "2026-03-03", n_halluc=20, start=400), out_dir=runs / "d3")
    again = CliRunner().invoke(app, ["trend", "--gate"])
    assert again.exit_code == 0, again.output


def test_trend_refuses_runs_not_comparable_on_one_line(fake: FakeOpenAI, tmp_path: Path) -> None:
    from tests.helpers.eval_data import evaluated_pairs

    runs = tmp_path / "runs"
    a = evaluate(log=day_log(tmp_path / "d1.jsonl", "2026-03-01", n_halluc=2, n=6), out_dir=runs / "a")
    b = evaluate(log=day_log(tmp_path / "d2.jsonl", "2026-03-02", n_halluc=2, n=6), out_dir=runs / "b", judge=False)
    result = CliRunner().invoke(app, ["trend", str(a.folder), str(b.folder)])
    assert result.exit_code == 2 and "different settings" in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1  # one line: the reason
    # found in runs/: the one not comparable with the latest is left out, with a note
    found = CliRunner().invoke(app, ["trend"])
    assert found.exit_code == 0 and "left out" in found.output
    data = make_dataset(tmp_path / "data")
    golden = evaluate(data, run=write_run_file(tmp_path / "run.jsonl", [perfect_sample(p) for p in evaluated_pairs()]),
                      out_dir=tmp_path / "golden")  # fmt: skip
    mixed = CliRunner().invoke(app, ["report", str(a.folder), str(golden.folder), "--html", str(tmp_path / "x.html")])
    assert mixed.exit_code == 2 and "reference-free" in mixed.output, mixed.output
    assert not (tmp_path / "x.html").exists()


def test_trend_per_run_and_the_latest_runs(fake: FakeOpenAI, tmp_path: Path) -> None:
    from goldset import trend

    runs = tmp_path / "runs"
    first = evaluate(log=day_log(tmp_path / "d1.jsonl", "2026-03-01", n_halluc=2, n=8), out_dir=runs / "d1")
    second = evaluate(log=day_log(tmp_path / "d2.jsonl", "2026-03-01", n_halluc=4, n=8, start=50), out_dir=runs / "d2")
    per_day = trend()
    assert per_day.labels == ["2026-03-01"]  # the same day in two runs: the latest run's
    assert any("the latest run's scores are used" in n for n in per_day.notes)
    hall = next(s for s in per_day.of() if s.metric == "hallucination")
    assert hall.points[0].value == pytest.approx(second.summary.overall["hallucination"])
    per_run = trend(by="run")
    assert per_run.labels == [first.run_id, second.run_id] and [p.short for p in per_run.of()[0].points] == ["#1", "#2"]
    assert trend(last=1).runs == [second.run_id]
    bad = CliRunner().invoke(app, ["trend", "--by", "week"])
    assert bad.exit_code == 2 and "give day or run" in bad.output


def test_a_step_of_a_few_samples_is_drawn_never_flagged(
    no_llm_env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from goldset import trend

    monkeypatch.chdir(tmp_path)
    runs = tmp_path / "runs"
    refusing = "I don't know."
    for day, answer, n in (("2026-03-01", "Port 8080.", 4), ("2026-03-02", refusing, 4), ("2026-03-03", refusing, 4),
                           ("2026-03-04", "Port 8080.", 12), ("2026-03-05", refusing, 12)):  # fmt: skip
        rows = [line(i, "good", "en", day, answer=answer) for i in range(n)]
        evaluate(log=write_log(tmp_path / f"{day}.jsonl", rows), out_dir=runs / day)
    t = trend()
    refusal = next(s for s in t.of() if s.metric == "refusal")
    assert [p.value for p in refusal.points] == [0.0, 1.0, 1.0, 0.0, 1.0]
    # 4 answers a day: all refused after none is no drop; 12 a day: it is
    got = [(d.before, d.after) for d in t.drops if d.metric == "refusal" and d.group == "all"]
    assert got == [("2026-03-04", "2026-03-05")]

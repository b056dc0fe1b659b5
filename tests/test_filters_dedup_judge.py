"""The LLM duplicate judge over candidate pairs, through the fake OpenAI server (real openai client over HTTP).

The fake judge answers from a hand-written key (``tests/helpers/duplicate_responders.py``): these tests check what
goldset does with verdicts (links, no chains, reasons, failures, journal, order), not a model's judgement.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from goldset.filters import duplicate_judge, duplicates, run_filters
from goldset.filters.duplicate_judge import Candidate, DuplicateJudgeSettings, Judged
from goldset.filters.textsim import edit_similarity
from goldset.io import read_jsonl, write_jsonl
from goldset.schema import QAPair
from tests.helpers.duplicate_responders import make_duplicate_responder, pair_set_rule, parse_pairs
from tests.helpers.fake_openai import FakeOpenAI, Fault
from tests.helpers.filter_data import make_workspace, pair

# Reworded duplicates (lexically far apart), close-but-different questions, Chinese, and a chain.
REQ = "How do you make a query parameter required in FastAPI?"
REQ_REWORDED = "What should I do so that clients cannot omit a query parameter?"
LIMIT = "What is the default value of the query parameter `limit` in the `common_parameters` dependency?"
SKIP = "What is the default value of the query parameter `skip` in the `common_parameters` dependency?"
ZH_REQ = "在 FastAPI 中怎样把查询参数设为必选？"
ZH_REQ_REWORDED = "怎样保证客户端一定会传某个查询参数、不能省略？"
ZH_200 = "状态码 200 和 201 有什么区别？"
ZH_400 = "状态码 400 和 404 有什么区别？"
# A ~ B and B ~ C are the same need by the key, A and C are not.
CHAIN_A = "How do you read a header parameter in a FastAPI path operation?"
CHAIN_B = "How do you declare a header parameter in FastAPI?"
CHAIN_C = "How do you declare a header parameter that FastAPI must not convert underscores in?"

REQ_ANSWER = "Declare it without a default value; FastAPI then answers 422 when it is missing."
ZH_REQ_ANSWER = "声明查询参数时不给默认值，缺少它时 FastAPI 会返回 422 错误。"
HEADER_ANSWER = "Declare a parameter with Header() in the path operation function; FastAPI reads the header."

SAME = {
    frozenset((REQ, REQ_REWORDED)),
    frozenset((ZH_REQ, ZH_REQ_REWORDED)),
    frozenset((CHAIN_A, CHAIN_B)),
    frozenset((CHAIN_B, CHAIN_C)),
}


def _pairs() -> list[QAPair]:
    return [
        pair("qa-01", REQ, REQ_ANSWER),
        pair("qa-02", REQ_REWORDED, "Give the parameter no default value; a request without it then gets a 422."),
        pair("qa-03", LIMIT, "Its default value is 100."),
        pair("qa-04", SKIP, "Its default value is 0."),
        pair("qa-05", ZH_REQ, ZH_REQ_ANSWER, chunks=("zh-body-1",)),
        pair("qa-06", ZH_REQ_REWORDED, "不要给这个查询参数设默认值，缺少时返回 422。", chunks=("zh-body-1",)),
        pair("qa-07", ZH_200, "200 表示成功，201 表示已创建。", chunks=("zh-body-1",)),
        pair("qa-08", ZH_400, "400 表示请求有误，404 表示找不到资源。", chunks=("zh-body-1",)),
        pair("qa-09", CHAIN_A, HEADER_ANSWER),
        pair("qa-10", CHAIN_B, HEADER_ANSWER),
        pair("qa-11", CHAIN_C, "Pass convert_underscores=False to Header() in the parameter declaration."),
    ]


#: The judge's tests leave out the checks that have nothing to do with duplicates (their verdicts would only
#: add noise to the statuses asserted here).
CONFIG = "filter:\n  checks:\n    verbatim: false\n    groundedness: false\n    question_overlap: false\n"


def _load(ws) -> dict[str, QAPair]:
    return {p.id: p for p in read_jsonl(ws.pairs_path, QAPair)}


def _dup(ws) -> dict[str, tuple[bool, str | None, str]]:
    return {pid: (p.checks["duplicate"].passed, p.checks["duplicate"].duplicate_of, p.checks["duplicate"].reason)
            for pid, p in _load(ws).items()}  # fmt: skip


def test_hand_written_cases_reworded_close_different_chinese_and_no_chain(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    # The rewordings are far below the lexical threshold: only the judge can find them.
    assert edit_similarity(REQ, REQ_REWORDED) < 0.6 and edit_similarity(ZH_REQ, ZH_REQ_REWORDED) < 0.6
    asked: list[tuple[str, str]] = []
    fake_llm.add_responder("duplicate_judge", make_duplicate_responder(pair_set_rule(SAME), asked))
    ws = make_workspace(tmp_path / "ws", _pairs(), config=CONFIG)
    lexical = run_filters(ws, use_llm=False)
    assert lexical.skipped_checks["duplicate (judge)"].startswith("skipped: --no-llm") and fake_llm.calls == 0
    assert all(passed for passed, _, _ in _dup(ws).values())  # lexically, nothing is a duplicate

    report = run_filters(ws)
    got = _dup(ws)
    asked_pairs = {frozenset(p) for p in asked}
    assert asked_pairs >= SAME  # every true duplicate reached the judge
    assert all(p in asked_pairs for p in (frozenset((LIMIT, SKIP)), frozenset((ZH_200, ZH_400))))
    # Reworded duplicates, English and Chinese: the second is a duplicate of the first, with the judge's reason.
    assert got["qa-02"][:2] == (False, "qa-01") and "duplicate judge: same need" in got["qa-02"][2]
    assert got["qa-02"][2].startswith("judged duplicate: asks for the same information as qa-01, which is kept")
    assert got["qa-06"][:2] == (False, "qa-05")
    assert got["qa-01"][0] and got["qa-01"][2].startswith("kept as the best of 2 near-duplicates (qa-02)")
    # Close-but-different: kept, and the judge's reason is on the pair.
    for pid in ("qa-03", "qa-04", "qa-07", "qa-08"):
        passed, dup_of, reason = got[pid]
        assert passed and dup_of is None and "asking something else" in reason and "different:" in reason
    # The chain: qa-10 duplicates qa-09; qa-11 is the same as qa-10 only, so it is kept, and says why.
    assert got["qa-10"][:2] == (False, "qa-09")
    passed, dup_of, reason = got["qa-11"]
    assert passed and dup_of is None
    assert "same as qa-10 (itself a duplicate of qa-09); not merged through a third pair" in reason
    assert report.duplicate_groups == 3
    assert report.duplicate_judge is not None and report.duplicate_judge["candidates"] == len(asked)
    assert fake_llm.calls == report.duplicate_judge["batches"] == report.duplicate_judge["calls"]
    # Several pairs per call: fewer calls than pairs asked about.
    assert fake_llm.calls < len(asked)


def test_a_rerun_makes_no_call_and_writes_nothing(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    fake_llm.add_responder("duplicate_judge", make_duplicate_responder(pair_set_rule(SAME)))
    ws = make_workspace(tmp_path / "ws", _pairs(), config=CONFIG)
    first = run_filters(ws)
    calls = fake_llm.calls
    assert calls > 0 and first.written
    again = run_filters(ws)
    assert fake_llm.calls == calls and not again.written
    assert again.duplicate_judge is not None and again.duplicate_judge["cache_hits"] == again.duplicate_judge["batches"]
    assert again.per_check["duplicate"].reused == len(_pairs())
    # Without the LLM, the verdicts the journal holds still count: nothing is undone, nothing called or written.
    offline = run_filters(ws, use_llm=False)
    assert fake_llm.calls == calls and not offline.written and _dup(ws)["qa-02"][:2] == (False, "qa-01")
    assert "the verdicts the call journal holds count" in offline.skipped_checks["duplicate (judge)"]


def test_a_machine_without_the_judge_keeps_what_the_judge_found(
    tmp_path: Path, fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A CI runner with no endpoint and no call journal (a fresh clone) runs the filters before a release: the
    judge's verdicts on the pairs stay (lexical verdicts would silently un-reject qa-02, qa-06 and qa-10); a pair
    added since gets a lexical verdict, and the report says so. Turning the judge off in the settings recomputes."""
    fake_llm.add_responder("duplicate_judge", make_duplicate_responder(pair_set_rule(SAME)))
    ws = make_workspace(tmp_path / "ws", _pairs(), config=CONFIG)
    run_filters(ws)
    judged = _dup(ws)
    assert judged["qa-02"][:2] == (False, "qa-01")
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "GOLDSET_MODEL", "GOLDSET_JUDGE_MODEL"):
        monkeypatch.delenv(name)
    for f in ws.state_dir.glob(ws.cache_path.name + "*"):  # the journal and its WAL files
        f.unlink()
    calls = fake_llm.calls
    offline = run_filters(ws)
    assert fake_llm.calls == calls and not offline.written and _dup(ws) == judged
    assert "verdicts the judge made earlier stay" in offline.skipped_checks["duplicate (judge)"]
    assert run_filters(ws, use_llm=False).written is False and _dup(ws) == judged, "--no-llm, no journal: the same"

    (ws.root / "goldset.yaml").write_text(CONFIG + "    duplicate: {judge: false}\n", encoding="utf-8")
    lexical = run_filters(ws)
    assert lexical.written and all(passed for passed, _, _ in _dup(ws).values()), "judge off: lexical verdicts"


def test_the_judge_overrules_a_lexical_false_positive(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    """Two questions one ordinary word apart are over the lexical threshold; the judge says they differ."""
    a = "What does the CORS middleware send back when it receives a preflight request?"
    b = "What does the CORS middleware send back when it receives a simple request?"
    assert edit_similarity(a, b) >= 0.85
    fake_llm.add_responder("duplicate_judge", make_duplicate_responder(pair_set_rule(set())))
    ws = make_workspace(tmp_path / "ws", [pair("qa-a", a, "x y z"), pair("qa-b", b, "x y z")], config=CONFIG)
    run_filters(ws, use_llm=False)
    assert _dup(ws)["qa-b"][:2] == (False, "qa-a")  # the threshold alone calls it a duplicate
    run_filters(ws)
    got = _dup(ws)
    assert got["qa-b"][0] and got["qa-a"][0] and "asking something else (qa-a: different:" in got["qa-b"][2]


@pytest.mark.parametrize(
    ("fault", "responder_reply", "words"),
    [
        (Fault("length", keep=1.0), None, "cut off"),
        (Fault("truncated"), None, "still invalid after one repair attempt"),
        (None, {"verdicts": []}, "still invalid after one repair attempt"),
        (None, "this is not json", "still invalid after one repair attempt"),
    ],
)
def test_a_failed_judge_call_keeps_the_lexical_verdict_and_says_why(
    tmp_path: Path, fake_llm: FakeOpenAI, fault: Fault | None, responder_reply: object, words: str
) -> None:
    near_a = "How do I declare a request body in FastAPI?"
    near_b = "How can I declare a request body in FastAPI?"  # over the lexical threshold
    ps = [pair("qa-a", near_a, REQ_ANSWER), pair("qa-b", near_b, REQ_ANSWER)]
    good = make_duplicate_responder(pair_set_rule({frozenset((near_a, near_b))}))
    fake_llm.add_responder("duplicate_judge", good if responder_reply is None else (lambda body: responder_reply))
    if fault is not None:
        fake_llm.inject(fault, fault)  # the call and its repair attempt, if any
    ws = make_workspace(tmp_path / "ws", ps, config=CONFIG)
    report = run_filters(ws)
    passed, dup_of, reason = _dup(ws)["qa-b"]
    assert (passed, dup_of) == (False, "qa-a")  # the lexical verdict stands
    assert "no duplicate judge verdict" in reason and words in reason and "the threshold's verdict stands" in reason
    assert any(e.startswith("duplicate judge: no verdict on 1 candidate pair(s) (qa-a~qa-b)") and words in e
               for e in report.judge_errors)  # fmt: skip
    # The failure was not cached: a healthy server is asked again, and its verdict replaces the fallback.
    fake_llm.clear_faults()
    fake_llm.add_responder("duplicate_judge", good)
    before = fake_llm.calls
    run_filters(ws)
    passed, dup_of, reason = _dup(ws)["qa-b"]
    assert fake_llm.calls == before + 1 and (passed, dup_of) == (False, "qa-a")
    assert "duplicate judge: same need" in reason


def test_cross_language_candidates_come_from_embeddings_when_asked_for(
    tmp_path: Path, fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    en = "How does FastAPI's `HTTPException` differ from Starlette's `HTTPException`?"
    zh = "FastAPI 的 `HTTPException` 与 Starlette 的 `HTTPException` 有何差别？"
    asked: list[tuple[str, str]] = []
    fake_llm.add_responder("duplicate_judge", make_duplicate_responder(pair_set_rule({frozenset((en, zh))}), asked))
    ps = [pair("qa-en", en, "It also accepts any JSON-able detail and headers."),
          pair("qa-zh", zh, "它的 detail 可以是任何 JSON 数据，还可以加响应头。", chunks=("zh-body-1",))]  # fmt: skip
    # The fake server's embeddings are bags of hashed tokens (cosine 0.41 here): a candidate threshold to suit them.
    cfg = CONFIG + "    duplicate: {judge: {min_cosine: 0.3%s}}\n"
    ws = make_workspace(tmp_path / "ws", ps, config=cfg % "")
    run_filters(ws)
    assert asked == [] and _dup(ws)["qa-zh"][0]  # lexical candidates stay within a language
    monkeypatch.setenv("GOLDSET_EMBEDDING_MODEL", "fake-embed")
    run_filters(ws)  # by default a translation is not a duplicate: embedding candidates stay within a language too
    assert asked == [] and _dup(ws)["qa-zh"][0] and fake_llm.embedding_calls == 1
    ws.config_path.write_text(cfg % ", cross_language: true", encoding="utf-8")
    report = run_filters(ws)
    assert [frozenset(p) for p in asked] == [frozenset((en, zh))] and fake_llm.embedding_calls == 1
    assert _dup(ws)["qa-zh"][:2] == (False, "qa-en") and report.embedding is not None


def _shuffled(ps: list[QAPair], seed: int) -> list[QAPair]:
    out = list(ps)
    random.Random(seed).shuffle(out)
    return out


def test_candidates_batches_prompts_and_verdicts_do_not_depend_on_order() -> None:
    from goldset.prompts import load_prompt

    prompt = load_prompt(duplicate_judge.PROMPT_ID)
    st = DuplicateJudgeSettings(batch=3)

    def run(ps: list[QAPair]) -> tuple[set, list[list[str]], dict]:
        found = duplicate_judge.candidates(ps, st)
        named = {frozenset((ps[c.i].id, ps[c.j].id)) for c in found}
        messages = [duplicate_judge.render_messages(ps, b, prompt) for b in duplicate_judge.batches(ps, found, 3)]
        rule = pair_set_rule(SAME)
        judged = Judged(scores={(c.i, c.j): c.score for c in found})
        for c in found:
            (judged.same if rule(ps[c.i].question, ps[c.j].question) else judged.different)[(c.i, c.j)] = "r"
        verdicts = duplicates.find(ps, duplicates.Settings(), judged=judged)
        said = {k: (v.passed, v.duplicate_of, v.reason) for k, v in verdicts.items()}
        return named, [json.dumps(m) for m in messages], said

    base = run(_pairs())
    assert base[0] and len(base[1]) > 1
    for seed in range(5):
        assert run(_shuffled(_pairs(), seed)) == base


def test_the_whole_stage_does_not_depend_on_line_order(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    fake_llm.add_responder("duplicate_judge", make_duplicate_responder(pair_set_rule(SAME)))
    results = []
    for n, order in enumerate((_pairs(), list(reversed(_pairs())), _shuffled(_pairs(), 3))):
        ws = make_workspace(tmp_path / f"ws{n}", [], config=CONFIG)
        ws.pairs_path.write_text("".join(p.model_dump_json() + "\n" for p in order), encoding="utf-8")
        start = len(fake_llm.chat_requests())
        run_filters(ws)
        prompts = sorted(json.dumps(r.body["messages"]) for r in fake_llm.chat_requests()[start:])
        verdicts = {pid: v for pid, v in _dup(ws).items()}
        results.append((prompts, verdicts))
    assert results[0][0] and results[0] == results[1] == results[2]


def test_candidates_are_bounded_per_question() -> None:
    """Many near-identical questions: each brings at most top_k lexical candidates, so the calls stay linear."""
    ps = [pair(f"qa-{i:03}", f"How do I configure option number {i} of the request body parser?", "Set it.")
          for i in range(60)]  # fmt: skip
    st = DuplicateJudgeSettings(top_k=2, batch=5)
    found = duplicate_judge.candidates(ps, st)
    assert len(found) <= 2 * len(ps)
    per = {}
    for c in found:
        per[c.i] = per.get(c.i, 0) + 1
        per[c.j] = per.get(c.j, 0) + 1
    calls = duplicate_judge.batches(ps, found, 5)
    assert sum(len(b) for b in calls) == len(found) and all(1 <= len(b) <= 5 for b in calls)
    assert len(calls) <= len(found)


def test_judgement_schema_wants_each_pair_exactly_once() -> None:
    from pydantic import ValidationError

    model = duplicate_judge.judgement_model(2)
    ok = model.model_validate({"verdicts": [{"pair": 2, "same": False, "reason": "a"},
                                            {"pair": 1, "same": True, "reason": "b"}]})  # fmt: skip
    assert [v.pair for v in ok.verdicts] == [2, 1]
    for bad in ({"verdicts": []}, {"verdicts": [{"pair": 1, "same": True, "reason": "x"}] * 2},
                {"verdicts": [{"pair": 1, "same": True, "reason": "x"}, {"pair": 3, "same": True, "reason": "x"}]}):
        with pytest.raises(ValidationError):
            model.model_validate(bad)
    assert model.model_json_schema()["properties"]["verdicts"]["minItems"] == 2


def test_judge_settings_in_goldset_yaml(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    cfg = CONFIG + "    duplicate: {judge: {enabled: false}}\n"
    ws = make_workspace(tmp_path / "ws", _pairs(), config=cfg)
    report = run_filters(ws)
    assert fake_llm.calls == 0 and report.duplicate_judge is None
    assert isinstance(Candidate(0, 1, 0.5, ("lexical",)).score, float)


def test_judge_false_shorthand_and_a_required_judge_without_endpoint(tmp_path: Path, no_llm_env: None) -> None:
    from goldset.errors import EndpointError

    assert duplicates.Settings.model_validate({"judge": False}).judge.enabled is False
    assert duplicates.Settings.model_validate({"judge": "true"}).judge.enabled is True
    ws = make_workspace(tmp_path / "ws", _pairs(), config=CONFIG + "    duplicate: {judge: {enabled: true}}\n")
    before = ws.pairs_path.read_bytes()
    with pytest.raises(EndpointError):
        run_filters(ws)
    assert ws.pairs_path.read_bytes() == before
    report = run_filters(ws, use_llm=False)  # --no-llm skips even a required judge, and says so
    assert report.skipped_checks["duplicate (judge)"] == "skipped: --no-llm; lexical duplicates only"


def test_the_estimate_counts_the_calls_and_what_the_journal_holds(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    from typer.testing import CliRunner

    from goldset.cli import app
    from goldset.filters.stage_duplicates import estimate_duplicate_judge

    fake_llm.add_responder("duplicate_judge", make_duplicate_responder(pair_set_rule(SAME)))
    ws = make_workspace(tmp_path / "ws", _pairs(), config=CONFIG)
    before = ws.pairs_path.read_bytes()
    est = estimate_duplicate_judge(ws)
    res = CliRunner().invoke(app, ["filter", "--dry-run", "-w", str(ws.root)])
    assert res.exit_code == 0, res.output
    assert fake_llm.calls == 0 and ws.pairs_path.read_bytes() == before  # nothing called, nothing written
    assert est.enabled and est.cached == 0 and est.calls > 0
    assert f"in {est.calls} call(s): 0 from the journal, {est.calls} to send" in res.output
    report = run_filters(ws)
    assert report.duplicate_judge is not None
    assert (est.candidates, est.calls) == (report.duplicate_judge["candidates"], fake_llm.calls)
    again = estimate_duplicate_judge(ws)
    # every candidate's verdict is in the journal now, by pair: nothing left to batch or send
    assert (again.candidates, again.known, again.calls, again.to_send) == (est.candidates, est.candidates, 0, 0)
    assert not estimate_duplicate_judge(ws, use_llm=False).enabled


def test_the_judge_links_a_rewording_of_a_released_question(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    from goldset.io import write_jsonl

    asked: list[tuple[str, str]] = []
    fake_llm.add_responder("duplicate_judge", make_duplicate_responder(pair_set_rule(SAME), asked))
    released = tmp_path / "v1.jsonl"
    write_jsonl(released, [pair("qa-old", REQ, REQ_ANSWER), pair("qa-old-2", LIMIT, "Its default value is 100.")])
    ws = make_workspace(tmp_path / "ws", [pair("qa-new", REQ_REWORDED, REQ_ANSWER)], config=CONFIG)
    run_filters(ws, against=released)
    passed, dup_of, reason = _dup(ws)["qa-new"]
    assert (passed, dup_of) == (False, "qa-old")
    assert reason.startswith(
        "judged duplicate: asks for the same information as released pair qa-old (duplicate judge: same need"
    )
    assert frozenset((REQ, LIMIT)) not in {frozenset(p) for p in asked}  # two released pairs are not asked about


def test_embedding_candidates_by_hand() -> None:
    vecs = [[1.0, 0.0], [0.8, 0.6], [0.6, 0.8], None]
    keys = ["a", "b", "c", "d"]
    # cosines: a-b 0.8, a-c 0.6, b-c 0.96 (float32)

    def rounded(got: dict) -> dict:
        return {k: round(v, 4) for k, v in got.items()}

    assert rounded(duplicate_judge.embedding_candidates(vecs, keys, 1, 0.0)) == {(0, 1): 0.8, (1, 2): 0.96}
    assert rounded(duplicate_judge.embedding_candidates(vecs, keys, 1, 0.9)) == {(1, 2): 0.96}
    # within a language only: b is alone in its language
    got = duplicate_judge.embedding_candidates(vecs, keys, 2, 0.0, ["en", "zh", "en", "en"])
    assert rounded(got) == {(0, 2): 0.6}


def test_a_new_pair_pays_only_for_the_candidate_pairs_it_brings(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    """Each verdict is kept by its pair of questions: after one new pair, only candidates with it are sent, however
    the batches of the others re-form; an unchanged re-run sends nothing."""
    fake_llm.add_responder("duplicate_judge", make_duplicate_responder(pair_set_rule(SAME)))
    ws = make_workspace(tmp_path / "ws", _pairs(), config=CONFIG + "    duplicate: {judge: {batch: 2}}\n")
    run_filters(ws)
    first = fake_llm.calls
    assert first > 1
    new = pair("qa-12", "How can a query parameter be made mandatory?", REQ_ANSWER)
    write_jsonl(ws.pairs_path, [*read_jsonl(ws.pairs_path, QAPair), new])
    before = len(fake_llm.chat_requests())
    report = run_filters(ws)
    sent = fake_llm.chat_requests()[before:]
    shown = [(a, b) for r in sent for _, a, b in parse_pairs(r.body)]
    assert sent and all(new.question in (a, b) for a, b in shown), shown
    assert report.duplicate_judge is not None and report.duplicate_judge["calls"] == len(sent)
    before = len(fake_llm.chat_requests())
    run_filters(ws)
    assert len(fake_llm.chat_requests()) == before


def test_the_judge_is_not_asked_about_a_pair_a_cheaper_check_rejected(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    """A pair the copy check (or generation, or an expert) already rejects is no candidate: its reworded twin
    stays unjudged against it, and no call shows it."""
    fake_llm.add_responder("duplicate_judge", make_duplicate_responder(pair_set_rule(SAME)))
    from goldset.filters.base import result
    from goldset.filters.status import generation_input_hash

    pairs = _pairs()
    failed = result(False, None, "quote not found in its chunk").model_copy(
        update={"input_hash": generation_input_hash(pairs[1])}
    )
    pairs[1] = pairs[1].model_copy(update={"checks": {"generation": failed}})  # generation rejected this text
    ws = make_workspace(tmp_path / "ws", pairs, config=CONFIG)
    report = run_filters(ws)
    got = _load(ws)
    assert got["qa-02"].status.value == "rejected"
    shown = {q for r in fake_llm.chat_requests() for _, a, b in parse_pairs(r.body) for q in (a, b)}
    assert REQ_REWORDED not in shown and REQ in shown
    assert report.not_judged.get("duplicate") == 1


"""Groundedness judge and paraphrase repair through the fake OpenAI server (real openai client over HTTP)."""

from __future__ import annotations

from pathlib import Path

import pytest

from goldset.errors import ConfigError, EndpointError, UsageError
from goldset.filters import run_filters
from goldset.io import read_jsonl
from goldset.schema import CheckResult, PairStatus, QAPair, QuestionType
from tests.helpers.fake_openai import FakeOpenAI, schema_name_of
from tests.helpers.filter_data import COPY, PARAPHRASE, make_workspace, pair
from tests.helpers.judge_responders import groundedness_responder, make_repair_responder

SUPPORTED = "The client sends a request body to your API; your API sends a response body to the client."
UNSUPPORTED = "The client sends a request body to your API; it must be smaller than 10 megabytes."
ZH_SUPPORTED = "客户端发送给 API 的数据是请求体，API 发送给客户端的数据是响应体。"
ZH_UNSUPPORTED = "请求体是客户端发送给 API 的数据，并且必须使用 XML 格式。"


def _pairs() -> list[QAPair]:
    return [
        pair("qa-ok", "Who sends the request body and who sends the response body?", SUPPORTED),
        pair("qa-extra", "What is a request body and what are its size limits?", UNSUPPORTED),
        pair("qa-zh-ok", "请求体和响应体分别由谁发送？", ZH_SUPPORTED, chunks=("zh-body-1",)),
        pair("qa-zh-extra", "请求体必须用什么格式？", ZH_UNSUPPORTED, chunks=("zh-body-1",)),
        # Unanswerable: the KB must not answer it. MQTT appears nowhere in the KB.
        pair("qa-unans", "Does FastAPI support MQTT brokers for request bodies?",
             "The documentation does not mention MQTT.", qtype="unanswerable"),
        # Declared unanswerable, but the KB does answer it.
        pair("qa-unans-bad", "Should you use POST, PUT, DELETE or PATCH to send data?",
             "The documentation does not say.", qtype="unanswerable"),
    ]  # fmt: skip


def _load(ws) -> dict[str, QAPair]:
    return {p.id: p for p in read_jsonl(ws.pairs_path, QAPair)}


#: The fake judge accepts only answers made of their sources' words, which the copy check rightly calls copies
#: under some questions: the judge's tests leave the copy check out. They count the groundedness judge's and the
#: repair's calls, so the duplicate judge (tests/test_filters_dedup_judge.py) is off here.
NO_DUP_JUDGE = "    duplicate: {judge: false}\n    closed_book: false\n"
NO_COPY_CHECK = "filter:\n  checks:\n    verbatim: false\n" + NO_DUP_JUDGE


def test_groundedness_supported_unsupported_unanswerable(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    fake_llm.add_responder("groundedness", groundedness_responder)
    ws = make_workspace(tmp_path / "ws", _pairs(), config=NO_COPY_CHECK)
    report = run_filters(ws)
    got = _load(ws)
    g = {pid: p.checks["groundedness"] for pid, p in got.items()}
    assert g["qa-ok"].passed and g["qa-zh-ok"].passed
    assert not g["qa-extra"].passed and "megabytes" in g["qa-extra"].reason
    assert not g["qa-zh-extra"].passed and "xml" in g["qa-zh-extra"].reason.lower()
    assert g["qa-unans"].passed
    assert not g["qa-unans-bad"].passed and "KB answers it" in g["qa-unans-bad"].reason
    assert got["qa-ok"].status == PairStatus.passed and got["qa-extra"].status == PairStatus.rejected
    assert report.llm is not None and report.llm["calls"] == 6 and fake_llm.calls == 6

    # A re-run reuses every verdict: no call is made at all.
    again = run_filters(ws)
    assert fake_llm.calls == 6 and again.per_check["groundedness"].reused == 6 and not again.written

    # Without the LLM, earlier verdicts on unchanged text still stand: no unsupported pair becomes "passed".
    offline = run_filters(ws, use_llm=False)
    assert "groundedness" in offline.skipped_checks and _load(ws)["qa-extra"].status == PairStatus.rejected

    # Editing a judge-visible field re-judges that pair only, through the endpoint.
    pairs = _load(ws)
    from goldset.io import write_jsonl

    pairs["qa-extra"] = pairs["qa-extra"].model_copy(update={"answer": SUPPORTED})
    write_jsonl(ws.pairs_path, pairs.values())
    run_filters(ws, use_llm=False)  # the old verdict was on other text: it no longer counts
    assert _load(ws)["qa-extra"].status == PairStatus.passed and fake_llm.calls == 6
    run_filters(ws)
    assert fake_llm.calls == 7 and _load(ws)["qa-extra"].checks["groundedness"].passed


def test_no_llm_skips_the_judge(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    ws = make_workspace(tmp_path / "ws", _pairs())
    report = run_filters(ws, use_llm=False)
    assert fake_llm.calls == 0 and report.skipped_checks["groundedness"] == "skipped: --no-llm"
    assert "groundedness" not in _load(ws)["qa-ok"].checks
    assert _load(ws)["qa-ok"].status == PairStatus.passed


def test_judge_failure_leaves_pair_unjudged(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    fake_llm.add_responder("groundedness", lambda body: "this is not json at all")
    ws = make_workspace(tmp_path / "ws", _pairs()[:1])
    report = run_filters(ws)
    got = _load(ws)["qa-ok"]
    assert "groundedness" not in got.checks and got.status == PairStatus.candidate
    assert report.judge_errors and report.judge_errors[0].startswith("qa-ok:")
    assert fake_llm.api_key not in " ".join(report.judge_errors)


def test_explicitly_enabled_judge_without_endpoint_is_an_error(tmp_path: Path, no_llm_env: None) -> None:
    ws = make_workspace(tmp_path / "ws", _pairs(), config="filter:\n  checks:\n    groundedness: {enabled: true}\n")
    before = ws.pairs_path.read_bytes()
    with pytest.raises(EndpointError):
        run_filters(ws)
    assert ws.pairs_path.read_bytes() == before


def test_repair_rewrites_copied_answer_and_keeps_original(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    still_copy = COPY.replace("nevertheless", "however")
    fake_llm.add_responder("groundedness", groundedness_responder)
    fake_llm.add_responder("paraphrase_repair", make_repair_responder({COPY: PARAPHRASE}))
    ps = [
        pair("qa-copy", "What do the specifications say about a body on GET?", COPY, chunks=("en-body-2",)),
        pair("qa-stubborn", "Is a body on a GET request defined by the specs?", still_copy, chunks=("en-body-2",)),
        pair("qa-copy-leak", "Is POST the most common method for sending data?", "POST.", chunks=("en-body-2",)),
    ]
    cfg = "filter:\n  checks:\n    groundedness: {enabled: false}\n" + NO_DUP_JUDGE
    ws = make_workspace(tmp_path / "ws", ps, config=cfg)
    report = run_filters(ws, repair=True)
    got = _load(ws)
    fixed = got["qa-copy"]
    assert fixed.answer == PARAPHRASE and fixed.status == PairStatus.passed
    assert fixed.checks["verbatim"].passed
    revisions = [(r.answer, r.reason, r.by) for r in fixed.provenance.revisions]
    assert revisions == [(COPY, "paraphrase-repair", "fake-judge")]
    # The model failed to paraphrase this one: the original text stays, rejected, with the reason reported.
    assert got["qa-stubborn"].answer == still_copy and got["qa-stubborn"].status == PairStatus.rejected
    assert "still fails verbatim" in report.repair_failed["qa-stubborn"]
    assert report.repaired == ["qa-copy"]
    # A pair failing another check (leakage) is not sent to repair.
    assert "qa-copy-leak" not in report.repair_failed and fake_llm.calls == 2


def test_repair_needs_the_llm(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    ws = make_workspace(tmp_path / "ws", _pairs())
    with pytest.raises(UsageError, match="repair needs the LLM"):
        run_filters(ws, repair=True, use_llm=False)


def test_semantic_duplicates_through_embeddings(
    tmp_path: Path, fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reordered words defeat the lexical index but not the embeddings (the fake embeds a bag of tokens)."""
    from goldset.filters.textsim import edit_similarity

    a, b = "How do I declare a request body in FastAPI?", "In FastAPI, how do I declare a request body?"
    assert edit_similarity(a, b) < 0.85
    ps = [pair("qa-a", a, SUPPORTED), pair("qa-b", b, SUPPORTED), pair("qa-c", "Who sends a response body?", "x")]
    cfg = "filter:\n  checks:\n    duplicate: {semantic: true}\n    groundedness: false\n"
    ws = make_workspace(tmp_path / "ws", ps, config=cfg)
    lexical = run_filters(ws, use_llm=False)
    assert "duplicate (semantic)" in lexical.skipped_checks
    assert _load(ws)["qa-b"].checks["duplicate"].passed

    monkeypatch.setenv("GOLDSET_EMBEDDING_MODEL", "fake-embed")
    report = run_filters(ws)
    got = _load(ws)
    assert not got["qa-b"].checks["duplicate"].passed and got["qa-b"].checks["duplicate"].duplicate_of == "qa-a"
    assert got["qa-c"].checks["duplicate"].passed
    assert report.embedding is not None and fake_llm.embedding_calls == 1
    run_filters(ws)  # embeddings come from the call journal
    assert fake_llm.embedding_calls == 1


def test_semantic_duplicates_need_an_embedding_model(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    cfg = "filter:\n  checks:\n    duplicate: {semantic: true}\n"
    ws = make_workspace(tmp_path / "ws", _pairs(), config=cfg)
    with pytest.raises(ConfigError, match="GOLDSET_EMBEDDING_MODEL"):
        run_filters(ws)


def test_repair_rejected_by_the_judge_keeps_the_original(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    """A rewrite that stops copying but adds words the sources lack fails the judge: the original stays."""
    fake_llm.add_responder("groundedness", groundedness_responder)
    fake_llm.add_responder("paraphrase_repair", make_repair_responder({COPY: PARAPHRASE}))
    ws = make_workspace(tmp_path / "ws", [pair("qa-copy", "What do the specs say about GET bodies?", COPY,
                                               chunks=("en-body-2",))])  # fmt: skip
    report = run_filters(ws, repair=True)
    (got,) = _load(ws).values()
    assert got.answer == COPY and got.provenance.revisions == [] and got.status == PairStatus.rejected
    assert "groundedness" in report.repair_failed["qa-copy"] and report.repaired == []


def test_semantic_edges_exact_cosine() -> None:
    from goldset.filters.duplicates import semantic_edges

    vecs = [[1.0, 0.0], [0.99, 0.1], None, [0.0, 1.0], [2.0, 0.0]]
    edges = semantic_edges(vecs, 0.95)
    assert [(i, j) for i, j, _ in edges] == [(0, 1), (0, 4), (1, 4)]
    assert all(0.95 <= s <= 1.0 for _, _, s in edges)
    assert semantic_edges([None, [1.0]], 0.5) == []


def test_repair_ignores_flags_and_leaves_pairs_generation_rejected(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    """'Fails only verbatim' means no other check *rejects* it: a flag is no obstacle, a generation rejection
    is (a rewrite would clear generation's verdict without curing what it found)."""
    from goldset.filters.status import generation_input_hash
    from goldset.schema import CheckResult

    fake_llm.add_responder("paraphrase_repair", make_repair_responder({COPY: PARAPHRASE}))
    flagged = pair("qa-flagged", "According to the passage, what do the specs say about GET bodies?", COPY,
                   chunks=("en-body-2",))  # fmt: skip
    rejected = pair("qa-gen-rejected", "What do the specifications say about a body on GET?", COPY,
                    chunks=("en-body-2",))  # fmt: skip
    verdict = CheckResult(passed=False, reason="written in the wrong language", input_hash="")
    verdict.input_hash = generation_input_hash(rejected)
    rejected = rejected.model_copy(update={"checks": {"generation": verdict}, "status": PairStatus.rejected})
    cfg = "filter:\n  checks:\n    groundedness: false\n" + NO_DUP_JUDGE
    ws = make_workspace(tmp_path / "ws", [flagged, rejected], config=cfg)
    report = run_filters(ws, repair=True)
    got = _load(ws)
    assert report.repaired == ["qa-flagged"] and got["qa-flagged"].answer == PARAPHRASE
    assert got["qa-flagged"].status == PairStatus.passed and list(got["qa-flagged"].flags) == ["self_contained"]
    assert got["qa-gen-rejected"].answer == COPY and got["qa-gen-rejected"].status == PairStatus.rejected
    assert fake_llm.calls == 1


def test_a_rewrite_the_judge_could_not_judge_is_not_kept(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    """The rewrite carries the original's verdict, made on the old text: it does not vouch for the new one."""
    fake_llm.add_responder("paraphrase_repair", make_repair_responder({COPY: PARAPHRASE}))
    fake_llm.add_responder("groundedness", lambda body: "not json" if PARAPHRASE in str(body) else {
        "supported": True, "answerable": True, "unsupported_claims": [], "reason": "ok"})  # fmt: skip
    ws = make_workspace(tmp_path / "ws", [pair("qa-copy", "What do the specs say about GET bodies?", COPY,
                                               chunks=("en-body-2",))], config=NO_COPY_CHECK.replace(
                                               "verbatim: false", "verbatim: true"))  # fmt: skip
    report = run_filters(ws, repair=True)
    (got,) = _load(ws).values()
    # the original is not judged: the verbatim check rejects it already (no judge call on a rejected pair)
    assert got.answer == COPY and "groundedness" not in got.checks and got.status == PairStatus.rejected
    assert "still fails groundedness" in report.repair_failed["qa-copy"] and report.repaired == []
    judged = [r.body for r in fake_llm.chat_requests() if schema_name_of(r.body) == "groundedness"]
    assert judged and all(PARAPHRASE in str(b) for b in judged)  # only the rewrite was shown to the judge


def test_the_judge_is_told_what_ambiguous_and_open_ended_answers_are_made_of(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    """Naming readings or framing key points is not a claim: the judge reads that in the question type line. The
    other types' requests are unchanged (the bare type name), so their journaled verdicts still count."""
    from goldset.filters.groundedness import TYPE_NOTES

    fake_llm.add_responder("groundedness", groundedness_responder)
    pairs = [
        pair("qa-plain", "Who sends the request body and who sends the response body?", SUPPORTED),
        pair("qa-amb", "What is the body?", "It depends on whether you mean the request body or the response body.",
             qtype="ambiguous", chunks=("en-body-1", "en-body-2")),
        pair("qa-open", "What should one consider when sending data?", "- Send a request body.\n- Use POST.",
             qtype="open_ended", chunks=("en-body-1", "en-body-2")),
    ]  # fmt: skip
    ws = make_workspace(tmp_path / "ws", pairs, config=NO_COPY_CHECK)
    run_filters(ws, checks=["groundedness"])
    sent = {}
    for r in fake_llm.chat_requests():
        user = r.body["messages"][-1]["content"]
        sent[user.split("<question>\n", 1)[1].split("\n", 1)[0]] = user.split("\n", 1)[0]
    assert sent["Who sends the request body and who sends the response body?"] == "Question type: factual"
    assert sent["What is the body?"] == f"Question type: {TYPE_NOTES[QuestionType.ambiguous]}"
    assert "asking which one is meant, is not a claim" in sent["What is the body?"]
    assert "each key point is, and must be supported" in sent["What should one consider when sending data?"]


def test_no_judge_call_on_a_pair_a_cheaper_check_already_rejected(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    """The copy check rejects one pair, generation another: the judge is asked about neither (its verdict could
    not change their status), unless filter.judge_rejected asks for it."""
    fake_llm.add_responder("groundedness", groundedness_responder)
    gen_rejected = pair("qa-gen", "Who sends the response body?", SUPPORTED)
    gen_rejected = gen_rejected.model_copy(update={"checks": {"generation": _generation_failure(gen_rejected)}})
    pairs = [pair("qa-ok", "Who sends the request body and who sends the response body?", SUPPORTED),
             pair("qa-copy", "What do the specs say about GET bodies?", COPY, chunks=("en-body-2",)), gen_rejected]
    config = "filter:\n  checks:\n" + NO_DUP_JUDGE
    ws = make_workspace(tmp_path / "ws", pairs, config=config)
    report = run_filters(ws)
    got = _load(ws)
    judged = [r.body for r in fake_llm.chat_requests() if schema_name_of(r.body) == "groundedness"]
    assert len(judged) == 1 and "Who sends the request body" in str(judged[0])
    assert got["qa-ok"].checks["groundedness"].passed and got["qa-ok"].status is PairStatus.passed
    assert got["qa-copy"].status is PairStatus.rejected and "groundedness" not in got["qa-copy"].checks
    assert got["qa-gen"].status is PairStatus.rejected and "groundedness" not in got["qa-gen"].checks
    assert report.not_judged == {"groundedness": 2}

    # asked for: the judge looks at the rejected pairs too (their status stays rejected)
    (ws.root / "goldset.yaml").write_text(config + "  judge_rejected: true\n", encoding="utf-8")
    report = run_filters(ws)
    got = _load(ws)
    assert "groundedness" in got["qa-copy"].checks and "groundedness" in got["qa-gen"].checks
    assert got["qa-copy"].status is PairStatus.rejected and not report.not_judged


def _generation_failure(p: QAPair) -> CheckResult:
    from goldset.filters.base import result
    from goldset.filters.status import generation_input_hash

    failed = result(False, None, "quote not found in its chunk")
    return failed.model_copy(update={"input_hash": generation_input_hash(p)})


def test_an_unanswerable_verdict_stands_when_an_unrelated_chunk_changes(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    """The verdict is keyed on the chunks the judge read (the related ones, by content), not on the whole KB: a
    change elsewhere re-judges nothing, even without the call journal; a change in a chunk it read does."""
    from goldset.filters.groundedness import RelatedChunks
    from goldset.io import write_jsonl
    from tests.helpers.filter_data import chunk, fixture_chunks

    fake_llm.add_responder("groundedness", groundedness_responder)
    unans = pair("qa-unans", "Does FastAPI support MQTT brokers for request bodies?",
                 "The documentation does not mention MQTT.", qtype="unanswerable")  # fmt: skip
    ws = make_workspace(tmp_path / "ws", [unans], config=NO_COPY_CHECK)
    run_filters(ws)
    assert fake_llm.calls == 1
    chunks = fixture_chunks()
    read = {c.id for c in RelatedChunks(list(chunks.values()), 3)(unans.question)}
    elsewhere = next(cid for cid in chunks if cid not in read)
    chunks[elsewhere] = chunk(elsewhere, chunks[elsewhere].text + " A sentence about cookies.")
    chunks["en-new-1"] = chunk("en-new-1", "Cookies are small pieces of text a browser keeps.")
    write_jsonl(ws.kb_dir / "chunks.jsonl", list(chunks.values()))
    ws.cache_path.unlink()  # no journal: only the verdict's own key can spare the call
    report = run_filters(ws)
    assert fake_llm.calls == 1 and report.per_check["groundedness"].reused == 1

    near = next(iter(sorted(read)))
    chunks[near] = chunk(near, chunks[near].text + " MQTT brokers are not supported.")
    write_jsonl(ws.kb_dir / "chunks.jsonl", list(chunks.values()))
    run_filters(ws)
    assert fake_llm.calls == 2

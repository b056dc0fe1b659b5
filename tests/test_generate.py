"""The pure parts of generation: type mix, chunk selection, multi-hop partners, prompts, reply validation."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from pydantic import ValidationError

from goldset.config import load_settings
from goldset.errors import ConfigError
from goldset.generation.partners import PartnerFinder
from goldset.generation.planning import build_plans, plan_types
from goldset.generation.reply import GeneratedEvidence, GeneratedPair, GeneratedPairs
from goldset.generation.selection import select_chunks
from goldset.generation.settings import DEFAULT_TYPE_WEIGHTS, GenerateSettings
from goldset.generation.sink import CandidateSink
from goldset.generation.validation import CHECK_NAME, quote_in_text, validate_reply
from goldset.prompts import load_prompt
from goldset.schema import Chunk, PairStatus, QuestionType, pair_id
from goldset.text import detect_language
from goldset.workspace import Workspace
from tests.helpers.generation_data import EN_TEXT, PROV, ZH_TEXT, make_chunk, make_pair, plan_for
from tests.helpers.responders import parse_prompt, qa_responder


def test_type_draw_is_deterministic_sized_and_follows_the_weights() -> None:
    weights = dict(DEFAULT_TYPE_WEIGHTS)
    first = plan_types("chunk-1", weights, 3, seed=0)
    assert first == plan_types("chunk-1", weights, 3, seed=0)
    assert len(first) == 3
    draws = Counter(t for i in range(3000) for t in plan_types(f"c{i}", weights, 3, seed=0))
    total = sum(draws.values())
    for name, weight in weights.items():
        assert abs(draws[QuestionType(name)] / total - weight) < 0.03, (name, draws)
    # another seed gives another (but equally stable) draw for at least some chunks
    assert any(plan_types(f"c{i}", weights, 3, seed=1) != plan_types(f"c{i}", weights, 3, seed=0) for i in range(20))


def test_zero_weight_types_are_never_drawn() -> None:
    weights = {"factual": 1.0, "unanswerable": 0.0}
    assert {t for i in range(200) for t in plan_types(f"c{i}", weights, 4, seed=3)} == {QuestionType.factual}


@pytest.mark.parametrize(
    ("types", "message"),
    [({"trivia": 1.0}, "unknown question type 'trivia'"), ({"factual": 0.0}, "weight > 0"), ({"factual": -1}, ">= 0")],
)
def test_bad_type_weights_are_config_errors_naming_the_setting(tmp_path: Path, types: dict, message: str) -> None:
    (tmp_path / "goldset.yaml").write_text("generate:\n  pairs_per_chunk: 2\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_settings(Workspace(tmp_path), generate={"types": types})
    assert "generate.types" in str(err.value) and message in str(err.value)


def test_settings_precedence_and_unknown_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "goldset.yaml").write_text("generate:\n  pairs_per_chunk: 2\n  seed: 7\n", encoding="utf-8")
    ws = Workspace(tmp_path)
    monkeypatch.setenv("GOLDSET_GENERATE__PAIRS_PER_CHUNK", "5")
    settings = load_settings(ws).generate
    assert (settings.pairs_per_chunk, settings.seed) == (5, 7)
    assert load_settings(ws, generate={"pairs_per_chunk": 4}).generate.pairs_per_chunk == 4
    (tmp_path / "goldset.yaml").write_text("generate:\n  pairs_per_chunck: 2\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"unknown setting 'generate\.pairs_per_chunck'"):
        load_settings(ws)


# ------------------------------------------------------------------------------------------------ selection


def test_selection_skips_small_chunks_and_chunks_that_have_pairs() -> None:
    chunks = [
        make_chunk("a1", EN_TEXT, "a.md"),
        make_chunk("a2", EN_TEXT + " More.", "a.md", position=1),
        make_chunk("b1", "Tiny.", "b.md"),
        make_chunk("c1", EN_TEXT, "sub/c.md"),
    ]
    existing = [make_pair(chunks[0], "Q about a1?", status=PairStatus.rejected)]
    selected, small, done = select_chunks(chunks, existing, min_tokens=5)
    assert [c.id for c in selected] == ["a2", "c1"] and (small, done) == (1, 1)
    assert [c.id for c in select_chunks(chunks, existing, all_chunks=True, min_tokens=5)[0]] == ["a1", "a2", "c1"]
    assert [c.id for c in select_chunks(chunks, existing, docs="sub/*")[0]] == ["c1"]
    assert [c.id for c in select_chunks(chunks, existing, limit=1)[0]] == ["a2"]
    # explicit ids (refresh) regenerate even chunks that have pairs
    assert [c.id for c in select_chunks(chunks, existing, chunk_ids=["a1", "zz"])[0]] == ["a1"]


def test_a_multi_hop_partner_does_not_count_as_having_pairs() -> None:
    a, b = make_chunk("a1", EN_TEXT), make_chunk("b1", EN_TEXT, "b.md")
    mh = make_pair(b, "Q?", primary="a1")  # generated in a1's call, cites b1
    assert [c.id for c in select_chunks([a, b], [mh])[0]] == ["b1"]


# ------------------------------------------------------------------------------------------------- partners


def test_partner_prefers_the_same_document_then_lexical_similarity_and_same_language() -> None:
    chunks = [
        make_chunk("a1", "Dependencies with yield run cleanup code after the response is sent.", "deps.md"),
        make_chunk("a2", "Sub-dependencies are resolved once per request and cached.", "deps.md", position=1),
        make_chunk("b1", "Background tasks run after returning a response to the client.", "bg.md"),
        make_chunk("c1", "Add background tasks to the client response; they run after returning it.", "other.md"),
        make_chunk("z1", ZH_TEXT, "zh.md"),
        make_chunk("z2", ZH_TEXT + "路径参数还可以声明为枚举。", "zh2.md"),
    ]
    finder = PartnerFinder(chunks)

    def partner_id(chunk: Chunk) -> str | None:
        found = finder.partner(chunk)
        return found.id if found is not None else None

    assert partner_id(chunks[0]) == "a2"  # same document wins
    assert partner_id(chunks[2]) == "c1"  # no sibling: the most similar chunk of the same language
    assert partner_id(chunks[4]) == "z2"
    assert PartnerFinder([chunks[0]]).partner(chunks[0]) is None


def test_plans_fall_back_from_multi_hop_without_a_partner_and_use_the_multi_hop_prompt_with_one() -> None:
    settings = GenerateSettings(types={"multi_hop": 1.0}, pairs_per_chunk=2)
    lone = make_chunk("a1", EN_TEXT)
    [plan] = build_plans([lone], [lone], settings, None)
    assert plan.partner is None and plan.types == (QuestionType.reasoning, QuestionType.reasoning)
    assert plan.prompt.id == "generate"
    other = make_chunk("a2", EN_TEXT + " Also enums.", position=1)
    [plan] = build_plans([lone], [lone, other], settings, None)
    assert plan.partner is not None and plan.partner.id == "a2" and plan.prompt.id == "generate_multi_hop"
    chunks, _, types = parse_prompt({"messages": plan.messages()})
    assert [c[0] for c in chunks] == ["a1", "a2"] and types == ["multi_hop", "multi_hop"]


# -------------------------------------------------------------------------------------------------- prompts


def test_prompt_carries_chunk_language_and_types_and_chinese_chunks_ask_for_chinese() -> None:
    zh = make_chunk("z1", ZH_TEXT, "zh.md")
    assert zh.language == "zh"
    [plan] = build_plans([zh], [zh], GenerateSettings(types={"factual": 1, "procedural": 1}, seed=2), None)
    msgs = plan.messages()
    assert msgs[0]["role"] == "system"
    assert "according to the text" in msgs[0]["content"]  # the self-containment rule is in the prompt
    chunks, language, types = parse_prompt({"messages": msgs})
    assert chunks == [("z1", ZH_TEXT)] and "Chinese" in language and len(types) == 3
    reply = GeneratedPairs.model_validate(qa_responder({"messages": msgs}))
    assert reply.pairs and all(detect_language(p.question) == "zh" for p in reply.pairs)
    outcome = validate_reply(reply, plan, PROV)
    assert outcome.pairs and all(p.status is PairStatus.candidate for p in outcome.pairs), outcome
    assert {p.language for p in outcome.pairs} == {"zh"}


def test_configured_language_overrides_the_chunk_language() -> None:
    en = make_chunk("a1", EN_TEXT)
    [plan] = build_plans([en], [en], GenerateSettings(language="zh"), None)
    assert plan.language == "zh" and "Language: Chinese" in plan.messages()[-1]["content"]


def test_a_workspace_prompt_overrides_the_default_and_changes_the_hash(tmp_path: Path) -> None:
    default = load_prompt("generate")
    (tmp_path / "generate.md").write_text(default.path.read_text(encoding="utf-8") + "\nBe brief.\n", "utf-8")
    custom = load_prompt("generate", tmp_path)
    assert custom.hash != default.hash and custom.path.parent == tmp_path


# ----------------------------------------------------------------------------------------------- validation


def test_quotes_match_after_whitespace_normalisation_only() -> None:
    text = "The value of the parameter\n  item_id is passed   to your function."
    assert quote_in_text("value of the parameter item_id is passed to your function", text)
    assert quote_in_text("...is passed to your function.", text)
    assert not quote_in_text("value of the argument item_id", text)
    assert not quote_in_text("   ", text)


def _reply(*items: GeneratedPair) -> GeneratedPairs:
    return GeneratedPairs(pairs=list(items))


def test_validation_keeps_good_pairs_rejects_bad_evidence_and_records_broken_items() -> None:
    chunk = make_chunk("a1", EN_TEXT)
    plan = plan_for(chunk, (QuestionType.factual,) * 5)
    good = GeneratedPair(
        question="How is item_id passed to a path operation function?",
        answer="FastAPI hands it to the function as an argument of the same name.",
        question_type="factual",
        evidence=[GeneratedEvidence(chunk_id="a1", quote="is passed to your function as the argument item_id")],
    )
    invented = good.model_copy(
        update={"question": "Invented?", "evidence": [GeneratedEvidence(chunk_id="a1", quote="is never passed")]}
    )
    wrong_chunk = good.model_copy(
        update={"question": "Wrong chunk?", "evidence": [GeneratedEvidence(chunk_id="zz", quote="is passed")]}
    )
    no_evidence = good.model_copy(update={"question": "No evidence?", "evidence": []})
    unknown_type = good.model_copy(update={"question": "Trivia?", "question_type": "trivia"})
    empty_answer = good.model_copy(update={"question": "Empty?", "answer": "  "})
    dup = good.model_copy()
    outcome = validate_reply(
        _reply(good, invented, wrong_chunk, no_evidence, unknown_type, empty_answer, dup), plan, PROV
    )

    by_q = {p.question: p for p in outcome.pairs}
    kept = by_q[good.question]
    assert kept.status is PairStatus.candidate and kept.checks[CHECK_NAME].passed
    assert kept.id == pair_id(["a1"], "factual", good.question)
    assert kept.evidence[0].doc_id == "a.md" and kept.provenance.call_key == "k1"
    assert by_q["Invented?"].status is PairStatus.rejected
    assert "not found verbatim in chunk a1" in by_q["Invented?"].checks[CHECK_NAME].reason
    assert "not in the prompt" in by_q["Wrong chunk?"].checks[CHECK_NAME].reason
    assert by_q["No evidence?"].checks[CHECK_NAME].reason == "no evidence quote"
    reasons = sorted(f.reason for f in outcome.failures)
    assert reasons == [
        "duplicate of " + kept.id + " in the same reply",
        "empty answer",
        "unknown question_type 'trivia'",
    ]
    assert all(f.kind == "item" and f.chunk_ids == ["a1"] for f in outcome.failures)
    assert outcome.rejected == 3


def test_multi_hop_needs_evidence_from_both_chunks_and_unanswerable_needs_none() -> None:
    a, b = (
        make_chunk("a1", EN_TEXT),
        make_chunk("b1", "Query parameters are optional when they have a default.", "b.md"),
    )
    plan = plan_for(a, (QuestionType.multi_hop, QuestionType.multi_hop, QuestionType.unanswerable), partner=b)
    both = GeneratedPair(
        question="How do path and query parameters differ in being optional?",
        answer="Path parameters are always part of the path; query parameters become optional with a default.",
        question_type="multi_hop",
        evidence=[
            GeneratedEvidence(chunk_id="a1", quote="Path parameters are declared"),
            GeneratedEvidence(chunk_id="b1", quote="optional when they have a default"),
        ],
    )
    one = both.model_copy(update={"question": "Only one side?", "evidence": both.evidence[:1]})
    unanswerable = GeneratedPair(
        question="Which Windows versions does FastAPI's path parameter parser support?",
        answer="The documentation does not say which operating systems are supported.",
        question_type="unanswerable",
        evidence=[GeneratedEvidence(chunk_id="a1", quote="not even in the chunk")],
    )
    outcome = validate_reply(_reply(both, one, unanswerable), plan, PROV)
    by_q = {p.question: p for p in outcome.pairs}
    assert by_q[both.question].status is PairStatus.candidate
    assert by_q[both.question].chunk_ids == ["a1", "b1"]
    assert "both chunks" in by_q["Only one side?"].checks[CHECK_NAME].reason
    un = by_q[unanswerable.question]
    assert un.status is PairStatus.candidate and un.evidence == []
    assert un.id == pair_id(["a1"], "unanswerable", unanswerable.question)


def test_wrong_language_is_rejected_and_an_empty_reply_is_not_a_reply() -> None:
    zh = make_chunk("z1", ZH_TEXT, "zh.md")
    plan = plan_for(zh, (QuestionType.factual,), language="zh")
    english = GeneratedPair(
        question="How is item_id passed to the function?",
        answer="As an argument with the same name.",
        question_type="factual",
        evidence=[GeneratedEvidence(chunk_id="z1", quote="路径参数使用与 Python 格式字符串相同的语法声明。")],
    )
    outcome = validate_reply(_reply(english), plan, PROV)
    assert outcome.pairs[0].status is PairStatus.rejected
    assert "wrong language" in outcome.pairs[0].checks[CHECK_NAME].reason
    with pytest.raises(ValidationError, match="at least 1 item"):  # the client's validation fails the call
        _reply()


def test_merge_never_replaces_an_existing_pair() -> None:
    chunk = make_chunk("a1", EN_TEXT)
    reviewed = make_pair(chunk, "Q1?", status=PairStatus.accepted)
    fresh_same_id = make_pair(chunk, "Q1?")
    fresh = make_pair(chunk, "Q2?")
    sink = CandidateSink(None, [reviewed], flush_seconds=0)
    sink.add([fresh_same_id, fresh])
    assert sink.added == 1 and sink.existing_hits == 1 and sorted(sink.pairs) == sorted([reviewed.id, fresh.id])
    assert sink.pairs[reviewed.id].status is PairStatus.accepted


def test_the_language_check_reads_prose_not_code() -> None:
    zh = make_chunk("z1", ZH_TEXT, "zh.md")
    plan = plan_for(zh, (QuestionType.factual,), language="zh")
    code_heavy = GeneratedPair(
        question="`item_id: int` 写在 `read_item(item_id: int)` 里有什么用？",
        answer="它让 `item_id` 按 `int` 校验和转换：`GET /items/foo` 会收到清楚的错误。",
        question_type="factual",
        evidence=[GeneratedEvidence(chunk_id="z1", quote="路径参数使用与 Python 格式字符串相同的语法声明。")],
    )
    outcome = validate_reply(_reply(code_heavy), plan, PROV)
    assert outcome.pairs[0].status is PairStatus.candidate, outcome.pairs[0].checks[CHECK_NAME].reason
    ja_text = "パスパラメータはPythonのフォーマット文字列と同じ構文で宣言します。"
    ja = make_chunk("j1", ja_text, "ja.md", language="ja")
    japanese_plan = plan_for(ja, (QuestionType.factual,), language="ja")
    chinese_answer = GeneratedPair(
        question="路径参数如何声明？",
        answer="与 Python 格式字符串的语法相同。",
        question_type="factual",
        evidence=[GeneratedEvidence(chunk_id="j1", quote=ja_text)],
    )
    rejected = validate_reply(_reply(chinese_answer), japanese_plan, PROV).pairs[0]
    assert rejected.status is PairStatus.rejected and "asked for ja" in rejected.checks[CHECK_NAME].reason

"""The pure parts of generation: type mix, chunk selection, multi-hop partners, prompts, reply validation."""

from __future__ import annotations

import copy
from collections import Counter
from pathlib import Path

import pytest
from pydantic import ValidationError

from goldset.config import load_settings
from goldset.errors import ConfigError
from goldset.generation.keypoints import key_points
from goldset.generation.partners import PartnerFinder
from goldset.generation.planning import build_plans, fewer_pairs, fitted_max_tokens, plan_types
from goldset.generation.reply import BASE_TYPES, GeneratedEvidence, GeneratedPair, GeneratedPairs, reply_model
from goldset.generation.selection import select_chunks
from goldset.generation.settings import DEFAULT_TYPE_WEIGHTS, LATER_TYPES, GenerateSettings
from goldset.generation.sink import CandidateSink
from goldset.generation.validation import CHECK_NAME, quote_in_text, validate_reply
from goldset.llm.structured import schema_json
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
    total, weight_total = sum(draws.values()), sum(weights.values())
    for name, weight in weights.items():  # relative weights: each type's share is its weight over the total
        assert abs(draws[QuestionType(name)] / total - weight / weight_total) < 0.03, (name, draws)
    # another seed gives another (but equally stable) draw for at least some chunks
    assert any(plan_types(f"c{i}", weights, 3, seed=1) != plan_types(f"c{i}", weights, 3, seed=0) for i in range(20))


def test_later_types_change_only_the_draws_of_the_chunks_that_get_them() -> None:
    """ambiguous and open_ended came after the first six types: a chunk that draws neither is asked exactly what
    the six types' weights alone gave it (so its call stays a journal hit); only the chunks that draw one change."""
    six = {t: w for t, w in DEFAULT_TYPE_WEIGHTS.items() if t in BASE_TYPES}
    assert set(six) == set(BASE_TYPES) and {QuestionType(t) for t in DEFAULT_TYPE_WEIGHTS} == set(QuestionType)
    later = {t.value for t in LATER_TYPES}
    changed = 0
    for i in range(2000):
        now, before = plan_types(f"c{i}", DEFAULT_TYPE_WEIGHTS, 3, seed=0), plan_types(f"c{i}", six, 3, seed=0)
        if later & {t.value for t in now}:
            changed += now != before
        else:
            assert now == before, (i, now, before)
    # 0.10 of 1.10 of the weight per draw: 1 - (1 - 1/11) ** 3 = 25% of the chunks draw a later type
    assert 0.21 < changed / 2000 < 0.29, changed
    # the later types alone, and a later type with an old one, are drawn too
    assert set(plan_types("c1", {"ambiguous": 1.0}, 4, seed=0)) == {QuestionType.ambiguous}
    mixed = {t for i in range(50) for t in plan_types(f"c{i}", {"open_ended": 1.0, "factual": 1.0}, 2, seed=0)}
    assert mixed == {QuestionType.open_ended, QuestionType.factual}


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


def test_ambiguous_and_open_ended_draws_get_a_partner_but_keep_their_type_without_one() -> None:
    lone = make_chunk("a1", EN_TEXT)
    other = make_chunk("a2", EN_TEXT + " Also enums.", position=1)
    for qtype in ("ambiguous", "open_ended"):
        settings = GenerateSettings(types={qtype: 1.0}, pairs_per_chunk=2)
        [plan] = build_plans([lone], [lone, other], settings, None)
        assert plan.partner is not None and plan.partner.id == "a2" and plan.prompt.id == "generate_multi_hop"
        assert plan.types == (QuestionType(qtype),) * 2
        [plan] = build_plans([lone], [lone], settings, None)
        assert plan.partner is None and plan.prompt.id == "generate" and plan.types == (QuestionType(qtype),) * 2


def test_the_reply_schema_lists_a_later_type_only_in_the_calls_that_ask_for_it() -> None:
    """The schema is part of every call's journal key: adding types to goldset must not change it for calls that
    do not ask for them. Every schema says how many pairs were asked (``maxItems``), and differs from
    :class:`GeneratedPairs` (what calls sent before maxItems) by that alone when it asks for base types only."""

    def enum(model: type[GeneratedPairs]) -> list[str]:
        return schema_json(model)["$defs"]["GeneratedPair"]["properties"]["question_type"]["enum"]

    six = ["factual", "reasoning", "comparison", "multi_hop", "procedural", "unanswerable"]
    assert enum(GeneratedPairs) == list(BASE_TYPES) == six  # what every call sent before later types existed
    base = reply_model([QuestionType.factual, QuestionType.multi_hop])
    assert base is reply_model(["reasoning", "factual"]) and issubclass(base, GeneratedPairs)
    without_max = copy.deepcopy(schema_json(base))
    assert without_max["properties"]["pairs"].pop("maxItems") == 2
    assert without_max == schema_json(GeneratedPairs)  # maxItems is the only change for base-type calls
    assert schema_json(reply_model(["factual"] * 3))["properties"]["pairs"]["maxItems"] == 3
    assert reply_model(["factual"] * 3) is not base
    model = reply_model([QuestionType.factual, QuestionType.open_ended])
    assert enum(model) == [*BASE_TYPES, "open_ended"] and model is reply_model(["open_ended", "reasoning"])
    assert enum(reply_model(["open_ended", "ambiguous"])) == [*BASE_TYPES, "ambiguous", "open_ended"]
    chunk = make_chunk("a1", EN_TEXT)
    assert plan_for(chunk, (QuestionType.factual,)).reply_model is reply_model(["procedural"])
    assert "ambiguous" in enum(plan_for(chunk, (QuestionType.ambiguous,)).reply_model)
    # the same validation: a reply of the extended model is a GeneratedPairs
    reply = model.model_validate({"pairs": [{"question": "q", "answer": "a", "question_type": "open_ended"}]})
    assert isinstance(reply, GeneratedPairs) and reply.pairs[0].question_type == "open_ended"


def test_a_smaller_call_asks_for_the_first_types_and_max_tokens_is_fitted_to_its_pairs() -> None:
    chunk, partner = make_chunk("a1", EN_TEXT), make_chunk("a2", EN_TEXT + " More.")
    plan = plan_for(chunk, (QuestionType.factual, QuestionType.multi_hop, QuestionType.unanswerable), partner)
    smaller = plan.fewer(fewer_pairs(3))
    assert smaller.types == (QuestionType.factual, QuestionType.multi_hop) and smaller.partner is partner
    assert "- unanswerable" not in smaller.messages()[-1]["content"]
    assert schema_json(smaller.reply_model)["properties"]["pairs"]["maxItems"] == 2
    assert [fewer_pairs(n) for n in (20, 10, 5, 3, 2)] == [10, 5, 3, 2, 1]
    settings = GenerateSettings(pairs_per_chunk=3)
    assert [fitted_max_tokens(k, settings, 900) for k in (3, 2, 1)] == [900, 600, 300]
    assert fitted_max_tokens(2, settings, None) is None  # nothing set: the server's default, as before
    per_pair = GenerateSettings(pairs_per_chunk=3, max_tokens_per_pair=400)
    assert [fitted_max_tokens(k, per_pair, None) for k in (3, 1)] == [1200, 400]
    assert fitted_max_tokens(3, per_pair, 1000) == 1000  # never above the endpoint's max_tokens


@pytest.mark.parametrize("prompt_id", ["generate", "generate_multi_hop"])
def test_a_workspace_prompt_that_predates_a_weighted_later_type_is_refused(tmp_path: Path, prompt_id: str) -> None:
    default = load_prompt(prompt_id).path.read_text(encoding="utf-8")
    old = "\n".join(line for line in default.splitlines() if "ambiguous" not in line) + "\n"
    (tmp_path / f"{prompt_id}.md").write_text(old, encoding="utf-8")
    a, b = make_chunk("a1", EN_TEXT), make_chunk("a2", EN_TEXT + " Also enums.", position=1)
    with pytest.raises(ConfigError, match=rf"{prompt_id}\.md: .*'ambiguous'.*generate\.types\.ambiguous: 0"):
        build_plans([a], [a, b], GenerateSettings(types={"ambiguous": 1.0}), tmp_path)
    # without a weight for it the old prompt is fine
    [plan] = build_plans([a], [a, b], GenerateSettings(types={"factual": 1.0, "open_ended": 0.0}), tmp_path)
    assert plan.types == (QuestionType.factual,) * 3


@pytest.mark.parametrize(
    ("answer", "points"),
    [
        ("- Validate the input.\n- Set timeouts.", ["Validate the input.", "Set timeouts."]),
        ("Consider:\n1. the status code\n2) a detail message\n* headers", ["the status code", "a detail message",
                                                                          "headers"]),
        ("需要考虑：\n1、校验输入\n2、设置超时", ["校验输入", "设置超时"]),
        ("Key points: (1) validate input; (2) set timeouts.", ["validate input", "set timeouts."]),
        ("需要考虑：（1）校验输入；（2）设置超时。", ["校验输入", "设置超时。"]),
        ("- Only one point.", []),
        ("Use Python 3.8 or later; version 2) is old.", []),
        ("Validate the input and set timeouts.", []),
    ],
)
def test_key_points_are_the_items_of_the_answers_list(answer: str, points: list[str]) -> None:
    assert key_points(answer) == points


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


@pytest.mark.parametrize("text", [EN_TEXT, ZH_TEXT], ids=["en", "zh"])
@pytest.mark.parametrize("with_partner", [True, False], ids=["partner", "one-chunk"])
def test_prompts_describe_the_new_types_and_the_fake_model_answers_them(text: str, with_partner: bool) -> None:
    chunk = make_chunk("c1", text, "c.md")
    kb = [chunk, make_chunk("c2", text + (" 路径参数还可以声明为枚举。" if chunk.language == "zh" else " Enums too."),
                            "c.md", position=1)] if with_partner else [chunk]  # fmt: skip
    settings = GenerateSettings(types={"ambiguous": 1.0, "open_ended": 1.0}, pairs_per_chunk=4, seed=3)
    [plan] = build_plans([chunk], kb, settings, None)
    system = plan.messages()[0]["content"]
    for qtype in LATER_TYPES:  # instructions and an example of each
        assert f"- {qtype.value}: " in system and f'"question_type": "{qtype.value}"' in system
    assert "depends on whether" in system and "如何设计" in system
    reply = GeneratedPairs.model_validate(qa_responder({"messages": plan.messages()}))
    assert {p.question_type for p in reply.pairs} == {"ambiguous", "open_ended"}
    outcome = validate_reply(reply, plan, PROV)
    assert outcome.pairs and all(p.status is PairStatus.candidate for p in outcome.pairs), outcome
    assert {p.language for p in outcome.pairs} == {chunk.language}
    for p in outcome.pairs:
        assert len({(e.chunk_id, e.quote) for e in p.evidence}) >= 2
        if p.question_type is QuestionType.ambiguous and with_partner:
            assert p.chunk_ids == ["c1", "c2"]
        if p.question_type is QuestionType.open_ended:
            assert len(key_points(p.answer)) >= 2


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


def test_ambiguous_quotes_each_reading_and_both_chunks_when_two_were_shown() -> None:
    a = make_chunk("a1", EN_TEXT)
    b = make_chunk("b1", "A body field gets a default in its Pydantic model. Query parameters are optional.", "b.md")
    good = GeneratedPair(
        question="How do I declare the type of a parameter?",
        answer="It depends on whether you mean a path parameter (a type annotation) or a body field (its model).",
        question_type="ambiguous",
        evidence=[
            GeneratedEvidence(chunk_id="a1", quote="declare the type of a path parameter"),
            GeneratedEvidence(chunk_id="b1", quote="A body field gets a default in its Pydantic model."),
        ],
    )
    one_quote = good.model_copy(update={"question": "One reading quoted?", "evidence": good.evidence[:1]})
    same_quote = good.model_copy(update={"question": "Same quote twice?", "evidence": [good.evidence[0]] * 2})
    one_chunk = good.model_copy(
        update={
            "question": "One chunk of two?",
            "evidence": [good.evidence[0], GeneratedEvidence(chunk_id="a1", quote="Path parameters are declared")],
        }
    )
    by_q = {p.question: p for p in validate_reply(
        _reply(good, one_quote, same_quote, one_chunk), plan_for(a, (QuestionType.ambiguous,) * 4, partner=b), PROV
    ).pairs}  # fmt: skip
    assert by_q[good.question].status is PairStatus.candidate, by_q[good.question].checks[CHECK_NAME].reason
    for q in ("One reading quoted?", "Same quote twice?"):
        assert by_q[q].status is PairStatus.rejected and "each reading" in by_q[q].checks[CHECK_NAME].reason
    assert "both chunks" in by_q["One chunk of two?"].checks[CHECK_NAME].reason
    # shown one chunk, two quotes of it are enough
    alone = validate_reply(_reply(one_chunk), plan_for(a, (QuestionType.ambiguous,)), PROV).pairs[0]
    assert alone.status is PairStatus.candidate, alone.checks[CHECK_NAME].reason


def test_open_ended_lists_key_points_backed_by_quotes() -> None:
    a = make_chunk("a1", EN_TEXT)
    quotes = [
        GeneratedEvidence(chunk_id="a1", quote="Path parameters are declared with the same syntax"),
        GeneratedEvidence(chunk_id="a1", quote="declare the type of a path parameter"),
    ]
    good = GeneratedPair(
        question="What should one consider when designing path parameters?",
        answer="- Write them like Python format strings.\n- Annotate their types so values are converted.",
        question_type="open_ended",
        evidence=quotes,
    )
    prose = good.model_copy(update={"question": "Prose?", "answer": "Write them as format strings, with types."})
    one_quote = good.model_copy(update={"question": "One quote?", "evidence": quotes[:1]})
    zh = GeneratedPair(
        question="设计路径参数时需要考虑哪些方面？",
        answer="1、按 Python 格式字符串的写法声明。\n2、用类型注解声明类型。",
        question_type="open_ended",
        evidence=[GeneratedEvidence(chunk_id="z1", quote="路径参数使用与 Python 格式字符串相同的语法声明。"),
                  GeneratedEvidence(chunk_id="z1", quote="可以使用标准的类型注解声明路径参数的类型。")],
    )  # fmt: skip
    by_q = {p.question: p for p in validate_reply(
        _reply(good, prose, one_quote), plan_for(a, (QuestionType.open_ended,) * 3), PROV
    ).pairs}  # fmt: skip
    assert by_q[good.question].status is PairStatus.candidate, by_q[good.question].checks[CHECK_NAME].reason
    assert "key points" in by_q["Prose?"].checks[CHECK_NAME].reason
    assert "at least 2 different quotes" in by_q["One quote?"].checks[CHECK_NAME].reason
    z = make_chunk("z1", ZH_TEXT, "zh.md")
    [kept] = validate_reply(_reply(zh), plan_for(z, (QuestionType.open_ended,), language="zh"), PROV).pairs
    assert kept.status is PairStatus.candidate, kept.checks[CHECK_NAME].reason


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


def test_the_language_setting_takes_codes_and_names_and_refuses_anything_else() -> None:
    """A Chinese user writes `language: 中文`: it used to be taken as is, so its pairs said "中文" beside the chunks'
    "zh" (split per-language figures) and no reply was checked for its language."""
    for given, code in (("中文", "zh"), ("Chinese", "zh"), ("ZH", "zh"), (" zh ", "zh"), ("zh_TW", "zh-TW"),
                        ("繁體中文", "zh-TW"), ("日本語", "ja"), ("English", "en"), ("AUTO", "auto"),
                        ("pt-BR", "pt-BR")):
        assert GenerateSettings(language=given).language == code, given
    for bad in ("简体 中文", "chinese-simplified", "", "français!"):
        with pytest.raises(ValidationError, match="not a language code"):
            GenerateSettings(language=bad)
    zh_tw = make_chunk("z1", ZH_TEXT, "zh.md")
    [plan] = build_plans([zh_tw], [zh_tw], GenerateSettings(language="繁體中文"), None)
    assert plan.language == "zh-TW" and "Language: Traditional Chinese" in plan.messages()[-1]["content"]
    english = GeneratedPair(
        question="How is item_id passed to the function?",
        answer="As an argument with the same name.",
        question_type="factual",
        evidence=[GeneratedEvidence(chunk_id="z1", quote="路径参数使用与 Python 格式字符串相同的语法声明。")],
    )
    outcome = validate_reply(_reply(english), plan, PROV)  # zh-TW is checked as Chinese
    assert "wrong language" in outcome.pairs[0].checks[CHECK_NAME].reason

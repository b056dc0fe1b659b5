"""The labeling config as goldset reads it, and pairs as tasks: plain text, quote offsets, pre-filled texts."""

from __future__ import annotations

from pathlib import Path

import pytest

from goldset.errors import ConfigError
from goldset.review.config import load, parse
from goldset.review.tasks import evidence_view, find_span, task_of, utf16_len
from goldset.schema import Evidence, QAPair
from tests.helpers.review_data import build, make_chunk

CONFIG_PATH = Path(__file__).resolve().parents[1] / "labeling" / "review.xml"


def test_the_default_config_has_what_goldset_reads() -> None:
    cfg = load(CONFIG_PATH)
    assert cfg.controls["verdict"].values == ("accept", "reject", "edit"), "the stored values are the aliases"
    assert cfg.controls["criteria"].multiple and len(cfg.controls["criteria"].values) == 4
    assert cfg.controls["quote"].tag == "Labels" and cfg.shows["evidence"] == "evidence"
    assert {"question", "answer", "evidence", "flags", "meta"} <= cfg.variables


@pytest.mark.parametrize(
    ("xml", "message"),
    [
        ("<View><Text name='q' value='$question'/></View>", 'needs a <Choices name="verdict">'),
        ("<View><Text name='q' value='$question'/><Choices name='verdict' toName='q'><Choice value='accept'/>"
         "<Choice value='reject'/></Choices></View>", "verdict has no choice 'edit'"),
        ("<View><Text name='q' value='$prompt'/></View>", r"\$prompt is not task data goldset fills"),
        ("<View><Text name='q' value='$question'/><Choices name='verdict' toName='nope'/></View>", "toName='nope'"),
        ("<View><Text name='q'", "not valid XML"),
        ("<View><Text name='q' value='$question'/><Choices name='verdict' toName='q'><Choice value='accept'/>"
         "<Choice value='reject'/><Choice value='edit'/></Choices><Rating name='comment' toName='q'/></View>",
         "comment must be a <TextArea>"),
    ],
)
def test_configs_goldset_cannot_use_are_refused_naming_the_problem(xml: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        cfg = parse(xml, "my.xml")
        cfg.check_for_goldset()


def test_find_span_tolerates_whitespace_and_case() -> None:
    text = "Alpha beta.\nGamma   delta epsilon."
    assert find_span(text, "beta.") == (6, 11)
    s, e = find_span(text, "beta. Gamma delta") or (0, 0)
    assert text[s:e] == "beta.\nGamma   delta"
    s, e = find_span(text, "GAMMA delta") or (0, 0)
    assert text[s:e] == "Gamma   delta"
    assert find_span(text, "zeta") is None


def test_task_sends_plain_text_with_exact_quote_offsets_and_prefilled_texts() -> None:
    cfg = load(CONFIG_PATH)
    pairs, chunks = build(8)
    task = task_of(pairs[0], chunks, cfg)
    data, pred = task["data"], task["predictions"][0]
    assert data["pair_id"] == "qa-0000" and "<b>bold</b>" in data["evidence"], "text, never HTML"
    regions = [r for r in pred["result"] if r["from_name"] == "quote"]
    assert len(regions) == 1
    v = regions[0]["value"]
    assert data["evidence"][v["start"] : v["end"]] == v["text"] == pairs[0].evidence[0].quote
    assert v["labels"] == ["quote"] and regions[0]["to_name"] == "evidence"
    filled = {r["from_name"]: r["value"]["text"] for r in pred["result"] if r["type"] == "textarea"}
    assert filled == {"edited_question": [pairs[0].question], "edited_answer": [pairs[0].answer]}
    for item in pred["result"]:
        assert cfg.problem(item) is None, "our own prediction fits the config"
    changed = task_of(pairs[0].model_copy(update={"answer": "Another answer."}), chunks, cfg)
    assert changed["data"]["text_hash"] != data["text_hash"]
    assert task_of(pairs[0], chunks, cfg)["data"]["text_hash"] == data["text_hash"]


def test_offsets_are_utf16_units_and_several_chunks_are_sections() -> None:
    a = make_chunk("ca", "en/a.md", "Intro 😀 text. The quote is here. End.", "en")
    b = make_chunk("cb", "zh/b.md", "第一句。引用在这里。结束。", "zh")
    pair = QAPair(id="qa-x", question="Q?", answer="A.", question_type="multi_hop", evidence=[
        Evidence(chunk_id="ca", doc_id="en/a.md", quote="The quote is here."),
        Evidence(chunk_id="cb", doc_id="zh/b.md", quote="引用在这里。"),
        Evidence(chunk_id="cb", doc_id="zh/b.md", quote="not in the chunk"),
    ])  # fmt: skip
    text, spans, missing = evidence_view(pair, {"ca": a, "cb": b})
    assert [text[s:e] for s, e in spans] == ["The quote is here.", "引用在这里。"]
    assert text.index("── en/a.md › Introduction") == 0 and "\n\n── zh/b.md" in text
    assert missing == ["not in the chunk"]
    cfg = load(CONFIG_PATH)
    task = task_of(pair, {"ca": a, "cb": b}, cfg)
    first = next(r for r in task["predictions"][0]["result"] if r["from_name"] == "quote")["value"]
    assert first["start"] == utf16_len(text[: spans[0][0]]) == spans[0][0] + 1, "the emoji is two UTF-16 units"
    assert "quote not found" in task["data"]["meta"]
    unanswerable = QAPair(id="qa-u", question="Q?", answer="The documents do not say.", question_type="unanswerable")
    none = task_of(unanswerable, {}, cfg)
    assert none["data"]["evidence"].startswith("No evidence") and all(
        r["from_name"] != "quote" for r in none["predictions"][0]["result"])


def test_evidence_of_a_pdf_or_a_deck_names_its_page_or_slide() -> None:
    pdf = make_chunk("cp", "handbook.pdf", "Claims are submitted within fifteen working days.", "en").model_copy(
        update={"page": 12}
    )
    deck = make_chunk("cs", "deck.pptx", "Revenue grew by twelve percent.", "en").model_copy(update={"page": 3})
    md = make_chunk("cm", "en/a.md", "A Markdown page has no pages.", "en")
    pair = QAPair(id="qa-p", question="Q?", answer="A.", question_type="multi_hop", evidence=[
        Evidence(chunk_id="cp", doc_id="handbook.pdf", quote="within fifteen working days"),
        Evidence(chunk_id="cs", doc_id="deck.pptx", quote="twelve percent"),
        Evidence(chunk_id="cm", doc_id="en/a.md", quote="no pages"),
    ])  # fmt: skip
    data = task_of(pair, {"cp": pdf, "cs": deck, "cm": md}, load(CONFIG_PATH))["data"]
    heads = [line for line in data["evidence"].splitlines() if line.startswith("── ")]
    assert sorted(heads) == ["── deck.pptx, slide 3 › Introduction", "── en/a.md › Introduction",
                             "── handbook.pdf, p. 12 › Introduction"]  # fmt: skip


def test_the_task_says_how_the_pair_came_to_the_reviewer() -> None:
    from goldset.schema import Review

    cfg = load(CONFIG_PATH)
    pairs, chunks = build(1)

    def meta(review: Review) -> str:
        return str(task_of(pairs[0].model_copy(update={"review": review}), chunks, cfg)["data"]["meta"])

    assert "sampled: random part" in meta(Review(sampled=True, random=True))
    assert "sampled: risk: flag:self_contained" in meta(Review(sampled=True, risk=["flag:self_contained"]))
    assert "sampled: no (exported outside the sample)" in meta(Review())

"""Structured output helpers: strict schemas, JSON extraction from chatty replies, one-line validation errors."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field

from goldset.llm import ReplyError, extract_json, parse_reply
from goldset.llm.structured import response_format_json_schema, with_instruction


class Item(BaseModel):
    quote: str
    default: str = "x"  # a field literally named "default" must survive strictification


class Reply(BaseModel):
    items: list[Item]
    note: str | None = None
    count: int = Field(default=0, ge=0)


class Loose(BaseModel):
    tags: dict[str, int]


def test_strict_schema_requires_everything_and_forbids_extras() -> None:
    fmt = response_format_json_schema(Reply, "qa pairs!")
    spec = fmt["json_schema"]
    assert fmt["type"] == "json_schema" and spec["strict"] is True and spec["name"] == "qa_pairs_"
    schema = spec["schema"]
    assert schema["additionalProperties"] is False
    assert sorted(schema["required"]) == ["count", "items", "note"]
    item = schema["$defs"]["Item"]
    assert item["additionalProperties"] is False and sorted(item["required"]) == ["default", "quote"]
    assert "default" in item["properties"]
    assert all("default" not in prop for prop in item["properties"].values())


def test_free_form_maps_are_sent_non_strict() -> None:
    spec = response_format_json_schema(Loose, "loose")["json_schema"]
    assert spec["strict"] is False
    assert spec["schema"]["properties"]["tags"]["additionalProperties"] == {"type": "integer"}


@pytest.mark.parametrize(
    "text",
    [
        '{"items": [{"quote": "a"}]}',
        '  \n{"items": [{"quote": "a"}]}\n\n',
        '```json\n{"items": [{"quote": "a"}]}\n```',
        '```\n{"items": [{"quote": "a"}]}\n```\n',
        '<think>maybe {"items": []} ... no</think>\n{"items": [{"quote": "a"}]}',
        '<think>hmm</think>\n```json\n{"items": [{"quote": "a"}]}\n```',
    ],
)
def test_a_reply_is_the_whole_document_with_only_whitespace_a_fence_or_a_leading_think_block(text: str) -> None:
    assert parse_reply(text, Reply).items[0].quote == "a"


@pytest.mark.parametrize(
    "text",
    [
        # cut off: the first complete inner object must not be taken for the reply
        '{"items": [{"quote": "a"}, {"quote": "b"}, {"quo',
        '```json\n{"items": [{"quote": "a"}, {"quote": "b"}',
        # prose around the JSON, or two documents
        'Sure! Here it is:\n{"items": [{"quote": "a"}]}\nHope this helps.',
        '{"items": [{"quote": "a"}]}\nHope this helps.',
        '{"items": [{"quote": "a"}]} {"items": []}',
        'Here:\n```json\n{"items": [{"quote": "a"}]}\n```',
        '```json\n{"items": [{"quote": "a"}]}\n```\n```json\n{"items": []}\n```',
        '{"items": [{"quote": "a"}]}</think>',
        '<think>unfinished {"items": [{"quote": "a"}]}',
    ],
)
def test_anything_else_is_not_a_reply(text: str) -> None:
    with pytest.raises(ReplyError, match=r"not valid JSON|not one JSON document") as err:
        extract_json(text)
    assert "\n" not in str(err.value)


def test_unparseable_and_invalid_replies_give_one_line_reasons() -> None:
    with pytest.raises(ReplyError, match="not valid JSON"):
        extract_json("I cannot help with that.")
    with pytest.raises(ReplyError, match="empty"):
        extract_json("  <think>hmm</think> ")
    with pytest.raises(ReplyError) as err:
        parse_reply('{"items": [{"quote": 3}], "count": -1}', Reply)
    text = str(err.value)
    assert "items.0.quote" in text and "count" in text and "\n" not in text


def test_instruction_goes_into_the_system_message() -> None:
    msgs = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Q"}]
    out = with_instruction(msgs, "JSON please")
    assert out[0]["content"] == "Be brief.\n\nJSON please" and out[1] == msgs[1]
    assert msgs[0]["content"] == "Be brief."  # the caller's list is not modified
    assert with_instruction([{"role": "user", "content": "Q"}], "J")[0] == {"role": "system", "content": "J"}

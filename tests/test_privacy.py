"""Personal data out of real user questions and logs: what is found, what is left alone, in both languages."""

from __future__ import annotations

import pytest

from goldset.privacy import redact_personal


@pytest.mark.parametrize(
    ("text", "expected", "found"),
    [
        ("Mail me at jane.doe+rag@example.co.uk please", "Mail me at [email] please", {"email": 1}),
        ("Call +1 (555) 123-4567 or 555-123-4567.", "Call [phone] or [phone].", {"phone": 2}),
        ("我的电话13800138000，邮箱是li.lei@163.com", "我的电话[phone]，邮箱是[email]", {"email": 1, "phone": 1}),
        ("card 4111 1111 1111 1111 expired", "card [number] expired", {"number": 1}),
        ("身份证号11010519491231002X不对", "身份证号[number]不对", {"number": 1}),
        ("order 2026120112345678 is late", "order [number] is late", {"number": 1}),
        ("Office: (010) 6552 9988", "Office: [phone]", {"phone": 1}),
    ],
)
def test_personal_data_is_replaced_by_its_kind(text: str, expected: str, found: dict[str, int]) -> None:
    got = redact_personal(text)
    assert got.text == expected and got.found == found and got.changed


@pytest.mark.parametrize(
    "text",
    [
        "Does FastAPI 0.141.1 run on port 8080 since 2024?",
        "What does status code 422 mean for a body of 3.14159 MB?",
        "How do I set max_tokens to 4096 with Python 3.11?",
        "FastAPI 的 0.120.0 版本支持多少个并发请求？",
        "Use the header X-Request-ID: 42 and retry 3 times",
    ],
)
def test_ordinary_numbers_are_left_alone(text: str) -> None:
    got = redact_personal(text)
    assert got.text == text and not got.changed

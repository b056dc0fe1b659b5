"""Shared fixtures. ``fake_llm``: a fake OpenAI-compatible server (tests/helpers/fake_openai.py) with the environment
pointing at it, so ``resolve_endpoint(None)`` and ``goldset generate`` talk to it through the real openai client.
``fake_llm_factory(**options)`` does the same for a server with options (``latency_s``, ``reject_json_schema``,
``known_models``…). ``no_llm_env`` removes every LLM variable (for "not configured" tests).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

import pytest

from tests.helpers.fake_openai import FakeOpenAI

CLOSED_BOOK_OFF = "GOLDSET_FILTER__CHECKS__CLOSED_BOOK__ENABLED"
LLM_ENV = ("OPENAI_BASE_URL", "OPENAI_API_KEY", "GOLDSET_MODEL", "GOLDSET_JUDGE_MODEL", "GOLDSET_EMBEDDING_MODEL")


def _point_env_at(monkeypatch: pytest.MonkeyPatch, fake: FakeOpenAI) -> None:
    monkeypatch.delenv("GOLDSET_EMBEDDING_MODEL", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", fake.api_key)
    monkeypatch.setenv("GOLDSET_MODEL", "fake-model")
    monkeypatch.setenv("GOLDSET_JUDGE_MODEL", "fake-judge")
    # The closed_book check (on whenever a generation endpoint is configured) would add calls to every test that
    # counts the filters' calls: off here; tests/test_filters_closed_book.py turns it back on.
    monkeypatch.setenv(CLOSED_BOOK_OFF, "false")


@pytest.fixture
def fake_llm(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    """A started FakeOpenAI; OPENAI_BASE_URL/OPENAI_API_KEY point at it, models are fake-model / fake-judge."""
    with FakeOpenAI() as fake:
        _point_env_at(monkeypatch, fake)
        yield fake


@pytest.fixture
def fake_llm_factory(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., FakeOpenAI]]:
    """``make(**FakeOpenAI options)`` starts a server and points the environment at it (the last one made)."""
    with ExitStack() as stack:

        def make(**options: Any) -> FakeOpenAI:
            fake = stack.enter_context(FakeOpenAI(**options))
            _point_env_at(monkeypatch, fake)
            return fake

        yield make


@pytest.fixture
def no_llm_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No LLM endpoint in the environment (for 'not configured' tests)."""
    for name in LLM_ENV:
        monkeypatch.delenv(name, raising=False)

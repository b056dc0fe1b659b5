"""Shared fixtures. ``fake_llm``: a fake OpenAI-compatible server (tests/fake_openai.py) with the environment
pointing at it, so ``resolve_endpoint(None)`` and ``goldset generate`` talk to it through the real openai client.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fake_openai import FakeOpenAI

LLM_ENV = ("OPENAI_BASE_URL", "OPENAI_API_KEY", "GOLDSET_MODEL", "GOLDSET_JUDGE_MODEL")


@pytest.fixture
def fake_llm(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    """A started FakeOpenAI; OPENAI_BASE_URL/OPENAI_API_KEY point at it, models are fake-model / fake-judge."""
    with FakeOpenAI() as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", fake.api_key)
        monkeypatch.setenv("GOLDSET_MODEL", "fake-model")
        monkeypatch.setenv("GOLDSET_JUDGE_MODEL", "fake-judge")
        yield fake


@pytest.fixture
def no_llm_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No LLM endpoint in the environment (for 'not configured' tests)."""
    for name in LLM_ENV:
        monkeypatch.delenv(name, raising=False)

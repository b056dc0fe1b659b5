"""Helpers of the `goldset build` tests: a generation model that breaks after N answers, and the requests a fake
server received, by kind."""

from __future__ import annotations

import threading
from typing import Any

from tests.helpers.fake_openai import FakeOpenAI, schema_name_of
from tests.helpers.responders import never_valid_responder, qa_responder, user_prompt


class BreaksAfter:
    """:func:`qa_responder` for the first ``n`` distinct generation prompts, then a reply that never matches the
    schema (every later call fails, its chunk gets no pair), as a model or a proxy that starts failing mid-run.
    ``answered`` holds the prompts it answered well."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.answered: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        prompt = user_prompt(body)
        with self._lock:
            ok = prompt in self.answered or len(self.answered) < self.n
            if ok and prompt not in self.answered:
                self.answered.append(prompt)
        return qa_responder(body) if ok else never_valid_responder(body)


def generation_prompts(fake: FakeOpenAI, since: int = 0) -> list[str]:
    """The generation prompts (first user message) of the chat requests from the ``since``-th on."""
    return [
        user_prompt(r.body) for r in fake.chat_requests()[since:] if schema_name_of(r.body, r.headers) == "qa_pairs"
    ]

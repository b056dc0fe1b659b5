"""The collector paused for the span of a big allocation (goldset/collector.py): a generation run is one."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

from goldset.generation.runner import generate
from goldset.workspace import Workspace
from tests.helpers.fake_openai import FakeOpenAI
from tests.helpers.generation_data import EN_TEXT, make_chunk
from tests.helpers.responders import qa_responder


def test_a_generation_run_pauses_the_collector_and_restores_it(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    fake_llm.add_responder("qa_pairs", qa_responder)
    (tmp_path / "goldset.yaml").write_text("generate:\n  concurrency: 2\n", encoding="utf-8")
    chunks = [make_chunk(f"c-{i}", f"{EN_TEXT} Note number {i}.", "a.md", position=i) for i in range(6)]
    during: list[bool] = []

    def progress(_: Any) -> None:
        during.append(gc.isenabled())

    frozen = gc.get_freeze_count()
    assert gc.isenabled()
    report = generate(Workspace(tmp_path), chunks=chunks, progress=progress)
    assert report.llm.calls == 6 and len(during) == 7  # the start, then one per call
    assert not any(during)  # off while the calls ran
    assert gc.isenabled()  # back on, and nothing left frozen (or, if something else had frozen objects, unfrozen)
    assert gc.get_freeze_count() == 0 if not frozen else gc.get_freeze_count() > 0

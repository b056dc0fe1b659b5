"""`goldset refresh` after a real documentation update (FastAPI 0.120.0 → 0.141.1 pages): a changed, an added and a
deleted document, with the fake LLM server; it must see calls only for new and changed chunks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from goldset.cli import app
from goldset.filters import run_filters
from goldset.generation.runner import generate
from goldset.generation.validation import quote_in_text
from goldset.kb import load_snapshot
from goldset.schema import Chunk, Evidence, PairStatus, Provenance, QAPair, QuestionType, pair_id
from goldset.versioning.load import load
from goldset.versioning.refresh import TAG_NEW, TAG_RECHECKED, TAG_RETIRED, TAG_REVIEW, refresh
from goldset.versioning.release import release
from goldset.workspace import Workspace
from tests.helpers.duplicate_responders import make_duplicate_responder
from tests.helpers.fake_openai import FakeOpenAI, schema_name_of
from tests.helpers.judge_responders import groundedness_responder
from tests.helpers.responders import parse_prompt, qa_responder
from tests.helpers.versioning_data import (
    KB,
    copy_docs,
    kb_chunks,
    make_workspace,
    read_pairs,
    release_env,
    write_pairs,
)

OLD = {name: KB / "en-0.120.0" / name for name in ("cookie-params.md", "debugging.md", "query-params.md")}
#: query-params.md changed (one chunk), cookie-params.md unchanged in content, debugging.md deleted, body.md added
NEW = {"cookie-params.md": KB / "en" / "cookie-params.md", "query-params.md": KB / "en" / "query-params.md",
       "body.md": KB / "en" / "body.md"}  # fmt: skip
GONE_SENTENCE = "All the same process that applied for path parameters also applies for query parameters:"
KEPT_SENTENCE = (
    'When you declare other function parameters that are not part of the path parameters, they are automatically '
    'interpreted as "query" parameters.'
)
runner = CliRunner()


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    release_env(tmp_path, monkeypatch)


@pytest.fixture
def fake(fake_llm: FakeOpenAI) -> FakeOpenAI:
    fake_llm.add_responder("qa_pairs", qa_responder)
    fake_llm.add_responder("groundedness", groundedness_responder)
    fake_llm.add_responder("duplicate_judge", make_duplicate_responder(lambda a, b: False))
    return fake_llm


def _hand_pair(chunk: Chunk, sentence: str) -> QAPair:
    """An accepted pair whose answer is its quote (so the judge finds every word in the source)."""
    question = f"What does the tutorial say about this: {sentence[:40]}?"
    return QAPair(
        id=pair_id([chunk.id], "factual", question),
        question=question,
        answer=sentence,
        question_type=QuestionType.factual,
        evidence=[Evidence(chunk_id=chunk.id, doc_id=chunk.doc_id, quote=sentence)],
        provenance=Provenance(source="human", chunk_hashes={chunk.id: chunk.content_hash}),
        status=PairStatus.accepted,
    )


def _released_workspace(tmp_path: Path, settings: str = "") -> tuple[Workspace, Path, dict[str, str]]:
    docs = copy_docs(tmp_path / "docs", OLD)
    ws = make_workspace(tmp_path / "ws", docs, tmp_path / "remote")
    if settings:
        ws.config_path.write_text(ws.config_path.read_text() + "\n" + settings)
    generate(ws)
    run_filters(ws)
    # a reviewer accepts every generated pair with evidence (the fake model's answers mostly fail the filters)
    reviewed = [p.model_copy(update={"status": PairStatus.accepted}) if p.evidence else p for p in read_pairs(ws)]
    write_pairs(ws, reviewed)
    chunks = kb_chunks(ws)
    holder = next(c for c in chunks if GONE_SENTENCE in c.text)
    assert KEPT_SENTENCE in holder.text
    gone, kept = _hand_pair(holder, GONE_SENTENCE), _hand_pair(holder, KEPT_SENTENCE)
    write_pairs(ws, [*read_pairs(ws), gone, kept])
    release("1.0.0", message="before the docs update", ws=ws)
    return ws, docs, {"gone": gone.id, "kept": kept.id, "holder": holder.id}


def _judge_sources(body: dict) -> tuple[str, set[str]]:
    text = next(m["content"] for m in body["messages"] if m["role"] == "user")
    qtype = re.search(r"Question type: (\w+)", text)
    return (qtype.group(1) if qtype else ""), set(re.findall(r'<source id="([^"]+)">', text))


def test_refresh_retires_rechecks_and_generates_only_for_new_and_changed_chunks(tmp_path: Path, fake: FakeOpenAI):
    ws, docs, ids = _released_workspace(tmp_path)
    old_chunks = kb_chunks(ws)
    pairs_before = ws.pairs_path.read_bytes()
    kb_before = (ws.kb_dir / "chunks.jsonl").read_bytes()
    copy_docs(docs, NEW)

    # the dry run: the plan and its estimate, no call, no file changed
    calls = fake.calls
    dry = refresh(docs, ws, dry_run=True)
    assert fake.calls == calls and ws.pairs_path.read_bytes() == pairs_before
    assert (ws.kb_dir / "chunks.jsonl").read_bytes() == kb_before
    plan = dry.plan
    assert plan.diff.documents_added == ["body.md"] and plan.diff.documents_removed == ["debugging.md"]
    assert plan.diff.documents_changed == ["query-params.md"] and plan.diff.chunks_changed == [ids["holder"]]
    changed_or_new = set(plan.diff.chunks_added) | set(plan.diff.chunks_changed)
    assert set(plan.generate_chunk_ids) == changed_or_new
    debugging = {c.id for c in old_chunks if c.doc_id == "debugging.md"}
    old_pairs = {p.id: p for p in read_pairs(ws)}
    expect_retired = {
        p.id for p in old_pairs.values()
        if p.evidence and set(p.chunk_ids) & debugging
    }  # fmt: skip
    assert expect_retired and set(plan.retire) == expect_retired
    assert {ids["gone"], ids["kept"]} <= set(plan.recheck)
    assert all(ids["holder"] in chunks for chunks in plan.recheck.values())
    assert plan.estimate is not None and plan.estimate.calls == len(changed_or_new)
    res = runner.invoke(app, ["refresh", str(docs), "--dry-run", "-w", str(ws.root)])
    assert res.exit_code == 0 and f"retire {len(expect_retired)} pair(s)" in res.output, res.output
    assert fake.calls == calls

    # the refresh: calls only for the new and changed chunks, and the judge only on what they touch
    report = refresh(docs, ws)
    sent = fake.chat_requests()[calls:]
    generation = [r for r in sent if schema_name_of(r.body) == "qa_pairs"]
    asked = [parse_prompt(r.body)[0][0][0] for r in generation]
    assert sorted(asked) == sorted(changed_or_new), "one generation call per new or changed chunk, no other"
    assert report.generation_calls == len(generation) == plan.estimate.calls
    for r in sent:
        if schema_name_of(r.body) == "groundedness":
            qtype, sources = _judge_sources(r.body)
            assert qtype == "unanswerable" or sources & changed_or_new, f"judge call on unchanged evidence: {sources}"
    assert report.calls == len(sent) - sum(1 for r in sent if "embeddings" in r.path)

    pairs = {p.id: p for p in read_pairs(ws)}
    for pid in expect_retired:
        p = pairs[pid]
        assert p.status is PairStatus.retired and TAG_RETIRED in p.tags
        why = p.checks["refresh"].reason
        assert "debugging.md" in why and "no longer in the documents" in why
    gone, kept = pairs[ids["gone"]], pairs[ids["kept"]]
    assert gone.status is PairStatus.retired and "is no longer in" in gone.checks["refresh"].reason
    assert kept.status is PairStatus.accepted and TAG_RECHECKED in kept.tags and kept.checks["refresh"].passed
    new_chunks = {c.id: c for c in kb_chunks(ws)}
    assert kept.provenance.chunk_hashes[ids["holder"]] == new_chunks[ids["holder"]].content_hash
    for pid in plan.recheck:  # every re-checked pair: kept exactly when its quotes are in the new text
        p = pairs[pid]
        holds = all(quote_in_text(e.quote, new_chunks[e.chunk_id].text) for e in p.evidence)
        assert (p.status is not PairStatus.retired) == (holds and p.checks["refresh"].passed), pid
    new = [p for p in pairs.values() if TAG_NEW in p.tags]
    assert new and {p.id for p in new} == set(report.new_pairs)
    assert all(next(iter(p.provenance.chunk_hashes)) in changed_or_new for p in new)
    assert all(p.provenance.kb_snapshot_id == plan.new_snapshot_id for p in new)
    assert all(p.status in (PairStatus.passed, PairStatus.rejected) for p in new), "the filters ran on them"
    assert load_snapshot(ws).id == plan.new_snapshot_id
    unchanged = set(old_pairs) - set(plan.retire) - set(plan.recheck)
    kept_fields = {"status", "question", "answer", "evidence", "provenance", "tags", "review"}
    for pid in unchanged:  # the filters may record new verdicts on them; nothing else changes
        if old_pairs[pid].status is PairStatus.accepted:
            assert pairs[pid].model_dump(include=kept_fields) == old_pairs[pid].model_dump(include=kept_fields), pid

    # the next release leaves the retired pairs out and says why
    r2 = release("1.1.0", message="docs 0.141.1", ws=ws)
    retired_ids = {p.id for p in r2.diff.retired}
    assert ids["gone"] in retired_ids and (expect_retired & set(load("v1.0.0", repo=ws.root)["id"])) <= retired_ids
    assert any(p.id in report.new_pairs for p in r2.diff.added)
    assert r2.diff.documents_added == ["body.md"] and r2.diff.documents_removed == ["debugging.md"]
    assert not (ws.data_dir / "corpus" / "debugging.md.jsonl").exists()
    assert (ws.data_dir / "corpus" / "body.md.jsonl").is_file()

    # an unchanged refresh: nothing to do, no call, no file written
    calls, before = fake.calls, ws.pairs_path.read_bytes()
    again = refresh(docs, ws)
    assert not again.plan.has_changes and again.calls == 0 and fake.calls == calls
    assert ws.pairs_path.read_bytes() == before


def test_stale_pairs_go_to_review_when_configured(tmp_path: Path, fake: FakeOpenAI) -> None:
    ws, docs, ids = _released_workspace(tmp_path, "versioning:\n  stale_pairs: review\n")
    copy_docs(docs, NEW)
    report = refresh(docs, ws)
    pairs = {p.id: p for p in read_pairs(ws)}
    gone = pairs[ids["gone"]]
    assert gone.status is PairStatus.stale and TAG_REVIEW in gone.tags and ids["gone"] in report.to_review
    assert "fix or reject it in review" in gone.checks["refresh"].reason
    r2 = release("1.1.0", message="docs update", ws=ws)
    assert ids["gone"] not in r2.manifest.golden_ids
    left = next(p for p in r2.diff.retired if p.id == ids["gone"])
    assert left.reason.startswith("stale, waiting for review")


def test_the_judge_retires_a_reviewed_pair_whose_answer_the_new_text_no_longer_supports(tmp_path, fake) -> None:
    ws, docs, ids = _released_workspace(tmp_path)
    pairs = read_pairs(ws)
    kept = next(p for p in pairs if p.id == ids["kept"])
    # the same quote, but an answer with a claim no source makes: the quote still holds, the judge must say no
    claim = kept.model_copy(update={"answer": kept.answer + " Pydantic caches them in Redis."})
    write_pairs(ws, [claim if p.id == kept.id else p for p in pairs])
    copy_docs(docs, NEW)
    report = refresh(docs, ws)
    after = next(p for p in read_pairs(ws) if p.id == ids["kept"])
    assert after.status is PairStatus.retired
    assert "the judge finds the answer unsupported" in after.checks["refresh"].reason
    assert report.judge_calls >= 1 and ids["kept"] in report.replaced


def test_refresh_needs_an_ingested_kb(tmp_path: Path) -> None:
    from goldset.errors import InputError
    from goldset.scaffold import init_workspace

    init_workspace(tmp_path / "ws")
    with pytest.raises(InputError, match="no KB snapshot to compare"):
        refresh(KB / "en", tmp_path / "ws")


def test_every_pair_whatever_its_status_is_retired_or_moved_to_the_new_text(tmp_path: Path, fake: FakeOpenAI) -> None:
    """Rejected, candidate and passed pairs on a changed chunk are re-checked like reviewed ones: a quote that
    holds moves the pair to the new text (the filters then judge it there), a quote gone retires it (a rejected
    pair always: nobody reviews it). The release after the refresh meets no stale evidence, whatever the filters
    decided, and a second refresh right after makes no call."""
    ws, docs, ids = _released_workspace(tmp_path)
    holder = next(c for c in kb_chunks(ws) if c.id == ids["holder"])
    hand = {}
    for status in (PairStatus.rejected, PairStatus.candidate, PairStatus.passed):
        for sentence, fate in ((KEPT_SENTENCE, "holds"), (GONE_SENTENCE, "gone")):
            p = _hand_pair(holder, sentence)
            question = f"{p.question} ({status.value}, {fate})"
            p = p.model_copy(update={"id": pair_id([holder.id], "factual", question), "question": question,
                                     "status": status})  # fmt: skip
            hand[(status, fate)] = p.id
            write_pairs(ws, [*read_pairs(ws), p])
    copy_docs(docs, NEW)
    dry = runner.invoke(app, ["refresh", str(docs), "--dry-run", "-w", str(ws.root)])
    assert dry.exit_code == 0 and re.search(
        r"at most \d+ groundedness, \d+ duplicate-judge, \d+ closed_book and \d+ copy-judge call", dry.output
    )
    report = refresh(docs, ws)
    pairs = {p.id: p for p in read_pairs(ws)}
    new_chunks = {c.id: c for c in kb_chunks(ws)}
    assert pairs[hand[(PairStatus.rejected, "gone")]].status is PairStatus.retired
    moved = pairs[hand[(PairStatus.rejected, "holds")]]
    assert moved.status is PairStatus.rejected and TAG_RECHECKED in moved.tags
    for p in pairs.values():
        if p.status is PairStatus.retired:
            continue
        for cid in p.chunk_ids:
            assert p.provenance.chunk_hashes.get(cid) == new_chunks[cid].content_hash, (p.id, p.status)
    assert sum(report.calls_by_kind.values()) == report.calls
    release("1.1.0", message="docs 0.141.1", ws=ws)
    calls = fake.calls
    again = refresh(docs, ws)
    assert again.calls == 0 and fake.calls == calls


def test_the_refresh_counts_its_calls_by_kind_as_the_server_saw_them(tmp_path: Path, fake: FakeOpenAI, monkeypatch):
    """With closed_book and the copy judge on, the summary's calls by kind are the server's requests by schema name,
    kind by kind (no retries here): the copy judge's calls (and closed_book's, for pairs every other check let
    through) are not counted as groundedness; the dry run bounds closed_book's and the copy judge's calls too."""
    from tests.conftest import CLOSED_BOOK_OFF
    from tests.helpers.closed_book_responders import closed_book_answer_responder, closed_book_judge_responder

    monkeypatch.setenv(CLOSED_BOOK_OFF, "true")
    fake.add_responder("closed_book_answer", closed_book_answer_responder)
    fake.add_responder("closed_book_agreement", closed_book_judge_responder)
    ws, docs, _ = _released_workspace(tmp_path)
    copy_docs(docs, NEW)
    dry = runner.invoke(app, ["refresh", str(docs), "--dry-run", "-w", str(ws.root)])
    bound = re.search(r"(\d+) closed_book and (\d+) copy-judge call", dry.output)
    assert dry.exit_code == 0 and bound and int(bound.group(1)) > 0 and int(bound.group(2)) > 0, dry.output
    start = len(fake.chat_requests())
    report = refresh(docs, ws)
    seen: dict[str, int] = {}
    for r in fake.chat_requests()[start:]:
        kind = schema_name_of(r.body) or "?"
        seen[kind] = seen.get(kind, 0) + 1
    assert report.calls_by_kind == seen  # every kind, none counted as another
    assert set(seen) - {"qa_pairs", "groundedness", "duplicate_judge"}, seen  # the copy judge asked here
    assert seen.get("copy_judge", 0) <= int(bound.group(2))
    assert seen.get("closed_book_answer", 0) <= int(bound.group(1)) // 2
    assert sum(report.calls_by_kind.values()) == report.calls
    assert report.groundedness_calls == seen.get("groundedness", 0)
    out = runner.invoke(app, ["refresh", str(docs), "-w", str(ws.root)])
    assert out.exit_code == 0 and "no call made" in out.output, out.output

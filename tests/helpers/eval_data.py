"""A tiny hand-written dataset for the evaluation tests (text written for these tests, no third-party content),
plus tests of how `goldset eval` picks the dataset, the pairs and a stratified sample.

Other test_eval_* / test_cli_eval / test_compare / test_report files import the builders from here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from goldset.data import write_dataset
from goldset.hashing import sha256_hex
from goldset.schema import Chunk, Evidence, QAPair, RunSample
from goldset.text import count_tokens, normalize

CHUNK_TEXTS = {
    "c-install": (
        "install.md",
        "Install quokka with pip install quokka. The package needs Python 3.11 or newer. "
        "On Windows run the installer as an administrator.",
    ),
    "c-config": (
        "config.md",
        "Quokka reads its settings from quokka.toml in the project folder. The port setting defaults to 8080. "
        "Set log_level to debug for verbose output.",
    ),
    "c-cache": (
        "cache.md",
        "The cache keeps responses for ten minutes. Clear it with quokka cache clear. "
        "A cache size above 2 GB slows down start-up.",
    ),
    "c-auth": (
        "auth.md",
        "Quokka supports token authentication. Create a token with quokka token new and pass it in the "
        "Authorization header.",
    ),
    "c-zh": ("zh/intro.md", "快袋鼠是一个轻量的网络框架。它的默认端口是八零八零。"),
}

# (id, type, question, answer, chunk ids with quote, status, language)
PAIR_SPECS: list[tuple[str, str, str, str, list[tuple[str, str]], str, str]] = [
    ("qa-install", "factual", "How do I install quokka?", "Run pip install quokka.",
     [("c-install", "Install quokka with pip install quokka.")], "passed", "en"),
    ("qa-python", "factual", "Which Python version does quokka need?", "Python 3.11 or newer.",
     [("c-install", "The package needs Python 3.11 or newer.")], "accepted", "en"),
    ("qa-port", "factual", "What is the default port of quokka?", "8080.",
     [("c-config", "The port setting defaults to 8080.")], "passed", "en"),
    ("qa-debug", "procedural", "How do I get verbose output from quokka?", "Set log_level to debug in quokka.toml.",
     [("c-config", "Set log_level to debug for verbose output.")], "passed", "en"),
    ("qa-clear", "procedural", "How do I clear the quokka cache?", "Run quokka cache clear.",
     [("c-cache", "Clear it with quokka cache clear.")], "passed", "en"),
    ("qa-slow", "reasoning", "Why might quokka start slowly?", "A cache larger than 2 GB slows start-up.",
     [("c-cache", "A cache size above 2 GB slows down start-up.")], "passed", "en"),
    ("qa-token", "procedural", "How do I authenticate to quokka?",
     "Create a token with quokka token new and send it in the Authorization header.",
     [("c-auth", "Create a token with quokka token new")], "passed", "en"),
    ("qa-zh-port", "factual", "快袋鼠的默认端口是多少？", "八零八零。",
     [("c-zh", "它的默认端口是八零八零。")], "passed", "zh"),
    ("qa-unans", "unanswerable", "Does quokka support LDAP login?", "The knowledge base does not say.", [],
     "passed", "en"),
    ("qa-rejected", "factual", "What colour is the quokka logo?", "Brown.", [("c-install", "Install quokka")],
     "rejected", "en"),
]


def make_chunk(cid: str, doc_id: str, text: str) -> Chunk:
    return Chunk(
        id=cid,
        doc_id=doc_id,
        text=text,
        content_hash=sha256_hex(normalize(text)),
        raw_hash=sha256_hex(text),
        n_tokens=count_tokens(text),
        char_start=0,
        char_end=len(text),
        language="zh" if doc_id.startswith("zh/") else "en",
    )


def make_pairs(statuses: dict[str, str] | None = None) -> list[QAPair]:
    pairs = []
    for pid, qtype, question, answer, ev, status, lang in PAIR_SPECS:
        evidence = [Evidence(chunk_id=c, doc_id=CHUNK_TEXTS[c][0], quote=q) for c, q in ev]
        pairs.append(
            QAPair(
                id=pid,
                question=question,
                answer=answer,
                question_type=qtype,
                language=lang,
                evidence=evidence,
                status=(statuses or {}).get(pid, status),
            )
        )
    return pairs


def make_dataset(folder: Path, statuses: dict[str, str] | None = None, version: str | None = None) -> Path:
    """Write the tiny dataset (pairs.jsonl, chunks.jsonl, manifest.json) into ``folder``."""
    chunks = [make_chunk(cid, doc, text) for cid, (doc, text) in CHUNK_TEXTS.items()]
    write_dataset(folder, make_pairs(statuses), chunks, version=version)
    return folder


def evaluated_pairs() -> list[QAPair]:
    return [p for p in make_pairs() if p.status.value in ("passed", "accepted")]


def perfect_sample(pair: QAPair) -> RunSample:
    """A sample a perfect system would produce: the reference answer and the evidence chunk first."""
    contexts = [{"text": CHUNK_TEXTS[c][1], "doc_id": CHUNK_TEXTS[c][0], "chunk_id": c} for c in pair.chunk_ids]
    if pair.question_type.value == "unanswerable":
        return RunSample(pair_id=pair.id, answer="I cannot find this in the documentation.", contexts=[])
    return RunSample(pair_id=pair.id, answer=pair.answer, contexts=contexts)


def poor_sample(pair: QAPair) -> RunSample:
    """A system that retrieves the wrong chunk and answers vaguely."""
    wrong = "c-auth" if "c-auth" not in pair.chunk_ids else "c-cache"
    return RunSample(
        pair_id=pair.id,
        answer="It depends on your setup.",
        contexts=[{"text": CHUNK_TEXTS[wrong][1], "doc_id": CHUNK_TEXTS[wrong][0], "chunk_id": wrong}],
    )


def write_run_file(path: Path, samples: list[RunSample] | list[dict[str, Any]]) -> Path:
    import json

    lines = [s.model_dump_json() if isinstance(s, RunSample) else json.dumps(s) for s in samples]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# --------------------------------------------------------------------------------------------------- tests

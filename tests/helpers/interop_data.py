"""A small bilingual dataset for the interop tests (text written for these tests, no third-party content): every
question type in English and Chinese, a multi-hop pair citing two documents, unanswerable pairs without evidence,
and cells a spreadsheet would run as formulas, line breaks, quotes, commas and a character outside the BMP (the
Label Studio offsets count UTF-16 units).

Also: what a round trip must keep (:func:`carried_view`), and :func:`run_with_library`, which loads an export with
RAGAS or DeepEval in an interpreter that has them (``GOLDSET_RAGAS_PYTHON`` / ``GOLDSET_DEEPEVAL_PYTHON``: their
pins cannot share goldset's virtualenv), or in this one when it has them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from goldset.data import write_dataset
from goldset.hashing import sha256_hex
from goldset.schema import Chunk, Evidence, QAPair
from goldset.text import count_tokens, normalize

CHUNKS = {
    "k-setup": ("guide/setup.md", ["Setup"],
                "Install wombat with pip install wombat. Wombat needs Python 3.12 or later.\n\n"
                "The first start writes wombat.toml into the current folder."),
    "k-ports": ("guide/config.md", ["Configuration", "Ports"],
                "Wombat listens on port 7070 unless WOMBAT_PORT is set. A port below 1024 needs root rights."),
    "k-cache": ("guide/config.md", ["Configuration", "Cache"],
                "Cached answers live for 15 minutes; run wombat purge to drop them at once. 🐨 marks cached lines."),
    "k-limits": ("guide/limits.md", ["Limits"],
                 "Requests larger than 8 MB are refused with status 413. Ten requests per second per client are "
                 "allowed; more get status 429."),
    "z-setup": ("zh/setup.md", ["安装"], "用 pip install wombat 安装袋熊。袋熊需要 Python 3.12 或更高版本。"),
    "z-cache": ("zh/cache.md", ["缓存"], "缓存的答案保留十五分钟。运行 wombat purge 可以立即清空缓存。"),
    "z-limits": ("zh/limits.md", ["限制"], "超过 8 MB 的请求会被拒绝并返回 413。每个客户端每秒最多十个请求。"),
}  # fmt: skip

# (id, type, language, status, question, answer, [(chunk id, quote)], tags)
PAIRS: list[tuple[str, str, str, str, str, str, list[tuple[str, str]], list[str]]] = [
    ("p-en-factual", "factual", "en", "accepted", "Which port does wombat listen on by default?",
     "Port 7070, unless you set WOMBAT_PORT.", [("k-ports", "Wombat listens on port 7070 unless WOMBAT_PORT is set.")],
     ["refresh:new"]),
    ("p-en-reasoning", "reasoning", "en", "passed", "=Why would wombat fail to start on port 80 as a normal user?",
     "Ports under 1024 need root rights,\nso a normal user cannot bind port 80.",
     [("k-ports", "A port below 1024 needs root rights.")], []),
    ("p-en-comparison", "comparison", "en", "passed", "How do the 413 and 429 statuses of wombat differ?",
     '413 means the request was over 8 MB; 429 means the client sent more than ten "requests" a second.',
     [("k-limits", "Requests larger than 8 MB are refused with status 413."),
      ("k-limits", "more get status 429")], ["-flagged", "@team"]),
    ("p-en-multihop", "multi_hop", "en", "accepted",
     "+ What must be installed, and which file appears after the first start?",
     "Python 3.12 or later with wombat from pip; the first start then writes wombat.toml.",
     [("k-setup", "Wombat needs Python 3.12 or later."), ("k-cache", "🐨 marks cached lines.")], []),
    ("p-en-procedural", "procedural", "en", "passed", "How do I drop wombat's cached answers right away?",
     "@once: run wombat purge.", [("k-cache", "run wombat purge to drop them at once")], []),
    ("p-en-unanswerable", "unanswerable", "en", "passed", "Does wombat support LDAP sign-in?",
     "\t=The documents do not say.", [], []),
    ("p-zh-factual", "factual", "zh", "accepted", "袋熊需要哪个版本的 Python？", "Python 3.12 或更新的版本。",
     [("z-setup", "袋熊需要 Python 3.12 或更高版本。")], []),
    ("p-zh-reasoning", "reasoning", "zh", "passed", "为什么一个 10 MB 的请求会失败？",
     "因为超过 8 MB 的请求都会被拒绝，返回 413。",
     [("z-limits", "超过 8 MB 的请求会被拒绝并返回 413。")], []),
    ("p-zh-comparison", "comparison", "zh", "passed", "缓存保留时间和每秒请求上限分别是多少？",
     "缓存保留十五分钟；\n每个客户端每秒最多十个请求。",
     [("z-cache", "缓存的答案保留十五分钟。"), ("z-limits", "每个客户端每秒最多十个请求。")], []),
    ("p-zh-multihop", "multi_hop", "zh", "passed", "安装袋熊之后，如何清空它的缓存？",
     "先用 pip 安装，然后运行 wombat purge 清空缓存。",
     [("z-setup", "用 pip install wombat 安装袋熊。"), ("z-cache", "运行 wombat purge 可以立即清空缓存。")], []),
    ("p-zh-procedural", "procedural", "zh", "passed", "怎样立即清空袋熊的缓存？", "-运行 wombat purge。",
     [("z-cache", "运行 wombat purge 可以立即清空缓存。")], []),
    ("p-zh-unanswerable", "unanswerable", "zh", "passed", "袋熊支持 LDAP 登录吗？", "文档没有提到。", [], []),
    ("p-en-ambiguous", "ambiguous", "en", "passed", "How long does wombat keep things?",
     "It depends on what you mean: cached answers live 15 minutes; the first start's wombat.toml stays in the folder.",
     [("k-cache", "Cached answers live for 15 minutes"),
      ("k-setup", "The first start writes wombat.toml into the current folder.")], []),
    ("p-en-open", "open_ended", "en", "passed", "What should one weigh when choosing wombat's port?",
     "Keep 7070 or set WOMBAT_PORT; a port under 1024 would need root rights.",
     [("k-ports", "Wombat listens on port 7070 unless WOMBAT_PORT is set. A port below 1024 needs root rights.")], []),
    ("p-zh-ambiguous", "ambiguous", "zh", "passed", "袋熊的上限是多少？",
     "要看指哪种上限：请求大小上限是 8 MB；每个客户端每秒最多十个请求。",
     [("z-limits", "超过 8 MB 的请求会被拒绝并返回 413。"), ("z-limits", "每个客户端每秒最多十个请求。")], []),
    ("p-zh-open", "open_ended", "zh", "passed", "部署袋熊时应该考虑哪些事情？",
     "先确认 Python 版本在 3.12 以上，再考虑缓存保留时间是否合适。",
     [("z-setup", "袋熊需要 Python 3.12 或更高版本。"), ("z-cache", "缓存的答案保留十五分钟。")], []),
    ("p-rejected", "factual", "en", "rejected", "What colour is the wombat logo?", "Brown.",
     [("k-setup", "Install wombat with pip install wombat.")], []),
    ("p-candidate", "factual", "en", "candidate", "How large may a request to wombat be?", "Up to 8 MB.",
     [("k-limits", "Requests larger than 8 MB are refused with status 413.")], []),
]  # fmt: skip

#: The fields a round trip keeps when the format carries them.
ROUND_TRIP = ("id", "question", "answer", "question_type", "language", "evidence", "tags")


def make_chunk(cid: str) -> Chunk:
    doc, headings, text = CHUNKS[cid]
    return Chunk(
        id=cid,
        doc_id=doc,
        doc_title=headings[0],
        heading_path=headings,
        heading_titles=headings,
        text=text,
        content_hash=sha256_hex(normalize(text)),
        raw_hash=sha256_hex(text),
        n_tokens=count_tokens(text),
        char_start=0,
        char_end=len(text),
        language="zh" if doc.startswith("zh/") else "en",
    )


def chunks() -> dict[str, Chunk]:
    return {cid: make_chunk(cid) for cid in CHUNKS}


def make_pairs() -> list[QAPair]:
    out = []
    for pid, qtype, lang, status, question, answer, ev, tags in PAIRS:
        out.append(QAPair(
            id=pid, question=question, answer=answer, question_type=qtype, language=lang, status=status, tags=tags,
            evidence=[Evidence(chunk_id=c, doc_id=CHUNKS[c][0], quote=q) for c, q in ev],
        ))  # fmt: skip
    return out


def make_dataset(folder: Path) -> Path:
    """pairs.jsonl + chunks.jsonl + manifest.json of the pairs above."""
    write_dataset(folder, make_pairs(), chunks().values())
    return folder


def carried_view(pair: QAPair, fields: frozenset[str] | tuple[str, ...], *, ordered: bool = True) -> dict[str, Any]:
    """The fields of ``pair`` a format carries, comparable across a round trip (evidence as (chunk, doc, quote),
    in order unless ``ordered`` is False)."""
    out: dict[str, Any] = {}
    for name in ROUND_TRIP:
        if name not in fields:
            continue
        value = getattr(pair, name)
        if name == "evidence":
            items = [(e.chunk_id, e.doc_id, e.quote) for e in value]
            value = items if ordered else sorted(items)
        elif name == "question_type":
            value = value.value
        out[name] = value
    return out


# ------------------------------------------------------------------------------------------------ libraries

LIBRARY_ENV = {"ragas": "GOLDSET_RAGAS_PYTHON", "deepeval": "GOLDSET_DEEPEVAL_PYTHON"}

RAGAS_LOAD = """
import json, sys
from ragas import EvaluationDataset
ds = EvaluationDataset.from_jsonl(sys.argv[1])
print(json.dumps([s.model_dump(exclude_none=True) for s in ds.samples]))
"""
DEEPEVAL_LOAD = """
import json, sys
from deepeval.dataset import EvaluationDataset
ds = EvaluationDataset()
ds.add_goldens_from_json_file(sys.argv[1])
print(json.dumps([g.model_dump(exclude_none=True, mode="json") for g in ds.goldens]))
"""


def library_python(library: str) -> str | None:
    """An interpreter that has ``library``: $GOLDSET_<LIB>_PYTHON, else this one if it can import it, else None."""
    given = os.environ.get(LIBRARY_ENV[library])
    if given:
        return given
    probe = subprocess.run([sys.executable, "-c", f"import {library}"], capture_output=True)
    return sys.executable if probe.returncode == 0 else None


def run_with_library(library: str, code: str, *args: str) -> list[dict[str, Any]]:
    """Run ``code`` (which prints JSON) with the interpreter :func:`library_python` finds; the parsed output."""
    python = library_python(library)
    assert python is not None
    env = {**os.environ, "DEEPEVAL_TELEMETRY_OPT_OUT": "1", "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    res = subprocess.run([python, "-c", code, *args], capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    return json.loads(res.stdout.strip().splitlines()[-1])

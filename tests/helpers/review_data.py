"""Builders for the review tests and benchmark (no tests here): a workspace of passed pairs over a small KB.

Pairs are spread over question types, two languages (English and Chinese documents) and several documents;
every evidence quote is a sentence of its chunk. Some pairs carry a flag (a failed check on a passed pair), a
borderline verbatim score, or evidence chunks that changed since generation, so the risk-first part has
something to find.
"""

from __future__ import annotations

import uuid
from pathlib import Path

from goldset.data import write_dataset
from goldset.hashing import sha256_hex
from goldset.io import write_jsonl
from goldset.schema import CheckResult, Chunk, Evidence, PairStatus, Provenance, QAPair
from goldset.text import normalize
from goldset.workspace import Workspace

TYPES = ("factual", "reasoning", "procedural", "comparison", "multi_hop", "unanswerable")
EN_TOPICS = ("request bodies", "path parameters", "query parameters", "dependencies", "background tasks")
ZH_TOPICS = ("请求体", "路径参数", "查询参数")
# Questions that pass the pair checks for their type (type_plausible's cues), answers that do not copy the chunk.
QUESTIONS = {
    "en": {
        "factual": ("What does rule {i} require before a model is used in a function parameter?",
                    "Rule {i} requires declaring the model first; only then can a parameter use it."),
        "reasoning": ("Why does rule {i} want the model declared before a parameter uses it?",
                      "Because FastAPI can only validate and document data whose model it already knows."),
        "procedural": ("How do you use a model in a function parameter under rule {i}?",
                       "Declare the model class first, then annotate the parameter with it."),
        "comparison": ("What is the difference between rule {i} and using a parameter without a model?",
                       "Under rule {i} the data is validated and documented; without a model it is not."),
        "multi_hop": ("Which two steps does rule {i} combine for a function parameter?",
                      "Declaring the model and then using it, after which FastAPI validates the data."),
        "unanswerable": ("Which database driver does rule {i} recommend?",
                         "The documents do not say which database driver rule {i} recommends."),
    },
    "zh": {
        "factual": ("第 {i} 条规则要求先做什么？", "第 {i} 条规则要求先声明模型，然后才能在参数里用它。"),
        "reasoning": ("为什么第 {i} 条规则要求先声明模型？", "因为只有事先知道模型，FastAPI 才能校验数据并生成文档。"),
        "procedural": ("如何按照第 {i} 条规则在函数参数中使用模型？", "先定义模型类，再用它标注参数。"),
        "comparison": ("第 {i} 条规则与不使用模型的参数有什么区别？",
                       "按第 {i} 条规则数据会被校验并写入文档，不用模型则不会。"),
        "multi_hop": ("第 {i} 条规则把哪两个步骤结合在一起？",
                      "要先定义好模型类，然后把它用于参数，框架随后检查输入。"),
        "unanswerable": ("第 {i} 条规则推荐哪个数据库驱动？", "文档没有说明第 {i} 条规则推荐哪个数据库驱动。"),
    },
}
REPO_LABELING = Path(__file__).resolve().parents[2] / "labeling"


def chunk_text(doc: int, i: int, zh: bool) -> str:
    if zh:
        topic = ZH_TOPICS[doc % len(ZH_TOPICS)]
        return (f"第 {i} 节介绍{topic}。{topic}的第 {i} 条规则是：必须先声明模型，再在函数参数中使用它。"
                f"这样 FastAPI 会自动校验数据并生成文档。")  # fmt: skip
    topic = EN_TOPICS[doc % len(EN_TOPICS)]
    return (
        f"Section {i} is about {topic}. Rule {i} of {topic} says that the model must be declared before it is "
        f"used in a function parameter. FastAPI then validates the data and documents it for you.\n\n"
        f"A <b>bold</b> claim & an ampersand stay plain text."
    )


def make_chunk(cid: str, doc_id: str, text: str, language: str) -> Chunk:
    return Chunk(id=cid, doc_id=doc_id, heading_path=["intro"], heading_titles=["Introduction"], text=text,
                 content_hash=sha256_hex(normalize(text)), raw_hash=sha256_hex(text), language=language,
                 n_tokens=len(text.split()), char_start=0, char_end=len(text))  # fmt: skip


def build(n_pairs: int = 60, *, docs: int = 4) -> tuple[list[QAPair], dict[str, Chunk]]:
    pairs: list[QAPair] = []
    chunks: dict[str, Chunk] = {}
    for i in range(n_pairs):
        d = i % docs
        zh = d == docs - 1  # the last document is Chinese
        lang = "zh" if zh else "en"
        doc_id = f"{lang}/doc{d}.md"
        cid = f"c{d}-{i:04d}"
        text = chunk_text(d, i, zh)
        chunks[cid] = make_chunk(cid, doc_id, text, lang)
        qtype = TYPES[(i // docs) % len(TYPES)]
        quote = text.split("。")[1] + "。" if zh else text.split(". ")[1] + "."
        evidence = [] if qtype == "unanswerable" else [Evidence(chunk_id=cid, doc_id=doc_id, quote=quote)]
        if qtype == "multi_hop":  # a second chunk of the same document
            cid2 = f"{cid}-b"
            text2 = chunk_text(d, i + 1000, zh)
            chunks[cid2] = make_chunk(cid2, doc_id, text2, lang)
            quote2 = text2.split("。")[1] + "。" if zh else text2.split(". ")[1] + "."
            evidence.append(Evidence(chunk_id=cid2, doc_id=doc_id, quote=quote2))
        q, a = QUESTIONS["zh" if zh else "en"][qtype]
        q, a = q.format(i=i), a.format(i=i)
        checks = {"verbatim": CheckResult(passed=True, score=0.2, reason="containment 0.20")}
        if i % 10 == 3:
            checks["leakage"] = CheckResult(
                passed=False, score=0.95, reason="95% of the answer is in the question", severity="flag"
            )
        if i % 10 == 5:
            checks["verbatim"] = CheckResult(passed=True, score=0.47, reason="longest run 0.47")
        hashes = {e.chunk_id: chunks[e.chunk_id].content_hash for e in evidence}
        if i % 17 == 7 and evidence:
            hashes = {cid: "changed-since"}
        pairs.append(QAPair(
            id=f"qa-{i:04d}", question=q, answer=a, question_type=qtype, language=lang, evidence=evidence,
            provenance=Provenance(chunk_hashes=hashes), checks=checks, status=PairStatus.passed,
        ))  # fmt: skip
    return pairs, chunks


def make_workspace(root: Path, n_pairs: int = 60, *, docs: int = 4, review: str = "") -> Workspace:
    """A workspace with ``n_pairs`` passed pairs, its KB chunks, the default labeling folder and a unique
    Label Studio project title (tests share one server)."""
    root.mkdir(parents=True, exist_ok=True)
    title = f"goldset-test-{uuid.uuid4().hex[:10]}"
    (root / "goldset.yaml").write_text(
        f"review:\n  label_studio:\n    project_title: {title}\n{review}", encoding="utf-8"
    )
    import shutil

    shutil.copytree(REPO_LABELING, root / "labeling", dirs_exist_ok=True)
    ws = Workspace(root)
    pairs, chunks = build(n_pairs, docs=docs)
    write_jsonl(ws.kb_dir / "chunks.jsonl", list(chunks.values()))
    write_dataset(ws.data_dir, pairs, chunks.values())
    return ws

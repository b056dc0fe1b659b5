"""The pure parts of generation: type mix, chunk selection, multi-hop partners, prompts, reply validation."""

from __future__ import annotations

from goldset.generation.planning import CallPlan
from goldset.hashing import sha256_hex
from goldset.prompts import load_prompt
from goldset.schema import Chunk, Evidence, PairStatus, Provenance, QAPair, QuestionType, pair_id
from goldset.text import count_tokens, detect_language, normalize

EN_TEXT = (
    "Path parameters are declared with the same syntax as Python format strings. "
    "The value of the parameter item_id is passed to your function as the argument item_id. "
    "You can declare the type of a path parameter using standard Python type annotations."
)
ZH_TEXT = (
    "路径参数使用与 Python 格式字符串相同的语法声明。路径参数 item_id 的值会作为参数 item_id 传递给函数。"
    "可以使用标准的类型注解声明路径参数的类型。"
)


def make_chunk(cid: str, text: str, doc_id: str = "a.md", *, position: int = 0, language: str | None = None) -> Chunk:
    return Chunk(
        id=cid,
        doc_id=doc_id,
        doc_title=doc_id.removesuffix(".md").title(),
        heading_path=["intro"],
        heading_titles=["Intro"],
        position=position,
        text=text,
        content_hash=sha256_hex(normalize(text)),
        raw_hash=sha256_hex(text),
        language=language or detect_language(text),
        n_tokens=count_tokens(text),
        char_start=0,
        char_end=len(text),
    )


def make_pair(chunk: Chunk, question: str, *, status: PairStatus = PairStatus.candidate, primary: str | None = None):
    hashes = {primary or chunk.id: "h", chunk.id: chunk.content_hash}
    return QAPair(
        id=pair_id([chunk.id], "factual", question),
        question=question,
        answer="an answer",
        question_type=QuestionType.factual,
        evidence=[Evidence(chunk_id=chunk.id, doc_id=chunk.doc_id, quote=chunk.text[:20])],
        provenance=Provenance(chunk_hashes=hashes),
        status=status,
    )


def plan_for(chunk: Chunk, types: tuple[QuestionType, ...], partner: Chunk | None = None, language: str = "en"):
    prompt = load_prompt("generate_multi_hop" if partner else "generate")
    return CallPlan(chunk, partner, types, language, prompt)


PROV = Provenance(model="m", prompt_id="generate", prompt_hash="x", call_key="k1")


# -------------------------------------------------------------------------------------------------- type mix

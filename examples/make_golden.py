"""Build examples/golden/, a small hand-written golden set over the bundled example KB (examples/kb/docs).

The questions and answers below were written by hand (no LLM), each with a verbatim evidence quote; this script
only looks up the chunk that contains each quote, so the dataset's chunk ids always match goldset's chunker.
Re-run it after a chunker change: `python examples/make_golden.py`.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from goldset.dataset import write_dataset
from goldset.kb import ingest
from goldset.schema import Evidence, PairStatus, Provenance, QAPair, QuestionType, pair_id
from goldset.text import normalize_ws

HERE = Path(__file__).resolve().parent

# (question_type, language, question, answer, [(doc_id, verbatim quote), ...])
PAIRS: list[tuple[str, str, str, str, list[tuple[str, str]]]] = [
    (
        "factual",
        "en",
        "In a FastAPI endpoint, which function parameters become query parameters?",
        "Any parameter of the function that is not one of the path's parameters is read from the query string.",
        [("en/query-params.md", 'they are automatically interpreted as "query" parameters')],
    ),
    (
        "procedural",
        "en",
        "How do you make a FastAPI query parameter mandatory?",
        "Leave it without a default value; a parameter with no default must be supplied by the client.",
        [("en/query-params.md", "you can just not declare any default value")],
    ),
    (
        "reasoning",
        "en",
        "Why must a FastAPI route for /users/me be registered before the route /users/{user_id}?",
        "Routes are matched in the order they were declared, so the parameterised route would otherwise capture "
        '"me" as the user id.',
        [("en/path-params.md", "*path operations* are evaluated in order")],
    ),
    (
        "factual",
        "en",
        'What does a FastAPI client get when it sends "foo" for a path parameter declared as int?',
        "An HTTP error whose JSON body explains that the input is not a valid integer and where validation failed.",
        [("en/path-params.md", "Input should be a valid integer, unable to parse string as an integer")],
    ),
    (
        "factual",
        "en",
        "Which HTTP status code does the FastAPI tutorial's unicorn exception handler return?",
        "It responds with status 418 and a JSON message about the unicorn.",
        [("en/handling-errors.md", "with an HTTP status code of `418`")],
    ),
    (
        "comparison",
        "en",
        "How does FastAPI's HTTPException differ from Starlette's HTTPException?",
        "FastAPI's version subclasses Starlette's and lets `detail` hold any JSON-serialisable value, whereas "
        "Starlette's only takes a string there.",
        [("en/handling-errors.md", "accepts any JSON-able data for the `detail` field")],
    ),
    (
        "procedural",
        "en",
        "How can a FastAPI response leave out model fields that were never explicitly set?",
        "Pass `response_model_exclude_unset=True` in the path operation decorator; defaults then stay out.",
        [("en/response-model.md", "`response_model_exclude_unset=True`")],
    ),
    (
        "reasoning",
        "en",
        "If a FastAPI function has a return type annotation and also sets response_model, which one is used?",
        "The `response_model` wins: FastAPI validates and documents with it, while the annotation still serves "
        "editors and type checkers.",
        [("en/response-model.md", "the `response_model` will take priority and be used by FastAPI")],
    ),
    (
        "factual",
        "en",
        "In a FastAPI request body model, how is an attribute made optional?",
        "Give the attribute a default value, typically `None`; attributes without a default are required.",
        [("en/body.md", "Use `None` to make it just optional.")],
    ),
    (
        "factual",
        "en",
        "Which query-string values make a FastAPI bool query parameter come out as True?",
        "Values such as 1, true, True, on or yes, in any letter case; anything else gives False.",
        [("en/query-params.md", "your function will see the parameter `short` with a `bool` value of `True`")],
    ),
    (
        "procedural",
        "en",
        "How do you declare a FastAPI path parameter that itself holds a file path?",
        "Use Starlette's path converter in the route, e.g. `/files/{file_path:path}`.",
        [("en/path-params.md", "/files/{file_path:path}")],
    ),
    (
        "multi_hop",
        "en",
        "Which validation features do FastAPI path parameters and query parameters have in common?",
        "Both get editor support, parsing of the raw string into the declared type, validation, and automatic "
        "documentation.",
        [
            (
                "en/query-params.md",
                "All the same processes that apply to path parameters also apply to query parameters",
            ),
            ("en/path-params.md", "Data validation"),
        ],
    ),
    (
        "unanswerable",
        "en",
        "What is the default rate limit FastAPI applies to each client IP address?",
        "The documentation does not say; FastAPI's tutorial describes no built-in per-IP rate limit.",
        [],
    ),
    (
        "factual",
        "zh",
        "在 FastAPI 中，访问 /items/?skip=20 时 limit 的值是多少？",
        "limit 没有在网址里给出，所以取默认值 10。",
        [("zh/query-params.md", "`limit=10`：使用默认值")],
    ),
    (
        "reasoning",
        "zh",
        "FastAPI 如何区分来自路径的参数和来自请求体的参数？",
        "与路径参数同名的函数参数从路径读取，类型是 Pydantic 模型的参数则从请求体读取。",
        [("zh/body.md", "**FastAPI** 能识别与**路径参数**匹配的函数参数应该**从路径中获取**")],
    ),
    (
        "unanswerable",
        "zh",
        "FastAPI 默认的数据库连接池大小是多少？",
        "文档没有提到这一点；教程中没有介绍默认的数据库连接池。",
        [],
    ),
]


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        result = ingest(HERE / "kb" / "docs", out_dir=Path(tmp))
    chunks = result.chunks
    pairs = []
    for qtype, lang, question, answer, quotes in PAIRS:
        evidence = []
        for doc_id, quote in quotes:
            found = [c for c in chunks if c.doc_id == doc_id and normalize_ws(quote) in normalize_ws(c.text)]
            if not found:
                raise SystemExit(f"quote not found in {doc_id}: {quote!r}")
            evidence.append(Evidence(chunk_id=found[0].id, doc_id=doc_id, quote=quote))
        pairs.append(
            QAPair(
                id=pair_id([e.chunk_id for e in evidence], qtype, question),
                question=question,
                answer=answer,
                question_type=QuestionType(qtype),
                language=lang,
                evidence=evidence,
                provenance=Provenance(
                    source="human",
                    kb_snapshot_id=result.snapshot.id,
                    generated_at="2026-11-29T00:00:00Z",
                    chunk_hashes={
                        e.chunk_id: next(c.content_hash for c in chunks if c.id == e.chunk_id) for e in evidence
                    },
                ),
                status=PairStatus.accepted,
            )
        )
    manifest = write_dataset(HERE / "golden", pairs, chunks, version="example", kb_snapshot_id=result.snapshot.id)
    print(f"wrote {manifest.n_pairs} pairs citing {manifest.n_chunks} chunks to {HERE / 'golden'}")


if __name__ == "__main__":
    main()

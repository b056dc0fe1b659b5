"""Build examples/golden/, a small hand-written golden set over the bundled example KB (examples/kb/docs).

The questions and answers below were written by hand (no LLM), reading the pages, each with verbatim evidence
quotes (a multi-hop pair quotes two documents; an ambiguous pair one span per reading; an open-ended pair one per
key point; an unanswerable pair none); this script only looks up the chunk that contains each quote, so the
dataset's chunk ids always match goldset's chunker. Then it runs goldset's own filters (without the LLM judge) on
the set in a temporary workspace that ingested the example KB, and fails if any pair fails or is flagged by any
check. Re-run it after a chunker or filter change: `python examples/make_golden.py` (`--check` only checks the
set already in examples/golden/). Release the result with `python examples/release_example.py`.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from goldset.data import read_dataset, write_dataset
from goldset.filters import run_filters
from goldset.kb import ingest
from goldset.scaffold import init_workspace
from goldset.schema import Chunk, Evidence, PairStatus, Provenance, QAPair, QuestionType, pair_id
from goldset.text import normalize_ws
from goldset.workspace import Workspace

HERE = Path(__file__).resolve().parent
DOCS = HERE / "kb" / "docs"
GOLDEN = HERE / "golden"

# (question_type, language, question, answer, [(doc_id, verbatim quote), ...])
# The pairs of v0.1.0 (written 2026-11-29).
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
        "FastAPI 教程的 /items/ 例子里，URL 只带 skip=20 时，limit 的值是多少？",
        "limit 没有在网址里给出，所以取默认值 10。",
        [("zh/query-params.md", "`limit=10`：使用默认值")],
    ),
    (
        "reasoning",
        "zh",
        "为什么 FastAPI 能分辨出哪些函数参数来自路径、哪些来自请求体？",
        "因为它会对照路径模板和类型注解来判断："
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


# Added for v0.2.0 (2026-12-01): every question type, more Chinese, two-document multi-hop questions.
PAIRS_V020: list[tuple[str, str, str, str, list[tuple[str, str]]]] = [
    # ---------------------------------------------------------------- English
    (
        "factual",
        "en",
        "What does a client receive when a FastAPI path operation returns the enum member ModelName.alexnet?",
        'The plain string "alexnet": FastAPI turns enum members into their values before it sends the JSON.',
        [("en/path-params.md", "They will be converted to their corresponding values (strings in this case)")],
    ),
    (
        "factual",
        "en",
        "What happens when a FastAPI decorator is given response_model=None?",
        "No response model is generated for that endpoint, so FastAPI does no output validation or filtering and "
        "any return annotation, even one Pydantic cannot handle, is left to the editor and type checkers.",
        [("en/response-model.md", "disable the response model generation by setting `response_model=None`")],
    ),
    (
        "factual",
        "en",
        "Which return type can a FastAPI function be annotated with when strict type checkers object to the data "
        "it returns while response_model does the validation?",
        "`Any`; the checker then accepts whatever is returned and FastAPI still relies on `response_model`.",
        [("en/response-model.md", "you can declare the function return type as `Any`")],
    ),
    (
        "procedural",
        "en",
        "How do you restrict a FastAPI path parameter to a fixed set of allowed values?",
        "Write a class that inherits from both `str` and `Enum`, give it one attribute per allowed value, and use "
        "that class as the type annotation of the path parameter; the docs then list the choices.",
        [("en/path-params.md", "Import `Enum` and create a sub-class that inherits from `str` and from `Enum`.")],
    ),
    (
        "procedural",
        "en",
        "How do you replace FastAPI's default response for requests with invalid data?",
        "Register your own function for `RequestValidationError` with `@app.exception_handler(...)`; it gets the "
        "request and the exception and can answer, for instance, in plain text.",
        [
            (
                "en/handling-errors.md",
                "When a request contains invalid data, **FastAPI** internally raises a `RequestValidationError`.",
            )
        ],
    ),
    (
        "reasoning",
        "en",
        "Why should a FastAPI app register its exception handler for Starlette's HTTPException instead of FastAPI's?",
        "Because Starlette's internals and plug-ins raise Starlette's class; since FastAPI's class is a subclass, "
        "a handler bound to the parent catches both kinds of error.",
        [("en/handling-errors.md", "your handler will be able to catch and handle it")],
    ),
    (
        "reasoning",
        "en",
        "Why is it risky for a FastAPI endpoint to use its user input model, password included, as the response "
        "model too?",
        "The password submitted would be echoed back, and if other endpoints reuse that model, secrets could reach "
        "any client; a separate output model without the field avoids it.",
        [("en/response-model.md", "we could be sending our user's passwords to every client")],
    ),
    (
        "reasoning",
        "en",
        "Why does raising HTTPException inside a helper function stop the rest of a FastAPI path operation from "
        "running?",
        "It is an ordinary Python exception, so it propagates up through the caller; FastAPI ends the request at "
        "once and sends the error response instead of continuing.",
        [("en/handling-errors.md", "it will terminate that request right away and send the HTTP error")],
    ),
    (
        "comparison",
        "en",
        "What is the difference between FastAPI's response_model_include and response_model_exclude?",
        "Both take a set of attribute names: with include, only those names appear in the output; with exclude, "
        "those are dropped and everything else appears.",
        [("en/response-model.md", "They take a `set` of `str` with the name of the attributes to include")],
    ),
    (
        "comparison",
        "en",
        "How does ReDoc differ from Swagger UI in a FastAPI application?",
        "Both render the same generated OpenAPI schema; Swagger UI is the main interactive page under /docs, "
        "and ReDoc is an alternative presentation served under /redoc.",
        [
            ("en/first-steps.md", "You will see the automatic interactive API documentation (provided by"),
            ("en/first-steps.md", "You will see the alternative automatic documentation (provided by"),
        ],
    ),
    (
        "multi_hop",
        "en",
        "Where do the JSON Schemas of a FastAPI request body model end up, and which tools display them?",
        "They are included in the app's OpenAPI schema, and that schema drives the two built-in interactive docs "
        "(Swagger UI and ReDoc).",
        [
            ("en/body.md", "Those schemas will be part of the generated OpenAPI schema"),
            (
                "en/first-steps.md",
                "The OpenAPI schema is what powers the two interactive documentation systems included.",
            ),
        ],
    ),
    (
        "multi_hop",
        "en",
        "When a FastAPI request body fails validation, which exception is raised internally, and what can a custom "
        "handler get from it besides the errors?",
        "FastAPI raises `RequestValidationError`; besides the list of errors, it carries the invalid body the client "
        "sent, which a handler can log or return.",
        [
            ("en/body.md", "If the data is invalid, it will return a nice and clear error"),
            ("en/handling-errors.md", "**FastAPI** internally raises a `RequestValidationError`"),
            (
                "en/handling-errors.md",
                "The `RequestValidationError` contains the `body` it received with invalid data.",
            ),
        ],
    ),
    (
        "unanswerable",
        "en",
        "How do you configure CORS for a FastAPI application?",
        "The knowledge base does not cover this: none of its tutorial pages discusses CORS or cross-origin settings.",
        [],
    ),
    (
        "ambiguous",
        "en",
        "What is a schema in FastAPI?",
        "The word has two meanings here: an API schema, i.e. the OpenAPI description of paths and the parameters "
        "they take, or a data schema, the shape of some JSON described with JSON Schema; FastAPI generates the "
        "first and embeds the second in it.",
        [
            ("en/first-steps.md", "is a specification that dictates how to define a schema of your API"),
            ("en/first-steps.md", 'The term "schema" might also refer to the shape of some data, like a JSON content.'),
        ],
    ),
    (
        "ambiguous",
        "en",
        "Which command runs a FastAPI app?",
        "It depends on whether you mean running it locally or putting it online: `fastapi dev` starts a "
        "development server that reloads on changes, while `fastapi deploy` publishes the app to FastAPI Cloud.",
        [
            ("en/first-steps.md", "Run the development server using the command `fastapi dev`."),
            ("en/first-steps.md", "Optionally deploy your app with `fastapi deploy`."),
        ],
    ),
    (
        "open_ended",
        "en",
        "What should one consider when designing FastAPI response models for an endpoint that receives user passwords?",
        "- Return an output model without the password (or a base class that the input model extends), so "
        "FastAPI's filtering drops the secret.\n"
        "- Prefer a return annotation with inheritance over a separate `response_model` when you want editor and "
        "mypy support.\n"
        "- Avoid relying on include/exclude parameters: the OpenAPI docs would still show the full model.\n"
        "- Never keep or send plain passwords unless you know the caveats.",
        [
            (
                "en/response-model.md",
                "We can instead create an input model with the plaintext password and an output model without it",
            ),
            (
                "en/response-model.md",
                "we can use classes and inheritance to take advantage of function **type annotations**",
            ),
            ("en/response-model.md", "using multiple classes, instead of these parameters"),
            ("en/response-model.md", "Never store the plain password of a user or send it in a response like this"),
        ],
    ),
    (
        "open_ended",
        "en",
        "How would you design the error responses of a FastAPI API for its clients?",
        "- Raise `HTTPException` with a 4xx status such as 404 when the client asks for something missing.\n"
        "- Put structured data (a dict or list) in `detail` when a string is not enough.\n"
        "- Add custom headers only where a case such as security needs them.\n"
        "- Register global handlers for your own exceptions, and for Starlette's `HTTPException` to catch all.\n"
        "- Do not return the raw validation error as a string: it can leak details about your system.",
        [
            ("en/handling-errors.md", "raise an exception with a status code of `404`"),
            ("en/handling-errors.md", "You could pass a `dict`, a `list`, etc."),
            ("en/handling-errors.md", "it's useful to be able to add custom headers to the HTTP error"),
            (
                "en/handling-errors.md",
                "But when you register an exception handler, you should register it for Starlette's `HTTPException`.",
            ),
            ("en/handling-errors.md", "you could be leaking a bit of information about your system"),
        ],
    ),
    # ---------------------------------------------------------------- Chinese
    (
        "factual",
        "zh",
        "FastAPI 这个类是从哪个框架的类继承而来的？",
        "它直接继承 Starlette，所以 Starlette 提供的能力在 FastAPI 里都能用。",
        [("zh/first-steps.md", "`FastAPI` 是直接从 `Starlette` 继承的类。")],
    ),
    (
        "factual",
        "zh",
        "用 fastapi dev 启动后，应用默认在本机哪个地址和端口上提供服务？",
        "在 127.0.0.1 的 8000 端口，终端输出里 Uvicorn 那一行会给出这个网址。",
        [("zh/first-steps.md", "INFO:     Uvicorn running on http://127.0.0.1:8000 (Press CTRL+C to quit)")],
    ),
    (
        "factual",
        "zh",
        "想直接查看 FastAPI 生成的原始 OpenAPI 描述，应该访问哪个路径？",
        "访问应用的 /openapi.json，会得到一份描述全部接口的 JSON，开头包含 openapi 版本号和 info 信息。",
        [("zh/first-steps.md", "[http://127.0.0.1:8000/openapi.json](http://127.0.0.1:8000/openapi.json) 看到它")],
    ),
    (
        "procedural",
        "zh",
        "怎样在 pyproject.toml 里告诉 fastapi 命令去哪里导入应用？",
        "在 `[tool.fastapi]` 表下写 `entrypoint`，值是“模块路径:应用变量名”，例如代码放在 backend 包里时写 "
        "`backend.main:app`。",
        [("zh/first-steps.md", "你可以在 `pyproject.toml` 文件中配置应用的位置")],
    ),
    (
        "procedural",
        "zh",
        "在 FastAPI 中如何声明一个 JSON 请求体？",
        "先从 pydantic 导入 BaseModel，写一个继承它的模型类，属性用标准类型标注；"
        "再在路径操作函数里加一个以该模型为类型的参数。",
        [("zh/body.md", "然后，把数据模型声明为继承 `BaseModel` 的类。")],
    ),
    (
        "reasoning",
        "zh",
        "为什么建议把 entrypoint 写进 pyproject.toml，而不是每次给 fastapi dev 传文件路径？",
        "命令行参数每次都得记着写对，而且 VS Code 扩展、FastAPI Cloud 这类工具看不到你敲的参数，"
        "只有写进配置文件它们才能定位到应用。",
        [("zh/first-steps.md", "因此推荐在 `pyproject.toml` 中使用 `entrypoint`")],
    ),
    (
        "reasoning",
        "zh",
        "为什么用 GET 发送请求体时，Swagger UI 的文档里看不到请求体？",
        "规范没有规定 GET 携带请求体时该怎么处理，这种用法不被推荐，所以交互式文档干脆不展示；途中的代理也未必支持。",
        [("zh/body.md", "由于不推荐，在使用 `GET` 时，Swagger UI 的交互式文档不会显示请求体的文档")],
    ),
    (
        "comparison",
        "zh",
        "按照惯例，POST 和 PUT 在 API 中分别用来做什么？",
        "POST 一般用于新建数据，PUT 一般用于修改已有数据；不过这只是约定，FastAPI 本身不强制。",
        [
            ("zh/first-steps.md", "`POST`：创建数据。"),
            ("zh/first-steps.md", "`PUT`：更新数据。"),
            ("zh/first-steps.md", "**FastAPI** 没有强制要求操作有任何特定的含义。"),
        ],
    ),
    (
        "comparison",
        "zh",
        "请求体和响应体有什么区别？",
        "方向不同：请求体由客户端发往 API，响应体由 API 返回给客户端；"
        "API 几乎每次都要返回响应体，客户端却不一定每次都带请求体。",
        [("zh/body.md", "**请求体**是客户端发送给你的 API 的数据。")],
    ),
    (
        "multi_hop",
        "zh",
        "一个声明为 int 且不在路径中的函数参数，FastAPI 会从哪里取值，取到的值又会经过什么处理？",
        "它属于单一类型，会被当成查询参数从 URL 的查询字符串里读取；读到的原本是文本，FastAPI 会把它转成整数并校验。",
        [
            ("zh/body.md", "它会被当作**查询**参数"),
            ("zh/query-params.md", "这些值就会转换为声明的类型，并进行类型校验"),
        ],
    ),
    (
        "ambiguous",
        "zh",
        "在 FastAPI 中怎样把一个参数设为可选？",
        "要看指的是查询参数还是请求体模型里的字段：查询参数只要在函数签名里给它默认值 None；"
        "请求体模型的属性则在模型类里给该属性设默认值（通常也是 None）。",
        [
            ("zh/query-params.md", "把默认值设为 `None` 即可声明可选的查询参数"),
            ("zh/body.md", "包含默认值的模型属性是可选的，否则就是必选的"),
        ],
    ),
    (
        "open_ended",
        "zh",
        "设计一组 FastAPI 接口时，需要考虑哪些方面？",
        "- 用路径来划分关注点和资源。\n"
        "- 按惯例为不同动作选 HTTP 方法：POST 新建、GET 读取、PUT 修改、DELETE 删除。\n"
        "- 用 Python 类型声明参数，让 FastAPI 负责解析、校验和生成文档。\n"
        "- 需要接收复杂数据时用 Pydantic 模型作为请求体。",
        [
            ("zh/first-steps.md", "开发 API 时，「路径」是用来分离「关注点」和「资源」的主要手段。"),
            ("zh/first-steps.md", "在开发 API 时，你通常使用特定的 HTTP 方法去执行特定的行为。"),
            ("zh/query-params.md", "所有应用于路径参数的流程也适用于查询参数"),
            ("zh/body.md", "使用 [Pydantic](https://docs.pydantic.dev/) 模型来声明**请求体**"),
        ],
    ),
    (
        "unanswerable",
        "zh",
        "fastapi deploy 部署失败后如何回滚到上一个版本？",
        "文档没有说明回滚的办法，只介绍了用 fastapi deploy 部署到 FastAPI Cloud。",
        [],
    ),
]


def build_pairs(chunks: list[Chunk], snapshot_id: str) -> list[QAPair]:
    """The hand-written pairs as records, each quote resolved to the chunk of ``chunks`` that contains it."""
    pairs = []
    for written, table in (("2026-11-29T00:00:00Z", PAIRS), ("2026-12-01T00:00:00Z", PAIRS_V020)):
        for qtype, lang, question, answer, quotes in table:
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
                        kb_snapshot_id=snapshot_id,
                        generated_at=written,
                        chunk_hashes={
                            e.chunk_id: next(c.content_hash for c in chunks if c.id == e.chunk_id) for e in evidence
                        },
                    ),
                    status=PairStatus.accepted,
                )
            )
    return pairs


def filter_problems(pairs: list[QAPair], workdir: Path) -> dict[str, list[str]]:
    """Run goldset's filters (no LLM) on ``pairs`` as candidates in a new workspace in ``workdir`` that ingested
    the example KB; return, per pair id, every check it failed or was flagged by ("check: reason")."""
    init_workspace(workdir, dvc=False)
    ws = Workspace(workdir)
    result = ingest(DOCS, ws)
    candidates = [p.model_copy(update={"status": PairStatus.candidate}) for p in pairs]
    write_dataset(ws.data_dir, candidates, result.chunks)
    run_filters(ws, use_llm=False)
    checked = read_dataset(ws.data_dir).pairs
    problems = {p.id: [f"{name}: {r.reason}" for name, r in sorted(p.checks.items()) if not r.passed] for p in checked}
    if {p.id for p in checked} != {p.id for p in pairs}:
        raise SystemExit("the filters did not write back every pair")
    return {pid: found for pid, found in problems.items() if found}


def check(pairs: list[QAPair]) -> None:
    """Exit with the list of problems if any pair fails or is flagged by a filter."""
    with tempfile.TemporaryDirectory() as tmp:
        problems = filter_problems(pairs, Path(tmp) / "ws")
    by_id = {p.id: p for p in pairs}
    for pid, found in problems.items():
        print(f"{pid} [{by_id[pid].question_type.value}/{by_id[pid].language}] {by_id[pid].question}")
        for line in found:
            print(f"    {line}")
    if problems:
        raise SystemExit(f"{len(problems)} of {len(pairs)} pairs do not pass goldset's filters")
    print(f"all {len(pairs)} pairs pass goldset's filters (no LLM judge): none failed or flagged")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check the set in examples/golden/")
    args = parser.parse_args(argv)
    if args.check:
        check(read_dataset(GOLDEN).pairs)
        return
    with tempfile.TemporaryDirectory() as tmp:
        result = ingest(DOCS, out_dir=Path(tmp))
    pairs = build_pairs(result.chunks, result.snapshot.id)
    check(pairs)
    manifest = write_dataset(GOLDEN, pairs, result.chunks, version="example", kb_snapshot_id=result.snapshot.id)
    print(f"wrote {manifest.n_pairs} pairs citing {manifest.n_chunks} chunks to {GOLDEN}")


if __name__ == "__main__":
    main()

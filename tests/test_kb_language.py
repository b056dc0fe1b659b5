"""A chunk's language: told from its prose with code left out, its document's language when it has too little.

The Japanese and Korean texts are excerpts of FastAPI's translated tutorial (docs/ja and docs/ko,
tutorial/query-params.md; MIT, see tests/fixtures/kb/LICENSE-fastapi-docs.txt).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from goldset.kb import KBSettings, chunk_document, ingest
from goldset.text import has_cjk

FIXTURES = Path(__file__).parent / "fixtures" / "kb"
SMALL = KBSettings(target_tokens=60, max_tokens=120, min_tokens=5)

INTRO = "FastAPI 应用需要一个 ASGI 服务器才能运行，这里用的是 Uvicorn，它会在本地启动一个开发服务器。"
NEXT = "服务器启动以后，打开浏览器访问交互式文档，就可以直接在页面上试用每一个接口了。"
CMD = "uvicorn main:app --reload --host 127.0.0.1 --port 8000"
URL = "https://www.uvicorn.org/settings/#development"
CONSOLE = f"$ {CMD}\nINFO:     Uvicorn running on http://127.0.0.1:8000 (Press CTRL+C to quit)"

# The same Chinese page in three formats; its middle section is a code block and one short sentence whose
# inline code and link target hold far more Latin letters than it has Chinese characters.
ZH_PAGES = {
    "run.md": f"""# 运行服务器 {{ #run }}

{INTRO}

## 启动 {{ #start }}

```console
{CONSOLE}
```

用 `{CMD}` 启动，详见 [Uvicorn 设置]({URL})。

## 下一步 {{ #next }}

{NEXT}
""",
    "run.html": f"""<html><body>
<h1 id="run">运行服务器</h1>
<p>{INTRO}</p>
<h2 id="start">启动</h2>
<pre><code>{CONSOLE}</code></pre>
<p>用 <code>{CMD}</code> 启动，详见 <a href="{URL}">Uvicorn 设置</a>。</p>
<h2 id="next">下一步</h2>
<p>{NEXT}</p>
</body></html>
""",
    "run.rst": f""".. _run:

运行服务器
==========

{INTRO}

.. _start:

启动
----

.. code-block:: console

   $ {CMD}
   INFO:     Uvicorn running on http://127.0.0.1:8000 (Press CTRL+C to quit)

用 ``{CMD}`` 启动，详见 `Uvicorn 设置 <{URL}>`_。

.. _next:

下一步
------

{NEXT}
""",
}

JA = """# クエリパラメータ

パスパラメータではない関数パラメータを宣言すると、それらは自動的に "クエリ" パラメータとして解釈されます。

クエリはURL内で `?` の後に続くキーとバリューの組で、 `&` で区切られています。

## デフォルト

クエリパラメータはパスの固定部分ではないので、オプショナルとしたり、デフォルト値をもつことができます。

上述の例では、`skip=0` と `limit=10` というデフォルト値を持っています。

## 必須のクエリパラメータ

しかしクエリパラメータを必須にしたい場合は、ただデフォルト値を宣言しなければよいです:

ここで、クエリパラメータ `needy` は `str` 型の必須のクエリパラメータです
"""

KO = """# 쿼리 매개변수

경로 매개변수의 일부가 아닌 다른 함수 매개변수를 선언하면 "쿼리" 매개변수로 자동 해석합니다.

쿼리는 URL에서 `?` 후에 나오고 `&`으로 구분되는 키-값 쌍의 집합입니다.

## 기본값

쿼리 매개변수는 경로에서 고정된 부분이 아니기 때문에 선택적일 수 있고 기본값을 가질 수 있습니다.

위 예에서 `skip=0`과 `limit=10`은 기본값을 갖고 있습니다.

## 필수 쿼리 매개변수

그러나 쿼리 매개변수를 필수로 만들려면 단순히 기본값을 선언하지 않으면 됩니다:

여기 쿼리 매개변수 `needy`는 `str`형인 필수 쿼리 매개변수입니다.
"""


def _by_section(chunks: list) -> dict[str, str]:
    return {c.heading_path[-1]: c.language for c in chunks}


@pytest.mark.parametrize("name", sorted(ZH_PAGES))
def test_a_chinese_chunk_of_code_and_one_short_sentence_is_chinese(name: str) -> None:
    chunks = chunk_document(ZH_PAGES[name], name, SMALL)
    assert [c.heading_path for c in chunks] == [["run"], ["run", "start"], ["run", "next"]]
    middle = chunks[1]
    assert CMD in middle.text and "启动" in middle.text  # code and the sentence are in the one chunk
    assert _by_section(chunks) == {"run": "zh", "start": "zh", "next": "zh"}


def test_a_chunk_of_nothing_but_code_takes_its_documents_language() -> None:
    text = f"""# 运行服务器 {{ #run }}

{INTRO}

## `main.py` {{ #main-py }}

```Python
from fastapi import FastAPI

app = FastAPI()
```

`{CMD}`

## 下一步 {{ #next }}

{NEXT}
"""
    chunks = chunk_document(text, "main.md", SMALL)
    code_chunk = next(c for c in chunks if c.heading_path == ["run", "main-py"])
    assert "from fastapi import FastAPI" in code_chunk.text and not has_cjk(code_chunk.text)
    assert code_chunk.language == "zh"
    assert {c.language for c in chunks} == {"zh"}


def test_markdown_indented_code_is_not_prose_but_list_and_admonition_bodies_are() -> None:
    zh = f"""# 运行服务器 {{ #run }}

{INTRO}

## 启动 {{ #start }}

在终端里运行：

    {CMD} --workers 4 --log-level debug --proxy-headers --forwarded-allow-ips '*'

## 下一步 {{ #next }}

{NEXT}
"""
    assert _by_section(chunk_document(zh, "zh.md", SMALL))["start"] == "zh"
    # In an English page, Chinese text indented under a list item or an admonition is prose, not code.
    en = """# Query parameters { #query }

Query parameters are the key-value pairs after the question mark in a URL, separated by ampersands.

## Credentials { #credentials }

* `allow_credentials`

    当设为 `True` 时，`allow_origins`、`allow_methods` 和 `allow_headers` 都不能设为通配符，必须显式指定。

## Tip { #tip }

!!! tip "提示"

    与路径参数一样，查询参数也可以使用枚举类型来限定取值范围，这样文档里会显示所有可选值。

## Next { #next }

Declare several query parameters at once, and give each its own default value or none at all.
"""
    assert _by_section(chunk_document(en, "en.md", SMALL)) == {
        "query": "en", "credentials": "zh", "tip": "zh", "next": "en"
    }  # fmt: skip


def test_english_with_a_stray_chinese_name_is_english() -> None:
    text = """# Translations { #translations }

Every page of this documentation is translated by volunteers, and each translation links to its original.

## Author { #author }

By 司马相如.

## Next { #next }

Read the tutorial from the start: each section builds on the previous one and ends with a running example.
"""
    chunks = chunk_document(text, "translations.md", SMALL)
    assert [c.heading_path[-1] for c in chunks] == ["translations", "author", "next"]
    assert {c.language for c in chunks} == {"en"}


@pytest.mark.parametrize(("text", "language"), [(JA, "ja"), (KO, "ko")])
def test_japanese_and_korean_pages_are_not_chinese(text: str, language: str) -> None:
    chunks = chunk_document(text, "query-params.md", SMALL)
    assert len(chunks) >= 3
    assert {c.language for c in chunks} == {language}


def test_ingest_tags_documents_by_their_prose(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    sentence = f"用 `{CMD}` 启动服务器。"  # more Latin letters in the code than Chinese characters around it
    (docs / "code-heavy-zh.md").write_text(f"# 启动\n\n{sentence}\n\n{sentence}\n\n{sentence}\n", encoding="utf-8")
    (docs / "ja.md").write_text(JA, encoding="utf-8")
    (docs / "ko.md").write_text(KO, encoding="utf-8")
    (docs / "zh.html").write_text(ZH_PAGES["run.html"], encoding="utf-8")
    result = ingest(docs, out_dir=tmp_path / "kb", settings=SMALL)
    languages = {d.doc_id: d.language for d in result.snapshot.documents}
    assert languages == {"code-heavy-zh.md": "zh", "ja.md": "ja", "ko.md": "ko", "zh.html": "zh"}
    assert all(c.language == languages[c.doc_id] for c in result.chunks)


@pytest.mark.parametrize(("target", "maximum", "minimum"), [(350, 700, 60), (30, 60, 5), (20, 40, 0)])
def test_no_chunk_of_the_chinese_fixture_pages_is_tagged_english(
    tmp_path: Path, target: int, maximum: int, minimum: int
) -> None:
    settings = KBSettings(target_tokens=target, max_tokens=maximum, min_tokens=minimum)
    result = ingest(FIXTURES / "zh", out_dir=tmp_path, settings=settings)
    assert len(result.chunks) >= 17
    english = [c.id for c in result.chunks if c.language != "zh"]
    assert english == []


def test_language_is_not_part_of_a_chunks_id_or_content_hash() -> None:
    # The same chunk text in a Chinese and in an English document: the one code-only chunk takes each
    # document's language, and keeps its id and content hash.
    code = "## Run { #run }\n\n```console\n$ " + CMD + "\n```\n"
    zh = chunk_document(f"# 标题 {{ #top }}\n\n{INTRO}\n\n{code}", "a.md", SMALL)
    intro = "Serve the app locally with a development server."
    en = chunk_document(f"# Title {{ #top }}\n\n{intro}\n\n{code}", "a.md", SMALL)
    zh_run = next(c for c in zh if c.heading_path == ["top", "run"])
    en_run = next(c for c in en if c.heading_path == ["top", "run"])
    assert (zh_run.language, en_run.language) == ("zh", "en")
    assert (zh_run.id, zh_run.content_hash) == (en_run.id, en_run.content_hash)

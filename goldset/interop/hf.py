"""A Hugging Face dataset folder: JSON Lines data files and a ``README.md`` dataset card.

goldset does not depend on ``datasets``; it writes the layout the Hub uses, which ``datasets`` reads without
conversion::

    FOLDER/README.md            the dataset card: YAML front matter (license, language, size category, configs,
                                features) and a body stating version, counts and the review quality estimate
    FOLDER/data/test.jsonl      the pairs, one per line (config "default", split "test")
    FOLDER/corpus/chunks.jsonl  the chunks (config "corpus"): a release's whole corpus, else the cited chunks

    datasets.load_dataset("FOLDER")["test"]            # or load_dataset("json", data_files="FOLDER/data/test.jsonl")
    datasets.load_dataset("FOLDER", "corpus")["corpus"]

JSON Lines rather than Parquet: Parquet needs pyarrow, which goldset does not install. The card declares every
column's type (``dataset_info.features``), so a set whose pairs all lack evidence still loads with the right types.

Pair columns are those of :func:`goldset.load`: ``id``, ``question``, ``answer``, ``question_type``,
``language``, ``status``, ``golden``, ``reviewed``, ``evidence`` (``{chunk_id, doc_id, quote}`` each),
``chunk_ids``, ``doc_ids``, ``tags``, ``version``. Corpus rows are whole :class:`~goldset.schema.Chunk` records.
``status`` is written for reading, not read back (imported pairs start as candidates); not carried:
``provenance``, ``checks``, ``review`` (the card states the review's figures). An import reads the pairs and
locates their evidence in the folder's own corpus (and the workspace's KB).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goldset.dataset import golden_ids, pair_row
from goldset.errors import InputError
from goldset.interop.base import Context, ExportJob, FieldMap, Format, Lost, ReadResult, Row
from goldset.interop.fields import json_text, optional_str, read_json_records, str_list

if TYPE_CHECKING:
    from goldset.schema import Chunk, Manifest

CARD = "README.md"
PAIRS_PATH = "data/test.jsonl"
CORPUS_PATH = "corpus/chunks.jsonl"
SPLIT = "test"
LICENSE_DEFAULT = "unknown"

#: Column types in the card (``datasets`` feature YAML): a scalar dtype, ``[dtype]`` for a list of it, or a dict
#: of the fields of a struct, ``[dict]`` for a list of structs.
PAIR_FEATURES: dict[str, Any] = {
    "id": "string", "question": "string", "answer": "string", "question_type": "string", "language": "string",
    "status": "string", "golden": "bool", "reviewed": "bool",
    "evidence": [{"chunk_id": "string", "doc_id": "string", "quote": "string"}],
    "chunk_ids": ["string"], "doc_ids": ["string"], "tags": ["string"], "version": "string",
}  # fmt: skip
CHUNK_FEATURES: dict[str, Any] = {
    "schema_version": "int64", "id": "string", "doc_id": "string", "doc_title": "string",
    "heading_path": ["string"], "heading_titles": ["string"], "position": "int64", "text": "string",
    "content_hash": "string", "raw_hash": "string", "language": "string", "n_tokens": "int64",
    "char_start": "int64", "char_end": "int64", "flags": ["string"],
}  # fmt: skip
#: The corpus column of PDF and slide chunks (``Chunk.page``), there only when some chunk of the set has a page.
PAGE_FEATURE: dict[str, Any] = {"page": "int64"}


def _has_pages(job: ExportJob) -> bool:
    return any(c.page is not None for c in job.chunks.values())

FIELDS = (
    FieldMap("id", "id"),
    FieldMap("question", "question"),
    FieldMap("answer", "answer"),
    FieldMap("question_type", "question_type"),
    FieldMap("language", "language"),
    FieldMap("evidence", "evidence", "with chunk_ids and doc_ids; the chunks in the corpus config"),
    FieldMap("tags", "tags"),
)
LOST = (
    Lost("status", "written, not read back: imported pairs start as candidates"),
    Lost("provenance", "not in the folder; imported pairs get source 'import'"),
    Lost("checks", "not in the folder; `goldset filter` checks imported pairs again"),
    Lost("review", "not per pair; the card states the review's figures"),
)


# ------------------------------------------------------------------------------------------------ the card


def _feature_yaml(name: str, spec: Any, indent: str) -> list[str]:
    """One feature in the card's YAML (the Hub's ``dataset_info.features`` syntax)."""
    if isinstance(spec, str):
        return [f"{indent}- name: {name}", f"{indent}  dtype: {spec}"]
    inner = spec[0] if isinstance(spec, list) else spec
    key = "list" if isinstance(spec, list) else "struct"
    if isinstance(inner, str):
        return [f"{indent}- name: {name}", f"{indent}  {key}: {inner}"]
    lines = [f"{indent}- name: {name}", f"{indent}  {key}:"]
    for sub, sub_spec in inner.items():
        lines += _feature_yaml(sub, sub_spec, indent + "  ")
    return lines


def size_category(n: int) -> str:
    """The Hub's size category of a dataset with ``n`` rows."""
    for limit, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if n < limit:
            return label
    return "1M<n<10M"


def _q(text: str) -> str:
    """A YAML scalar, quoted (JSON strings are valid YAML)."""
    return json.dumps(text, ensure_ascii=False)


def front_matter(job: ExportJob, languages: list[str], title: str) -> str:
    lines = ["---", f"license: {_q(job.license or LICENSE_DEFAULT)}", "language:"]
    lines += [f"- {_q(lang)}" for lang in languages] or ["- en"]
    lines += [
        "size_categories:", f"- {_q(size_category(len(job.pairs)))}",
        "task_categories:", "- question-answering",
        "tags:", "- rag", "- evaluation", "- golden-set", "- goldset",
        f"pretty_name: {_q(title)}",
        "configs:",
        "- config_name: default", "  default: true", "  data_files:", f"  - split: {SPLIT}", f"    path: {PAIRS_PATH}",
        "- config_name: corpus", "  data_files:", "  - split: corpus", f"    path: {CORPUS_PATH}",
        "dataset_info:",
        "- config_name: default", "  features:",
    ]  # fmt: skip
    for name, spec in PAIR_FEATURES.items():
        lines += _feature_yaml(name, spec, "  ")
    lines += ["- config_name: corpus", "  features:"]
    for name, spec in ({**CHUNK_FEATURES, **PAGE_FEATURE} if _has_pages(job) else CHUNK_FEATURES).items():
        lines += _feature_yaml(name, spec, "  ")
    return "\n".join([*lines, "---"]) + "\n"


def _table(title: str, counts: dict[str, int]) -> list[str]:
    rows = [f"| {title} | pairs |", "|---|---:|"]
    rows += [f"| {k} | {v} |" for k, v in sorted(counts.items())]
    return rows


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def quality_lines(manifest: Manifest | None) -> list[str]:
    """The review quality estimate (``manifest.review``) in words, or a line saying there is none."""
    review = manifest.review if manifest is not None else None
    if review is None or not review.reviewed:
        return ["No expert review is recorded for this set, so there is no estimate of its quality."]
    lines = [
        f"Experts reviewed {review.reviewed} of {review.sampled} sampled pairs: {review.accepted} accepted, "
        f"{review.rejected} rejected, {review.edited} edited."
    ]
    if review.acceptance_rate is not None:
        level = f"{100 * review.confidence:.0f}%" if review.confidence is not None else "the configured"
        edits = "edited pairs count as accepted" if review.edits_count_as_accepted else "edited pairs count as not"
        lines.append(
            f"Estimated acceptance rate of the pairs nobody reviewed: **{_pct(review.acceptance_rate)}** "
            f"({level} Wilson interval {_pct(review.ci_low)}–{_pct(review.ci_high)}), from the "
            f"{review.random_reviewed} reviewed pairs of the sample's uniformly random part "
            f"(effective n {review.effective_n if review.effective_n is not None else 'n/a'}), speaking for "
            f"{review.population} pairs; {edits}."
        )
    else:
        lines.append("The sample's random part has no decision yet, so there is no acceptance estimate.")
    return lines


def card(job: ExportJob, n_chunks: int) -> str:
    from collections import Counter

    from goldset import __version__

    m = job.manifest
    version = m.version if m is not None and m.version else None
    title = f"Golden QA set {version}" if version else "Golden QA set (working copy)"
    pairs = job.pairs
    by_type = dict(Counter(p.question_type.value for p in pairs))
    by_lang = dict(Counter(p.language for p in pairs))
    by_status = dict(Counter(p.status.value for p in pairs))
    languages = sorted(by_lang)
    corpus = (
        "every chunk of the knowledge-base snapshot the release pins" if job.whole_corpus
        else "the chunks the pairs cite"
    )  # fmt: skip
    body = [
        f"# {title}",
        "",
        f"Question/answer pairs for evaluating retrieval-augmented generation, exported by goldset {__version__} "
        f"from `{job.source}`.",
        "",
        "## Version",
        "",
        "| | |",
        "|---|---|",
        f"| version | {version or 'working copy (not a release)'} |",
    ]
    if m is not None:
        body.append(f"| written | {m.created_at.isoformat()} |")
        if m.message:
            body.append(f"| release message | {m.message} |")
        if m.previous_version:
            body.append(f"| previous version | {m.previous_version} |")
        if m.kb_snapshot_id:
            body.append(f"| KB snapshot | `{m.kb_snapshot_id}` |")
    body += [
        f"| pairs | {len(pairs)}: {job.selection} |",
        f"| corpus | {n_chunks} chunks: {corpus} |",
        "",
        "## Counts",
        "",
        *_table("question type", by_type),
        "",
        *_table("language", by_lang),
        "",
        *_table("status", by_status),
        "",
        "## Quality estimate",
        "",
        *quality_lines(m),
        "",
        "## Columns",
        "",
        "| column | meaning |",
        "|---|---|",
        "| id | goldset's stable pair id |",
        "| question, answer | the question and the reference answer |",
        "| question_type | factual, reasoning, comparison, multi_hop, procedural or unanswerable |",
        "| language | language of question and answer (en, zh, …) |",
        "| status | passed (automatic checks), accepted (expert review), … |",
        "| golden | in the golden set |",
        "| reviewed | an expert decided on the pair |",
        "| evidence | verbatim quotes supporting the answer: chunk_id, doc_id, quote |",
        "| chunk_ids, doc_ids | the chunks and documents the evidence cites (the chunks are in the corpus config) |",
        "| tags | free labels |",
        "| version | the release the pair belongs to |",
        "",
        "Not included: each pair's provenance (model, prompt, KB snapshot), its check verdicts and review decisions "
        "(the figures above summarise the review).",
        "",
        "## Loading",
        "",
        "```python",
        "from datasets import load_dataset",
        f'pairs = load_dataset("path/to/this/folder")["{SPLIT}"]',
        'corpus = load_dataset("path/to/this/folder", "corpus")["corpus"]',
        "```",
        "",
        "Back into goldset: `goldset import --format hf path/to/this/folder`.",
    ]
    if not job.license:
        body += ["", "The license is `unknown`: set your documents' license with "
                 "`goldset export --format hf --license …`."]  # fmt: skip
    return front_matter(job, languages, title) + "\n" + "\n".join(body) + "\n"


# ------------------------------------------------------------------------------------------------ write / read


def corpus_chunks(job: ExportJob) -> list[Chunk]:
    """A release's whole corpus; otherwise the chunks the exported pairs cite."""
    if job.whole_corpus:
        return sorted(job.chunks.values(), key=lambda c: c.id)
    cited = {cid for p in job.pairs for cid in p.chunk_ids}
    missing = sorted(cited - set(job.chunks))
    if missing:
        job.notes.append(f"{len(missing)} cited chunk(s) are not in the dataset, so not in the corpus: {missing[0]} …")
    return sorted((job.chunks[c] for c in cited if c in job.chunks), key=lambda c: c.id)


def write(job: ExportJob, out: Path) -> list[Path]:
    from goldset.io import atomic_write_text

    if out.exists() and not out.is_dir():
        raise InputError(f"{out}: is a file; the Hugging Face export is a folder")
    golden = golden_ids(job.pairs, job.manifest)
    unreviewed = set(job.manifest.unreviewed_ids) if job.manifest is not None else set()
    rows = [pair_row(p, job.manifest, golden, unreviewed) for p in job.pairs]
    chunks = corpus_chunks(job)
    files = [out / PAIRS_PATH, out / CORPUS_PATH, out / CARD]
    atomic_write_text(files[0], json_text(rows))
    paged = _has_pages(job)  # then every row has the column, null where a chunk has no page
    atomic_write_text(files[1], json_text({**c.model_dump(mode="json"), **({"page": c.page} if paged else {})}
                                          for c in chunks))  # fmt: skip
    atomic_write_text(files[2], card(job, len(chunks)))
    return files


def read(path: Path) -> ReadResult:
    """The pairs of a folder written by :func:`write` (or the pairs file itself) and the folder's corpus."""
    from goldset.io import read_jsonl
    from goldset.schema import Chunk

    folder = path if path.is_dir() else None
    pairs_file = path / PAIRS_PATH if folder is not None else path
    if not pairs_file.is_file():
        raise InputError(f"{path}: no {PAIRS_PATH}; give a folder written by `goldset export --format hf`")
    rows: list[Row] = []
    for where, obj in read_json_records(pairs_file, "pair"):
        evidence = obj.get("evidence") or []
        if not isinstance(evidence, list) or not all(isinstance(e, dict) for e in evidence):
            raise InputError(f"{where}: evidence must be a list of {{chunk_id, doc_id, quote}} objects")
        contexts = []
        for i, e in enumerate(evidence, start=1):
            quote = e.get("quote")
            if not isinstance(quote, str):
                raise InputError(f"{where}: evidence item {i} has no quote")
            contexts.append(Context(quote, optional_str(e.get("chunk_id"), where, "chunk_id"),
                                    optional_str(e.get("doc_id"), where, "doc_id")))  # fmt: skip
        rows.append(Row(
            where=where,
            question=obj.get("question"),
            answer=obj.get("answer"),
            question_type=optional_str(obj.get("question_type"), where, "question_type"),
            language=optional_str(obj.get("language"), where, "language"),
            id=optional_str(obj.get("id"), where, "id"),
            contexts=contexts,
            tags=str_list(obj.get("tags"), where, "tags"),
        ))  # fmt: skip
    chunks: dict[str, Chunk] = {}
    corpus = folder / CORPUS_PATH if folder is not None else None
    if corpus is not None and corpus.is_file():
        chunks = {c.id: c for c in read_jsonl(corpus, Chunk)}
    return ReadResult(rows=rows, chunks=chunks)


FORMAT = Format(
    name="hf",
    summary="Hugging Face dataset folder: JSON Lines + a dataset card (datasets.load_dataset(FOLDER))",
    default_out="hf-dataset",
    fields=FIELDS,
    lost=LOST,
    write=write,
    read=read,
    folder=True,
)

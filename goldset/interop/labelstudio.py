"""Label Studio: the pairs as a task import file, the very tasks ``goldset review push`` sends
(:func:`goldset.review.tasks.task_of`), and the labeling config beside it (``FILE.xml`` for ``FILE.json``).

| task field | goldset field |
|---|---|
| ``data.pair_id`` | ``id`` |
| ``data.question`` / ``data.answer`` | ``question`` / ``answer`` (also pre-filled in the edit boxes by a prediction) |
| ``data.question_type`` / ``data.language`` | ``question_type`` / ``language`` |
| ``data.evidence`` | the evidence chunks' text, one section per chunk under a ``── document › heading`` line |
| ``predictions[].result`` (``quote`` labels) | ``evidence[].quote``: each quote highlighted where it is in its chunk |
| ``data.flags`` | the filters' flags (for the reviewer; not read back) |

Not carried back: ``status``, ``tags``, ``provenance``, ``checks``, ``review``. The chunk id of a quote is not in the
task: an import finds it by the section's document and text among the known chunks (a section whose chunk left
the KB names it in its header), so evidence comes back when the chunks are known; a quote that was not found in its
chunk at export is not highlighted and does not come back. Evidence comes back in the order the task shows it
(by chunk id, then by position in the chunk).

**Import** reads this file, or a Label Studio project export (JSON) of such tasks: the pairs as the tasks show them.
The quotes come from the ``quote`` highlights of the task's predictions, else of its latest annotation that has
them. Label Studio's quick JSON export lists predictions by id only: a task whose highlights are then nowhere in the
file comes in without evidence, tagged ``import:evidence-not-located``, and the report says to export a snapshot
with predictions in full (serialization option ``predictions: {only_id: false}``). Annotations are not applied
here (an import makes new candidate pairs); apply a review project's decisions to the workspace's pairs with
``goldset review import``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goldset.errors import InputError
from goldset.interop.base import Context, ExportJob, FieldMap, Format, Lost, ReadResult, Row
from goldset.interop.fields import NOT_LOCATED, optional_str, read_bytes
from goldset.review.config import QUOTE
from goldset.review.tasks import NO_EVIDENCE

if TYPE_CHECKING:
    from goldset.review.config import LabelConfig

FIELDS = (
    FieldMap("id", "data.pair_id"),
    FieldMap("question", "data.question"),
    FieldMap("answer", "data.answer"),
    FieldMap("question_type", "data.question_type"),
    FieldMap("language", "data.language"),
    FieldMap("evidence[].quote", "predictions[].result (quote labels)", "highlighted in data.evidence"),
    FieldMap("evidence[].doc_id", "data.evidence (section headers)"),
    FieldMap("evidence[].chunk_id", "data.evidence (section text)", "found again among the known chunks"),
)
LOST = (
    Lost("status", "not in a task; imported pairs start as candidates"),
    Lost("tags", "not in a task"),
    Lost("provenance", "not in a task; imported pairs get source 'import'"),
    Lost("checks", "shown as data.flags, not read back; `goldset filter` checks imported pairs again"),
    Lost("review", "annotations are not applied by an import (`goldset review import` applies them)"),
)
class _NoQuotes(Exception):
    """The task shows evidence but the file has no quote highlight for it (predictions exported by id only)."""


_HEADER = re.compile(r"(?:\A|\n\n)── ([^\n]*)\n")
_GONE = re.compile(r"^(?P<doc>.*) \(chunk (?P<cid>\S+) is no longer in the KB; its quotes follow\)$")


def label_config(path: Path | None) -> LabelConfig:
    """The workspace's labeling config (``path``: its ``review.label_studio.config_file``), else goldset's
    default."""
    from goldset.prompts import defaults_dir
    from goldset.review import config

    return config.load(path if path is not None else defaults_dir("labeling") / "review.xml")


def write(job: ExportJob, out: Path) -> list[Path]:
    from goldset.io import atomic_write_text
    from goldset.review.offline import sibling
    from goldset.review.tasks import task_of

    if out.suffix.lower() != ".json":
        raise InputError(f"{out}: the Label Studio file must end in .json (Label Studio imports JSON)")
    cfg = label_config(job.label_config)
    tasks = [task_of(p, job.chunks, cfg) for p in job.pairs]
    unhighlighted = sum("quote not found in its chunk" in t["data"]["meta"] for t in tasks)
    if unhighlighted:
        job.notes.append(f"{unhighlighted} task(s) have a quote not found in its chunk: not highlighted, so an "
                         "import does not get it back")  # fmt: skip
    config_path = sibling(out, ".xml")
    atomic_write_text(out, json.dumps(tasks, ensure_ascii=False, indent=1) + "\n")
    atomic_write_text(config_path, cfg.xml)
    return [out, config_path]


def _utf16_to_index(text: str, offset: int) -> int:
    """The Python index of UTF-16 offset ``offset`` in ``text`` (the web UI's offsets)."""
    units = 0
    for i, ch in enumerate(text):
        if units >= offset:
            return i
        units += 2 if ord(ch) > 0xFFFF else 1
    return len(text)


def _sections(evidence: str) -> list[tuple[int, int, str]]:
    """(body start, body end, header) of each ``── document › heading`` section of a task's evidence text."""
    found = list(_HEADER.finditer(evidence))
    return [
        (m.end(), found[i + 1].start() if i + 1 < len(found) else len(evidence), m.group(1))
        for i, m in enumerate(found)
    ]


def _regions(results: Any) -> list[dict[str, Any]]:
    out = []
    for item in results if isinstance(results, list) else []:
        if not isinstance(item, dict) or item.get("from_name") != QUOTE:
            continue
        value = item.get("value")
        if isinstance(value, dict) and isinstance(value.get("text"), str) and isinstance(value.get("start"), int):
            out.append(value)
    return out


def _quote_regions(task: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``quote`` label regions of the task, by position: from its predictions (goldset's own first), else from
    its latest annotation that has them (a reviewer's annotation starts from the prediction)."""
    preds = [p for p in task.get("predictions") or [] if isinstance(p, dict)]
    anns = [a for a in task.get("annotations") or [] if isinstance(a, dict) and not a.get("was_cancelled")]
    candidates = sorted(preds, key=lambda p: p.get("model_version") != "goldset")
    candidates += sorted(anns, key=lambda a: str(a.get("updated_at") or a.get("created_at") or ""), reverse=True)
    for source in candidates:
        regions = _regions(source.get("result"))
        if regions:
            return sorted(regions, key=lambda v: v["start"])
    return []


def contexts_of(data: dict[str, Any], task: dict[str, Any], where: str) -> list[Context]:
    """The evidence of a task: each highlighted quote with its section's document (and chunk, when the section
    names a chunk that left the KB) and the section's text, by which the import finds the chunk."""
    evidence = data.get("evidence")
    if not isinstance(evidence, str) or evidence == NO_EVIDENCE:
        return []
    sections = _sections(evidence)
    regions = _quote_regions(task)
    if sections and not regions:
        raise _NoQuotes
    out = []
    for value in regions:
        start = _utf16_to_index(evidence, value["start"])
        section = next((s for s in sections if s[0] <= start <= s[1]), None)
        if section is None:
            raise InputError(f"{where}: a quote region starts outside every evidence section; is it a goldset task?")
        header = section[2]
        gone = _GONE.match(header)
        doc = gone.group("doc") if gone else header.split(" › ", 1)[0]
        body = evidence[section[0] : section[1]]
        out.append(Context(value["text"], gone.group("cid") if gone else None, doc, chunk_text=None if gone else body))
    return out


def read(path: Path) -> ReadResult:
    """Rows of a Label Studio task file or project export (JSON list of tasks with goldset's data fields)."""
    raw = read_bytes(path, "Label Studio JSON")
    try:
        tasks = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"{path}: not a JSON file ({exc}); export the project from Label Studio as JSON") from None
    if not isinstance(tasks, list):
        raise InputError(f"{path}: expected a list of tasks (a Label Studio JSON import or export file)")
    rows: list[Row] = []
    annotated = 0
    no_quotes: list[str] = []
    for i, task in enumerate(tasks, start=1):
        where = f"{path}: task {i}"
        data = task.get("data") if isinstance(task, dict) else None
        if not isinstance(data, dict):
            raise InputError(f"{where}: not a task with data; export the project as JSON")
        if not isinstance(data.get("pair_id"), str):
            raise InputError(f"{where}: no pair_id in its data; it was not made by goldset")
        if task.get("annotations"):
            annotated += 1
        tags: list[str] = []
        try:
            contexts = contexts_of(data, task, where)
        except _NoQuotes:
            contexts, tags = [], [NOT_LOCATED]
            no_quotes.append(where)
        rows.append(Row(
            where=where,
            question=data.get("question"),
            answer=data.get("answer"),
            question_type=optional_str(data.get("question_type"), where, "question_type"),
            language=optional_str(data.get("language"), where, "language"),
            id=data["pair_id"],
            contexts=contexts,
            tags=tags,
        ))  # fmt: skip
    notes = []
    if no_quotes:
        notes.append(
            f"{len(no_quotes)} task(s) show evidence but the file holds no quote highlight for them ({no_quotes[0]} "
            f"…): imported without evidence and tagged {NOT_LOCATED}. Label Studio's quick JSON export lists "
            "predictions by id only; export a snapshot with predictions in full (serialization option predictions "
            "only_id=false), or import the task file goldset wrote"
        )
    if annotated:
        notes.append(
            f"{annotated} task(s) carry annotations: not applied (the pairs come in as the tasks show them); "
            "`goldset review import` applies a review project's decisions to the workspace's pairs"
        )
    return ReadResult(rows=rows, notes=notes)


FORMAT = Format(
    name="labelstudio",
    summary="Label Studio task JSON, the tasks `goldset review push` sends (+ the labeling config)",
    default_out="labelstudio.json",
    fields=FIELDS,
    lost=LOST,
    write=write,
    read=read,
)

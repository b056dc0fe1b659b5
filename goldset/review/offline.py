"""Review without a server goldset can reach: export the tasks to a file, import the results from a file.

``export(FILE)`` writes the sampled pairs that wait for a decision as a Label Studio import file (a JSON list of
``{"data", "predictions"}``, exactly what ``push`` sends) and, beside it, the labeling config
(``FILE.xml`` for ``FILE.json``) and the reviewer guidelines (``FILE.instructions.html``): create a project with
that config and instructions on your server, import the file, review, then export the project as **JSON** (not
JSON_MIN or CSV: they drop skipped annotations and change the results' shapes) and
``import_results(THAT_FILE)``. Importing applies the decisions exactly as ``pull`` does, checked against the
workspace's labeling config (or the one given).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goldset.context import Context
from goldset.errors import InputError, UsageError

if TYPE_CHECKING:
    from goldset.review.apply import ApplyReport
    from goldset.workspace import WorkspaceLike


@dataclass
class ExportReport:
    tasks_path: Path
    config_path: Path
    instructions_path: Path
    tasks: int = 0
    files: list[Path] = field(default_factory=list)


def sibling(path: Path, suffix: str) -> Path:
    """``review.json`` -> ``review.xml`` / ``review.instructions.html``."""
    return path.with_name(path.stem + suffix)


def export(path: Path | str, ws: WorkspaceLike | Context = None) -> ExportReport:
    """Write the Label Studio import file of the sampled pairs waiting for a decision, with the config and
    guidelines beside it."""
    from goldset.io import atomic_write_text
    from goldset.review import config as label_config
    from goldset.review import store
    from goldset.review.project import instructions, push_order, waiting
    from goldset.review.settings import ReviewSettings
    from goldset.review.tasks import task_of

    ctx = Context.of(ws)
    ws = ctx.workspace
    path = Path(path)
    if path.suffix.lower() != ".json":
        raise UsageError(f"{path}: the export file must end in .json (Label Studio imports JSON)")
    settings = ctx.section(ReviewSettings).label_studio
    config = label_config.load(ws.root / settings.config_file)
    bench = store.load(ctx.data)
    if not any(p.review.sampled for p in bench.pairs):
        raise UsageError("no review sample yet; run `goldset review sample` first")
    todo = push_order(waiting(bench.pairs))
    tasks = [task_of(p, bench.chunks, config) for p in todo]
    report = ExportReport(path, sibling(path, ".xml"), sibling(path, ".instructions.html"), tasks=len(tasks))
    atomic_write_text(path, json.dumps(tasks, ensure_ascii=False, indent=1) + "\n")
    atomic_write_text(report.config_path, config.xml)
    atomic_write_text(report.instructions_path, instructions(ws, settings, todo or bench.pairs) + "\n")
    report.files = [path, report.config_path, report.instructions_path]
    return report


def read_export(path: Path) -> list[dict[str, Any]]:
    """A Label Studio JSON export: a list of tasks, each with its data and annotations."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{path}: file not found") from None
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"{path}: not a JSON file ({exc}); export the project from Label Studio as JSON") from None
    if not isinstance(data, list):
        raise InputError(f"{path}: expected a list of tasks (Label Studio's JSON export)")
    for i, task in enumerate(data):
        if not isinstance(task, dict) or "data" not in task or "annotations" not in task:
            raise InputError(
                f"{path}: item {i + 1} is not a task with data and annotations; export the project as JSON "
                "(JSON_MIN and CSV drop skipped annotations and reshape results)"
            )
    return data


def import_results(
    path: Path | str, ws: WorkspaceLike | Context = None, *, config: Path | str | None = None
) -> ApplyReport:
    """Apply the annotations of a Label Studio JSON export file, like ``pull``. ``config``: the labeling config
    the annotations were made with (default: the workspace's ``review.label_studio.config_file``)."""
    from goldset.review import config as label_config
    from goldset.review import store
    from goldset.review.apply import ApplyReport, apply_and_save
    from goldset.review.decisions import parse_export
    from goldset.review.settings import ReviewSettings

    ctx = Context.of(ws)
    ws = ctx.workspace
    path = Path(path)
    cfg = label_config.load(Path(config) if config else ws.root / ctx.section(ReviewSettings).label_studio.config_file)
    tasks = read_export(path)
    bench = store.load(ctx.data)
    report = ApplyReport(source=str(path))
    return apply_and_save(ctx, bench, parse_export(tasks, cfg, {}), report)

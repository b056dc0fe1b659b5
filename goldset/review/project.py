"""The review project on a Label Studio server: ``push`` the sample, ``pull`` the decisions, ``status``.

``push`` creates the project (or reuses the one with ``review.label_studio.project_title``, or ``project_id``;
one made in Label Studio's UI too), keeps its config, instructions and overlap in line with the workspace's, and
imports every sampled pair that has no decision yet and no task, in bulk, with the prediction that pre-fills the
reviewer's texts and highlights the quotes. A pair whose task shows an older text (``text_hash``) gets its task
updated. The pair id in the task data makes it idempotent: a repeated or interrupted push creates no duplicate
task; the workspace's review lock (:func:`exchange_lock`) makes pushes started together run one after the other,
so they make one project and one task per pair. Tasks are imported in a seeded random order, so a review stopped
halfway has still reviewed a random part of the random part.

``pull`` reads the full JSON export and applies it (``review/apply.py``); nothing is written when nothing
changed. An annotation it cannot apply is in the report's ``problems``, by pair, and the others are applied;
the CLI then exits 2 (``ApplyReport.check``). ``status`` reports the sample and the estimate from the pairs, and
the server's counts when one is configured.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from goldset.context import Context
from goldset.errors import GateFailed, GoldsetError, InputError, UsageError
from goldset.progress import Progress, ProgressCallback
from goldset.review.sampling import waiting
from goldset.review.settings import ReviewSettings
from goldset.schema import QAPair

if TYPE_CHECKING:
    from goldset.review.apply import ApplyReport
    from goldset.review.settings import LabelStudioSettings
    from goldset.schema.manifest import ReviewSampleStats
    from goldset.workspace import Workspace, WorkspaceLike


#: The review lock in the workspace's state folder: one push or pull at a time (see :func:`exchange_lock`).
LOCK_FILE = "review.lock"


@contextmanager
def exchange_lock(ws: Workspace, progress: ProgressCallback | None = None) -> Iterator[None]:
    """Hold the workspace's review lock (``.goldset/review.lock``, an exclusive ``flock``) for a push or a pull,
    waiting for one that holds it. Two pushes started together would otherwise each find no project and create
    one, or each find the same pairs without a task and import them twice (the server deduplicates neither); the
    second one now waits, then finds the project and the tasks the first made. The lock is released when the
    process ends, however it ends. Pushes from different workspaces (machines) into one project are not
    serialized. Where ``fcntl`` does not exist (Windows) there is no lock."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    ws.state_dir.mkdir(parents=True, exist_ok=True)
    with (ws.state_dir / LOCK_FILE).open("a") as f:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if progress is not None:
                progress(Progress("waiting for another review push or pull in this workspace", 0))
            fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def instructions(ws: Workspace, settings: LabelStudioSettings, pairs: list[QAPair]) -> str:
    """The project's instructions: the guidelines of each language of ``pairs`` (most frequent first), English
    when none of them has a file."""
    folder = ws.root / settings.guidelines_dir
    langs = [lang for lang, _ in Counter(p.language for p in pairs).most_common()]
    found = [folder / f"{lang}.html" for lang in langs if (folder / f"{lang}.html").is_file()]
    if not found and (folder / "en.html").is_file():
        found = [folder / "en.html"]
    return "\n<hr>\n".join(f.read_text(encoding="utf-8").strip() for f in found)


def push_order(pairs: list[QAPair]) -> list[QAPair]:
    """A seeded random order (by each pair's round and seed), the same on every push."""
    ordered = sorted(pairs, key=lambda p: p.id)
    seed = ",".join(sorted({f"{p.review.round}:{p.review.seed}" for p in ordered}))
    random.Random(seed).shuffle(ordered)
    return ordered


@dataclass
class PushReport:
    url: str = ""
    project: int = 0
    created: bool = False
    project_changes: list[str] = field(default_factory=list)
    waiting: int = 0
    imported: int = 0
    updated: int = 0
    unchanged: int = 0
    duplicate_tasks: list[str] = field(default_factory=list)  # pair ids with more than one task (made elsewhere)


def push(
    ws: WorkspaceLike | Context = None, *, url: str | None = None, progress: ProgressCallback | None = None
) -> PushReport:
    """Create or reuse the review project and import the sampled pairs that wait for a decision (see module)."""
    ctx = Context.of(ws)
    with exchange_lock(ctx.workspace, progress):
        return _push(ctx, url, progress)


def _push(ctx: Context, url: str | None, progress: ProgressCallback | None) -> PushReport:
    from goldset.review import config as label_config
    from goldset.review import store
    from goldset.review.labelstudio import connect
    from goldset.review.tasks import task_of

    ws = ctx.workspace
    settings = ctx.section(ReviewSettings)
    ls_settings = settings.label_studio
    config = label_config.load(ws.root / ls_settings.config_file)
    bench = store.load(ctx.data)
    todo = waiting(bench.pairs)
    if not any(p.review.sampled for p in bench.pairs):
        raise UsageError("no review sample yet; run `goldset review sample` first")
    guide = instructions(ws, ls_settings, todo or bench.pairs)
    ls = connect(ctx, ls_settings, url)
    report = PushReport(url=ls.url, waiting=len(todo))
    pid = ls.find_project(ls_settings.project_title, ls_settings.project_id)
    if pid is None:
        pid = ls.create_project(ls_settings.project_title, config.xml, guide, ls_settings.annotators_per_task)
        report.created = True
    report.project = pid

    existing: dict[str, list[Any]] = {}
    for t in ls.tasks(pid):
        if t.pair_id:
            existing.setdefault(t.pair_id, []).append(t)
    if not report.created:
        report.project_changes = ls.sync_project(pid, config.xml, guide, ls_settings.annotators_per_task,
                                                 predictions=bool(existing))  # fmt: skip
    report.duplicate_tasks = sorted(pid_ for pid_, ts in existing.items() if len(ts) > 1)
    new: list[dict[str, Any]] = []
    stale: list[tuple[int, dict[str, Any]]] = []
    for pair in push_order(todo):
        task = task_of(pair, bench.chunks, config)
        have = existing.get(pair.id)
        if not have:
            new.append(task)
        elif have[0].text_hash != task["data"]["text_hash"]:
            stale.append((have[0].id, task))
        else:
            report.unchanged += 1
    total = len(new) + len(stale)
    done = 0

    def tick(n: int) -> None:
        nonlocal done
        done += n
        if progress is not None:
            progress(Progress("push", done, total, {"imported": report.imported, "updated": report.updated}))

    for i in range(0, len(new), ls_settings.batch_size):
        batch = new[i : i + ls_settings.batch_size]
        report.imported += len(ls.import_tasks(pid, batch, ls_settings.batch_size))
        tick(len(batch))
    for task_id, task in stale:
        ls.replace_task(task_id, task)
        report.updated += 1
        tick(1)
    if not report.created and not existing and report.imported:
        # a project made elsewhere (the UI) holds goldset's predictions only now
        report.project_changes = sorted({*report.project_changes, *ls.use_predictions(pid)})
    return report


def pull(
    ws: WorkspaceLike | Context = None, *, url: str | None = None, progress: ProgressCallback | None = None
) -> ApplyReport:
    """Apply the review project's annotations to the pairs (see ``review/apply.py``); nothing is written when
    nothing changed, and nothing at all when the server cannot be read."""
    from goldset.review import config as label_config
    from goldset.review import store
    from goldset.review.apply import ApplyReport, apply_and_save
    from goldset.review.decisions import parse_export
    from goldset.review.labelstudio import connect

    ctx = Context.of(ws)
    ws = ctx.workspace
    with exchange_lock(ws, progress):
        ls_settings = ctx.section(ReviewSettings).label_studio
        bench = store.load(ctx.data)
        ls = connect(ctx, ls_settings, url)
        pid = ls.find_project(ls_settings.project_title, ls_settings.project_id)
        if pid is None:
            raise UsageError(
                f"{ls.where} has no project titled {ls_settings.project_title!r}; run `goldset review push`"
            )
        config = label_config.parse(ls.label_config(pid), f"the config of project {pid}")
        config.check_for_goldset()
        exported = ls.export(pid)
        users = ls.users()
        if progress is not None:
            progress(Progress("pull", len(exported), len(exported)))
        report = ApplyReport(source=f"{ls.where}, project {pid}", project=pid)
        return apply_and_save(ctx, bench, parse_export(exported, config, users), report)


@dataclass
class ServerStatus:
    url: str
    project: int | None
    tasks: int = 0
    annotated: int = 0  # tasks with at least one submitted annotation
    skipped: int = 0  # cancelled annotations
    per_reviewer: dict[str, int] = field(default_factory=dict)  # submitted annotations per reviewer


@dataclass
class StatusReport:
    stats: ReviewSampleStats
    settings: ReviewSettings
    waiting: int = 0
    decisions_per_reviewer: dict[str, int] = field(default_factory=dict)
    server: ServerStatus | None = None
    server_error: str | None = None

    def gate(self, threshold: float) -> None:
        """Raise :class:`GateFailed` when the estimate's lower bound is below ``threshold``; an
        :class:`InputError` (exit 2) when there is nothing to estimate from."""
        s = self.stats
        if s.ci_low is None:
            raise InputError(
                "gate: no reviewed pair of the random part of the sample to estimate from "
                f"({s.random} random, {s.random_reviewed} reviewed); sample, push and pull first"
            )
        if s.ci_low < threshold:
            raise GateFailed(
                f"review gate: the acceptance rate's lower bound {s.ci_low:.3f} is below {threshold} "
                f"(estimate {s.acceptance_rate:.3f} from {s.random_reviewed} reviewed random pairs)"
            )


def status(
    ws: WorkspaceLike | Context = None, *, server: bool | None = None, url: str | None = None
) -> StatusReport:
    """The sample, the decisions and the estimate from the pairs (nothing written), and the server's task and
    annotation counts: with ``server=None`` when a server is configured (an error becomes ``server_error``),
    with ``server=True`` always (errors raise), never with ``server=False``."""
    from goldset.review import store
    from goldset.review.estimate import review_stats

    ctx = Context.of(ws)
    ws = ctx.workspace
    settings = ctx.section(ReviewSettings)
    bench = store.load(ctx.data)
    report = StatusReport(stats=review_stats(bench.pairs, settings, rounds=bench.rounds), settings=settings)
    report.waiting = len(waiting(bench.pairs))
    for p in bench.pairs:
        for d in p.review.decisions:
            report.decisions_per_reviewer[d.reviewer] = report.decisions_per_reviewer.get(d.reviewer, 0) + 1
    if server is False:
        return report
    if server is None:
        from goldset.review.labelstudio import URL_ENV

        if not (url or settings.label_studio.url or ctx.getenv(URL_ENV)):
            return report  # no server configured: the local status is all there is
    try:
        report.server = _server_status(ctx, settings.label_studio, url)
    except GoldsetError as exc:
        if server:
            raise
        report.server_error = str(exc)
    return report


def _server_status(ctx: Context, settings: LabelStudioSettings, url: str | None) -> ServerStatus:
    from goldset.review.labelstudio import connect

    ls = connect(ctx, settings, url)
    pid = ls.find_project(settings.project_title, settings.project_id)
    out = ServerStatus(url=ls.url, project=pid)
    if pid is None:
        return out
    users = ls.users()
    from goldset.review.decisions import reviewer_of

    for task in ls.export(pid):
        out.tasks += 1
        submitted = [a for a in task.get("annotations") or [] if not a.get("was_cancelled")]
        out.skipped += sum(1 for a in task.get("annotations") or [] if a.get("was_cancelled"))
        out.annotated += bool(submitted)
        for a in submitted:
            who = reviewer_of(a, users)
            out.per_reviewer[who] = out.per_reviewer.get(who, 0) + 1
    return out

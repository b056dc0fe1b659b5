"""``goldset.build``: the stages in order, the whole loop's progress and state record, the preflight checks (no
endpoint, an existing version, the documents folder) and the dry run's plan."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from goldset.context import Context
from goldset.errors import GoldsetError, InputError, RunFailed, UsageError
from goldset.loop import stages
from goldset.loop.stages import STAGES, ReviewTarget, endpoint_ready
from goldset.progress import Progress, ProgressCallback
from goldset.schema.build import BUILD_STATE_FILE, BuildState, StageName, StageRecord, StageStatus

if TYPE_CHECKING:
    from goldset.filters.report import FilterReport
    from goldset.generation.estimate import Estimate
    from goldset.generation.runner import GenerationReport
    from goldset.kb import IngestResult, KBDiff
    from goldset.review.offline import ExportReport
    from goldset.review.project import PushReport
    from goldset.review.sampling import SampleReport
    from goldset.versioning.refresh import RefreshReport
    from goldset.versioning.release import ReleaseReport
    from goldset.workspace import Workspace, WorkspaceLike


class BuildStopped(GoldsetError):
    """A stage of :func:`build` failed: ``cause`` is its error (the exit code is the cause's), ``stage`` its name
    and ``report`` what the build did up to there (the stages that ran, where their outputs went)."""

    def __init__(self, stage: str, cause: BaseException, report: BuildReport) -> None:
        super().__init__(f"build stopped at {stage}: {cause}")
        self.stage = stage
        self.cause = cause
        self.report = report
        self.exit_code = cause.exit_code if isinstance(cause, GoldsetError) else RunFailed.exit_code


@dataclass
class BuildPlan:
    """What a build would do (``dry_run``): the documents as they are now against the KB snapshot, and the
    generation calls that would be paid (the estimate of ``goldset generate --dry-run``, on the new chunks)."""

    docs_dir: Path
    documents: int
    chunks: int
    diff: KBDiff
    estimate: Estimate
    review: ReviewTarget
    release: str | None


@dataclass
class BuildReport:
    """What :func:`build` did: one :class:`goldset.schema.build.StageRecord` per stage reached (status, a one-line
    summary, counts, where its outputs went), the report of each stage's own entry point, and ``plan`` for a dry
    run. ``stopped_at`` names the stage that failed (None when the build went through)."""

    workspace: Path
    docs_dir: Path | None = None
    stages: list[StageRecord] = field(default_factory=list)
    state_path: Path | None = None
    plan: BuildPlan | None = None
    ingest: IngestResult | None = None
    refresh: RefreshReport | None = None
    generation: GenerationReport | None = None
    filters: FilterReport | None = None
    sample: SampleReport | None = None
    push: PushReport | None = None
    export: ExportReport | None = None
    release: ReleaseReport | None = None
    stopped_at: str | None = None

    def stage(self, name: str) -> StageRecord | None:
        """The record of stage ``name``, if the build reached it."""
        return next((s for s in self.stages if s.name == name), None)

    @property
    def outputs(self) -> dict[str, str]:
        """Every output of the build: label -> path, URL or tag, in stage order."""
        out: dict[str, str] = {}
        for s in self.stages:
            out.update(s.outputs)
        return out


def state_path(ws: Workspace) -> Path:
    """``.goldset/build.json`` of the workspace."""
    return ws.state_dir / BUILD_STATE_FILE


def read_state(ws: Workspace) -> BuildState | None:
    """The last build's state record, None when there is none or it cannot be read (it is rebuildable: a
    broken one only loses the "resumed" wording)."""
    from goldset.io import read_json

    path = state_path(ws)
    if not path.is_file():
        return None
    try:
        return read_json(path, BuildState)
    except GoldsetError:
        return None


def build(
    ws: WorkspaceLike | Context = None,
    *,
    docs: Path | str | None = None,
    limit: int | None = None,
    concurrency: int | None = None,
    use_llm: bool = True,
    keep_going: bool = False,
    review: ReviewTarget = "auto",
    export_path: Path | str | None = None,
    sample_fraction: float | None = None,
    sample_size: int | None = None,
    release: str | None = None,
    message: str | None = None,
    dry_run: bool = False,
    queries: Path | str | None = None,
    progress: ProgressCallback | None = None,
) -> BuildReport:
    """Run the loop over the workspace ``ws`` (a Workspace, a folder inside one, or None for the current one) and
    return what each stage did; see the module docstring for what makes a rerun resume.

    ``docs``: the documents folder (default: ``kb.path`` when that folder exists, else the folder the previous
    build ingested, else ``kb.path``). ``limit`` / ``concurrency``: generate's (at most that many chunks; calls in
    flight). ``use_llm=False`` makes no LLM call: generation is skipped and the filters run without the judge.
    ``keep_going``: carry on when some generation calls failed (default: stop, so a rerun asks about those chunks
    before the review sample is drawn). ``review``: ``label-studio`` pushes the sample to the review project,
    ``export`` writes a Label Studio import file (``export_path``, default ``review/tasks.json``), ``auto`` pushes
    when a Label Studio address is configured and exports otherwise, ``none`` stops after the sample.
    ``sample_fraction`` / ``sample_size``: the review round's size (default ``review.fraction``). ``release`` (with
    ``message``): release the dataset as that version at the end. ``dry_run``: read the documents and estimate
    the generation calls; write nothing, call nothing (``report.plan``). ``progress``: one callback for the whole
    loop, its stages named ``build`` (stages done) and ``<stage>`` or ``<stage> · <step>``. ``queries``: a file of
    real user questions, imported (redacted, merged) and answered from the KB in the generate stage
    (:func:`goldset.import_queries`, :func:`goldset.draft_answers`), so the same filters, sample and review follow.

    Raises :class:`~goldset.errors.EndpointError` before anything is written when generation has work and no LLM
    endpoint is configured (unless ``use_llm=False``), :class:`~goldset.errors.UsageError` /
    :class:`goldset.versioning.release.VersionExists` for bad options, and :class:`BuildStopped` when a stage fails.
    """
    from goldset.kb.settings import KBSettings
    from goldset.review.settings import ReviewSettings
    from goldset.versioning.settings import VersioningSettings

    ctx = Context.of(ws)
    ws = ctx.workspace
    if release is not None and not (message or "").strip():
        raise UsageError("message: a release needs a message saying what changed (goldset build --release V -m '…')")
    if message is not None and release is None:
        raise UsageError("message is the release's: give release too (goldset build --release V -m '…')")
    if sample_fraction is not None and sample_size is not None:
        raise UsageError("give sample_fraction or sample_size, not both")
    if review not in ("auto", "label-studio", "export", "none"):
        raise UsageError(f"review={review!r}: expected auto, label-studio, export or none")
    review_settings = ctx.section(ReviewSettings)
    previous = read_state(ws)
    docs_dir = _docs_dir(ws, docs, ctx.section(KBSettings).path, previous)
    target = _review_target(ctx, review, review_settings.label_studio.url)
    if target == "label-studio":
        from goldset.review.labelstudio import resolve

        resolve(ctx, review_settings.label_studio)  # the address and the token are set: fail now, not after hours
    if release is not None:
        _check_version_is_new(ws, release, ctx.section(VersioningSettings).tag_pattern)

    report = BuildReport(workspace=ws.root, docs_dir=docs_dir, state_path=state_path(ws))
    need_plan = dry_run or (use_llm and not endpoint_ready(ctx))
    if need_plan:
        plan = _plan(ctx, docs_dir, limit=limit, review=target, release=release)
        if dry_run:
            report.plan = plan
            return report
        if plan.estimate.chunks or (queries is not None and use_llm):
            # resolve_endpoint's one line saying how to configure one, before anything is written
            from goldset.llm import resolve_endpoint

            resolve_endpoint(ctx, "generate")

    runner = _Runner(ws, report, previous, progress, release=release, docs_dir=docs_dir)
    with runner.stage("ingest") as rec:
        stages.run_ingest(ctx, docs_dir, report, rec, use_llm=use_llm, progress=runner.sub("ingest"))
    with runner.stage("generate") as rec:
        stages.run_generate(ctx, report, rec, previous, limit=limit, concurrency=concurrency, use_llm=use_llm,
                  keep_going=keep_going, progress=runner.sub("generate"))  # fmt: skip
        if queries is not None:
            stages.run_queries(ctx, rec, Path(queries), concurrency=concurrency, use_llm=use_llm)
    with runner.stage("filter") as rec:
        stages.run_filter(ctx, report, rec, use_llm=use_llm, progress=runner.sub("filter"))
    with runner.stage("sample") as rec:
        stages.run_sample(ctx, report, rec, fraction=sample_fraction, size=sample_size)
    with runner.stage("review") as rec:
        stages.run_review(ctx, report, rec, target, export_path, progress=runner.sub("review"))
    with runner.stage("release") as rec:
        stages.run_release(ctx, report, rec, release, message, progress=runner.sub("release"))
    runner.finish()
    return report


# ------------------------------------------------------------------------------------------------ the runner


class _Runner:
    """Runs the stages in order: the whole loop's progress, the state record after each stage, and the stop."""

    def __init__(
        self,
        ws: Workspace,
        report: BuildReport,
        previous: BuildState | None,
        progress: ProgressCallback | None,
        *,
        release: str | None,
        docs_dir: Path,
    ) -> None:
        self.ws = ws
        self.report = report
        self.progress = progress
        self.state = BuildState(docs_dir=str(docs_dir), release=release)
        self.previous = previous
        self.done = 0

    def tick(self, stage: str) -> None:
        if self.progress is not None:
            self.progress(Progress("build", self.done, len(STAGES), {"stage": stage}))

    def sub(self, stage: str) -> ProgressCallback | None:
        """The stage's own progress, shown under the loop's with the stage name in front."""
        if self.progress is None:
            return None
        show = self.progress

        def forward(update: Progress) -> None:
            name = stage if update.stage == stage else f"{stage} · {update.stage}"
            show(Progress(name, update.done, update.total, update.counters))

        return forward

    @contextmanager
    def stage(self, name: StageName) -> Iterator[StageRecord]:
        rec = StageRecord(name=name, status="done")
        self.tick(name)
        try:
            yield rec
        except GoldsetError as exc:
            self._stop(rec, "failed", exc)
            raise BuildStopped(name, exc, self.report) from exc
        except (KeyboardInterrupt, Exception) as exc:
            self._stop(rec, "interrupted" if isinstance(exc, KeyboardInterrupt) else "failed", exc)
            raise
        self._record(rec)
        if rec.status == "incomplete" and rec.error:
            stop = RunFailed(rec.error)
            self.report.stopped_at = name
            self.state.stopped_at = name
            self._save()
            raise BuildStopped(name, stop, self.report)
        self.done += 1
        self.tick(name)

    def _stop(self, rec: StageRecord, status: StageStatus, exc: BaseException) -> None:
        from goldset.redaction import redact

        rec.status = status
        rec.error = redact(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        rec.summary = rec.summary or rec.error
        self.report.stopped_at = rec.name
        self.state.stopped_at = rec.name
        self._record(rec)

    def _record(self, rec: StageRecord) -> None:
        from goldset.schema.base import utcnow

        rec.finished_at = utcnow()
        self.report.stages.append(rec)
        self.state.stages.append(rec)
        self._save()

    def _save(self) -> None:
        from goldset.io import write_json

        self.ws.state_dir.mkdir(parents=True, exist_ok=True)
        write_json(state_path(self.ws), self.state)

    def finish(self) -> None:
        from goldset.schema.base import utcnow

        self.state.finished_at = utcnow()
        self._save()


# ------------------------------------------------------------------------------------------------ preflight


def _docs_dir(ws: Workspace, docs: Path | str | None, kb_path: str, previous: BuildState | None) -> Path:
    if docs is not None:
        path = Path(docs)
    else:
        configured = ws.root / kb_path
        if configured.is_dir() or previous is None or previous.docs_dir is None:
            path = configured
        else:
            path = Path(previous.docs_dir)
    if not path.exists():
        raise InputError(f"{path}: documents folder not found; give the folder of your documents (or set kb.path)")
    if not path.is_dir():
        raise InputError(f"{path}: not a folder; give the folder that holds your documents")
    return path.resolve()


def _review_target(ctx: Context, review: ReviewTarget, url: str | None) -> ReviewTarget:
    if review != "auto":
        return review
    from goldset.review.labelstudio import URL_ENV

    return "label-studio" if url or ctx.getenv(URL_ENV) else "export"


def _check_version_is_new(ws: Workspace, version: str, pattern: str) -> None:
    """The release version is free (checked again by the release itself): fail before hours of generation."""
    from goldset.versioning.git import Git
    from goldset.versioning.load import RepoRef, list_versions
    from goldset.versioning.release import VersionExists, tag_name

    name = tag_name(version, pattern)
    git = Git.around(ws.root)
    if git is None:
        return  # the release stage says what to do
    if git.tag_exists(name) or any(v.name == name for v in list_versions(RepoRef(dvc_root=ws.root, git=git))):
        raise VersionExists(f"{name}: already released (releases are immutable); choose a new version")


def _plan(ctx: Context, docs_dir: Path, *, limit: int | None, review: ReviewTarget, release: str | None) -> BuildPlan:
    """The documents read into a throwaway snapshot, diffed against the workspace's, and generate's estimate."""
    from goldset.generation.estimate import estimate
    from goldset.kb import diff_snapshots, ingest

    with tempfile.TemporaryDirectory(prefix="goldset-plan-") as tmp:
        fresh = ingest(docs_dir, ctx, out_dir=Path(tmp))
    try:
        current = ctx.data.kb_chunks()
    except GoldsetError:
        current = []
    est = estimate(ctx, chunks=fresh.chunks, limit=limit)
    return BuildPlan(docs_dir=docs_dir, documents=len(fresh.snapshot.documents), chunks=len(fresh.chunks),
                     diff=diff_snapshots(current, fresh.chunks), estimate=est, review=review,
                     release=release)  # fmt: skip

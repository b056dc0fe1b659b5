"""The whole loop in one call: ingest → generate → filter → review sample → push to Label Studio (or export the
review tasks) → release when asked (:func:`build`, ``goldset build``).

Each stage is one existing library entry point, called as its own command calls it; this module only orders them,
decides what each needs and reports. Resuming needs nothing of its own, because every stage already is:

- ingest replaces the KB snapshot and says whether it changed;
- generate asks only about chunks that have no pair yet, keeps what a stopped run received, and takes repeated
  calls from the call journal (``.goldset/calls.sqlite``);
- filter reuses every verdict whose pair, evidence and settings are unchanged;
- sample draws a new round only from passed pairs no round held (an open round is pushed again, not redrawn);
- push is idempotent (the pair id is in the task: no duplicate task); export rewrites its file;
- release refuses a version that exists, and a dataset the previous release already holds.

``.goldset/build.json`` (:class:`goldset.schema.build.BuildState`) records how each stage of the last build ended,
so the next one can say "generate: resumed at chunk 7 of 12". A failed stage stops the loop: :class:`BuildStopped`
carries its error (and its exit code) and the report of the stages that ran.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from goldset.errors import GoldsetError, InputError, RunFailed, UsageError
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
    from goldset.schema import KBSnapshot
    from goldset.versioning.refresh import RefreshReport
    from goldset.versioning.release import ReleaseReport
    from goldset.workspace import Workspace, WorkspaceLike

ReviewTarget = Literal["auto", "label-studio", "export", "none"]
#: the stages in the order they run
STAGES: tuple[StageName, ...] = ("ingest", "generate", "filter", "sample", "review", "release")
#: where the review tasks go when there is no Label Studio server (relative to the workspace)
DEFAULT_EXPORT = Path("review") / "tasks.json"


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
    ws: WorkspaceLike = None,
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
    loop, its stages named ``build`` (stages done) and ``<stage>`` or ``<stage> · <step>``.

    Raises :class:`~goldset.errors.EndpointError` before anything is written when generation has work and no LLM
    endpoint is configured (unless ``use_llm=False``), :class:`~goldset.errors.UsageError` /
    :class:`goldset.versioning.release.VersionExists` for bad options, and :class:`BuildStopped` when a stage fails.
    """
    from goldset.config import load_settings
    from goldset.workspace import resolve_workspace

    ws = resolve_workspace(ws)
    if release is not None and not (message or "").strip():
        raise UsageError("message: a release needs a message saying what changed (goldset build --release V -m '…')")
    if message is not None and release is None:
        raise UsageError("message is the release's: give release too (goldset build --release V -m '…')")
    if sample_fraction is not None and sample_size is not None:
        raise UsageError("give sample_fraction or sample_size, not both")
    if review not in ("auto", "label-studio", "export", "none"):
        raise UsageError(f"review={review!r}: expected auto, label-studio, export or none")
    settings = load_settings(ws)
    previous = read_state(ws)
    docs_dir = _docs_dir(ws, docs, settings.kb.path, previous)
    target = _review_target(ws, review, settings.review.label_studio.url)
    if release is not None:
        _check_version_is_new(ws, release, settings.versioning.tag_pattern)

    report = BuildReport(workspace=ws.root, docs_dir=docs_dir, state_path=state_path(ws))
    need_plan = dry_run or (use_llm and not _endpoint_ready(ws))
    if need_plan:
        plan = _plan(ws, docs_dir, limit=limit, review=target, release=release)
        if dry_run:
            report.plan = plan
            return report
        if plan.estimate.chunks:
            # resolve_endpoint's one line saying how to configure one, before anything is written
            from goldset.llm import resolve_endpoint

            resolve_endpoint(ws, "generate")

    runner = _Runner(ws, report, previous, progress, release=release, docs_dir=docs_dir)
    with runner.stage("ingest") as rec:
        _ingest(ws, docs_dir, report, rec, use_llm=use_llm, progress=runner.sub("ingest"))
    with runner.stage("generate") as rec:
        _generate(ws, report, rec, previous, limit=limit, concurrency=concurrency, use_llm=use_llm,
                  keep_going=keep_going, progress=runner.sub("generate"))  # fmt: skip
    with runner.stage("filter") as rec:
        _filter(ws, report, rec, use_llm=use_llm, progress=runner.sub("filter"))
    with runner.stage("sample") as rec:
        _sample(ws, report, rec, fraction=sample_fraction, size=sample_size)
    with runner.stage("review") as rec:
        _review(ws, report, rec, target, export_path, progress=runner.sub("review"))
    with runner.stage("release") as rec:
        _release(ws, report, rec, release, message, progress=runner.sub("release"))
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


def _review_target(ws: Workspace, review: ReviewTarget, url: str | None) -> ReviewTarget:
    if review != "auto":
        return review
    from goldset.config import get_env
    from goldset.review.labelstudio import URL_ENV

    return "label-studio" if url or get_env(URL_ENV, ws) else "export"


def _endpoint_ready(ws: Workspace) -> bool:
    from goldset.llm import endpoint_configured

    return endpoint_configured(ws, "generate")


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


def _plan(ws: Workspace, docs_dir: Path, *, limit: int | None, review: ReviewTarget, release: str | None) -> BuildPlan:
    """The documents read into a throwaway snapshot, diffed against the workspace's, and generate's estimate."""
    from goldset.generation.estimate import estimate
    from goldset.kb import diff_snapshots, ingest, load_chunks

    with tempfile.TemporaryDirectory(prefix="goldset-plan-") as tmp:
        fresh = ingest(docs_dir, ws, out_dir=Path(tmp))
    try:
        current = load_chunks(ws)
    except GoldsetError:
        current = []
    est = estimate(ws, chunks=fresh.chunks, limit=limit)
    return BuildPlan(docs_dir=docs_dir, documents=len(fresh.snapshot.documents), chunks=len(fresh.chunks),
                     diff=diff_snapshots(current, fresh.chunks), estimate=est, review=review,
                     release=release)  # fmt: skip


# ------------------------------------------------------------------------------------------------ the stages


def _ingest(ws: Workspace, docs_dir: Path, report: BuildReport, rec: StageRecord, *, use_llm: bool,
            progress: ProgressCallback | None) -> None:  # fmt: skip
    """Ingest the documents; once pairs exist, through ``goldset refresh`` (which ingests too, and retires or
    re-checks the pairs whose evidence changed): a plain ingest would replace the snapshot refresh compares with."""
    from goldset.kb import ingest, load_snapshot

    if ws.pairs_path.exists() and load_snapshot(ws) is not None:
        from goldset.versioning.refresh import refresh

        plan = refresh(docs_dir, ws, dry_run=True).plan  # a throwaway ingest and a plan: no call, no write
        if not plan.has_changes:
            _ingest_summary(rec, load_snapshot(ws), plan.diff, changed=False, previous=plan.old_snapshot_id)
            rec.outputs = {"KB snapshot": str(ws.kb_dir)}
            return
        if plan.retire or plan.recheck:
            if not use_llm:
                raise UsageError(
                    f"{docs_dir}: the documents changed under {len(plan.retire) + len(plan.recheck)} existing "
                    "pair(s); refreshing them needs the LLM: run the build without --no-llm (or goldset refresh)"
                )
            r = refresh(docs_dir, ws, progress=progress)
            report.refresh = r
            _ingest_summary(rec, load_snapshot(ws), plan.diff, changed=True, previous=plan.old_snapshot_id)
            rec.counts.update({"retired": len(r.retired), "rechecked": len(r.kept), "replaced": len(r.replaced),
                               "to_review": len(r.to_review), "new_pairs": len(r.new_pairs),
                               "calls": r.calls})  # fmt: skip
            rec.summary += (
                f"; refreshed the pairs: {len(r.retired)} retired (evidence gone), {len(r.kept)} re-checked and "
                f"kept, {len(r.replaced)} replaced, {len(r.to_review)} stale for review, {len(r.new_pairs)} new "
                f"({r.calls} LLM calls)"
            )
            rec.outputs = {"KB snapshot": str(ws.kb_dir)}
            return
    r_ingest = ingest(docs_dir, ws)
    report.ingest = r_ingest
    _ingest_summary(rec, r_ingest.snapshot, r_ingest.diff, changed=r_ingest.changed,
                    previous=r_ingest.previous_snapshot_id)  # fmt: skip
    if r_ingest.warnings:
        rec.summary += f"; {len(r_ingest.warnings)} warning(s), e.g. {r_ingest.warnings[0]}"
    rec.outputs = {"KB snapshot": str(r_ingest.out_dir)}


def _ingest_summary(rec: StageRecord, snap: KBSnapshot | None, diff: KBDiff, *, changed: bool,
                    previous: str | None) -> None:  # fmt: skip
    chunks = diff.counts()["chunks"]
    n_docs, n_chunks, snap_id = (len(snap.documents), snap.n_chunks, snap.id) if snap is not None else (0, 0, "?")
    rec.status = "done" if changed else "unchanged"
    state = "unchanged" if not changed else ("new" if previous is None else "updated")
    rec.counts = {"documents": n_docs, "chunks": n_chunks, "added": chunks["added"], "changed": chunks["changed"],
                  "removed": chunks["removed"]}  # fmt: skip
    changes = f" (+{chunks['added']} ~{chunks['changed']} -{chunks['removed']} chunks)" if changed else ""
    rec.summary = f"snapshot {snap_id} {state}: {n_docs} documents, {n_chunks} chunks{changes}"


def _generate(
    ws: Workspace,
    report: BuildReport,
    rec: StageRecord,
    previous: BuildState | None,
    *,
    limit: int | None,
    concurrency: int | None,
    use_llm: bool,
    keep_going: bool,
    progress: ProgressCallback | None,
) -> None:
    from goldset.generation.estimate import estimate
    from goldset.generation.runner import generate

    if not use_llm or not _endpoint_ready(ws):
        est = estimate(ws, limit=limit)  # calls nothing: what generation would have to do
        if not use_llm:
            rec.status = "skipped"
            rec.counts = {"chunks_waiting": est.chunks}
            rec.summary = f"skipped (no LLM): {est.chunks} chunk(s) without pairs wait for a build with the LLM"
            return
        if est.chunks == 0:
            rec.status = "unchanged"
            rec.counts = {"chunks": 0, "already_done": est.already_done}
            rec.summary = f"nothing to ask: the {est.already_done} chunk(s) already have pairs (no LLM needed)"
            return
        # work to do and no endpoint: generate raises resolve_endpoint's one line saying how to configure one
    r = generate(ws, limit=limit, concurrency=concurrency, progress=progress)
    report.generation = r
    llm = r.llm
    total = r.already_done + r.chunks
    rec.counts = {"chunks": r.chunks, "already_done": r.already_done, "chunks_failed": r.chunks_failed,
                  "pairs_kept": r.pairs_kept, "pairs_rejected": r.pairs_rejected, "calls": llm.calls,
                  "cache_hits": llm.cache_hits, "failed_calls": llm.failures}  # fmt: skip
    cost = "" if llm.cost is None else f", ${llm.cost:.4f}"
    if r.chunks == 0:
        rec.status = "unchanged"
        rec.summary = f"nothing to ask: the {r.already_done} chunk(s) already have pairs"
    else:
        before = previous.stage("generate") if previous is not None else None
        resumed = before is not None and before.status in ("failed", "incomplete", "interrupted") and r.already_done
        start = f"resumed at chunk {r.already_done + 1} of {total}: " if resumed else ""
        rec.status = "resumed" if resumed else "done"
        rec.summary = (
            f"{start}{r.chunks} chunk(s) asked ({r.already_done} had pairs): {r.pairs_kept} pairs kept, "
            f"{r.pairs_rejected} rejected; {llm.calls} calls ({llm.cache_hits} from the journal){cost}"
        )
    if r.chunks_failed:
        reasons = ", ".join(f"{k} ×{v}" for k, v in list(r.failure_reasons.items())[:3])
        rec.outputs["generation failures"] = str(r.failures_path)
        rec.summary += f"; {r.chunks_failed} chunk(s) failed ({reasons})"
        if not keep_going:
            rec.status = "incomplete"
            rec.error = (
                f"{r.chunks_failed} of {r.chunks} chunk(s) failed ({reasons}; details in "
                f"{r.failures_path}); the pairs received are kept: run the build again to ask about those chunks, "
                "or pass --keep-going to carry on without them"
            )


def _no_pairs(ws: Workspace, rec: StageRecord) -> bool:
    """True (and the stage skipped) when the workspace has no candidates file yet (a build without the LLM)."""
    if ws.pairs_path.exists():
        return False
    rec.status = "skipped"
    rec.summary = f"no pairs yet ({ws.pairs_path} does not exist: generation needs an LLM endpoint)"
    return True


def _filter(ws: Workspace, report: BuildReport, rec: StageRecord, *, use_llm: bool,
            progress: ProgressCallback | None) -> None:  # fmt: skip
    from goldset.filters.pipeline import run_filters

    if _no_pairs(ws, rec):
        return
    r = run_filters(ws, use_llm=use_llm, progress=progress)
    report.filters = r
    rec.status = "done" if r.written else "unchanged"
    rec.counts = {"pairs": r.n_pairs, "computed": r.computed, "reused": r.reused, **r.status_counts}
    totals = ", ".join(f"{k} {v}" for k, v in r.status_counts.items()) or "none"
    rec.summary = f"{r.n_pairs} pairs ({totals}); verdicts computed {r.computed}, reused {r.reused}"
    if r.skipped_checks:
        rec.summary += "; " + ", ".join(f"{k} {v}" for k, v in r.skipped_checks.items())
    if r.judge_errors:
        rec.summary += f"; {len(r.judge_errors)} judge call(s) failed (those pairs stay unjudged: run again)"
    rec.outputs["pairs"] = str(ws.pairs_path)


def _sample(ws: Workspace, report: BuildReport, rec: StageRecord, *, fraction: float | None,
            size: int | None) -> None:  # fmt: skip
    from goldset.review import store
    from goldset.review.sampling import sample, waiting

    if _no_pairs(ws, rec):
        return
    open_ = waiting(store.load(ws).pairs)
    if open_:
        rounds = sorted({p.review.round for p in open_ if p.review.round is not None})
        rec.status = "unchanged"
        rec.counts = {"waiting": len(open_)}
        rec.summary = (
            f"round {rounds[-1] if rounds else '?'} still waits for {len(open_)} decision(s): no new round drawn"
        )
        return
    r = sample(ws, fraction=fraction, size=size)
    report.sample = r
    if r.round is None:
        rec.status = "unchanged"
        rec.summary = "no passed pair that no earlier round held: nothing new to sample"
        return
    rec.counts = {"round": r.round, "sampled": r.sampled, "population": r.population, "random": r.random,
                  "risk": r.risk}  # fmt: skip
    rec.summary = f"round {r.round}: {r.sampled} of {r.population} passed pairs ({r.random} random, {r.risk} risk)"


def _review(ws: Workspace, report: BuildReport, rec: StageRecord, target: ReviewTarget,
            export_path: Path | str | None, *, progress: ProgressCallback | None) -> None:  # fmt: skip
    from goldset.review import store
    from goldset.review.sampling import waiting

    if _no_pairs(ws, rec):
        return
    todo = waiting(store.load(ws).pairs)
    if target == "none":
        rec.status = "skipped"
        rec.counts = {"waiting": len(todo)}
        rec.summary = f"skipped: {len(todo)} pair(s) wait for review (goldset review push, or export FILE)"
        return
    if not todo:
        rec.status = "unchanged"
        rec.summary = "no sampled pair waits for a decision: nothing to push or export"
        return
    if target == "label-studio":
        from goldset.review.project import push

        r = push(ws, progress=progress)
        report.push = r
        rec.status = "done" if r.imported or r.updated or r.created else "unchanged"
        rec.counts = {"project": r.project, "waiting": r.waiting, "imported": r.imported, "updated": r.updated,
                      "unchanged": r.unchanged}  # fmt: skip
        made = "created" if r.created else "reused"
        rec.summary = (
            f"Label Studio project {r.project} ({made}): {r.waiting} pair(s) wait for review; {r.imported} "
            f"imported, {r.updated} updated, {r.unchanged} already there"
        )
        rec.outputs["Label Studio"] = f"{r.url}/projects/{r.project}/data"
        return
    from goldset.review.offline import export

    path = Path(export_path) if export_path is not None else ws.root / DEFAULT_EXPORT
    path.parent.mkdir(parents=True, exist_ok=True)
    before = path.read_bytes() if path.is_file() else None
    e = export(path, ws)
    report.export = e
    rec.status = "unchanged" if before == path.read_bytes() else "done"
    rec.counts = {"tasks": e.tasks}
    rec.summary = (
        f"{e.tasks} review task(s) exported (no Label Studio configured): import them into a project made with "
        f"{e.config_path.name}, then goldset review import EXPORT.json"
    )
    rec.outputs.update({"review tasks": str(e.tasks_path), "labeling config": str(e.config_path),
                        "reviewer instructions": str(e.instructions_path)})  # fmt: skip


def _release(ws: Workspace, report: BuildReport, rec: StageRecord, version: str | None, message: str | None,
             *, progress: ProgressCallback | None) -> None:  # fmt: skip
    if version is None:
        rec.status = "skipped"
        rec.summary = "not asked: review, pull the decisions, then goldset build --release VERSION -m MESSAGE"
        return
    from goldset.review import store
    from goldset.review.sampling import waiting
    from goldset.versioning.release import release

    undecided = len(waiting(store.load(ws).pairs)) if ws.pairs_path.exists() else 0
    r = release(version, message=message or "", ws=ws, progress=progress)
    report.release = r
    m = r.manifest
    rec.counts = {"golden": len(m.golden_ids), "unreviewed": len(m.unreviewed_ids), "pairs": m.n_pairs,
                  "pushed": r.pushed}  # fmt: skip
    rec.summary = (
        f"released {r.version} (commit {r.commit[:10]}): {len(m.golden_ids)} golden pairs "
        f"({len(m.unreviewed_ids)} unreviewed) of {m.n_pairs}; {r.pushed} object(s) pushed to {r.remote}"
    )
    rec.outputs.update({"release tag": r.version, "dataset": str(ws.data_dir)})
    if undecided:
        rec.counts["undecided"] = undecided
        rec.summary += f"; {undecided} sampled pair(s) had no review decision yet"
    if r.notes:
        rec.summary += f"; note: {r.notes[0]}"

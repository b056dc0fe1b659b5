"""``goldset.evaluate``: get a run (a file, a Python callable or an HTTP endpoint), score it against the dataset,
write ``runs/<run-id>/`` and check thresholds."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goldset.context import Context
from goldset.evaluation.run_files import renamed_run
from goldset.evaluation.runs import EvalResult, judge_journal_path, runs_folder

if TYPE_CHECKING:
    from goldset.dataset import Dataset
    from goldset.evaluation.gate import Thresholds
    from goldset.evaluation.runs import SampleStore, StoredRun
    from goldset.evaluation.scoring import ScoringAhead
    from goldset.evaluation.settings import EvalSettings
    from goldset.progress import ProgressCallback
    from goldset.schema import QAPair, RunSample
    from goldset.workspace import Workspace, WorkspaceLike

__all__ = ["EvalResult", "check_source", "evaluate"]

#: ``target`` names that mean the built-in BM25 baseline.
BM25_TARGETS = ("bm25", "goldset.baselines.bm25:answer")


@dataclass
class _Run:
    """The samples a source produced, how to name the run, and what the reader must know about them."""

    samples: dict[str, RunSample]
    label: str
    target: str
    notes: list[str] = field(default_factory=list)


def _read_baseline(spec: str, ws: Workspace | None, runs_dir: Path, thresholds_path: Path | None) -> StoredRun:
    """The relative gate's baseline run: a folder relative to the current folder, the thresholds file or the
    workspace, else a run id under the runs folder."""
    from goldset.evaluation.runs import read_run

    path = Path(spec)
    bases = [Path.cwd()]
    if thresholds_path is not None:
        bases.append(Path(thresholds_path).parent)
    if ws is not None:
        bases.append(ws.root)
    if not path.is_absolute():
        for base in bases:
            if (base / path).is_dir():
                return read_run(base / path)
    return read_run(spec, ws, runs_dir)


def _questions(sample: dict[str, Any] | None) -> str:
    return f"a sample {sample}" if sample else "the full set"


def _from_file(
    run_file: Path,
    data: Dataset,
    pairs: list[QAPair],
    fingerprint: str,
    store: SampleStore,
    ahead: ScoringAhead | None = None,
) -> _Run:
    from goldset.evaluation.run_files import read_run_file

    wanted = {p.id: p.question for p in pairs}
    run = read_run_file(
        run_file,
        data,
        fingerprint=fingerprint,
        questions=wanted,
        keep=store.add_line,
        ahead=ahead.start if ahead is not None else None,
    )
    notes = list(run.notes)
    extra = sorted(set(run.samples) - set(wanted))
    if extra:
        notes.append(f"{len(extra)} sample(s) in the run file are for pairs not evaluated here; ignored")
    samples = {pid: s for pid, s in run.samples.items() if pid in wanted}
    missing = [p.id for p in pairs if p.id not in samples]
    if missing:
        shown = ", ".join(missing[:5]) + (" …" if len(missing) > 5 else "")
        notes.append(f"{len(missing)} pair(s) missing from the run file count as failed samples: {shown}")
    label = run_file.name.removesuffix(".gz").removesuffix(".jsonl")
    return _Run(samples, label, f"file:{run_file}", notes)


def _from_target(
    target: str | Callable[..., Any],
    data: Dataset,
    pairs: list[QAPair],
    settings: EvalSettings,
    *,
    kb: str | Path | None,
    ws: Workspace | None,
    progress: ProgressCallback | None,
) -> _Run:
    from goldset.evaluation.callables import load_target, run_callable

    notes: list[str] = []
    if isinstance(target, str) and target in BM25_TARGETS:
        from goldset.baselines.bm25 import baseline_corpus, make_target

        corpus = baseline_corpus(data, kb=kb, ws=ws)
        notes += corpus.notes
        fn = make_target(corpus.passages)
        label, desc = "bm25-baseline", f"target:goldset.baselines.bm25:answer ({corpus.label})"
    elif isinstance(target, str):
        fn = load_target(target)
        label, desc = target.rpartition(":")[2] or target, f"target:{target}"
    else:
        fn = target
        name = getattr(target, "__qualname__", type(target).__name__)
        label, desc = name, f"target:{getattr(target, '__module__', '?')}:{name}"
    samples = run_callable(fn, pairs, concurrency=settings.concurrency, timeout_s=settings.timeout_s, progress=progress)
    return _Run(samples, label, desc, notes)


def _from_endpoint(
    url: str, pairs: list[QAPair], settings: EvalSettings, ctx: Context, progress: ProgressCallback | None
) -> _Run:
    from goldset.evaluation.endpoints import redact_url, run_endpoint

    samples = run_endpoint(
        url,
        pairs,
        settings.endpoint,
        ctx=ctx,
        concurrency=settings.concurrency,
        timeout_s=settings.timeout_s,
        progress=progress,
    )
    safe = redact_url(url)
    return _Run(samples, safe.split("//", 1)[-1].split("/", 1)[0], f"endpoint:{safe}")


def check_source(
    *,
    run: str | Path | None = None,
    target: str | Callable[..., Any] | None = None,
    endpoint: str | None = None,
    baseline: str | None = None,
    kb: str | Path | None = None,
) -> str | Callable[..., Any] | None:
    """Where a run comes from, checked once for :func:`evaluate` and the CLI's dry run: exactly one of ``run``,
    ``target``, ``endpoint`` or ``baseline`` (``bm25``), and ``kb`` only with the bm25 baseline. Returns the target
    to call (the baseline's, ``"bm25"``, for ``baseline``; None for a run file or an endpoint)."""
    from goldset.errors import UsageError

    sources = (("run", run), ("target", target), ("endpoint", endpoint), ("baseline", baseline))
    given = [name for name, value in sources if value is not None]
    if len(given) != 1:
        raise UsageError(
            "give exactly one of run (a run file), target (module:function), endpoint (a URL) or baseline (bm25) "
            f"(got {' and '.join(given) if given else 'none'})"
        )
    if baseline is not None:
        if baseline != "bm25":
            raise UsageError(f"baseline {baseline!r}: the built-in baseline is bm25")
        target = "bm25"
    if kb is not None and target not in BM25_TARGETS:
        raise UsageError("kb is the corpus of the bm25 baseline; give it with baseline bm25")
    return target


def evaluate(
    dataset: str | Path | Dataset | None = None,
    *,
    log: str | Path | None = None,
    run: str | Path | None = None,
    target: str | Callable[..., Any] | None = None,
    endpoint: str | None = None,
    baseline: str | None = None,
    ws: WorkspaceLike | Context = None,
    settings: EvalSettings | None = None,
    sample: int | None = None,
    seed: int = 0,
    out_dir: str | Path | None = None,
    thresholds: str | Path | Thresholds | None = None,
    allow_different_settings: bool = False,
    concurrency: int | None = None,
    timeout_s: float | None = None,
    kb: str | Path | None = None,
    judge: bool | None = None,
    system_model: str | None = None,
    progress: ProgressCallback | None = None,
    run_file: str | Path | None = None,
) -> EvalResult:
    """Evaluate one run of a RAG system against ``dataset`` and write ``runs/<run-id>/``.

    Exactly one of ``run`` (a run file), ``target`` (``package.module:function`` or a callable), ``endpoint`` (URL)
    or ``baseline`` (``"bm25"``, the built-in baseline, which searches ``kb`` or else the workspace's knowledge base;
    ``target="bm25"`` means it too) says where the run comes from (the keywords are named like ``goldset eval``'s
    options; ``run_file``, the old name of ``run``, still works with a DeprecationWarning). ``ws`` is a
    :class:`Workspace`, a folder inside one, or None for the workspace around the current folder (evaluation also
    works outside any workspace). Pairs the run lacks and questions that failed count as failed samples. A relative
    threshold's baseline must be a run of the same dataset scored with the same settings
    (``allow_different_settings`` lifts the second condition). The gate result is returned, not raised: the CLI
    turns a failed gate into exit code 1.

    ``judge``: score the answers with the LLM judge (:mod:`goldset.evaluation.judge`: faithfulness, completeness,
    hallucination, relevancy...; at most 3 calls per sample, through the call journal). None (default): as
    ``eval.judge.enabled`` says, which by default means when a judge endpoint is configured; True: required;
    False: no judge. ``system_model``: the model of the system under test, recorded and checked against the
    judge's (as is each sample's ``model``): a model judging its own answers is warned about.

    ``log`` instead of a dataset and a source: score a production log (a file or folder of :class:`LogSample`
    lines) with the reference-free metrics, ``sample`` lines stratified by day (:mod:`goldset.evaluation.logs`).
    """
    if log is not None:
        from goldset.errors import UsageError
        from goldset.evaluation.logs import evaluate_log

        others = {"dataset": dataset, "run": run, "target": target, "endpoint": endpoint, "baseline": baseline,
                  "thresholds": thresholds, "kb": kb}  # fmt: skip
        given = [k for k, v in others.items() if v is not None]
        if given:
            raise UsageError(f"log scores a production log on its own: give it without {' and '.join(given)}")
        return evaluate_log(
            log, ws=ws, settings=settings, sample=sample, seed=seed, out_dir=out_dir, judge=judge, progress=progress
        )
    if dataset is None:
        from goldset.errors import UsageError

        raise UsageError("give the dataset to evaluate against (or log, a production log to score on its own)")
    from goldset.collector import paused_gc
    from goldset.dataset import Dataset, same_model_notes
    from goldset.errors import InputError
    from goldset.evaluation import datasets
    from goldset.evaluation.compare import check_comparable
    from goldset.evaluation.gate import Thresholds, check_gate, load_thresholds
    from goldset.evaluation.judge.runner import judge_run, prepare_judge
    from goldset.evaluation.run_files import missing_sample
    from goldset.evaluation.runs import SampleStore, git_revision, make_run_id, write_run
    from goldset.evaluation.scoring import MISSING, ScoringAhead, score_run, scoring_processes, summarize
    from goldset.evaluation.settings import EvalSettings
    from goldset.schema import RunMeta
    from goldset.schema.base import utcnow

    run = renamed_run(run, run_file, "evaluate")
    target = check_source(run=run, target=target, endpoint=endpoint, baseline=baseline, kb=kb)

    running = {"concurrency": concurrency, "timeout_s": timeout_s}
    ctx = Context.optional(ws, eval=running)
    ws = ctx.ws
    if settings is None:
        settings = ctx.section(EvalSettings)
    else:
        settings = settings.model_copy(update={k: v for k, v in running.items() if v is not None})
    with paused_gc():
        data = dataset if isinstance(dataset, Dataset) else datasets.resolve_dataset(dataset, ctx)
    dataset_label = str(dataset if not isinstance(dataset, Dataset) else (data.path or "dataset"))
    fingerprint = datasets.dataset_fingerprint(data)
    notes: list[str] = []
    note = datasets.manifest_note(data)
    if note:
        notes.append(note)

    pairs, chosen = datasets.pairs_to_evaluate(data, sample, seed)
    notes += chosen

    runs_dir = runs_folder(ws, settings)
    # The judge is resolved before the system runs: a missing endpoint fails now, and the judge model and prompt
    # hashes are part of the scoring settings the relative gate compares.
    judge_plan = prepare_judge(ctx, settings, judge, judge_journal_path(ws, runs_dir))
    meta = RunMeta(
        run_id="(this run)",
        dataset=dataset_label,
        dataset_version=data.manifest.version if data.manifest else None,
        manifest_hash=fingerprint,
        git_revision=git_revision(ws.root if ws else Path.cwd()),
        metric_config=settings.scoring(judge_plan.identity() if judge_plan is not None else None),
        n_samples=len(pairs),
        sample={"n": sample, "seed": seed} if sample is not None else None,
        system_model=system_model,
        calibration=data.manifest.calibration if data.manifest else None,
    )

    # Thresholds and their baseline are read before the run so a typo fails in a second, not after an hour.
    gate_spec: Thresholds | None = None
    thresholds_path: Path | None = None
    if isinstance(thresholds, Thresholds):
        gate_spec = thresholds
    elif thresholds is not None:
        thresholds_path = Path(thresholds)
        gate_spec = load_thresholds(thresholds_path)
    reference: StoredRun | None = None
    if gate_spec is not None and gate_spec.relative is not None:
        reference = _read_baseline(gate_spec.relative.baseline, ws, runs_dir, thresholds_path)
        differ = check_comparable(
            reference.meta, meta, (str(reference.folder), "this run"), allow_different_settings=allow_different_settings
        )
        if differ:
            notes.append(f"relative limits compare runs scored with different settings: {'; '.join(differ)}")
        if reference.meta.sample != meta.sample:
            notes.append(
                f"baseline {reference.run_id} was run on {_questions(reference.meta.sample)}, this run on "
                f"{_questions(meta.sample)}: relative limits compare different questions"
            )

    if out_dir is not None and Path(out_dir).exists():
        raise InputError(f"{out_dir}: run folder already exists; write the run to another folder or remove this one")

    # Samples are compressed for the run folder as they come, while the rest of the work goes on (SampleStore).
    folder = Path(out_dir) if out_dir is not None else runs_dir / "(run id)"
    store = SampleStore(folder.parent)
    # With a second core, the samples read first are scored while the rest of the run file is read.
    overlap = run is not None and scoring_processes(settings, len(pairs)) > 1
    ahead = ScoringAhead(pairs, settings) if overlap else None
    try:
        if run is not None:
            with paused_gc():
                got = _from_file(Path(run), data, pairs, fingerprint, store, ahead)
        elif target is not None:
            got = _from_target(target, data, pairs, settings, kb=kb, ws=ws, progress=progress)
        else:
            got = _from_endpoint(str(endpoint), pairs, settings, ctx, progress)
        notes += got.notes

        # Stored samples carry their question, so a run folder reads on its own (report, compare).
        by_id = {p.id: p for p in pairs}
        samples = got.samples
        for pid in sorted(samples):  # run files stored their lines as they were read; targets are stored by id
            if not samples[pid].question:
                samples[pid] = samples[pid].model_copy(update={"question": by_id[pid].question})
            if pid not in store:
                store.add(samples[pid])
        # The stored samples hold one line per evaluated pair: stand-ins record what was missing.
        stored = dict(samples)
        for p in pairs:
            if p.id not in stored:
                stored[p.id] = missing_sample(p, MISSING)
                store.add(stored[p.id])
        n_errors = sum(1 for s in samples.values() if s.error)
        if n_errors:
            notes.append(f"{n_errors} of {len(pairs)} question(s) failed in the system; they count against it")

        run_id = make_run_id(got.label, fingerprint)
        meta = meta.model_copy(update={"run_id": run_id, "target": got.target, "created_at": utcnow()})
        # Pairs without a sample are scored as missing (failed, worst values) by score_run, never dropped.
        with paused_gc():
            scores = score_run(pairs, samples, settings, ahead=ahead)
        judge_failed: dict[str, int] = {}
        judge_consistency: dict[str, Any] = {}
        if judge_plan is not None:
            models = [m for m in (system_model, *(s.model for s in samples.values())) if m]
            notes += same_model_notes(judge_plan.endpoint.model, pairs, models)
            judged = judge_run(judge_plan, pairs, samples, scores, progress=progress)
            meta = meta.model_copy(update={"judge": judged.info})
            judge_failed = judged.failed
            judge_consistency = judged.consistency
            notes += judged.notes
        with paused_gc():
            summary = summarize(run_id, scores, samples, settings)
        summary.judge_failed = judge_failed
        summary.judge_consistency = judge_consistency
        summary.notes = list(notes)
        folder = folder.parent / run_id if out_dir is None else folder
        write_run(folder, meta, store, scores, summary)
    finally:
        store.close()
        if ahead is not None:
            ahead.cancel()

    gate = check_gate(summary, gate_spec, reference.summary if reference else None) if gate_spec else None
    return EvalResult(
        run_id=run_id, folder=folder, meta=meta, summary=summary, scores=scores, samples=stored, gate=gate, notes=notes
    )

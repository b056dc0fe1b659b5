"""``goldset.evaluate``: get a run (a file, a Python callable or an HTTP endpoint), score it against the dataset,
write ``runs/<run-id>/`` and check thresholds."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from goldset.dataset import Dataset
    from goldset.evaluation.gate import GateResult, Thresholds
    from goldset.evaluation.settings import EvalSettings
    from goldset.progress import ProgressCallback
    from goldset.schema import RunMeta, RunSample, RunSummary, SampleScores
    from goldset.workspace import Workspace

__all__ = ["EvalResult", "evaluate"]

#: ``--target`` names that mean the built-in BM25 baseline over the dataset's own chunks.
BM25_TARGETS = ("bm25", "goldset.baselines.bm25:answer")


@dataclass
class EvalResult:
    """What :func:`evaluate` produced; ``gate`` is None when no thresholds were given."""

    run_id: str
    folder: Path
    meta: RunMeta
    summary: RunSummary
    scores: list[SampleScores]
    samples: dict[str, RunSample]
    gate: GateResult | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.gate is None or self.gate.passed


def _read_baseline(spec: str, ws: Workspace | None, runs_dir: Path, thresholds_path: Path | None) -> Any:
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


def evaluate(
    dataset: str | Path | Dataset,
    *,
    run_file: str | Path | None = None,
    target: str | Callable[..., Any] | None = None,
    endpoint: str | None = None,
    ws: Workspace | None = None,
    settings: EvalSettings | None = None,
    sample: int | None = None,
    seed: int = 0,
    out_dir: str | Path | None = None,
    thresholds: str | Path | Thresholds | None = None,
    concurrency: int | None = None,
    timeout_s: float | None = None,
    kb: str | Path | None = None,
    progress: ProgressCallback | None = None,
) -> EvalResult:
    """Evaluate one run of a RAG system against ``dataset`` and write ``runs/<run-id>/``.

    Exactly one of ``run_file``, ``target`` (``package.module:function``, a callable, or ``"bm25"`` for the
    built-in baseline; ``kb`` gives the baseline another corpus) or ``endpoint`` (URL) says where the run comes
    from. Pairs the run lacks and questions that failed count as failed samples. The gate result is returned,
    not raised: the CLI turns a failed gate into exit code 1.
    """
    from goldset.config import load_settings
    from goldset.dataset import Dataset
    from goldset.errors import UsageError
    from goldset.evaluation import callables, datasets, endpoints, run_files
    from goldset.evaluation.gate import Thresholds, check_gate, load_thresholds
    from goldset.evaluation.runs import git_revision, make_run_id, write_run
    from goldset.evaluation.sampling import stratified_sample
    from goldset.evaluation.scoring import MISSING, score_run, summarize
    from goldset.schema import RunMeta
    from goldset.workspace import find_workspace

    given = [n for n, v in (("--run", run_file), ("--target", target), ("--endpoint", endpoint)) if v is not None]
    if len(given) != 1:
        what = "none" if not given else " and ".join(given)
        raise UsageError(f"give exactly one of --run FILE, --target MODULE:FUNCTION or --endpoint URL (got {what})")

    ws = ws if ws is not None else find_workspace(required=False)
    running = {"concurrency": concurrency, "timeout_s": timeout_s}
    if settings is None:
        settings = load_settings(ws, eval=running).eval
    else:
        settings = settings.model_copy(update={k: v for k, v in running.items() if v is not None})
    data = dataset if isinstance(dataset, Dataset) else datasets.resolve_dataset(dataset, ws)
    dataset_label = str(dataset if not isinstance(dataset, Dataset) else (data.path or "dataset"))
    fingerprint = datasets.dataset_fingerprint(data)
    notes: list[str] = []

    pairs, note = datasets.select_pairs(data)
    if note:
        notes.append(note)
    if sample is not None:
        pairs = stratified_sample(pairs, sample, seed)
        notes.append(f"stratified sample: {len(pairs)} questions (seed {seed}), every question type represented")

    # Thresholds are read before the run so a typo in them fails in a second, not after an hour of questions.
    gate_spec: Thresholds | None = None
    thresholds_path: Path | None = None
    if isinstance(thresholds, Thresholds):
        gate_spec = thresholds
    elif thresholds is not None:
        thresholds_path = Path(thresholds)
        gate_spec = load_thresholds(thresholds_path)
    runs_dir = Path(settings.runs_dir) if settings.runs_dir else (ws.runs_dir if ws else Path("runs"))
    if settings.runs_dir and ws is not None and not runs_dir.is_absolute():
        runs_dir = ws.root / runs_dir
    baseline = None
    if gate_spec is not None and gate_spec.relative is not None:
        baseline = _read_baseline(gate_spec.relative.baseline, ws, runs_dir, thresholds_path)
        if baseline.meta.manifest_hash and baseline.meta.manifest_hash != fingerprint:
            from goldset.errors import InputError

            raise InputError(
                f"{baseline.folder}: the baseline run was scored against another dataset "
                f"(hash {baseline.meta.manifest_hash}, this one {fingerprint}); re-run the baseline on this version"
            )

    if out_dir is not None and Path(out_dir).exists():
        from goldset.errors import InputError

        raise InputError(f"{out_dir}: run folder already exists; choose another --out or remove it")

    by_id = {p.id: p for p in pairs}
    if run_file is not None:
        run = run_files.read_run_file(Path(run_file), data, fingerprint=fingerprint)
        notes += run.notes
        extra = sorted(set(run.samples) - set(by_id))
        if extra:
            notes.append(f"{len(extra)} sample(s) in the run file are for pairs not evaluated here; ignored")
        samples = {pid: s for pid, s in run.samples.items() if pid in by_id}
        missing = [p for p in pairs if p.id not in samples]
        if missing:
            shown = ", ".join(p.id for p in missing[:5]) + (" …" if len(missing) > 5 else "")
            notes.append(f"{len(missing)} pair(s) missing from the run file count as failed samples: {shown}")
        label, target_desc = Path(run_file).stem, f"file:{run_file}"
    elif target is not None:
        if isinstance(target, str) and target in BM25_TARGETS:
            from goldset.baselines.bm25 import make_target

            fn = make_target(data if kb is None else None, kb_dir=kb, ws=ws)
            corpus = f"kb {kb}" if kb else "dataset chunks"
            label, target_desc = "bm25-baseline", f"target:goldset.baselines.bm25:answer ({corpus})"
        elif isinstance(target, str):
            fn = callables.load_target(target)
            label, target_desc = target.rpartition(":")[2] or target, f"target:{target}"
        else:
            fn = target
            name = getattr(target, "__qualname__", type(target).__name__)
            label, target_desc = name, f"target:{getattr(target, '__module__', '?')}:{name}"
        samples = callables.run_callable(
            fn, pairs, concurrency=settings.concurrency, timeout_s=settings.timeout_s, progress=progress
        )
    else:
        url = str(endpoint)
        samples = endpoints.run_endpoint(
            url,
            pairs,
            settings.endpoint,
            ws=ws,
            concurrency=settings.concurrency,
            timeout_s=settings.timeout_s,
            progress=progress,
        )
        safe = endpoints.redact_url(url)
        label, target_desc = safe.split("//", 1)[-1].split("/", 1)[0], f"endpoint:{safe}"

    # Stored samples carry their question, so a run folder reads on its own (report, compare).
    samples = {
        pid: (s if s.question else s.model_copy(update={"question": by_id[pid].question})) for pid, s in samples.items()
    }
    n_errors = sum(1 for s in samples.values() if s.error)
    if n_errors:
        notes.append(f"{n_errors} of {len(pairs)} question(s) failed in the system; they count against it")

    run_id = make_run_id(label, fingerprint)
    # Pairs without a sample are scored as missing (failed, worst values) by score_run, never dropped.
    scores = score_run(pairs, samples, settings)
    summary = summarize(run_id, scores, samples, settings)
    # samples.jsonl holds one line per evaluated pair: stand-ins record what was missing.
    stored = dict(samples)
    for p in pairs:
        if p.id not in stored:
            stored[p.id] = run_files.missing_sample(p, MISSING)
    meta = RunMeta(
        run_id=run_id,
        dataset=dataset_label,
        dataset_version=data.manifest.version if data.manifest else None,
        manifest_hash=fingerprint,
        target=target_desc,
        git_revision=git_revision(ws.root if ws else Path.cwd()),
        metric_config=settings.scoring(),
        n_samples=len(pairs),
        sample={"n": sample, "seed": seed} if sample is not None else None,
    )
    folder = Path(out_dir) if out_dir is not None else runs_dir / run_id
    write_run(folder, meta, list(stored.values()), scores, summary)

    gate = check_gate(summary, gate_spec, baseline.summary if baseline else None) if gate_spec else None
    if baseline is not None and baseline.meta.sample != meta.sample:

        def what(s: dict | None) -> str:
            return f"a sample {s}" if s else "the full set"

        notes.append(
            f"baseline {baseline.run_id} was run on {what(baseline.meta.sample)}, this run on {what(meta.sample)}: "
            f"relative limits compare different questions"
        )
    return EvalResult(
        run_id=run_id, folder=folder, meta=meta, summary=summary, scores=scores, samples=stored, gate=gate, notes=notes
    )


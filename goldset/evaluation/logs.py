"""``goldset eval --log``: score production traffic, where no reference answer exists, with the reference-free
metrics and the same judge, prompts and call journal as a golden-set run.

A log is JSON Lines of :class:`~goldset.schema.LogSample` (the run format without ``pair_id``, plus ``timestamp``,
``feedback``, ``topic``), plain or ``.gz`` / ``.zst``, or a folder of such files. Reading it:

- personal data (:func:`goldset.privacy.redact_personal`) is replaced in the question, the answer and every context
  before anything is stored or sent to the judge; the run records how much was replaced, never what;
- each line gets an id (its own ``pair_id`` when it has one, else ``<file name>:<line>``), its UTC day (from
  ``timestamp``) and its language (given, else detected from the question);
- ``sample=N`` draws N lines stratified by day (each day its share of N, at least one line per day when N allows;
  seeded), so a large log costs what the user chooses.

Per sample, without a judge: ``refusal`` (the refusal patterns matched the answer: in a log nobody knows whether
the question was answerable, so this is a rate, neither correct nor false) and ``feedback`` (the user's verdict,
when given). With the judge (``claims`` and ``relevance`` calls, never ``coverage``: there is no reference):
faithfulness, hallucination, contradiction, context_utilization, answer_relevancy (and its embedding variant),
context_relevance and ``refusal_judged`` (the judge's stance is "declined"). Samples the system failed on
(``error``) count in ``error_rate`` and are not judged: their quality metrics are left out, not scored 0. System
figures (latency percentiles, TTFT, tokens, cost) are those of a golden-set run (:func:`.scoring.system_metrics`).

The run folder is a usual ``runs/<run-id>/`` with ``meta.reference_free`` set: compare, report and trend never set
it beside a golden-set run (:func:`goldset.evaluation.compare.check_comparable`).
"""

from __future__ import annotations

import asyncio
import math
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goldset.errors import InputError
from goldset.schema import LogSample, RunSample, SampleScores

if TYPE_CHECKING:
    from goldset.context import Context
    from goldset.evaluation.judge.calls import JudgeItem
    from goldset.evaluation.judge.estimate import JudgeEstimate
    from goldset.evaluation.judge.runner import JudgePlan
    from goldset.evaluation.runs import EvalResult
    from goldset.evaluation.settings import EvalSettings
    from goldset.progress import ProgressCallback
    from goldset.schema.runs import JudgeInfo
    from goldset.workspace import WorkspaceLike

__all__ = [
    "LOG_METRICS",
    "LogRead",
    "estimate_log",
    "evaluate_log",
    "export_queries",
    "log_files",
    "read_log",
    "sample_by_day",
]

#: The question type a log sample is scored and grouped under (a log has no question types), and the one the judge
#: reads in its prompt.
LOG_TYPE = "log"
JUDGE_QUESTION_TYPE = "unknown"
#: Judge metrics that need no reference, as registered (the rest of the judge's need one).
JUDGE_METRICS = (
    "faithfulness",
    "hallucination",
    "contradiction",
    "context_utilization",
    "answer_relevancy",
    "answer_relevancy_embedding",
    "context_relevance",
)
#: Log-only metrics and their direction (True: higher is better); the registry knows the others.
LOG_METRICS: dict[str, bool] = {"refusal": False, "refusal_judged": False, "feedback": True}
_SUFFIXES = (".jsonl", ".jsonl.gz", ".jsonl.zst")
_NO_DAY = "(no timestamp)"


@dataclass
class LogRead:
    """A log read and redacted: its samples (ids set, personal data replaced), the day and language of each, and
    what the reading found."""

    samples: list[LogSample]
    days: dict[str, str]  # sample id → UTC day, or (no timestamp)
    languages: dict[str, str]  # sample id → language
    files: list[str]
    redacted: dict[str, int] = field(default_factory=dict)  # kind → count
    notes: list[str] = field(default_factory=list)

    def per_day(self) -> dict[str, int]:
        """Samples per day, days in order."""
        return dict(sorted(Counter(self.days.values()).items()))


def log_files(path: str | Path) -> list[Path]:
    """The log's files: ``path`` itself, or the JSON Lines files (plain, .gz, .zst) in the folder, by name."""
    path = Path(path)
    if path.is_file():
        return [path]
    if path.is_dir():
        found = sorted(p for p in path.iterdir() if p.is_file() and p.name.endswith(_SUFFIXES))
        if not found:
            raise InputError(f"{path}: no log files in this folder (*.jsonl, *.jsonl.gz, *.jsonl.zst)")
        return found
    raise InputError(f"{path}: no such log file or folder; give a JSON Lines log (goldset eval --log FILE|FOLDER)")


class _Redactor:
    """:func:`goldset.privacy.redact_personal` with its results remembered per text: retrieved contexts recur (a
    system retrieves from a fixed index), so each distinct text is searched once and the redacted copies are shared
    (a 10,000-line log of 10 contexts each holds a few thousand distinct ones)."""

    LIMIT = 200_000  # distinct texts remembered at most

    def __init__(self) -> None:
        from goldset.privacy import Redacted

        self.found: Counter[str] = Counter()
        self._seen: dict[str, Redacted] = {}

    def __call__(self, text: str | None) -> str | None:
        from goldset.privacy import redact_personal

        if not text:
            return text
        r = self._seen.get(text)
        if r is None:
            r = redact_personal(text)
            if len(self._seen) < self.LIMIT:
                self._seen[text] = r
        if r.found:
            self.found.update(r.found)
        return r.text


def _redact_sample(s: LogSample, clean: _Redactor) -> LogSample:
    contexts = [c if (t := clean(c.text)) is c.text else c.model_copy(update={"text": t}) for c in s.contexts]
    return s.model_copy(
        update={"question": clean(s.question), "answer": clean(s.answer) or "", "contexts": contexts,
                "error": clean(s.error)}
    )  # fmt: skip


def read_log(path: str | Path, *, redact: bool = True) -> LogRead:
    """Read every line of the log at ``path`` (file or folder; see the module docstring). A line that is not a
    LogSample, or without a question, raises an InputError naming file and line; nothing is read half."""
    from pydantic import ValidationError

    from goldset.evaluation.run_files import open_lines
    from goldset.text import detect_language

    files = log_files(path)
    samples: list[LogSample] = []
    days: dict[str, str] = {}
    languages: dict[str, str] = {}
    redactor = _Redactor()
    for file in files:
        for lineno, line in open_lines(file):
            try:
                s = LogSample.model_validate_json(line)
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(x) for x in first.get("loc", ())) or "line"
                msg = first.get("msg")
                raise InputError(f"{file}:{lineno}: {where}: {msg}; fix the line or leave it out") from None
            if not (s.question or "").strip():
                raise InputError(f"{file}:{lineno}: no question; every log line needs the question that was asked")
            sid = s.pair_id or f"{file.name}:{lineno}"
            if sid in days:
                raise InputError(f"{file}:{lineno}: id {sid!r} occurs twice in the log; give each line its own id")
            if redact:
                s = _redact_sample(s, redactor)
            s = s.model_copy(update={"pair_id": sid})
            ts = s.timestamp
            if ts is not None:
                ts = ts.replace(tzinfo=UTC) if ts.tzinfo is None else ts.astimezone(UTC)
            days[sid] = ts.date().isoformat() if ts is not None else _NO_DAY
            languages[sid] = s.language or detect_language(s.question or "")
            samples.append(s)
    if not samples:
        raise InputError(f"{path}: the log holds no line; nothing to score")
    notes = []
    undated = sum(1 for d in days.values() if d == _NO_DAY)
    if undated:
        notes.append(f"{undated} log line(s) without a timestamp count in the totals, in no day of the trend")
    found = redactor.found
    if found:
        shown = ", ".join(f"{n} {kind}" for kind, n in sorted(found.items()))
        notes.append(f"personal data replaced before storing and judging: {shown}")
    return LogRead(samples, days, languages, [str(f) for f in files], dict(sorted(found.items())), notes)


def sample_by_day(samples: Sequence[LogSample], days: dict[str, str], n: int, seed: int = 0) -> list[LogSample]:
    """``n`` samples drawn at random per day in proportion to the day's traffic (largest remainders; every day at
    least one when ``n`` is at least the number of days), in the log's order. All of them when ``n`` ≥ their
    number."""
    if n <= 0:
        raise InputError(f"sample {n}: give a positive number of log lines to score")
    if n >= len(samples):
        return list(samples)
    by_day: dict[str, list[int]] = {}
    for i, s in enumerate(samples):
        by_day.setdefault(days[s.pair_id], []).append(i)
    total = len(samples)
    quota = {d: n * len(ix) / total for d, ix in by_day.items()}
    take = {d: math.floor(q) for d, q in quota.items()}
    if n >= len(by_day):
        for d in take:
            take[d] = max(1, take[d])
    left = n - sum(take.values())
    for d in sorted(quota, key=lambda d: (take[d] - quota[d], d)):  # largest remainder first
        if left <= 0:
            break
        if take[d] < len(by_day[d]):
            take[d] += 1
            left -= 1
    while sum(take.values()) > n:  # the minimum of one per day overshot: trim the largest days
        d = max(take, key=lambda d: (take[d], d))
        take[d] -= 1
    rng = random.Random(seed)
    chosen: set[int] = set()
    for d in sorted(by_day):
        chosen.update(rng.sample(by_day[d], min(take[d], len(by_day[d]))))
    return [samples[i] for i in sorted(chosen)]


# --------------------------------------------------------------------------------------------------- scoring


def _base_scores(read: LogRead, samples: Sequence[LogSample], settings: EvalSettings) -> list[SampleScores]:
    from goldset.evaluation.metrics.refusal import compile_patterns, is_refusal

    pattern = compile_patterns(settings.refusal_patterns)
    out = []
    for s in samples:
        metrics: dict[str, float | None] = {}
        failed = s.error is not None
        metrics["refusal"] = None if failed else (1.0 if is_refusal(s.answer, pattern) else 0.0)
        metrics["feedback"] = s.feedback
        day = read.days[s.pair_id]
        out.append(
            SampleScores(
                pair_id=s.pair_id,
                question_type=LOG_TYPE,
                language=read.languages[s.pair_id],
                failed=failed,
                error=s.error,
                metrics=metrics,
                day=None if day == _NO_DAY else day,
                topic=s.topic,
            )
        )
    return out


def judge_item(s: RunSample, plan: JudgePlan) -> JudgeItem:
    """The judge's view of a log sample: no reference, question type unknown (so no coverage call)."""
    from goldset.evaluation.judge.calls import JudgeItem

    return JudgeItem(
        pair_id=s.pair_id,
        question_type=JUDGE_QUESTION_TYPE,
        question=s.question or "",
        reference="",
        answer=s.answer,
        contexts=tuple(c.text for c in s.contexts[: plan.settings.max_contexts]),
    )


def judge_metric_names(plan: JudgePlan) -> list[str]:
    """The reference-free judge metrics the plan computes, and refusal_judged when it makes the relevance call."""
    names = [m for m in plan.metric_names if m in JUDGE_METRICS]
    return names + (["refusal_judged"] if "relevance" in plan.settings.calls else [])


def _judge_log(
    plan: JudgePlan, samples: Sequence[RunSample], scores: list[SampleScores], progress: ProgressCallback | None
) -> tuple[JudgeInfo, dict[str, int], list[str]]:
    """Judge every sample that did not fail (``scores`` updated in place) through the call journal."""
    from goldset.evaluation.judge.calls import CALL_METRICS, EMBEDDING_METRIC
    from goldset.evaluation.judge.runner import _judge_items, judge_info
    from goldset.evaluation.metrics.registry import get_metric
    from goldset.llm import session

    names = judge_metric_names(plan)
    todo = [(sc, judge_item(s, plan)) for s, sc in zip(samples, scores, strict=True) if not sc.failed]
    for sc in scores:
        if sc.failed:
            sc.metrics.update(dict.fromkeys(names))

    async def go() -> tuple[list[Any], Any]:
        async with session(plan.journal_path, plan.endpoint) as client:
            return await _judge_items(plan, client, [item for _, item in todo], progress), client.stats

    results, stats = asyncio.run(go())
    failed: Counter[str] = Counter()
    for (sc, _), res in zip(todo, results, strict=True):
        for m in names:
            if m == "refusal_judged":
                stance = res.judged.stance
                sc.metrics[m] = None if stance is None else (1.0 if stance == "declined" else 0.0)
            else:
                sc.metrics[m] = get_metric(m).fn(res.judged)
        for call in res.failed:
            fed = (EMBEDDING_METRIC,) if call == "embeddings" else CALL_METRICS[call]
            if call == "relevance":
                fed = (*fed, "refusal_judged")
            for m in fed:
                if m in names and sc.metrics.get(m) is None:
                    failed[m] += 1
        sc.judge = res.details
    info = judge_info(plan, stats, results)
    notes = []
    n_failed = sum(1 for r in results if r.failed)
    if n_failed:
        notes.append(
            f"judge: {n_failed} of {len(results)} judged sample(s) had a judge call that failed; their metrics are "
            f"left out of those means: {', '.join(f'{m} {n}' for m, n in sorted(failed.items()))}"
        )
    return info, dict(failed), notes


def log_metric_config(settings: EvalSettings, plan: JudgePlan | None) -> dict[str, Any]:
    """What changes a log run's scores (its ``metric_config``): the refusal patterns, the prices and the judge.
    Golden-set settings (matcher, cut-offs, weights) do not enter: they score nothing here."""
    full = settings.scoring(plan.identity() if plan is not None else None)
    return {"reference_free": True, **{k: full[k] for k in ("refusal_patterns", "prices", "judge") if k in full}}


def _chosen(read: LogRead, sample: int | None, seed: int) -> tuple[list[LogSample], list[str]]:
    if sample is None:
        return read.samples, []
    chosen = sample_by_day(read.samples, read.days, sample, seed)
    if len(chosen) == len(read.samples):
        return chosen, []
    return chosen, [f"a sample of {len(chosen)} of {len(read.samples)} log lines, stratified by day (seed {seed})"]


def evaluate_log(
    log: str | Path,
    *,
    ws: WorkspaceLike | Context = None,
    settings: EvalSettings | None = None,
    sample: int | None = None,
    seed: int = 0,
    out_dir: str | Path | None = None,
    judge: bool | None = None,
    progress: ProgressCallback | None = None,
) -> EvalResult:
    """Score the production log ``log`` (file or folder) with the reference-free metrics and write a run folder
    marked ``reference_free`` (see the module docstring). ``sample``: score N lines stratified by day. ``judge``:
    as :func:`goldset.evaluate`'s (None: when a judge endpoint is configured)."""
    from goldset.collector import paused_gc
    from goldset.context import Context
    from goldset.evaluation.judge.runner import prepare_judge
    from goldset.evaluation.runs import (
        EvalResult,
        git_revision,
        judge_journal_path,
        make_run_id,
        runs_folder,
        write_run,
    )
    from goldset.evaluation.scoring import _Columns, _grouped, summarize
    from goldset.evaluation.settings import EvalSettings
    from goldset.hashing import short_hash
    from goldset.schema import RunMeta

    ctx = Context.optional(ws)
    if settings is None:
        settings = ctx.section(EvalSettings)
    if out_dir is not None and Path(out_dir).exists():
        raise InputError(f"{out_dir}: run folder already exists; write the run to another folder or remove this one")
    runs_dir = runs_folder(ctx.ws, settings)
    plan = prepare_judge(ctx, settings, judge, judge_journal_path(ctx.ws, runs_dir))
    with paused_gc():
        read = read_log(log)
    chosen, notes = _chosen(read, sample, seed)
    notes = read.notes + notes
    # Stored as run samples (what every run reader reads); the day, topic and feedback are in the scores.
    keep = set(RunSample.model_fields)
    samples = [RunSample.model_construct(**{k: v for k, v in s.__dict__.items() if k in keep}) for s in chosen]
    scores = _base_scores(read, chosen, settings)
    info: JudgeInfo | None = None
    judge_failed: dict[str, int] = {}
    if plan is not None:
        info, judge_failed, judge_notes = _judge_log(plan, samples, scores, progress)
        notes += judge_notes
    n_errors = sum(1 for s in scores if s.failed)
    if n_errors:
        notes.append(
            f"{n_errors} of {len(scores)} log line(s) record a system error: counted in error_rate, not judged"
        )

    label = Path(log).name.split(".")[0] or "log"
    run_id = make_run_id(f"log-{label}", short_hash("".join(read.files), 12))
    by_id = {s.pair_id: s for s in samples}
    summary = summarize(run_id, scores, by_id, settings)
    columns = _Columns(scores)
    day_of = {s.pair_id: s.day for s in scores}
    summary = summary.model_copy(
        update={
            "overall_score": None,  # eval.weights weigh golden-set metrics; a log has most of them not at all
            "weights_used": {},
            "left_out": [],
            "by_doc": {},
            "by_day": _grouped(columns, scores, lambda s: [d] if (d := day_of[s.pair_id]) else []),
            "by_topic": _grouped(columns, scores, lambda s: [s.topic] if s.topic else []),
            "judge_failed": judge_failed,
            "notes": notes,
        }
    )
    meta = RunMeta(
        run_id=run_id,
        dataset=f"log:{log}",
        target=f"log:{log}",
        git_revision=git_revision(ctx.ws.root if ctx.ws else Path.cwd()),
        metric_config=log_metric_config(settings, plan),
        n_samples=len(scores),
        sample={"n": sample, "seed": seed} if sample is not None else None,
        judge=info,
        reference_free=True,
        log={
            "files": read.files,
            "lines": len(read.samples),
            "scored": len(chosen),
            "days": read.per_day(),
            "redacted": read.redacted,
        },
    )
    folder = Path(out_dir) if out_dir is not None else runs_dir / run_id
    with paused_gc():
        write_run(folder, meta, samples, scores, summary)
    return EvalResult(
        run_id=run_id, folder=folder, meta=meta, summary=summary, scores=scores, samples=by_id, notes=notes
    )


def estimate_log(
    log: str | Path,
    *,
    ws: WorkspaceLike | Context = None,
    settings: EvalSettings | None = None,
    sample: int | None = None,
    seed: int = 0,
    judge: bool | None = None,
) -> JudgeEstimate:
    """The judge calls scoring ``log`` would make (the same lines, sample and items as :func:`evaluate_log`), how
    many the journal holds and what the rest would cost. Calls nothing, writes nothing."""
    from goldset.context import Context
    from goldset.evaluation.judge.estimate import JudgeEstimate, estimate_from_journal
    from goldset.evaluation.judge.runner import prepare_judge
    from goldset.evaluation.runs import judge_journal_path, runs_folder
    from goldset.evaluation.settings import EvalSettings

    ctx = Context.optional(ws)
    if settings is None:
        settings = ctx.section(EvalSettings)
    journal_path = judge_journal_path(ctx.ws, runs_folder(ctx.ws, settings))
    plan = prepare_judge(ctx, settings, judge, journal_path)
    read = read_log(log)
    chosen, notes = _chosen(read, sample, seed)
    if plan is None:
        why = "--no-judge" if judge is False else "no judge endpoint is configured (llm.judge or GOLDSET_JUDGE_MODEL)"
        return JudgeEstimate(enabled=False, reason=why, n_samples=len(chosen))
    items = [judge_item(s, plan) for s in chosen if s.error is None]
    out = estimate_from_journal(plan, items, journal_path)
    out.n_samples = len(chosen)
    out.notes = read.notes + notes + out.notes
    return out


def export_queries(log: str | Path, out: str | Path, *, redact: bool = True) -> int:
    """Write the log's distinct questions (personal data replaced) to ``out`` as CSV with columns ``question`` and
    ``count`` (most asked first), the file ``goldset import --format queries`` reads. Returns the rows written."""
    import csv
    import io

    from goldset.io import atomic_write_text
    from goldset.text import normalize

    read = read_log(log, redact=redact)
    counts: Counter[str] = Counter()
    shown: dict[str, str] = {}
    for s in read.samples:
        q = " ".join((s.question or "").split())
        key = normalize(q)
        counts[key] += 1
        shown.setdefault(key, q)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["question", "count"])
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], shown[kv[0]]))
    for key, n in rows:
        writer.writerow([shown[key], n])
    atomic_write_text(Path(out), buf.getvalue())
    return len(rows)


def iter_days(scores: Iterable[SampleScores]) -> list[str]:
    """The days the scores cover, in order."""
    return sorted({s.day for s in scores if s.day})

"""Per-sample scoring, aggregation and the weighted overall score.

``score_sample`` turns one pair and the system's sample into :class:`SampleScores`: every registered metric of the
families ``retrieval``, ``lexical``, ``refusal`` and ``conciseness``, with the parameters from ``eval`` settings.

- Unanswerable pairs have no relevant context: their retrieval and lexical metrics are ``None`` (left out of
  those averages) and they are scored on ``correct_refusal``. Answerable pairs get ``false_refusal``.
- A sample that is missing from the run, or reports an ``error``, is *failed*: every applicable metric takes the
  value its definition gives a failure (``MetricInfo.on_failure``): the worst one for retrieval, lexical,
  conciseness and ``correct_refusal`` (nothing retrieved, nothing answered, nothing refused), so failures count
  against the system instead of silently shrinking the averages; ``false_refusal`` leaves them out (a failure is
  not a refusal: blaming a refusal policy for timeouts sends the reader the wrong way). ``summarize`` reports
  failures (``n_failed``, ``error_rate``, ``n_missing``) and the means over answered samples (``answered``).

``summarize`` averages each metric over the samples where it is not ``None``: overall, per question type, per
language and per document (a sample counts for each document its evidence cites; unanswerable pairs cite none).
Each group dict also holds ``n``, the number of samples in the group. The overall score is the weighted mean of
``eval.weights`` (penalty metrics such as ``hallucination`` enter as 1 - value); weighted metrics the run did not
compute (judge metrics before a judge ran) are listed in ``left_out`` and the other weights renormalised.
"""

from __future__ import annotations

import math
import operator
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from goldset.errors import ConfigError
from goldset.evaluation.matcher import Matcher
from goldset.evaluation.metrics.lexical import AnswerInput
from goldset.evaluation.metrics.refusal import compile_patterns, is_refusal
from goldset.evaluation.metrics.registry import list_metrics
from goldset.evaluation.metrics.retrieval import RankedRelevance
from goldset.evaluation.metrics.system import PERCENTILES, error_rate, mean, percentile, sample_cost, tokens_per_second
from goldset.schema.runs import RunSample, RunSummary, SampleScores
from goldset.text import tokenize

if TYPE_CHECKING:
    from goldset.evaluation.processes import Forked
    from goldset.evaluation.settings import EvalSettings
    from goldset.schema.pairs import QAPair

SAMPLE_FAMILIES = ("retrieval", "lexical", "refusal", "conciseness")
MISSING = "missing from the run"


@dataclass(frozen=True, slots=True)
class _Planned:
    out: str
    family: str
    call: Callable[[Any], float | None]  # the metric function with its parameters bound
    worst: float | None  # what a failed sample scores (None: left out, see MetricInfo.on_failure)


def _plan(settings: EvalSettings) -> list[_Planned]:
    """Every per-sample metric to compute, with its parameter values from the settings (``@k`` per cut-off)."""
    sources: dict[str, list[Any]] = {
        "k": list(settings.ks),
        "max_ratio": [settings.conciseness.max_ratio],
        "slack_tokens": [settings.conciseness.slack_tokens],
    }
    plan: list[_Planned] = []
    for family in SAMPLE_FAMILIES:
        for info in list_metrics(family):
            combos: list[dict[str, Any]] = [{}]
            for p in info.params:
                if p not in sources:
                    raise ValueError(f"metric {info.name!r}: no setting provides parameter {p!r}")
                combos = [{**c, p: v} for c in combos for v in sources[p]]
            plan += [_Planned(info.output_name(**c), family, partial(info.fn, **c), info.failure_value) for c in combos]
    return plan


class Scorer:
    """Scores samples with one settings object: the metric plan, refusal regex and matcher cache are built once."""

    def __init__(self, settings: EvalSettings) -> None:
        import rapidfuzz.distance  # noqa: F401 - lcs_length's: imported once here, before scoring processes fork

        self.settings = settings
        self.matcher = Matcher.from_settings(settings)
        self.refusal = compile_patterns(settings.refusal_patterns)
        self.plan = _plan(settings)
        self._retrieval = [(p.out, p.call) for p in self.plan if p.family == "retrieval"]
        self._answer = [(p.out, p.call) for p in self.plan if p.family != "retrieval"]
        self._not_retrieval: dict[str, float | None] = dict.fromkeys(out for out, _ in self._retrieval)

    def score(self, pair: QAPair, sample: RunSample | None) -> SampleScores:
        """Every per-sample metric of ``pair`` for ``sample`` (None: missing from the run, scored as failed)."""
        return self.record(pair, *self.values(pair, sample))

    def values(self, pair: QAPair, sample: RunSample | None) -> tuple[bool, str | None, dict[str, float | None]]:
        """(failed, error, metrics) of :meth:`score`: what a scoring process sends back."""
        answerable = pair.question_type != "unanswerable"
        failed = sample is None or sample.error is not None
        error = MISSING if sample is None else sample.error
        ref_tokens = tuple(tokenize(pair.answer))
        ranked: RankedRelevance | None
        if failed or sample is None:
            answer = AnswerInput((), ref_tokens, answerable, False)
            ranked = RankedRelevance((), (), (), len(self.matcher.units(pair)), 0) if answerable else None
        else:
            answer = AnswerInput(
                tuple(tokenize(sample.answer)), ref_tokens, answerable, is_refusal(sample.answer, self.refusal)
            )
            ranked = self.matcher.relevance(pair, sample.contexts) if answerable else None
        if not answerable or ranked is None:  # no relevant context: retrieval does not apply
            metrics = dict(self._not_retrieval)
        else:
            metrics = {out: call(ranked) for out, call in self._retrieval}
        for out, call in self._answer:
            metrics[out] = call(answer)
        if failed:
            metrics = {p.out: None if metrics[p.out] is None else p.worst for p in self.plan}
        return failed, error if failed else None, metrics

    @staticmethod
    def record(pair: QAPair, failed: bool, error: str | None, metrics: dict[str, float | None]) -> SampleScores:
        """The :class:`SampleScores` of ``pair`` with the values :meth:`values` computed."""
        # Built without validation: every value was computed here (floats or None, names from the plan).
        return SampleScores.model_construct(
            pair_id=pair.id,
            question_type=str(pair.question_type),
            language=pair.language,
            doc_ids=pair.doc_ids,
            failed=failed,
            error=error,
            metrics=metrics,
        )


_LAST_SCORER: list[tuple[int, str, Scorer]] = []


def _scorer_for(settings: EvalSettings) -> Scorer:
    """One Scorer per settings object (settings are mutable: the JSON dump is part of the key)."""
    key = (id(settings), settings.model_dump_json())
    if _LAST_SCORER and _LAST_SCORER[0][:2] == key:
        return _LAST_SCORER[0][2]
    scorer = Scorer(settings)
    _LAST_SCORER[:] = [(*key, scorer)]
    return scorer


def score_sample(pair: QAPair, sample: RunSample | None, settings: EvalSettings) -> SampleScores:
    """Score one pair; ``sample`` None (missing) or with ``error`` → ``failed`` and worst values (module doc).

    Repeated calls with the same settings object reuse one :class:`Scorer` (and its tokenisation cache).
    """
    return _scorer_for(settings).score(pair, sample)


def check_run_fits_matcher(samples: Iterable[RunSample], settings: EvalSettings) -> None:
    """Refuse a run the configured matcher cannot score: it would score 0 everywhere, silently.

    ``chunk_id`` / ``doc_id`` need contexts carrying that id; ``text`` needs context texts. Checked only when the
    run retrieved anything at all (a run without contexts scores 0 on retrieval, honestly).
    """
    mode = settings.matcher
    if mode == "auto":
        return
    contexts = [c for s in samples for c in s.contexts]
    if not contexts:
        return
    if mode in ("chunk_id", "doc_id"):
        if not any(getattr(c, mode) for c in contexts):
            raise ConfigError(
                f"eval.matcher is {mode!r} but no retrieved context in the run has a {mode}; "
                "set eval.matcher to auto or text, or return the ids from your system"
            )
    elif not any(c.text.strip() for c in contexts):
        raise ConfigError(
            "eval.matcher is 'text' but every retrieved context in the run has empty text; "
            "set eval.matcher to auto, chunk_id or doc_id"
        )


def score_run(
    pairs: list[QAPair],
    samples: Mapping[str, RunSample],
    settings: EvalSettings,
    *,
    ahead: ScoringAhead | None = None,
) -> list[SampleScores]:
    """One :class:`SampleScores` per pair, in the pairs' order; pairs without a sample are failed, not dropped.

    Large runs are scored by several processes at once (``eval.score_processes``; :func:`scoring_processes`),
    with the same results; ``ahead``: the scores of the pairs whose samples it took, computed meanwhile (a child
    that failed costs time: they are scored here then). Raises :class:`ConfigError` when the matcher cannot work
    on this run (:func:`check_run_fits_matcher`).
    """
    from goldset.evaluation.processes import patience

    check_run_fits_matcher(samples.values(), settings)
    items = [(pair, samples.get(pair.id)) for pair in pairs]
    if ahead is None or not ahead.started:
        return score_items(settings, items)
    taken = ahead.taken()
    rest = [item for item in items if item[0].id not in taken]
    began = time.monotonic()
    own = score_items(settings, rest, processes=max(1, scoring_processes(settings, len(items)) - 1))
    early = ahead.result(timeout=patience(time.monotonic() - began))
    if early is None:  # the child failed: score its pairs here
        early = score_items(settings, [(p, samples.get(p.id)) for p in ahead.pairs], processes=1)
    by_id = {s.pair_id: s for s in (*own, *early)}
    return [by_id[pair.id] for pair in pairs]


class ScoringAhead:
    """Scores, in a forked process, the pairs whose samples are read so far, while this process reads the rest of
    the run file: scoring then overlaps reading on a second core, not only follows it. :meth:`start` takes the
    samples read so far; :func:`score_run` scores the other pairs here, then takes these scores. A pair's scores
    depend only on the pair, its sample and the settings, whichever process computes them. :meth:`cancel` when
    the run is not scored after all (a bad line further on)."""

    def __init__(self, pairs: list[QAPair], settings: EvalSettings) -> None:
        self.settings = settings
        self._all = pairs
        self.pairs: list[QAPair] = []
        self._child: Forked[tuple[bool, str | None, dict[str, float | None]]] | None = None

    @property
    def started(self) -> bool:
        return self._child is not None

    def start(self, samples: Mapping[str, RunSample]) -> None:
        """Fork the process that scores the pairs with a sample in ``samples`` (once)."""
        from goldset.evaluation.processes import Forked

        if self._child is not None:
            return
        self.pairs = [p for p in self._all if p.id in samples]
        items = [(p, samples[p.id]) for p in self.pairs]
        scorer = Scorer(self.settings)

        def work() -> list[tuple[bool, str | None, dict[str, float | None]]]:
            return [scorer.values(pair, sample) for pair, sample in items]

        self._child = Forked(work)

    def taken(self) -> set[str]:
        """Ids of the pairs the forked process scores."""
        return {p.id for p in self.pairs}

    def result(self, timeout: float | None = None) -> list[SampleScores] | None:
        """Its scores (waits for them, ``timeout`` seconds at most); None when it failed."""
        done = self._child.result(timeout) if self._child is not None else None
        if done is None or len(done) != len(self.pairs):
            return None
        return [Scorer.record(pair, *v) for pair, v in zip(self.pairs, done, strict=True)]

    def cancel(self) -> None:
        """Stop the process (nothing to do once :meth:`result` returned)."""
        if self._child is not None:
            self._child.cancel()


#: Fewest samples per scoring process when their number is automatic: below that, starting a process costs
#: more than it saves.
MIN_PER_PROCESS = 1000


def scoring_processes(settings: EvalSettings, n_items: int) -> int:
    """How many processes score ``n_items`` samples: ``eval.score_processes``, or when it is 0 one per available
    CPU core, but no more than one per :data:`MIN_PER_PROCESS` samples."""
    from goldset.evaluation.processes import available_cpus

    if settings.score_processes:
        return settings.score_processes
    return max(1, min(available_cpus(), n_items // MIN_PER_PROCESS))


def score_items(
    settings: EvalSettings, items: Sequence[tuple[QAPair, RunSample | None]], processes: int | None = None
) -> list[SampleScores]:
    """Score (pair, sample or None) items with one :class:`Scorer` per process (``processes``, default
    :func:`scoring_processes`; :func:`goldset.evaluation.processes.split_work`): each process has its own matcher
    caches, and sends back only the values (failed, error, metrics), from which the records are built here."""
    from goldset.evaluation.processes import split_work

    scorer = Scorer(settings)

    def work(start: int, end: int) -> list[tuple[bool, str | None, dict[str, float | None]]]:
        return [scorer.values(pair, sample) for pair, sample in items[start:end]]

    n = scoring_processes(settings, len(items)) if processes is None else processes
    values = split_work(work, len(items), n)
    return [Scorer.record(pair, *v) for (pair, _), v in zip(items, values, strict=True)]


# -- aggregation -----------------------------------------------------------------------------------------------


class _Columns:
    """Per-sample metric values by metric, read once: the means of every group then walk lists, not dicts.

    (Going through each sample's dict once per group it belongs to is the slow way for 10,000 samples in four
    groupings; the sums are the same ``math.fsum`` over the same values in the same order.)
    """

    def __init__(self, scores: list[SampleScores]) -> None:
        names: dict[str, None] = {}
        for s in scores:
            names.update(dict.fromkeys(s.metrics))
        keys = list(names)
        if keys and all(len(s.metrics) == len(keys) for s in scores):  # the usual case: one plan, every metric
            row = operator.itemgetter(*keys) if len(keys) > 1 else (lambda d: (d[keys[0]],))
            self.columns = dict(zip(keys, map(list, zip(*(row(s.metrics) for s in scores), strict=True)), strict=True))
        else:
            self.columns = {m: [s.metrics.get(m) for s in scores] for m in keys}

    def means(self, rows: Iterable[int]) -> dict[str, float]:
        rows = list(rows)
        out: dict[str, float] = {}
        # the group's values of a column, in row order, picked in C (an itemgetter of one row returns the value)
        pick = operator.itemgetter(*rows) if len(rows) > 1 else (lambda c: (c[rows[0]],) if rows else ())
        for name, column in self.columns.items():
            values = [v for v in pick(column) if v is not None]
            if values:
                out[name] = math.fsum(values) / len(values)
        out["n"] = float(len(rows))
        return out


def _grouped(
    columns: _Columns, scores: list[SampleScores], key: Callable[[SampleScores], Iterable[str]]
) -> dict[str, dict[str, float]]:
    groups: dict[str, list[int]] = {}
    for i, s in enumerate(scores):
        for k in key(s):
            groups.setdefault(k, []).append(i)
    return {k: columns.means(groups[k]) for k in sorted(groups)}


def overall_score_text(summary: RunSummary) -> str | None:
    """The overall score as a reader must see it: with the metrics it rests on when some weighted ones were not
    computed (a run without the judge has no faithfulness), since the weights were then renormalised over the rest
    and the number is not the one a fully scored run gives."""
    if summary.overall_score is None:
        return None
    text = f"overall score {summary.overall_score:.3f}"
    if summary.left_out:
        over = ", ".join(f"{m} {w:.2f}" for m, w in sorted(summary.weights_used.items()))
        text += f" (renormalised over {over}; not computed in this run: {', '.join(summary.left_out)})"
    return text


def weighted_score(
    overall: Mapping[str, float], weights: Mapping[str, float], penalties: Iterable[str] = ("hallucination",)
) -> tuple[float | None, dict[str, float], list[str]]:
    """(score, weights used renormalised to sum 1, weighted metrics left out because not computed).

    Metrics in ``penalties``, and registered lower-is-better metrics, enter as ``1 - value``.
    """
    from goldset.evaluation.metrics.registry import higher_is_better

    invert = set(penalties)
    present = {m: w for m, w in weights.items() if w > 0 and overall.get(m) is not None}
    left_out = sorted(m for m, w in weights.items() if w > 0 and m not in present)
    total = math.fsum(present.values())
    if total <= 0:
        return None, {}, left_out
    used = {m: w / total for m, w in present.items()}
    score = 0.0
    for m, w in used.items():
        value = overall[m]
        if m in invert or higher_is_better(m) is False:
            value = 1.0 - value
        score += w * value
    return score, used, left_out


def system_metrics(
    scores: list[SampleScores], samples: Mapping[str, RunSample], settings: EvalSettings
) -> dict[str, float]:
    """Latency percentiles and means (total and per stage), tokens, throughput, cost and errors of a run.

    Only the samples of the scored pairs count; missing ones count as errors (``n_missing``), samples for pairs
    not in the dataset are counted (``n_extra_samples``) but not scored.
    """
    present = [samples[s.pair_id] for s in scores if s.pair_id in samples]
    scored = {s.pair_id for s in scores}
    out: dict[str, float] = {}
    stages = (
        ("latency", "total_ms"),
        ("retrieval_latency", "retrieval_ms"),
        ("generation_latency", "generation_ms"),
        ("ttft", "ttft_ms"),
    )
    for prefix, attr in stages:
        values = [v for s in present if (v := getattr(s.latency, attr)) is not None]
        if not values:
            continue
        for q in PERCENTILES:
            out[f"{prefix}_p{q}_ms"] = percentile(values, q)
        out[f"{prefix}_mean_ms"] = mean(values)
    for attr in ("tokens_in", "tokens_out"):
        values = [v for s in present if (v := getattr(s, attr)) is not None]
        if values:
            out[f"{attr}_total"] = float(sum(values))
            out[f"{attr}_mean"] = sum(values) / len(values)
    toks, millis = [], []
    for s in present:
        ms = s.latency.generation_ms if s.latency.generation_ms is not None else s.latency.total_ms
        if s.tokens_out is not None and ms is not None:
            toks.append(float(s.tokens_out))
            millis.append(ms)
    tps = tokens_per_second(toks, millis)
    if tps is not None:
        out["output_tokens_per_s"] = tps
    prices = settings.prices
    costs = [
        c
        for s in present
        if (c := sample_cost(s.cost_usd, s.tokens_in, s.tokens_out, prices.input_per_mtok, prices.output_per_mtok))
        is not None
    ]
    if costs:
        out["cost_usd_total"] = math.fsum(costs)
        out["cost_usd_mean"] = math.fsum(costs) / len(costs)
    n_failed = sum(1 for s in scores if s.failed)
    rate = error_rate(n_failed, len(scores))
    if rate is not None:
        out["error_rate"] = rate
    out["n_errors"] = float(sum(1 for s in scores if s.failed and s.error != MISSING))
    out["n_missing"] = float(sum(1 for s in scores if s.error == MISSING))
    out["n_extra_samples"] = float(sum(1 for pid in samples if pid not in scored))  # run rows for no dataset pair
    return out


def summarize(
    run_id: str, scores: list[SampleScores], samples: Mapping[str, RunSample], settings: EvalSettings
) -> RunSummary:
    """The run's summary: metric means overall and by type, language and document; system metrics; the
    weighted overall score (see the module docstring)."""
    columns = _Columns(scores)
    overall = columns.means(range(len(scores)))
    overall.pop("n", None)  # RunSummary.n_samples holds it
    score, used, left_out = weighted_score(overall, settings.weights, settings.penalties)
    n_failed = sum(1 for s in scores if s.failed)
    answered: dict[str, float] = {}
    answered_by_type: dict[str, dict[str, float]] = {}
    if n_failed:  # else they equal overall and by_type (RunSummary.answered)
        ok = [i for i, s in enumerate(scores) if not s.failed]
        answered = columns.means(ok)
        answered.pop("n", None)
        answered_by_type = {
            t: columns.means(i for i in ok if scores[i].question_type == t)
            for t in sorted({scores[i].question_type for i in ok})
        }
    return RunSummary(
        run_id=run_id,
        n_samples=len(scores),
        n_failed=n_failed,
        overall=overall,
        answered=answered,
        answered_by_type=answered_by_type,
        by_type=_grouped(columns, scores, lambda s: [s.question_type]),
        by_language=_grouped(columns, scores, lambda s: [s.language]),
        by_doc=_grouped(columns, scores, lambda s: s.doc_ids),
        system=system_metrics(scores, samples, settings),
        overall_score=score,
        weights_used=used,
        left_out=left_out,
    )

"""Reports of a run: a self-contained HTML page (inline CSS and SVG, no CDN) and a rich table for the terminal.

The page shows, in the order a reader asks: what was run (and which model judged it), what is likely wrong
(:mod:`.diagnose`), the metrics (with the baseline's values and paired-bootstrap intervals when a baseline is given;
judge metrics whose judge call failed on some samples say how many were left out), the metrics per question type as
bar charts, the latency distribution, per-language and per-document tables, the worst questions with the contexts
the system retrieved for them (with their page when the system gave it: "handbook.pdf, p. 12") and the judge's claim
verdicts, and the samples whose judge calls failed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goldset.evaluation.diagnose import Diagnosis, diagnose, skipped_rules
from goldset.evaluation.metrics.registry import higher_is_better, metric_order
from goldset.evaluation.runs import StoredRun
from goldset.evaluation.scoring import overall_score_text
from goldset.io import atomic_write_text
from goldset.schema import RunMeta, RunSummary, SampleScores
from goldset.schema.kb import location

if TYPE_CHECKING:
    from rich.console import RenderableType

    from goldset.evaluation.compare import Comparison

#: Metrics drawn per question type, in this order, when the run has them.
CHART_METRICS = (
    "recall@5",
    "mrr",
    "ndcg@5",
    "context_precision",
    "context_recall",
    "faithfulness",
    "completeness",
    "token_f1",
    "rouge_l",
    "correct_refusal",
)
_PALETTE = ("#3b6ea5", "#d08c2e", "#4c9a6a", "#b04a5a", "#7a5ea8", "#5a8f9a")

_CSS = """
body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:1100px;color:#222;padding:0 1rem}
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
table{border-collapse:collapse;margin:.5rem 0;font-size:.9rem}th,td{padding:.25rem .6rem;border-bottom:1px solid #eee;
text-align:left;vertical-align:top}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
.meta td:first-child{color:#666}.good{color:#2a7a3a}.bad{color:#b03030}.muted{color:#888}
.diag{border-left:4px solid #d08c2e;background:#fff8ee;padding:.5rem .8rem;margin:.5rem 0}
.diag.critical{border-color:#b03030;background:#fdf0f0}.charts{display:flex;flex-wrap:wrap;gap:1rem}
details{margin:.2rem 0}pre{white-space:pre-wrap;background:#f6f6f6;padding:.4rem;font-size:.8rem;margin:.2rem 0}
.q{max-width:420px}
"""


def fmt(value: float | None, metric: str = "") -> str:
    """Quality metrics with 3 decimals, milliseconds and counts as whole numbers, missing as an en dash."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if metric == "n" or metric.startswith("n_") or (metric.endswith("_total") and "token" in metric):
        return f"{value:,.0f}"
    if metric.endswith("_ms") or "latency" in metric:
        return f"{value:.0f}"
    if abs(value) >= 100:
        return f"{value:.1f}"
    return f"{value:.3f}"


# --------------------------------------------------------------------------------------------------- SVG charts


def svg_bars(
    title: str, bars: list[tuple[str, float]], *, max_value: float = 1.0, marks: dict[str, float] | None = None
) -> str:
    """A horizontal bar chart; ``marks`` draws a thin line per label (e.g. the baseline's value)."""
    width, label_w, bar_h, gap = 360, 110, 16, 6
    height = 24 + len(bars) * (bar_h + gap)
    scale = (width - label_w - 50) / (max_value or 1.0)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        f'aria-label="{escape(title)}"><text x="0" y="14" font-size="13" font-weight="600">{escape(title)}</text>'
    ]
    for i, (label, value) in enumerate(bars):
        y = 24 + i * (bar_h + gap)
        w = max(0.0, min(value, max_value)) * scale
        color = _PALETTE[i % len(_PALETTE)]
        parts.append(
            f'<text x="{label_w - 6}" y="{y + 12}" font-size="11" text-anchor="end">{escape(label)}</text>'
            f'<rect x="{label_w}" y="{y}" width="{w:.1f}" height="{bar_h}" fill="{color}"><title>{escape(label)}: '
            f"{value:.3f}</title></rect>"
            f'<text x="{label_w + w + 4:.1f}" y="{y + 12}" font-size="11">{value:.3f}</text>'
        )
        if marks and label in marks:
            mx = label_w + max(0.0, min(marks[label], max_value)) * scale
            parts.append(
                f'<line x1="{mx:.1f}" x2="{mx:.1f}" y1="{y - 2}" y2="{y + bar_h + 2}" stroke="#222" stroke-width="2">'
                f"<title>baseline {marks[label]:.3f}</title></line>"
            )
    parts.append("</svg>")
    return "".join(parts)


def svg_histogram(title: str, values: list[float], *, bins: int = 20, unit: str = "ms") -> str:
    """A histogram with p50 and p95 marked; empty when there are no values."""
    if not values:
        return ""
    xs = sorted(values)

    def pct(q: float) -> float:
        pos = (len(xs) - 1) * q
        f = math.floor(pos)
        c = min(f + 1, len(xs) - 1)
        return xs[f] + (xs[c] - xs[f]) * (pos - f)

    lo, hi = xs[0], xs[-1]
    # A long tail (one 60 s timeout among 200 ms answers) would squash every other bar into the first bin:
    # beyond twice the p99 the last bin collects the tail instead.
    clipped = hi > 2 * pct(0.99) > lo
    if clipped:
        hi = 2 * pct(0.99)
    span = (hi - lo) or 1.0
    counts = [0] * bins
    for x in xs:
        counts[max(0, min(bins - 1, int((x - lo) / span * bins)))] += 1
    width, height, pad = 520, 180, 30
    plot_w, plot_h = width - 2 * pad, height - 2 * pad
    top = max(counts)
    bw = plot_w / bins

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        f'aria-label="{escape(title)}"><text x="0" y="14" font-size="13" font-weight="600">{escape(title)}</text>'
    ]
    for i, c in enumerate(counts):
        h = c / top * plot_h if top else 0
        x = pad + i * bw
        parts.append(
            f'<rect x="{x:.1f}" y="{pad + plot_h - h:.1f}" width="{bw - 1:.1f}" height="{h:.1f}" fill="#3b6ea5">'
            f"<title>{lo + i * span / bins:.0f}–{lo + (i + 1) * span / bins:.0f} {unit}: {c}</title></rect>"
        )
    # Percentile lines are dashed; their values go in a legend above the plot, where no bar can hide them.
    for i, (q, color) in enumerate(((0.5, "#4c9a6a"), (0.95, "#b04a5a"))):
        v = pct(q)
        x = pad + min(1.0, (v - lo) / span) * plot_w
        parts.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{pad - 4}" y2="{pad + plot_h}" stroke="{color}" '
            f'stroke-width="2" stroke-dasharray="4 3"/>'
            f'<text x="{width - pad - (1 - i) * 110}" y="14" font-size="11" fill="{color}" text-anchor="end">'
            f"- - p{int(q * 100)} {v:.0f} {unit}</text>"
        )
    parts.append(f'<line x1="{pad}" x2="{width - pad}" y1="{pad + plot_h}" y2="{pad + plot_h}" stroke="#999"/>')
    right = f"≥ {hi:.0f} {unit} (max {xs[-1]:.0f})" if clipped else f"{hi:.0f} {unit}"
    parts.append(
        f'<text x="{pad}" y="{height - 8}" font-size="11">{lo:.0f} {unit}</text>'
        f'<text x="{width - pad}" y="{height - 8}" font-size="11" text-anchor="end">'
        f"{right}</text></svg>"
    )
    return "".join(parts)


# --------------------------------------------------------------------------------------------------- HTML parts


def _table(headers: list[str], rows: Iterable[list[str]], numeric_from: int = 1) -> str:
    head = "".join(f'<th class="{"n" if i >= numeric_from else ""}">{escape(h)}</th>' for i, h in enumerate(headers))
    body = "".join(
        "<tr>" + "".join(f'<td class="{"n" if i >= numeric_from else ""}">{c}</td>' for i, c in enumerate(r)) + "</tr>"
        for r in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _delta_cell(metric: str, value: float | None, base: float | None) -> str:
    if value is None or base is None:
        return "–"
    d = value - base
    direction = higher_is_better(metric)
    good = (d > 0) == direction
    cls = "muted" if abs(d) < 1e-12 or direction is None else ("good" if good else "bad")
    return f'<span class="{cls}">{d:+.3f}</span>'


def _diagnoses_html(found: list[Diagnosis], skipped: list[str]) -> str:
    if not found:
        out = "<p>No rule fired: nothing in the pattern of the measured metrics points to one likely cause.</p>"
    else:
        out = "".join(
            f'<div class="diag {escape(d.severity)}"><b>{escape(d.cause)}</b><br>{escape(d.finding)}<br>'
            f'<span class="muted">Try:</span> {escape(d.advice)}</div>'
            for d in found
        )
    if skipped:
        out += (
            '<details><summary class="muted">Rules not applied (inputs not measured)</summary><ul>'
            + "".join(f"<li>{escape(s)}</li>" for s in skipped)
            + "</ul></details>"
        )
    return out


def _sample_quality(s: SampleScores, upward: set[str]) -> float:
    """A per-question figure to rank the worst: mean of its higher-is-better values (``upward``); failed questions
    rank first."""
    if s.failed:
        return -1.0
    vals = [v for k, v in s.metrics.items() if v is not None and k in upward and not math.isnan(v)]
    return sum(vals) / len(vals) if vals else 0.0


def _worst_html(run: StoredRun, n: int) -> str:
    upward = {m for m in {m for s in run.scores for m in s.metrics} if higher_is_better(m) is True}
    worst = sorted(run.scores, key=lambda s: (_sample_quality(s, upward), s.pair_id))[:n]
    rows = []
    for s in worst:
        sample = run.samples.get(s.pair_id)
        question = escape(sample.question or "") if sample else ""
        detail = ""
        if sample is not None:
            ctxs = "".join(
                f"<pre>#{i + 1} {escape(location(c.doc_id, c.page) if c.doc_id else '')} {escape(c.chunk_id or '')}"
                f"{' score ' + format(c.score, '.3f') if c.score is not None else ''}\n{escape(c.text[:600])}</pre>"
                for i, c in enumerate(sample.contexts[:5])
            )
            detail = (
                f"<details><summary>answer and {len(sample.contexts)} contexts</summary>"
                f"<pre>{escape(sample.answer[:1000]) or '(empty answer)'}</pre>{ctxs}</details>"
            )
        metrics = ", ".join(f"{k} {fmt(v, k)}" for k, v in sorted(s.metrics.items()) if v is not None)
        err = f'<div class="bad">{escape(s.error)}</div>' if s.error else ""
        rows.append(
            [
                f"<code>{escape(s.pair_id)}</code>",
                escape(s.question_type),
                f'<div class="q">{question}{err}{detail}{_claims_html(s)}</div>',
                escape(metrics) or "–",
            ]
        )
    return _table(["pair", "type", "question", "metrics"], rows, numeric_from=99)


_VERDICT_MARK = {"supported": "✓", "contradicted": "✗", "not_found": "?"}


def _claims_html(s: SampleScores) -> str:
    """The judge's claim verdicts of one sample (✓ supported, ✗ contradicted, ? not found, with the context)."""
    if s.judge is None or not s.judge.claims:
        return ""
    items = "".join(
        f"<li>{_VERDICT_MARK[c.verdict]} {escape(c.claim)}"
        + (f' <span class="muted">[context {c.context}]</span>' if c.context else "")
        + "</li>"
        for c in s.judge.claims
    )
    return f"<details><summary>judge: {len(s.judge.claims)} claim(s)</summary><ul>{items}</ul></details>"


def judge_info(meta: RunMeta) -> str:
    """One line on who judged the run: model, endpoint, calls sent and answered by the journal, cost."""
    j = meta.judge
    if j is None:
        return "none: faithfulness, completeness and hallucination not scored"
    c = j.calls
    cost = "" if c.get("unpriced_requests") else f", ${c.get('cost_usd', 0.0):.4f}"
    emb = f", embeddings {j.embedding_model}" if j.embedding_model else ""
    return (
        f"{j.model} (endpoint {j.endpoint}{emb}): {c.get('calls', 0)} calls sent, {c.get('cache_hits', 0)} from the "
        f"journal{cost}; at most {j.max_calls_per_sample} per question"
    )


def _calibration_html(meta: RunMeta) -> str:
    """The dataset's judge calibration (``goldset judge calibrate``): agreement with the experts overall, per
    language and type, its warning, and whether it measured the model that judged this run. A dataset that was never
    calibrated says so: the judge metrics then rest on a judge nobody checked."""
    from goldset.schema.manifest import calibration_summary

    summary = calibration_summary(meta.calibration)
    if summary is None:
        if meta.judge is None:
            return ""
        return (
            "<h2>Judge calibration</h2><p class='muted'>The dataset carries no judge calibration: how far an LLM "
            "judge agrees with its experts is unmeasured (run <code>goldset judge calibrate</code> before the "
            "release).</p>"
        )
    rows = [
        [
            escape(r.group),
            str(r.pairs),
            "–" if r.accuracy is None else f"{r.accuracy:.0%}",
            "too few pairs" if r.too_few else ("–" if r.kappa is None else f"{r.kappa:.2f}"),
            str(r.agreement.false_alarms),
            str(r.agreement.missed),
        ]
        for r in summary.rows
    ]
    out = [f"<h2>Judge calibration</h2><p>{escape(summary.headline)}.</p>"]
    if summary.warning:
        out.append(f"<p class='bad'>{escape(summary.warning)}.</p>")
    cal = meta.calibration
    if meta.judge is not None and cal is not None and cal.model and meta.judge.model != cal.model:
        out.append(
            f"<p class='muted'>This run was judged by {escape(meta.judge.model)}; the calibration measured "
            f"{escape(cal.model)} on the filters' groundedness check, so it speaks for that model.</p>"
        )
    out.append(_table(["group", "pairs", "accuracy", "Cohen's kappa", "false alarms", "missed"], rows))
    return "".join(out)


def _judge_failures_html(run: StoredRun, limit: int = 25) -> str:
    """The samples whose judge calls failed, with the reasons (their judge metrics are left out, not 0 or 1)."""
    failed = [s for s in run.scores if s.judge is not None and s.judge.failed]
    if not failed:
        return ""
    counts = ", ".join(f"{escape(m)} {n}" for m, n in sorted(run.summary.judge_failed.items()))
    rows = [
        [
            f"<code>{escape(s.pair_id)}</code>",
            escape(s.question_type),
            "<br>".join(f"{escape(call)}: {escape(reason)}" for call, reason in sorted(s.judge.failed.items())),
        ]
        for s in failed[:limit]
        if s.judge is not None
    ]
    more = f"<p class='muted'>{len(failed) - limit} more in scores.jsonl</p>" if len(failed) > limit else ""
    return (
        f"<h2>Samples the judge failed on ({len(failed)})</h2><p>Their judge metrics are left out of the means "
        f"(neither 0 nor 1). Values left out, per metric: {counts or '–'}.</p>"
        + _table(["pair", "type", "judge call: reason"], rows, numeric_from=99)
        + more
    )


def _judge_consistency_html(summary: RunSummary) -> str:
    """Judge self-consistency: per check, the verdicts read and those their own evidence does not bear out."""
    from goldset.evaluation.judge.consistency import CHECKS

    rows = [
        [escape(name), escape(CHECKS.get(name, ("", ""))[0]), escape(CHECKS.get(name, ("", ""))[1]),
         str(c.checked), str(c.caught), "–" if c.rate is None else f"{c.rate:.1%}"]
        for name, c in summary.judge_consistency.items()
    ]  # fmt: skip
    if not rows:
        return ""
    return (
        "<h2>Judge self-consistency</h2><p>Each verdict checked against the evidence it cites; those it does not "
        "bear out are not taken as the judge gave them.</p>"
        + _table(["check", "verdicts", "what was done", "checked", "caught", "rate"], rows, numeric_from=3)
    )


def _comparison_html(cmp: Comparison) -> str:
    rows = [
        [
            escape(m.metric),
            str(m.n),
            fmt(m.mean_a, m.metric),
            fmt(m.mean_b, m.metric),
            f"{m.diff:+.3f}",
            f"[{m.ci_low:+.3f}, {m.ci_high:+.3f}]",
            f"{m.p_adjusted:.3g}",
            f'<span class="{"good" if m.verdict == "better" else "bad" if m.verdict == "worse" else "muted"}">'
            f"{escape(m.verdict)}</span>",
        ]
        for m in cmp.metrics
    ]
    headers = ["metric", "n", "baseline", "this run", "difference", f"{cmp.confidence:.0%} CI", "p (Holm)", "verdict"]
    table = _table(headers, rows)
    regressions = _table(
        ["pair", "type", "metric", "baseline", "this run", "question"],
        [
            [
                f"<code>{escape(r.pair_id)}</code>",
                escape(r.question_type),
                escape(r.metric),
                fmt(r.value_a),
                fmt(r.value_b),
                escape(r.question or ""),
            ]
            for r in cmp.regressions
        ],
        numeric_from=99,
    )
    warning = ""
    if cmp.setting_differences:
        warning = (
            '<div class="diag critical"><b>The runs were scored with different settings</b>: '
            + escape("; ".join(cmp.setting_differences))
            + ". Differences below mix the systems with the settings.</div>"
        )
    return (
        f"{warning}<p>Over the questions both runs scored. {escape(cmp.method())}. "
        f"{cmp.n_worse} question(s) got worse on at least one quality metric.</p>{table}"
        + (f"<h3>Questions that got worse</h3>{regressions}" if cmp.regressions else "")
    )


def render_html(
    run: StoredRun, baseline: StoredRun | None = None, comparison: Comparison | None = None, worst: int = 15
) -> str:
    """The whole report as one HTML string (no external resources)."""
    s, meta = run.summary, run.meta
    base = baseline.summary if baseline else None
    found = diagnose(s)
    info = [
        ("run", meta.run_id),
        ("dataset", f"{meta.dataset} (version {meta.dataset_version or 'working copy'}, hash {meta.manifest_hash})"),
        ("target", meta.target),
        ("created", meta.created_at.isoformat()),
        ("git revision", meta.git_revision or "–"),
        ("questions", f"{s.n_samples} ({s.n_failed} failed)"),
        ("sample", f"{meta.sample['n']} questions, seed {meta.sample['seed']}" if meta.sample else "full set"),
        ("judge", judge_info(meta)),
    ]
    overall = overall_score_text(s)
    if overall is not None:
        info.append(("overall score", overall.removeprefix("overall score ")))
    if baseline:
        info.append(("baseline", baseline.run_id))
    head = "".join(f"<tr><td>{escape(k)}</td><td>{escape(str(v))}</td></tr>" for k, v in info)

    metric_rows = []
    for m, v in sorted(s.overall.items(), key=lambda kv: metric_order(kv[0])):
        left = s.judge_failed.get(m)
        row = [escape(m) + (f' <span class="bad">({left} judge failure(s) left out)</span>' if left else ""), fmt(v, m)]
        if base is not None:
            row += [fmt(base.overall.get(m), m), _delta_cell(m, v, base.overall.get(m))]
        metric_rows.append(row)
    headers = ["metric", "value"] + (["baseline", "difference"] if base is not None else [])
    system_rows = []
    for m, v in sorted(s.system.items()):
        row = [escape(m), fmt(v, m)]
        if base is not None:
            row += [fmt(base.system.get(m), m), _delta_cell(m, v, base.system.get(m))]
        system_rows.append(row)

    charts = []
    types = sorted(s.by_type)
    chart_metrics = [m for m in CHART_METRICS if any(m in s.by_type[t] for t in types)]
    if not chart_metrics:
        chart_metrics = sorted({m for t in types for m in s.by_type[t] if higher_is_better(m) is True})[:6]
    for m in chart_metrics:
        bars = [(t, s.by_type[t][m]) for t in types if s.by_type[t].get(m) is not None]
        marks = {t: base.by_type[t][m] for t in types if base and base.by_type.get(t, {}).get(m) is not None} or None
        top = max([1.0, *(v for _, v in bars)])
        charts.append(svg_bars(m, bars, max_value=top, marks=marks))

    latencies = [x.latency.total_ms for x in run.samples.values() if x.latency.total_ms is not None]
    hist = svg_histogram(f"total latency over {len(latencies)} questions", latencies)
    parts = [
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>goldset report {escape(meta.run_id)}"
        f"</title><style>{_CSS}</style></head><body>",
        f"<h1>goldset evaluation report</h1><table class='meta'>{head}</table>",
    ]
    if s.notes:
        parts.append(
            "<h2>Read these numbers with</h2><ul class='notes'>"
            + "".join(f"<li>{escape(n)}</li>" for n in s.notes)
            + "</ul>"
        )
    parts += [
        "<h2>Likely causes</h2>",
        _diagnoses_html(found, skipped_rules(s)),
        "<h2>Metrics</h2>",
        _table(headers, metric_rows) if metric_rows else "<p>No metric was computed.</p>",
    ]
    if comparison is not None:
        parts += ["<h2>Compared with the baseline</h2>", _comparison_html(comparison)]
    parts += ["<h2>By question type</h2>", f"<div class='charts'>{''.join(charts)}</div>"]
    type_metrics = sorted({m for t in types for m in s.by_type[t]}, key=metric_order)
    parts.append(
        _table(
            ["type", *type_metrics], [[escape(t), *(fmt(s.by_type[t].get(m), m) for m in type_metrics)] for t in types]
        )
    )
    parts += ["<h2>Latency and system</h2>", hist or "<p>No latency was reported.</p>"]
    if system_rows:
        parts.append(
            _table(["figure", "value"] + (["baseline", "difference"] if base is not None else []), system_rows)
        )
    if s.by_language:
        langs = sorted(s.by_language)
        lm = sorted({m for lang in langs for m in s.by_language[lang]})
        parts += [
            "<h2>By language</h2>",
            _table(
                ["language", *lm], [[escape(lang), *(fmt(s.by_language[lang].get(m), m) for m in lm)] for lang in langs]
            ),
        ]
    if s.by_doc:
        key = next((m for m in ("recall@5", "mrr", "context_recall") if any(m in d for d in s.by_doc.values())), None)
        docs = sorted(s.by_doc, key=lambda d: (s.by_doc[d].get(key, 0.0) if key else 0.0, d))[:20]
        dm = sorted({m for d in docs for m in s.by_doc[d]})[:8]
        parts += [
            f"<h2>Documents{' with the lowest ' + escape(key) if key else ''} (20 at most)</h2>",
            _table(["document", *dm], [[escape(d), *(fmt(s.by_doc[d].get(m), m) for m in dm)] for d in docs]),
        ]
    parts += [f"<h2>Worst questions ({min(worst, len(run.scores))})</h2>", _worst_html(run, worst)]
    parts.append(_judge_failures_html(run))
    parts.append(_judge_consistency_html(s))
    parts.append(_calibration_html(meta))
    if s.left_out:
        parts.append(f"<p class='muted'>Weighted metrics not computed in this run: {escape(', '.join(s.left_out))}</p>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(
    path: Path,
    run: StoredRun,
    baseline: StoredRun | None = None,
    *,
    n_resamples: int = 2000,
    seed: int = 0,
    allow_different_settings: bool = False,
) -> Path:
    """Write the HTML report of ``run``, with a paired comparison when a ``baseline`` is given (of the same dataset,
    scored with the same settings unless ``allow_different_settings``: :func:`~.compare.check_comparable`)."""
    comparison = None
    if baseline is not None:
        from goldset.evaluation.compare import compare_runs

        comparison = compare_runs(
            baseline, run, n_resamples=n_resamples, seed=seed, allow_different_settings=allow_different_settings
        )
    html = render_html(run, baseline, comparison)
    atomic_write_text(Path(path), html)
    return Path(path)


# --------------------------------------------------------------------------------------------------- terminal


def summary_table(
    summary: RunSummary, baseline: RunSummary | None = None, title: str | None = None, width: int | None = None
) -> RenderableType:
    """The run's metrics for the terminal: quality metrics (overall, baseline and Δ, then one column per question
    type when ``width`` leaves room for them), then the system figures in a table of their own."""
    from rich.console import Group
    from rich.table import Table

    types = sorted(summary.by_type)
    metrics = sorted(summary.overall, key=metric_order)
    name_w = max([len("metric"), *(len(m) for m in metrics)])
    fixed = 4 + name_w + 9 * (3 if baseline is not None else 1)
    headers = {t: t for t in types}
    if width is not None and fixed + sum(max(len(t), 5) + 3 for t in types) > width:
        headers = {t: (t[:4] + "." if len(t) > 5 else t) for t in types}  # "multi_hop" → "mult."
    shown = types if width is None or fixed + sum(max(len(h), 5) + 3 for h in headers.values()) <= width else []

    table = Table(title=title or f"run {summary.run_id}", title_justify="left")
    table.add_column("metric", no_wrap=True)
    table.add_column("overall", justify="right", no_wrap=True)
    if baseline is not None:
        table.add_column("baseline", justify="right", no_wrap=True)
        table.add_column("Δ", justify="right", no_wrap=True)
    for t in shown:
        table.add_column(headers[t], justify="right", no_wrap=True)
    for m in metrics:
        v = summary.overall[m]
        row: list[Any] = [m, fmt(v, m)]
        if baseline is not None:
            b = baseline.overall.get(m)
            row += [fmt(b, m), "–" if b is None else f"{v - b:+.3f}"]
        row += [fmt(summary.by_type[t].get(m), m) for t in shown]
        table.add_row(*row)
    if types and not shown:
        table.caption = "per question type: widen the terminal, or see the HTML report (--html)"

    system = Table(title="system", title_justify="left")
    system.add_column("figure", no_wrap=True)
    system.add_column("value", justify="right", no_wrap=True)
    if baseline is not None:
        system.add_column("baseline", justify="right", no_wrap=True)
    for m, v in sorted(summary.system.items()):
        srow = [m, fmt(v, m)]
        if baseline is not None:
            srow.append(fmt(baseline.system.get(m), m))
        system.add_row(*srow)
    return Group(table, system) if summary.system else table

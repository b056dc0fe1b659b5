"""Reports of a run: a self-contained HTML page (inline CSS and SVG, no CDN) and a rich table for the terminal.

The page shows, in the order a reader asks: what was run (and which model judged it), what is likely wrong
(:mod:`.diagnose`), the metrics (with the baseline's values and paired-bootstrap intervals when a baseline is given;
judge metrics whose judge call failed on some samples say how many were left out), the metrics per question type as
bar charts, the latency distribution, per-language and per-document tables, the worst questions with the contexts
the system retrieved for them (with their page when the system gave it: "handbook.pdf, p. 12") and the judge's claim
verdicts, and the samples whose judge calls failed. When `goldset coverage` was computed for the very dataset content
the run evaluated, a "Coverage of real traffic" section (:func:`coverage_section`) says how much of the real
questions the golden set covers; a coverage of other data is never shown as the run's (:func:`run_coverage`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goldset.evaluation.diagnose import Diagnosis, diagnose, skipped_rules
from goldset.evaluation.layers import (
    LAYERS,
    QUESTIONS,
    Interval,
    headlines,
    layer_of,
    mean_intervals,
    percentile_interval,
    split_layers,
)
from goldset.evaluation.matcher import Matcher
from goldset.evaluation.metrics.registry import higher_is_better, metric_order
from goldset.evaluation.runs import StoredRun
from goldset.evaluation.scoring import weighted_score
from goldset.evaluation.settings import EvalSettings
from goldset.io import atomic_write_text
from goldset.schema import QAPair, RunMeta, RunSummary, SampleScores
from goldset.schema.coverage import CoverageRecord
from goldset.schema.kb import location
from goldset.workspace import Workspace, WorkspaceLike

if TYPE_CHECKING:
    from rich.console import RenderableType

    from goldset.dataset import Dataset
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

#: Fonts tried in order: the system UI font, then CJK fonts common on Linux, macOS and Windows (Chinese, Japanese
#: and Korean questions otherwise draw as boxes where the UI font lacks them), then any sans-serif.
FONT_STACK = (
    'system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","Noto Sans CJK SC","Noto Sans SC","Source Han Sans SC",'
    '"PingFang SC","Hiragino Sans GB","Microsoft YaHei","WenQuanYi Micro Hei","Noto Sans CJK JP","Noto Sans CJK KR",'
    "sans-serif"
)

#: The report's stylesheet; importable (with :func:`page`) by other pages of goldset (the trend page).
CSS = (
    "*{box-sizing:border-box}"
    f"body{{font-family:{FONT_STACK};margin:1.5rem auto;max-width:1200px;color:#222;padding:0 1rem;"
    "overflow-wrap:anywhere}"
    """
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
h3{font-size:1rem;margin:1rem 0 .3rem}
table{border-collapse:collapse;margin:.5rem 0;font-size:.9rem;max-width:100%}th,td{padding:.25rem .6rem;
border-bottom:1px solid #eee;text-align:left;vertical-align:top}td.n,th.n{text-align:right;
font-variant-numeric:tabular-nums;white-space:nowrap}
.meta td:first-child{color:#666;white-space:nowrap}.good{color:#2a7a3a}.bad{color:#b03030}.muted{color:#888}
.diag{border-left:4px solid #d08c2e;background:#fff8ee;padding:.5rem .8rem;margin:.5rem 0}
.diag.critical{border-color:#b03030;background:#fdf0f0}.charts{display:flex;flex-wrap:wrap;gap:1rem}
details{margin:.3rem 0}summary{cursor:pointer;color:#3b6ea5}
pre{white-space:pre-wrap;background:#f6f6f6;padding:.4rem;font-size:.8rem;margin:.2rem 0;font-family:inherit}
.layers{display:grid;grid-template-columns:repeat(auto-fit,minmax(340px,1fr));gap:1rem}
.layer{border:1px solid #ddd;border-radius:6px;padding:.2rem .7rem .6rem;min-width:0}
.layer table{font-size:.85rem;width:100%}.layer td:first-child{overflow-wrap:normal}.layer th{white-space:normal}
.layer th,.layer td{padding:.2rem .35rem}.layer h3{margin-top:.6rem}
.score{font-size:1.6rem;font-weight:600}.ci{color:#666;font-size:.85rem;white-space:nowrap}
.question{border:1px solid #e3e3e3;border-radius:6px;padding:.5rem .8rem;margin:.6rem 0;break-inside:avoid}
.question .head{display:flex;flex-wrap:wrap;gap:.2rem 1rem;color:#555;font-size:.85rem}
.question .text{font-weight:600;margin:.3rem 0}.why{color:#8a4b00;font-size:.9rem}
.ctx{border-left:4px solid #ccc;padding-left:.5rem;margin:.3rem 0}.ctx.hit{border-color:#2a7a3a}
.tag{display:inline-block;font-size:.75rem;padding:0 .35rem;border-radius:3px;background:#eee;margin-right:.3rem}
.tag.hit{background:#e3f3e6;color:#1f5e2c}.claims li{margin:.2rem 0}blockquote{margin:.1rem 0 .1rem 1rem;
color:#555;font-size:.85rem;border-left:2px solid #ddd;padding-left:.4rem}
.cov table{width:100%}.cov table.meta,.cov table.figures{width:auto}.cov .nearest td:first-child{width:40%}
.cov ul{margin:.1rem 0;padding-left:1.1rem}
.cov .figures td{font-size:1rem}.cov .figures td.n{font-size:1.3rem;font-weight:600}
@media print{body{max-width:none;margin:0}details::details-content{content-visibility:visible;display:block}
summary{color:#222}h2{break-after:avoid}}
"""
)
_CSS = CSS  # the earlier name


def page(title: str, body: str, *, lang: str = "en") -> str:
    """A whole self-contained page (inline stylesheet, no script, nothing fetched) around ``body`` (HTML)."""
    return (
        f"<!doctype html><html lang='{escape(lang)}'><head><meta charset='utf-8'>"
        f"<meta name='viewport' content='width=device-width,initial-scale=1'><title>{escape(title)}</title>"
        f"<style>{CSS}</style></head><body>\n{body}\n</body></html>"
    )


def fmt(value: float | None, metric: str = "") -> str:
    """Quality metrics with 3 decimals, milliseconds and counts as whole numbers, missing as an en dash."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if metric == "n" or metric.startswith("n_") or (metric.endswith("_total") and "token" in metric):
        return f"{value:,.0f}"
    if metric.startswith("cost_usd"):
        return f"{value:.4f}" if abs(value) < 100 else f"{value:,.0f}"
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
    # Ticks at the quarters, so a bar's value can be read without hovering it.
    for q in (0.25, 0.5) if clipped else (0.25, 0.5, 0.75):  # the clipped right label is long
        x = pad + q * plot_w
        parts.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{pad + plot_h}" y2="{pad + plot_h + 4}" stroke="#999"/>'
            f'<text x="{x:.1f}" y="{height - 8}" font-size="11" text-anchor="middle">{lo + q * span:.0f}</text>'
        )
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
    shown = f"{d:+.0f}" if fmt(value, metric).replace(",", "").lstrip("-").isdigit() else f"{d:+.3f}"
    return f'<span class="{cls}">{shown}</span>'


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


#: What the worst list ranks by and which questions it leaves out, as the report states it.
WORST_RULE = (
    "Ranked by each question's own overall score (the run's weights over the question's metrics, penalties as "
    "1 − value, renormalised over the metrics it has; failed questions first), lowest first. A question is listed "
    "only when it failed or a headline metric of retrieval or generation falls short of its best value: a question "
    "with perfect headline scores is never among the worst, however few others there are."
)


def _best(metric: str) -> float | None:
    d = higher_is_better(metric)
    return None if d is None else (1.0 if d else 0.0)


def _question_score(s: SampleScores, weights: Mapping[str, float], penalties: Iterable[str]) -> float:
    """One question's overall score (what the worst list ranks by); -1 for a failed question."""
    if s.failed:
        return -1.0
    values = {k: v for k, v in s.metrics.items() if v is not None and not math.isnan(v)}
    score, _, _ = weighted_score(values, weights, penalties)
    if score is not None:
        return score
    upward = [v for k, v in values.items() if higher_is_better(k) is True]
    return sum(upward) / len(upward) if upward else 1.0


def _shortfalls(s: SampleScores, watched: Sequence[str]) -> list[str]:
    """Why a question is among the worst: its failure, or each watched metric short of its best value."""
    if s.failed:
        return [f"failed: {s.error or 'the system raised'}"]
    out = []
    for m in watched:
        v, best = s.metrics.get(m), _best(m)
        if v is None or best is None or math.isnan(v) or abs(v - best) < 1e-9:
            continue
        out.append(f"{m} {fmt(v, m)}" + (" (best 0)" if best == 0 else ""))
    if s.judge is not None and s.judge.claims:
        bad = [c for c in s.judge.claims if c.verdict != "supported"]
        if bad:
            out.append(f"{len(bad)} of {len(s.judge.claims)} claim(s) not supported by the contexts")
    return out


def worst_questions(
    run: StoredRun, n: int, watched: Sequence[str], weights: Mapping[str, float], penalties: Iterable[str]
) -> list[tuple[SampleScores, float, list[str]]]:
    """The ``n`` worst questions by :data:`WORST_RULE`: (scores, the question's score, why it is listed)."""
    ranked = sorted(run.scores, key=lambda s: (_question_score(s, weights, penalties), s.pair_id))
    out = []
    for s in ranked:
        why = _shortfalls(s, watched)
        if why:
            out.append((s, _question_score(s, weights, penalties), why))
        if len(out) >= n:
            break
    return out


_VERDICT_MARK = {"supported": "✓", "contradicted": "✗", "not_found": "?"}
_VERDICT_WORD = {"supported": "supported", "contradicted": "contradicted", "not_found": "not found in the contexts"}


def _claims_html(s: SampleScores) -> str:
    """The judge's verdict per claim (✓ supported, ✗ contradicted, ? not found), the context it cites and its quote,
    then the reference's key points the answer covers or misses."""
    j = s.judge
    if j is None:
        return ""
    out = []
    if j.claims:
        items = "".join(
            f"<li><b>{_VERDICT_MARK[c.verdict]} {escape(_VERDICT_WORD[c.verdict])}</b>: {escape(c.claim)}"
            + (f' <span class="muted">[context #{c.context}]</span>' if c.context else "")
            + (f"<blockquote>{escape(c.quote)}</blockquote>" if c.quote else "")
            + (' <span class="bad">(quote not found in that context)</span>' if c.quote_verified is False else "")
            + "</li>"
            for c in j.claims
        )
        out.append(f"<h4>The judge, claim by claim</h4><ul class='claims'>{items}</ul>")
    if j.points:
        items = "".join(f"<li>{'✓ covered' if p.covered else '✗ missed'}: {escape(p.point)}</li>" for p in j.points)
        out.append(f"<h4>The reference's points</h4><ul class='claims'>{items}</ul>")
    if j.relevance_reason:
        out.append(f"<p class='muted'>Relevancy {j.relevance_rating or '–'}/5: {escape(j.relevance_reason)}</p>")
    return "".join(out)


def _matcher(meta: RunMeta) -> Matcher:
    """The evidence matcher the run was scored with (its settings as the run recorded them)."""
    cfg = meta.metric_config
    defaults = EvalSettings()
    return Matcher(
        cfg.get("matcher", defaults.matcher),
        cfg.get("text_match_min", defaults.text_match_min),
        cfg.get("text_match_min_tokens", defaults.text_match_min_tokens),
        cfg.get("text_match_rendered", defaults.text_match_rendered),
    )


def _question_html(
    s: SampleScores, score: float, why: list[str], run: StoredRun, pair: QAPair | None, matcher: Matcher
) -> str:
    sample = run.samples.get(s.pair_id)
    question = (sample.question if sample and sample.question else None) or (pair.question if pair else "")
    headline = " · ".join(f"{escape(w)}" for w in why)
    contexts = sample.contexts if sample else []
    units = matcher.units(pair) if pair is not None and pair.evidence else []
    hits = [[i for i, u in enumerate(units) if matcher.matches(c, u)] for c in contexts]
    ctx_html = []
    for rank, (c, hit) in enumerate(zip(contexts, hits, strict=True), 1):
        where = " ".join(x for x in (location(c.doc_id, c.page) if c.doc_id else "", c.chunk_id or "") if x) + (
            f" · score {c.score:.3f}" if c.score is not None else ""
        )
        tag = (
            f'<span class="tag hit">matches evidence {", ".join(f"#{i + 1}" for i in hit)}</span>'
            if hit
            else ('<span class="tag">no evidence</span>' if units else "")
        )
        ctx_html.append(
            f'<div class="ctx{" hit" if hit else ""}"><b>#{rank}</b> {tag}<span class="muted">{escape(where)}</span>'
            f"<pre>{escape(c.text[:1200])}{'…' if len(c.text) > 1200 else ''}</pre></div>"
        )
    evidence = ""
    if units and pair is not None:
        found = {i: r for r in range(len(hits), 0, -1) for i in hits[r - 1]}
        evidence = (
            "<h4>Evidence the reference cites</h4><ol>"
            + "".join(
                f"<li>{escape(e.quote[:400])} <span class='muted'>({escape(e.doc_id)}; "
                + (f"retrieved at rank {found[i]}" if i in found else "<span class='bad'>not retrieved</span>")
                + ")</span></li>"
                for i, e in enumerate(pair.evidence)
            )
            + "</ol>"
        )
    reference = (
        f"<h4>Reference</h4><pre>{escape(pair.answer)}</pre>"
        if pair is not None
        else "<p class='muted'>Reference not shown: the dataset was not at hand.</p>"
    )
    answer = f"<h4>Answer</h4><pre>{escape(sample.answer[:2000]) if sample and sample.answer else '(empty)'}</pre>"
    n_hit = sum(1 for h in hits if h)
    all_metrics = _table(
        ["metric", "value"],
        [[escape(k), fmt(v, k)] for k, v in sorted(s.metrics.items(), key=lambda kv: metric_order(kv[0]))],
    )
    summary = (
        f"reference, answer, {len(contexts)} context(s)"
        + (f" ({n_hit} matching evidence)" if units else "")
        + (f", the judge's {len(s.judge.claims)} claim verdict(s)" if s.judge and s.judge.claims else "")
    )
    lang = escape(s.language or "en")
    return (
        f'<article class="question" lang="{lang}"><div class="head"><code>{escape(s.pair_id)}</code>'
        f"<span>{escape(s.question_type)}</span><span>{lang}</span>"
        f"<span>question score {'failed' if s.failed else f'{score:.3f}'}</span></div>"
        f'<div class="text">{escape(question or "(question not recorded)")}</div>'
        f'<div class="why">Why listed: {"" if s.failed else "short of perfect on "}{headline}</div>'
        f"<details><summary>{escape(summary)}</summary>{reference}{answer}{evidence}"
        f"<h4>Contexts, in rank order</h4>{''.join(ctx_html) or '<p>none retrieved</p>'}{_claims_html(s)}"
        f"<details><summary>all {len(s.metrics)} metrics of this question</summary>{all_metrics}</details>"
        f"</details></article>"
    )


def _worst_html(run: StoredRun, n: int, watched: Sequence[str], pairs: Mapping[str, QAPair] | None) -> str:
    weights = run.summary.weights_used
    penalties = run.meta.metric_config.get("penalties", ["hallucination"])
    worst = worst_questions(run, n, watched, weights, penalties)
    matcher = _matcher(run.meta)
    rule = f"<p class='muted'>{escape(WORST_RULE)}</p>"
    if not worst:
        return rule + "<p>No question falls short: every one has its best headline values.</p>"
    return rule + "".join(
        _question_html(s, score, why, run, (pairs or {}).get(s.pair_id), matcher) for s, score, why in worst
    )


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
    changed = [r for r, m in zip(rows, cmp.metrics, strict=True) if m.verdict in ("better", "worse")]
    table = (
        (_table(headers, changed) if changed else "<p>No metric changed clearly.</p>")
        + f"<details><summary>all {len(rows)} metrics compared</summary>{_table(headers, rows)}</details>"
    )
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


def _ci(iv: Interval | None, metric: str) -> str:
    if iv is None:
        return "–"
    return f'<span class="ci">[{fmt(iv.low, metric)}, {fmt(iv.high, metric)}]</span>'


def _metric_name(m: str, s: RunSummary) -> str:
    left = s.judge_failed.get(m)
    return escape(m) + (f' <span class="bad">({left} judge failure(s) left out)</span>' if left else "")


def _layer_html(
    layer: str,
    run: StoredRun,
    names: list[str],
    values: Mapping[str, float],
    base: Mapping[str, float] | None,
    intervals: Mapping[str, Interval | None],
) -> str:
    """One layer's card: its headline metrics with intervals, weights and the baseline, every other metric a click
    away."""
    s = run.summary
    weights = s.weights_used
    heads = headlines(layer, names, weights)
    weighted = layer != "system"  # system figures carry no weight in the overall score
    headers = ["metric", "value, 95% CI"] + (["weight"] if weighted else []) + (["Δ baseline"] if base else [])

    def head_row(m: str) -> list[str]:
        cells = [_metric_name(m, s), f"{fmt(values.get(m), m)}<br>{_ci(intervals.get(m), m)}"]
        if weighted:
            cells.append(f"{weights[m]:.2f}" if m in weights else "–")
        if base is not None:
            cells.append(
                f"{_delta_cell(m, values.get(m), base.get(m))}<br><span class='ci'>was {fmt(base.get(m), m)}</span>"
            )
        return cells

    def row(m: str) -> list[str]:
        cells = [_metric_name(m, s), fmt(values.get(m), m)]
        if base is not None:
            cells += [fmt(base.get(m), m), _delta_cell(m, values.get(m), base.get(m))]
        return cells

    others = [m for m in names if m not in heads]
    more = ""
    if others:
        more = (
            f"<details><summary>all {len(names)} {layer} figures</summary>"
            + _table(["metric", "value"] + (["baseline", "Δ"] if base is not None else []), [row(m) for m in names])
            + "</details>"
        )
    table = _table(headers, [head_row(m) for m in heads]) if heads else "<p class='muted'>Not measured.</p>"
    return (
        f'<section class="layer" id="layer-{layer}"><h3>{layer.capitalize()}</h3>'
        f"<p class='muted'>{escape(QUESTIONS[layer])}</p>{table}{more}</section>"
    )


def _overall_html(s: RunSummary, iv: Interval | None, penalties: Iterable[str]) -> str:
    if s.overall_score is None:
        return "<p>No overall score: none of the weighted metrics (eval.weights) was computed.</p>"
    pen = set(penalties)
    rows = [
        [
            escape(m),
            layer_of(m),
            f"{w:.2f}",
            fmt(s.overall.get(m), m),
            ("1 − value" if m in pen else "value"),
            f"{w * ((1 - s.overall[m]) if m in pen else s.overall[m]):.3f}" if m in s.overall else "–",
        ]
        for m, w in sorted(s.weights_used.items(), key=lambda kv: (LAYERS.index(layer_of(kv[0])), -kv[1]))
    ]
    left = (
        f"<p class='muted'>Weighted metrics not computed in this run: {escape(', '.join(s.left_out))} (left out, "
        f"the other weights renormalised).</p>"
        if s.left_out
        else ""
    )
    ci = f" {_ci(iv, 'score')}" if iv is not None else ""
    return (
        f"<p><span class='score'>{s.overall_score:.3f}</span>{ci} <span class='muted'>overall score: the weighted "
        f"mean below (eval.weights); interval: 95% percentile bootstrap over the questions</span></p>"
        + _table(["metric", "layer", "weight", "value", "counts as", "contributes"], rows, numeric_from=2)
        + left
    )


def _transposed(title: str, groups: Mapping[str, Mapping[str, float]], label: str) -> str:
    """Metrics as rows and groups (question types, languages) as columns: a dozen columns at most, never 34."""
    keys = sorted(groups)
    metrics = sorted({m for g in keys for m in groups[g]}, key=metric_order)
    rows = [[escape(m), *(fmt(groups[g].get(m), m) for g in keys)] for m in metrics]
    return f"<details><summary>{escape(title)}</summary>" + _table([label, *keys], rows) + "</details>"


#: Uncovered questions shown with their nearest golden question, most asked first.
COVERAGE_NEAREST = 10


def _lang_attr(text: str, language: str | None = None) -> str:
    from goldset.text import detect_language

    return f" lang='{escape(language or detect_language(text))}'"


def coverage_section(record: CoverageRecord, *, meta: RunMeta | None = None, nearest: int = COVERAGE_NEAREST) -> str:
    """The "Coverage of real traffic" section of a page: coverage overall and weighted by count with the method and
    threshold it was decided by, the topic clusters of the uncovered questions with examples and counts, and the
    nearest golden question of the most asked uncovered questions. ``meta``: the run it is shown beside (of the same
    dataset content: :func:`run_coverage`), so a sampled run says the coverage is of the whole golden set."""
    r = record
    if r.method == "embedding":
        how = f"embedding cosine ({r.embedding_model})" if r.embedding_model else "embedding cosine"
    else:
        how = "lexical similarity (token-set Dice; CJK characters one token each: it does not cross languages)"
    facts = [
        ("real questions", f"{r.questions} distinct, asked {r.asked} time(s), from {Path(r.source).name}"),
        ("golden set", f"{r.golden} golden pair(s) of {r.label}"),
        ("method", f"each real question's nearest golden question by {how}"),
        ("covered at", f"similarity ≥ {r.threshold:g}"),
        ("computed", r.computed_at.isoformat()),
    ]
    if r.redacted:
        removed = ", ".join(f"{k} × {v}" for k, v in sorted(r.redacted.items()))
        facts.append(("personal data", f"redacted when the questions were read ({removed})"))
    notes = []
    if meta is not None:
        notes.append("Computed for the same dataset content this run evaluated (the same hash).")
        if meta.sample:
            notes.append(f"This run evaluated a sample of {meta.sample['n']} question(s); the coverage is of the "
                         f"version's whole golden set.")  # fmt: skip
    lead = "<table class='meta'>" + "".join(f"<tr><td>{escape(k)}</td><td>{escape(v)}</td></tr>" for k, v in facts)
    lead += "</table>" + "".join(f"<p class='muted'>{escape(n)}</p>" for n in notes)
    figures = (
        "<table class='figures'><thead><tr><th>coverage</th><th class='n'>share</th><th class='n'>covered</th>"
        "</tr></thead><tbody>"
        f"<tr><td>overall (distinct questions)</td><td class='n'>{r.share:.0%}</td><td class='n'>{r.covered} of "
        f"{r.questions}</td></tr>"
        f"<tr><td>weighted by how often each was asked</td><td class='n'>{r.weighted_share:.0%}</td>"
        f"<td class='n'>{r.asked_covered} of {r.asked}</td></tr></tbody></table>"
    )
    chart = svg_bars("covered share of real traffic", [("questions", r.share), ("weighted", r.weighted_share)])
    parts = [
        f"<section class='cov' id='coverage'>{lead}",
        figures,
        f"<div class='charts'>{chart}</div>",
    ]
    if not r.clusters:
        parts.append("<p>Every real question is covered.</p>" if r.questions else "<p>No real question was read.</p>")
    else:
        rows = [
            [
                f"<span{_lang_attr(c.topic)}>{escape(c.topic)}</span>",
                "<ul>" + "".join(f"<li{_lang_attr(e)}>{escape(e)}</li>" for e in c.examples) + "</ul>",
                str(len(c.question_ids)),
                str(c.asked),
            ]
            for c in r.clusters
        ]
        parts += [
            f"<h3>Uncovered topics ({len(r.clusters)} cluster(s) of {r.questions - r.covered} question(s), most "
            "asked first)</h3>",
            _table(["topic", "example questions", "questions", "asked"], rows, numeric_from=2),
        ]
        uncovered = [m for m in r.matches if not m.covered]
        shown = sorted(uncovered, key=lambda m: (-m.count, m.question_id))[:nearest]
        rows = [
            [
                f"<span{_lang_attr(m.question, m.language)}>{escape(m.question)}</span>",
                f"<span{_lang_attr(m.nearest)}>{escape(m.nearest)}</span>" if m.nearest else "–",
                str(m.count),
                f"{m.similarity:.2f}",
            ]
            for m in shown
        ]
        more = f" ({len(uncovered) - len(shown)} more not shown)" if len(uncovered) > len(shown) else ""
        parts += [
            f"<h3>Nearest golden question of the most asked uncovered questions{escape(more)}</h3>",
            _table(["real question", "nearest golden question", "asked", "similarity"], rows, numeric_from=2).replace(
                "<table>", "<table class='nearest'>", 1
            ),
        ]
    parts.append("</section>")
    return "".join(parts)


def run_coverage(
    run: StoredRun, ws: WorkspaceLike | None = None, *, coverage_file: Path | None = None
) -> tuple[CoverageRecord | None, str | None]:
    """The coverage to show beside ``run``: one computed for the dataset content the run evaluated (the same
    ``manifest_hash``), or None and why not (None, None: no coverage to speak of).

    ``coverage_file`` (a record `goldset coverage --out` wrote) of other data is refused (an InputError); without
    it the workspace's record of the run's content is used, and when the workspace only has records of other
    content the report says so and shows none of their figures."""
    from goldset.data import WorkspaceData, read_coverage
    from goldset.errors import GoldsetError, InputError
    from goldset.workspace import optional_workspace

    meta = run.meta
    if meta.reference_free:
        return None, None
    fix = f"compute it for the run's dataset: `goldset coverage --queries FILE --dataset {meta.dataset}`"
    if coverage_file is not None:
        record = read_coverage(coverage_file)
        if record.manifest_hash != meta.manifest_hash:
            raise InputError(
                f"{coverage_file}: coverage computed for {record.label}, but run {meta.run_id} evaluated "
                f"{meta.dataset} (hash {meta.manifest_hash}); {fix}"
            )
        return record, None
    try:
        where = ws if isinstance(ws, Workspace) else optional_workspace(ws)
    except GoldsetError:
        where = None
    if where is None:
        return None, None
    data = WorkspaceData(where)
    try:
        found = data.coverage(meta.manifest_hash) if meta.manifest_hash else None
        others: list[CoverageRecord] = [] if found is not None else data.coverages()
    except GoldsetError as exc:
        return None, f"Coverage not shown: a coverage record of this workspace could not be read ({exc})."
    if found is not None:
        return found, None
    if not others:
        return None, None
    kept = "; ".join(o.label for o in others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
    return None, (
        f"Coverage not shown: the coverage kept in this workspace was computed for other data ({kept}), not for "
        f"the dataset this run evaluated ({meta.dataset}, hash {meta.manifest_hash or 'unknown'}); {fix}."
    )


def coverage_page(record: CoverageRecord) -> str:
    """A standalone page of one coverage (`goldset coverage --html FILE`): the report's coverage section alone."""
    title = f"Coverage of real traffic: {record.dataset}"
    return page(title, f"<h1>{escape(title)}</h1>\n{coverage_section(record)}")


def render_html(
    run: StoredRun,
    baseline: StoredRun | None = None,
    comparison: Comparison | None = None,
    worst: int = 15,
    *,
    pairs: Mapping[str, QAPair] | None = None,
    pairs_note: str | None = None,
    extra_sections: Sequence[tuple[str, str]] = (),
    n_resamples: int = 1000,
    coverage: CoverageRecord | None = None,
    coverage_note: str | None = None,
) -> str:
    """The whole report as one HTML string (no external resources).

    ``pairs`` (the dataset's pairs by id) lets the worst questions show their reference and which contexts match
    its evidence; ``pairs_note`` says why they are missing. ``extra_sections`` are (heading, HTML) blocks other
    parts of goldset add (e.g. the judge's self-consistency), placed after the per-group figures and before the
    questions. ``coverage`` (of the dataset content the run evaluated: :func:`run_coverage`) adds the "Coverage of
    real traffic" section; ``coverage_note`` says why there is none.
    """
    if coverage is not None and coverage.manifest_hash != run.meta.manifest_hash:
        from goldset.errors import InputError

        raise InputError(
            f"coverage of {coverage.label} is not of the dataset run {run.meta.run_id} evaluated "
            f"({run.meta.dataset}, hash {run.meta.manifest_hash}); compute it with --dataset {run.meta.dataset}"
        )
    s, meta = run.summary, run.meta
    base = baseline.summary if baseline else None
    found = diagnose(s)
    penalties = meta.metric_config.get("penalties", ["hallucination"])
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
    if baseline:
        info.append(("baseline", baseline.run_id))
    head = "".join(f"<tr><td>{escape(k)}</td><td>{escape(str(v))}</td></tr>" for k, v in info)

    by_layer = split_layers(s.overall)
    quality = [m for layer in ("retrieval", "generation") for m in headlines(layer, by_layer[layer], s.weights_used)]
    intervals: dict[str, Interval | None] = dict(
        mean_intervals(run.scores, quality, weights=s.weights_used, penalties=penalties, n_resamples=n_resamples)
    )
    latencies = [x.latency.total_ms for x in run.samples.values() if x.latency.total_ms is not None]
    for name, q in (("latency_p50_ms", 0.5), ("latency_p95_ms", 0.95)):
        intervals[name] = percentile_interval(latencies, q, n_resamples=n_resamples)

    layers_html = "".join(
        _layer_html(layer, run, by_layer[layer], s.overall, base.overall if base else None, intervals)
        for layer in ("retrieval", "generation")
    ) + _layer_html("system", run, sorted(s.system), s.system, base.system if base else None, intervals)

    charts = []
    types = sorted(s.by_type)
    chart_metrics = [m for m in quality if any(m in s.by_type[t] for t in types)]
    if not chart_metrics:
        chart_metrics = [m for m in CHART_METRICS if any(m in s.by_type[t] for t in types)][:6]
    for m in chart_metrics:
        bars = [(t, s.by_type[t][m]) for t in types if s.by_type[t].get(m) is not None]
        marks = {t: base.by_type[t][m] for t in types if base and base.by_type.get(t, {}).get(m) is not None} or None
        top = max([1.0, *(v for _, v in bars)])
        charts.append(svg_bars(f"{m} ({layer_of(m)})", bars, max_value=top, marks=marks))
    hist = svg_histogram(f"total latency over {len(latencies)} questions", latencies)

    parts = [
        f"<h1>goldset evaluation report</h1><table class='meta'>{head}</table>",
    ]
    if s.notes:
        parts.append(
            "<h2>Read these numbers with</h2><ul class='notes'>"
            + "".join(f"<li>{escape(n)}</li>" for n in s.notes)
            + "</ul>"
        )
    parts += [
        "<h2>Overall score</h2>",
        _overall_html(s, intervals.get("overall score"), penalties),
        "<h2>Retrieval, generation, system</h2>",
        f"<div class='layers'>{layers_html}</div>" if s.overall or s.system else "<p>No metric was computed.</p>",
        "<h2>Likely causes</h2>",
        _diagnoses_html(found, skipped_rules(s)),
    ]
    if comparison is not None:
        parts += ["<h2>Compared with the baseline</h2>", _comparison_html(comparison)]
    if coverage is not None or coverage_note:
        parts.append("<h2>Coverage of real traffic</h2>")
        parts.append(coverage_section(coverage, meta=meta) if coverage is not None
                     else f"<p class='muted' id='coverage-note'>{escape(coverage_note or '')}</p>")  # fmt: skip
    parts += ["<h2>By question type</h2>", f"<div class='charts'>{''.join(charts)}</div>"]
    if types:
        parts.append(_transposed(f"every metric per question type ({len(types)} types)", s.by_type, "metric"))
    parts += ["<h2>Latency</h2>", hist or "<p>No latency was reported.</p>"]
    if s.by_language:
        parts += [
            "<h2>By language</h2>",
            _table(
                ["language", "questions", *quality[:5]],
                [
                    [
                        escape(lang),
                        str(sum(1 for x in run.scores if x.language == lang)),
                        *(fmt(s.by_language[lang].get(m), m) for m in quality[:5]),
                    ]
                    for lang in sorted(s.by_language)
                ],
            ),
            _transposed("every metric per language", s.by_language, "metric"),
        ]
    if s.by_doc:
        key = next((m for m in ("recall@5", "mrr", "context_recall") if any(m in d for d in s.by_doc.values())), None)
        docs = sorted(s.by_doc, key=lambda d: (s.by_doc[d].get(key, 0.0) if key else 0.0, d))[:20]
        dm = [m for m in quality if any(m in s.by_doc[d] for d in docs)][:6]
        parts += [
            f"<h2>Documents{' with the lowest ' + escape(key) if key else ''} (20 at most)</h2>",
            _table(["document", *dm], [[escape(d), *(fmt(s.by_doc[d].get(m), m) for m in dm)] for d in docs]),
        ]
    # Sections other parts of goldset add (the judge's self-consistency, …) go here, before the questions.
    for title, body in extra_sections:
        parts += [f"<h2>{escape(title)}</h2>", body]
    watched = [m for m in quality if layer_of(m) in ("retrieval", "generation")]
    worst_html = _worst_html(run, worst, watched, pairs)
    parts += [f"<h2>Worst questions (at most {worst})</h2>"]
    if pairs_note:
        parts.append(f"<p class='muted'>{escape(pairs_note)}</p>")
    parts.append(worst_html)
    parts.append(_judge_failures_html(run))
    parts.append(_judge_consistency_html(s))
    parts.append(_calibration_html(meta))
    return page(f"goldset report {meta.run_id}", "\n".join(p for p in parts if p))


def dataset_pairs(run: StoredRun, ws: WorkspaceLike | None = None) -> tuple[dict[str, QAPair] | None, str | None]:
    """The pairs of the dataset ``run`` was scored against, by id, when it is still at hand and unchanged (its
    fingerprint the run's); else None and why (the report then shows no references)."""
    from goldset.errors import GoldsetError
    from goldset.evaluation.datasets import dataset_fingerprint, resolve_dataset
    from goldset.workspace import optional_workspace

    try:
        data = resolve_dataset(run.meta.dataset, optional_workspace(ws) if not isinstance(ws, Workspace) else ws)
        if run.meta.manifest_hash and dataset_fingerprint(data) != run.meta.manifest_hash:
            return None, (
                f"References not shown: the dataset {run.meta.dataset} changed since this run was scored "
                f"(its fingerprint differs)."
            )
    except (GoldsetError, OSError) as exc:
        return None, f"References not shown: the dataset {run.meta.dataset} could not be read ({exc})."
    return {p.id: p for p in data.pairs}, None


def write_report(
    path: Path,
    run: StoredRun,
    baseline: StoredRun | None = None,
    *,
    n_resamples: int = 2000,
    seed: int = 0,
    allow_different_settings: bool = False,
    dataset: Dataset | None = None,
    ws: WorkspaceLike | None = None,
    extra_sections: Sequence[tuple[str, str]] = (),
    coverage: bool = True,
    coverage_file: Path | None = None,
) -> Path:
    """Write the HTML report of ``run``, with a paired comparison when a ``baseline`` is given (of the same dataset,
    scored with the same settings unless ``allow_different_settings``: :func:`~.compare.check_comparable`).

    ``dataset`` (the one the run was scored against) gives the worst questions their references and evidence;
    without it the run's dataset is read again (its folder or release, in ``ws``) when it is unchanged.

    ``coverage``: show the coverage of real traffic computed for the run's dataset content (``coverage_file``, or
    the workspace's record; :func:`run_coverage`)."""
    comparison = None
    if baseline is not None:
        from goldset.evaluation.compare import compare_runs

        comparison = compare_runs(
            baseline, run, n_resamples=n_resamples, seed=seed, allow_different_settings=allow_different_settings
        )
    if dataset is not None:
        pairs: dict[str, QAPair] | None = {p.id: p for p in dataset.pairs}
        note = None
    else:
        pairs, note = dataset_pairs(run, ws)
    record, cov_note = run_coverage(run, ws, coverage_file=coverage_file) if coverage else (None, None)
    html = render_html(run, baseline, comparison, pairs=pairs, pairs_note=note, extra_sections=extra_sections,
                       coverage=record, coverage_note=cov_note)  # fmt: skip
    atomic_write_text(Path(path), html)
    return Path(path)


def write_coverage_page(path: Path, record: CoverageRecord) -> Path:
    """Write :func:`coverage_page` of ``record`` to ``path``."""
    atomic_write_text(Path(path), coverage_page(record))
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

"""The trend page: a self-contained HTML page (inline CSS and SVG, no script, no CDN) drawing each metric of a
:class:`~goldset.evaluation.trend.Trend` across days or runs, with its interval, and the drops beyond it.

In the order a reader asks: what was drawn (runs, per day or per run, the notes), the drops, a line chart per
metric of the whole traffic (each point with its 95% interval as a whisker, drops in red), then the headline
metrics per language and topic (question type for golden-set runs), one line per group; for the report of one log
run, its summary and the samples to look at (hallucinated claims, irrelevant contexts, refusals, thumbs down,
failures: each with the rule that lists it, its answer, contexts and the judge's claim verdicts). Numbers are
formatted by the run report's :func:`goldset.evaluation.report.fmt`; it fits 1,280 px.
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import TYPE_CHECKING

from goldset.evaluation.report import fmt
from goldset.evaluation.trend import ALL, HEADLINE, Series, Trend
from goldset.io import atomic_write_text

if TYPE_CHECKING:
    from goldset.evaluation.runs import StoredRun
    from goldset.schema import SampleScores

_PALETTE = ("#3b6ea5", "#d08c2e", "#4c9a6a", "#b04a5a", "#7a5ea8", "#5a8f9a")
_FONTS = 'system-ui,"Noto Sans CJK SC","Noto Sans SC","PingFang SC","Microsoft YaHei",sans-serif'
_CSS = (
    "body{font-family:" + _FONTS + ";margin:1.5rem auto;max-width:1200px;color:#222;padding:0 1rem}"
    "h1{font-size:1.4rem}h2{font-size:1.15rem;margin-top:1.8rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}"
    "table{border-collapse:collapse;margin:.5rem 0;font-size:.88rem}th,td{padding:.2rem .5rem;"
    "border-bottom:1px solid #eee;text-align:left;vertical-align:top;overflow-wrap:anywhere}"
    ".charts{display:flex;flex-wrap:wrap;gap:.8rem}.muted{color:#777}.bad{color:#b03030}"
    ".drop{border-left:4px solid #b03030;background:#fdf0f0;padding:.4rem .7rem;margin:.3rem 0}"
    ".sample{border:1px solid #e4e4e4;border-radius:4px;padding:.4rem .7rem;margin:.5rem 0}"
    ".sample pre{white-space:pre-wrap;background:#f6f6f6;padding:.3rem;font-size:.8rem;margin:.2rem 0}"
    ".supported{color:#2a7a3a}.contradicted,.not_found{color:#b03030}"
    "svg{max-width:100%;height:auto}"
)
WIDTH, HEIGHT = 380, 210
_LEFT, _RIGHT, _TOP, _BOTTOM = 46, 24, 26, 34
_TABLE_POINTS = 8


def _scale(series: list[Series]) -> tuple[float, float]:
    values = [v for s in series for p in s.points for v in (p.value, p.low, p.high) if v is not None]
    lo, hi = min(values, default=0.0), max(values, default=1.0)
    if lo >= 0 and hi <= 1 and not any(s.metric.endswith("_ms") for s in series):
        return 0.0, 1.0
    lo = min(0.0, lo)
    return lo, hi * 1.1 if hi > lo else lo + 1.0


def svg_trend(title: str, series: list[Series], labels: list[str], drops: set[tuple[str, str, str]]) -> str:
    """A line chart of ``series`` over ``labels`` (x), whiskers for the intervals, drops as red rings; one line
    per series (the legend names the groups when there are several)."""
    shorts: dict[str, str] = {}
    for s in series:
        for p in s.points:
            shorts[p.label] = p.short
    lo, hi = _scale(series)
    plot_w, plot_h = WIDTH - _LEFT - _RIGHT, HEIGHT - _TOP - _BOTTOM
    n = max(1, len(labels) - 1)

    def x(i: int) -> float:
        return _LEFT + (plot_w * i / n if len(labels) > 1 else plot_w / 2)

    def y(v: float) -> float:
        return _TOP + plot_h * (1 - (min(max(v, lo), hi) - lo) / ((hi - lo) or 1.0))

    metric = series[0].metric if series else ""
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'role="img" aria-label="{escape(title)}"><text x="0" y="14" font-size="13" font-weight="600">'
        f"{escape(title)}</text>",
        f'<line x1="{_LEFT}" x2="{_LEFT}" y1="{_TOP}" y2="{_TOP + plot_h}" stroke="#bbb"/>'
        f'<line x1="{_LEFT}" x2="{_LEFT + plot_w}" y1="{_TOP + plot_h}" y2="{_TOP + plot_h}" stroke="#bbb"/>',
    ]
    for v in (lo, (lo + hi) / 2, hi):
        parts.append(
            f'<text x="{_LEFT - 4}" y="{y(v) + 4:.1f}" font-size="10" text-anchor="end" fill="#666">'
            f"{escape(fmt(v, metric))}</text>"
        )
    step = max(1, len(labels) // 8)
    for i, label in enumerate(labels):
        if i % step == 0 or i == len(labels) - 1:
            parts.append(
                f'<text x="{x(i):.1f}" y="{_TOP + plot_h + 14}" font-size="10" text-anchor="middle" fill="#666">'
                f"{escape(shorts.get(label, label))}</text>"
            )
    index = {label: i for i, label in enumerate(labels)}
    for k, s in enumerate(series):
        color = _PALETTE[k % len(_PALETTE)]
        pts = [(index[p.label], p) for p in s.points if p.label in index]
        if len(pts) > 1:
            path = " ".join(f"{x(i):.1f},{y(p.value):.1f}" for i, p in pts)
            parts.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
        for i, p in pts:
            if p.low is not None and p.high is not None:
                parts.append(
                    f'<line x1="{x(i):.1f}" x2="{x(i):.1f}" y1="{y(p.high):.1f}" y2="{y(p.low):.1f}" '
                    f'stroke="{color}" stroke-opacity=".5" stroke-width="5"/>'
                )
            dropped = (s.metric, s.group, p.label) in drops
            interval = f" [{fmt(p.low, s.metric)}, {fmt(p.high, s.metric)}]" if p.low is not None else ""
            parts.append(
                f'<circle cx="{x(i):.1f}" cy="{y(p.value):.1f}" r="{5 if dropped else 3.5}" fill="{color}"'
                + (' stroke="#b03030" stroke-width="3"' if dropped else "")
                + f"><title>{escape(s.group)} {escape(p.label)}: {escape(fmt(p.value, s.metric))}{interval}, "
                f"n {p.n}{' — drop' if dropped else ''}</title></circle>"
            )
        last = pts[-1][1] if pts else None
        if last is not None and len(series) == 1:
            parts.append(
                f'<text x="{WIDTH - _RIGHT}" y="14" font-size="11" text-anchor="end">latest '
                f"{escape(fmt(last.value, s.metric))}</text>"
            )
    if len(series) > 1:
        for k, s in enumerate(series[:6]):
            parts.append(
                f'<text x="{_LEFT + 4 + 110 * (k % 3)}" y="{HEIGHT - 4 - 0 * (k // 3)}" font-size="10" '
                f'fill="{_PALETTE[k % len(_PALETTE)]}">{escape(s.group[:18])}</text>'
            )
    parts.append("</svg>")
    return "".join(parts)


#: Why a log sample is listed among those to look at, in the order they are listed: (metric, bad when, rule).
_LOOK_AT = (
    ("hallucination", lambda v: v > 0, "claims the retrieved contexts do not support (hallucination > 0)"),
    ("context_relevance", lambda v: v < 0.5, "most retrieved contexts are irrelevant (context_relevance < 0.5)"),
    ("refusal_judged", lambda v: v == 1, "the answer declined (refusal_judged)"),
    ("refusal", lambda v: v == 1, "the answer matches a refusal pattern (refusal)"),
    ("feedback", lambda v: v < 0.5, "the user gave a thumbs down (feedback < 0.5)"),
)
_SAMPLES_SHOWN = 20
_CONTEXT_CHARS = 400


def _reasons(s: SampleScores) -> list[str]:
    if s.failed:
        return [f"the system failed: {s.error}"]
    return [rule for m, bad, rule in _LOOK_AT if (v := s.metrics.get(m)) is not None and bad(v)]


def _summary_html(run: StoredRun) -> str:
    summary, meta = run.summary, run.meta
    rows = [f"<tr><td>{escape(m)}</td><td>{escape(fmt(v, m))}</td></tr>" for m, v in summary.overall.items()]
    for m in ("error_rate", "latency_p50_ms", "latency_p95_ms", "latency_p99_ms", "ttft_p95_ms", "cost_usd_total"):
        if m in summary.system:
            rows.append(f"<tr><td>{escape(m)}</td><td>{escape(fmt(summary.system[m], m))}</td></tr>")
    log = meta.log or {}
    facts = [f"{summary.n_samples:,} sample(s) scored of {log.get('lines', summary.n_samples):,} log line(s)"]
    if meta.judge is not None:
        facts.append(f"judged by {meta.judge.model}")
    if log.get("redacted"):
        facts.append("personal data replaced: " + ", ".join(f"{n} {k}" for k, n in log["redacted"].items()))
    notes = "".join(f'<p class="muted">note: {escape(n)}</p>' for n in summary.notes)
    return (f"<h2>This run</h2><p>{escape('; '.join(facts))}</p>{notes}"
            f"<table><tr><th>metric</th><th>value</th></tr>{''.join(rows)}</table>")  # fmt: skip


def _samples_html(run: StoredRun) -> str:
    listed = [(s, why) for s in run.scores if (why := _reasons(s))]
    order = {rule: i for i, (_, _, rule) in enumerate(_LOOK_AT)}
    listed.sort(key=lambda x: (min(order.get(r, -1) for r in x[1]), -len(x[1]), x[0].pair_id))
    out = [f"<h2>Samples to look at</h2><p class='muted'>{len(listed)} of {len(run.scores)} sample(s) meet a rule "
           f"below; the first {min(len(listed), _SAMPLES_SHOWN)} are shown.</p>"]  # fmt: skip
    for s, why in listed[:_SAMPLES_SHOWN]:
        sample = run.samples.get(s.pair_id)
        parts = [f'<div class="sample"><b>{escape(s.pair_id)}</b> <span class="muted">{escape(s.day or "")} '
                 f"{escape(s.language)}{' · ' + escape(s.topic) if s.topic else ''}</span>"
                 f"<div class='bad'>{escape('; '.join(why))}</div>"]  # fmt: skip
        if sample is not None:
            parts.append(f"<div>question: {escape(sample.question or '')}</div><pre>{escape(sample.answer)}</pre>")
            for i, c in enumerate(sample.contexts[:3], 1):
                text = c.text if len(c.text) <= _CONTEXT_CHARS else c.text[:_CONTEXT_CHARS] + " …"
                parts.append(f"<details><summary>context {i}</summary><pre>{escape(text)}</pre></details>")
        if s.judge is not None and s.judge.claims:
            claims = "".join(f'<li class="{c.verdict}">{escape(c.verdict)}: {escape(c.claim)}</li>'
                             for c in s.judge.claims)  # fmt: skip
            parts.append(f"<ul>{claims}</ul>")
        parts.append("</div>")
        out.append("".join(parts))
    return "".join(out)


def render_trend_html(t: Trend, title: str | None = None, run: StoredRun | None = None) -> str:
    """The trend page of ``t`` (module docstring); with ``run`` (the report of one log run), its summary and the
    samples to look at (each with the rule that lists it) follow the trend."""
    title = title or ("Production traffic over time" if t.reference_free else "Runs over time")
    drop_keys = {(d.metric, d.group, d.after) for d in t.drops}
    body = [f"<h1>{escape(title)}</h1>"]
    kind = "log runs (reference-free: no golden answers)" if t.reference_free else "golden-set runs"
    body.append(
        f"<p>{len(t.labels)} point(s) per {escape(t.by)}, from {len(t.runs)} {kind}: "
        + ", ".join(f"<code>{escape(r)}</code>" for r in t.runs)
        + "</p>"
    )
    body.append(f'<p class="muted">{escape(t.method())}</p>')
    for note in t.notes:
        body.append(f'<p class="muted">note: {escape(note)}</p>')
    body.append("<h2>Drops beyond the interval</h2>")
    if t.drops:
        body += [f'<div class="drop">▼ {escape(d.line())}</div>' for d in t.drops]
        gated = t.gated_drops()
        body.append(f"<p class='bad'>--gate fails: {len(gated)} at the latest step</p>" if gated else "")
    else:
        body.append("<p>None: every step stays within its interval.</p>")

    overall = t.of(ALL)
    shown = [s for s in overall if s.metric in HEADLINE] or overall
    rest = [s for s in overall if s not in shown]
    body.append("<h2>Whole traffic</h2>" if t.reference_free else "<h2>All questions</h2>")
    body.append('<div class="charts">')
    body += [svg_trend(s.metric, [s], t.labels, drop_keys) for s in shown]
    body.append("</div>")
    if rest:
        body.append(f"<details><summary>{len(rest)} more metric(s)</summary><div class='charts'>")
        body += [svg_trend(s.metric, [s], t.labels, drop_keys) for s in rest]
        body.append("</div></details>")

    groups = [g for g in t.groups() if g != ALL]
    for prefix in ("language", "topic", "type"):
        mine = [g for g in groups if g.startswith(prefix + " ")]
        if not mine:
            continue
        body.append(f"<h2>Per {prefix}</h2><div class='charts'>")
        for s in shown[:6]:
            lines = [x for g in mine for x in t.of(g) if x.metric == s.metric]
            if lines:
                body.append(svg_trend(f"{s.metric} per {prefix}", lines, t.labels, drop_keys))
        body.append("</div>")

    labels = t.labels[-_TABLE_POINTS:]
    first = len(t.labels) - len(labels)
    body.append(f"<h2>Points</h2><p class='muted'>the latest {len(labels)} of {len(t.labels)}; ± half the 95% "
                "interval</p><table><tr><th>metric</th><th>group</th>"
                + "".join(f"<th>{escape(lbl if t.by == 'day' else f'#{first + i + 1}')}</th>"
                          for i, lbl in enumerate(labels))
                + "</tr>")  # fmt: skip
    for s in overall + [x for g in groups for x in t.of(g) if x.metric in HEADLINE]:
        by_label = {p.label: p for p in s.points}
        cells = []
        for label in labels:
            p = by_label.get(label)
            if p is None:
                cells.append("<td>–</td>")
                continue
            half = f" ±{fmt((p.high - p.low) / 2, s.metric)}" if p.low is not None and p.high is not None else ""
            cls = ' class="bad"' if (s.metric, s.group, label) in drop_keys else ""
            cells.append(f"<td{cls}>{escape(fmt(p.value, s.metric) + half)}</td>")
        body.append(f"<tr><td>{escape(s.metric)}</td><td>{escape(s.group)}</td>{''.join(cells)}</tr>")
    body.append("</table>")
    if run is not None:
        body.append(_summary_html(run))
        body.append(_samples_html(run))
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width"><title>{escape(title)}</title>'
        f"<style>{_CSS}</style></head><body>{''.join(body)}</body></html>"
    )


def write_trend_page(path: str | Path, t: Trend, title: str | None = None, run: StoredRun | None = None) -> Path:
    """Write the trend page of ``t`` to ``path`` (atomically) and return the path; ``run``: see
    :func:`render_trend_html`."""
    path = Path(path)
    atomic_write_text(path, render_trend_html(t, title, run))
    return path

"""The Trends page's charts: lines over time (results/linechart.py) and the category radar.

Links are built by the caller (`link(run_id)`): this package knows no URLs.
"""

import datetime as dt

import pygal
from pygal.style import Style

from ..results.charts import PALETTE
from ..results.charts import drop_scripts
from ..results.linechart import line_chart

TREND_METRICS = {
    "score": ("Score over time (95 % CI band)", "", 100),
    "tokensPerSecond": ("Tokens per second over time", "", None),
    "ttftMs": ("Time to first token, median (ms)", "", None),
}


def _when(text):
    return dt.datetime.fromisoformat(text.rstrip("Z"))


def _title(series, point, metric):
    value = point[metric]
    text = f"{series['target']} · {point['finishedAt'][:16].replace('T', ' ')} · "
    if metric == "score":
        text += f"{value:.1f}"
        if point["ciLow"] is not None:
            text += f" [{point['ciLow']:.1f}–{point['ciHigh']:.1f}]"
        text += f" · {point['n']} answers"
    else:
        text += f"{value:.1f}"
    text += f" · run {point['runId']}"
    if point["breakReason"]:
        text += f" · line broken: {point['breakReason']}"
    return text


def trend_chart(data, metric, link, narrow=False, chart_id=None):
    """SVG of one metric of GET /api/trends' series over time (points link to their runs)."""
    title, unit, top = TREND_METRICS[metric]
    series = []
    for s in data["series"]:
        points = []
        for p in s["points"]:
            value = p[metric]
            points.append(
                {
                    "t": _when(p["finishedAt"]),
                    "y": value,
                    "low": p["ciLow"] if metric == "score" else None,
                    "high": p["ciHigh"] if metric == "score" else None,
                    "href": link(p["runId"]),
                    "title": _title(s, p, metric) if value is not None else None,
                    "break": p["breakReason"],
                }
            )
        series.append({"name": s["target"], "points": points})
    if data.get("category") and metric == "score":
        title = f"Score in {data['category']} over time (95 % CI band)"
    return line_chart(
        series, title=title, unit=unit, y_max=top, narrow=narrow, chart_id=chart_id or metric
    )


def category_trend_chart(domain_trend, link, narrow=False, chart_id="categories"):
    """SVG of the score per category over time (a collection's summary, all models together)."""
    series = [
        {
            "name": category,
            "points": [
                {
                    "t": _when(p["date"]),
                    "y": p["score"],
                    "href": link(p["runId"]),
                    "title": f"{category} · {p['date'][:16].replace('T', ' ')} · "
                    f"{p['score']:.1f} · run {p['runId']}"
                    if p["score"] is not None
                    else None,
                }
                for p in points
            ],
        }
        for category, points in sorted(domain_trend.items())
    ]
    return line_chart(
        series, title="Score per category over time", y_max=100, narrow=narrow, chart_id=chart_id
    )


def radar_chart(current, previous, baseline, narrow=False):
    """pygal Radar of the score per category: current, previous and baseline runs."""
    runs = [("Current", current), ("Previous", previous), ("Baseline", baseline)]
    runs = [(name, m) for name, m in runs if m is not None]
    categories = sorted({c for _, m in runs for c in m["categories"]})
    big = 22 if narrow else 14
    style = Style(
        background="transparent",
        plot_background="transparent",
        foreground="#1d2330",
        foreground_strong="#1d2330",
        foreground_subtle="#c9ced8",
        font_family="system-ui, -apple-system, 'Segoe UI', Roboto, Arial, sans-serif",
        colors=PALETTE,
        opacity=".12",
        opacity_hover=".3",
        label_font_size=big,
        major_label_font_size=big,
        legend_font_size=big,
        title_font_size=big + 2,
        no_data_font_size=big + 4,
    )
    chart = pygal.Radar(
        style=style,
        width=480 if narrow else 560,
        height=520 if narrow else 420,
        fill=False,
        stroke_style={"width": 3},
        range=(0, 100),
        y_labels=[25, 50, 75, 100],
        show_legend=True,
        legend_at_bottom=True,
        legend_at_bottom_columns=3,
        disable_xml_declaration=True,
        js=[],
        no_data_text="No categories yet",
        truncate_label=16,
    )
    chart.x_labels = categories
    for name, metrics in runs:
        chart.add(name, [_round(metrics["categories"].get(c)) for c in categories])
    chart.add_xml_filter(drop_scripts)
    return chart.render(is_unicode=True)


def _round(value):
    return None if value is None else round(value, 1)

"""The Trends page's charts: lines over time (app.charts.linechart) and the category radar.

Links are built by the caller (`link(run_id)`): this package knows no URLs.
"""

import datetime as dt

import pygal

from ..charts.linechart import epoch
from ..charts.linechart import line_chart
from ..charts.render import render
from ..charts.style import outline_style

TREND_METRICS = {
    "score": ("Score over time (95 % CI band)", "", 100),
    "tokensPerSecond": ("Tokens per second over time", "", None),
    "ttftMs": ("Time to first token, median (ms)", "", None),
    "composite": ("Composite score over time (quality and speed)", "", 100),
}


SPEED_METRICS = ("tokensPerSecond", "ttftMs")


class PointCache:
    """finishedAt texts as epoch seconds and run ids as links, each worked out once per page
    (six charts of the same points share them)."""

    def __init__(self, link):
        self.link = link
        self._times = {}
        self._links = {}

    def t(self, text):
        if text not in self._times:
            self._times[text] = epoch(dt.datetime.fromisoformat(text.rstrip("Z")))
        return self._times[text]

    def href(self, run_id):
        if run_id not in self._links:
            self._links[run_id] = self.link(run_id)
        return self._links[run_id]


def _both(series, columns, **config):
    """The wide and the narrow drawing of one chart (the page shows one by screen width)."""
    chart_id = config.pop("chart_id")
    return {
        "wide": line_chart(series, columns=columns, chart_id=chart_id, **config),
        "narrow": line_chart(
            series, columns=columns, narrow=True, chart_id=f"{chart_id}-n", **config
        ),
    }


def _value(point, metric):
    """One series' value at a run, as its tooltip line shows it."""
    value = point[metric]
    if value is None:
        return "–"
    text = f"{value:.1f}"
    if metric == "score" and point["ciLow"] is not None:
        text += f" [{point['ciLow']:.1f}–{point['ciHigh']:.1f}] n={point['n']}"
    if metric == "composite" and point.get("compositeFormula"):
        text += f" ({point['compositeFormula']})"
    return text


def _started_by(point):
    """How a run was started, when not by hand: its trigger and note (the tooltip says so)."""
    how = point.get("triggeredBy")
    if not how or how == "manual":
        return ""
    note = point.get("triggerNote")
    return f" · started by {how}" + (f": {note}" if note else "")


def run_columns(data, metric, cache):
    """One linked column per run: its time and every series' value in the tooltip."""
    columns = {}
    for s in data["series"]:
        for p in s["points"]:
            column = columns.get(p["runId"])
            if column is None:
                when = p["finishedAt"][:16].replace("T", " ")
                column = columns[p["runId"]] = {
                    "t": cache.t(p["finishedAt"]),
                    "href": cache.href(p["runId"]),
                    "lines": [f"run {p['runId']} · {when} UTC{_started_by(p)}"],
                }
            line = f"{s.get('label') or s['target']}: {_value(p, metric)}"
            if p["breakReason"]:
                line += f" (line broken: {p['breakReason']})"
            column["lines"].append(line)
    return [
        {"t": c["t"], "href": c["href"], "title": "\n".join(c["lines"])} for c in columns.values()
    ]


def trend_charts(data, metric, cache, baseline=None):
    """{wide, narrow} SVGs of one metric of GET /api/trends' series over time; each run's
    column links to its page. `baseline` ({runId, value}): a flat line across the chart."""
    title, unit, top = TREND_METRICS[metric]
    series = [
        {
            "name": s.get("label") or s["target"],
            "points": [
                {
                    "t": cache.t(p["finishedAt"]),
                    "y": p[metric],
                    "low": p["ciLow"] if metric == "score" else None,
                    "high": p["ciHigh"] if metric == "score" else None,
                    "title": f"{s.get('label') or s['target']}: {_value(p, metric)} "
                    f"(run {p['runId']})",
                    "break": p["breakReason"],
                }
                for p in s["points"]
            ],
        }
        for s in data["series"]
    ]
    times = [p["t"] for s in series for p in s["points"] if p["y"] is not None]
    if baseline and baseline.get("value") is not None and times:
        name = f"baseline {baseline['runId']}"
        title_text = f"{name}: {baseline['value']:.1f}"
        series.append(
            {
                "name": name,
                "points": [
                    {"t": t, "y": baseline["value"], "title": title_text}
                    for t in (min(times), max(times))
                ],
            }
        )
    if data.get("category") and metric == "score":
        title = f"Score in {data['category']} over time (95 % CI band)"
    return _both(
        series,
        run_columns(data, metric, cache),
        title=title,
        unit=unit,
        y_max=top,
        chart_id=metric,
        # One far-off run (a fake server's 25 000 tok/s) would flatten every other line.
        clip_outliers=metric in SPEED_METRICS,
    )


def category_trend_charts(domain_trend, cache):
    """{wide, narrow} SVGs of the score per category over time (a collection, all models)."""
    series, columns = [], {}
    for category, points in sorted(domain_trend.items()):
        series.append(
            {
                "name": category,
                "points": [{"t": cache.t(p["date"]), "y": p["score"]} for p in points],
            }
        )
        for p in points:
            column = columns.setdefault(
                p["runId"],
                {
                    "t": cache.t(p["date"]),
                    "href": cache.href(p["runId"]),
                    "lines": [f"run {p['runId']}"],
                },
            )
            score = "–" if p["score"] is None else f"{p['score']:.1f}"
            column["lines"].append(f"{category}: {score}")
    return _both(
        series,
        [
            {"t": c["t"], "href": c["href"], "title": "\n".join(c["lines"])}
            for c in columns.values()
        ],
        title="Score per category over time",
        y_max=100,
        chart_id="categories",
    )


def radar_chart(current, previous, baseline, narrow=False):
    """pygal Radar of the score per category: current, previous and baseline runs."""
    runs = [("Current", current), ("Previous", previous), ("Baseline", baseline)]
    runs = [(name, m) for name, m in runs if m is not None]
    categories = sorted({c for _, m in runs for c in m["categories"]})
    chart = pygal.Radar(
        style=outline_style(narrow),
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
    return render(chart)


def _round(value):
    return None if value is None else round(value, 1)

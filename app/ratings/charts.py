"""The report's charts as SVG (pygal, in the house style of app.charts): rating distribution,
latency histogram, cost vs quality, tokens per target. Plain data in (report.run_report), SVG
out."""

import pygal

from ..charts.key import add_key
from ..charts.key import add_names_key
from ..charts.labels import axis_names
from ..charts.labels import series_key
from ..charts.palette import PALETTE
from ..charts.render import render
from ..charts.style import config
from ..charts.ticks import nice_ticks
from ..charts.ticks import short_number
from ..db.target_name import target_name
from ..results.speed_charts import quality_speed_chart
from .agreement import LIKERT

CHARTS = ("ratings", "latency", "cost_quality", "tokens")
HISTOGRAM_BINS = 10


def _font(narrow):
    return 22 if narrow else 14


def _keyed(chart, rows, narrow):
    """`chart` with a key naming each series (one per row) in full beside its colour: pygal's
    legend would cut a target's name to the width."""
    return add_key(chart, series_key([r["label"] for r in rows], PALETTE), _font(narrow))


def rating_chart(rows, narrow=False):
    """How many answers of each target people rated 1, 2, 3, 4 and 5 (grouped bars)."""
    top = max((max(r["rating_counts"].values(), default=0) for r in rows), default=0)
    ticks = nice_ticks(max(top, 1), 4 if narrow else 6)
    settings = config(
        narrow,
        title="People's ratings (count per rating)",
        range=(0, ticks[-1]),
        y_labels=ticks,
        value_formatter=short_number,
    )
    chart = pygal.Bar(**settings)
    chart.x_labels = [str(k) for k in LIKERT]
    for row in rows:
        # None, not 0, for a target nobody rated: with no rating at all the chart says so.
        counts = [row["rating_counts"][k] for k in LIKERT] if row["ratings"] else [None] * 5
        chart.add(row["label"], counts)
    return render(_keyed(chart, rows, narrow))


def latency_chart(rows, samples, narrow=False, bins=HISTOGRAM_BINS):
    """Answer time histogram: per time bin, how many answers of each target fell in it (grouped
    bars, so targets with the same times stay apart)."""
    series = [(row, samples.get(row["target_id"]) or []) for row in rows]
    series = [(row, values) for row, values in series if values]
    top = max((max(values) for _row, values in series), default=0.0)
    bins = max(1, bins // 2) if narrow else bins
    edges = nice_ticks(top, bins) if top else [0, 1]
    width = edges[1] - edges[0]
    counts = []
    for _row, values in series:
        per_bin = [0] * (len(edges) - 1)
        for v in values:
            per_bin[min(int(v // width), len(per_bin) - 1)] += 1
        counts.append(per_bin)
    peak = max((max(c) for c in counts), default=0)
    ticks = nice_ticks(max(peak, 1), 4 if narrow else 6)
    settings = config(
        narrow,
        title="Answer time histogram (answers per bin, ms)",
        range=(0, ticks[-1]),
        y_labels=ticks,
        value_formatter=short_number,
        x_label_rotation=30 if not narrow else 45,
    )
    chart = pygal.Bar(**settings)
    chart.x_labels = [
        f"{short_number(a)}–{short_number(b)}" for a, b in zip(edges, edges[1:], strict=False)
    ]
    for (row, _values), per_bin in zip(series, counts, strict=True):
        chart.add(row["label"], per_bin)
    return render(_keyed(chart, [row for row, _values in series], narrow))


def cost_quality_chart(rows, narrow=False):
    """Cost per 1000 tasks (x) against quality (y): the judge's average score, and where people
    rated, their average rating on the same 0-100 axis ((rating - 1) × 25)."""
    costs = [r["cost_per_1k_tasks"] for r in rows if r["cost_per_1k_tasks"] is not None]
    settings = config(
        narrow,
        2,
        title="Cost per 1000 tasks (USD) vs quality",
        xrange=(0, (max(costs) * 1.15) if costs and max(costs) > 0 else 1),
        stroke=False,
        dots_size=6 if narrow else 5,
        range=(0, 100),
        value_formatter=short_number,
        x_value_formatter=short_number,
    )
    chart = pygal.XY(**settings)
    judge, people = [], []
    for row in rows:
        cost = row["cost_per_1k_tasks"]
        if cost is None:
            continue
        name = row["label"]
        if row["avg_score"] is not None:
            judge.append({"value": (cost, round(row["avg_score"], 1)), "label": name})
        if row["avg_rating"] is not None:
            people.append({"value": (cost, round((row["avg_rating"] - 1) * 25, 1)), "label": name})
    chart.add("judge score", judge)
    chart.add("people's rating × 25 (1 → 0, 5 → 100)", people)
    return render(chart)


def tokens_chart(rows, narrow=False):
    """Average completion tokens per answer, per target."""
    values = [None if r["avg_tokens"] is None else round(r["avg_tokens"], 1) for r in rows]
    top = max((v for v in values if v is not None), default=0)
    ticks = nice_ticks(top, 4 if narrow else 8)
    answered = any(r["answered"] for r in rows)
    settings = config(
        narrow,
        title="Average tokens per answer",
        # Answers came back but with no token counts: say so, not "no data yet".
        no_data_text="No token counts from this server" if answered else "No answers yet",
        range=(0, ticks[-1]),
        y_labels=ticks,
        value_formatter=short_number,
    )
    chart = pygal.HorizontalBar(**{**settings, "truncate_label": -1})
    labels, key, note = axis_names([r["label"] for r in rows], narrow)
    chart.x_labels = labels[::-1]
    chart.add("tokens", values[::-1])
    return render(add_names_key(chart, key, note, narrow))


def report_chart(report, name, narrow=False):
    """Chart `name` (one of CHARTS) of a report_with_latency() dict, as SVG."""
    rows = report["targets"]
    if name == "ratings":
        return rating_chart(rows, narrow)
    if name == "latency":
        return latency_chart(rows, report["latency"], narrow)
    if name == "cost_quality":
        if all(r["cost_per_1k_tasks"] is None for r in rows):
            # Local models have no price: score against answer time says more than an empty
            # cost chart.
            return quality_speed_chart(speed_points(rows, report["latency"]), narrow)
        return cost_quality_chart(rows, narrow)
    if name == "tokens":
        return tokens_chart(rows, narrow)
    raise ValueError(f"unknown chart {name!r}")


def speed_points(rows, samples):
    """[{"label", "x": p90 answer time in s, "y": judge score}] per target for the score against
    answer time chart (speed_charts.quality_speed_chart); x from the report's answer times."""
    points = []
    for row in rows:
        times = sorted(samples.get(row["target_id"]) or [])
        p90 = times[min(len(times) - 1, int(0.9 * len(times)))] / 1000.0 if times else None
        points.append({"label": row["label"], "x": p90, "y": row["avg_score"]})
    return points


def leaderboard_chart(rows, narrow=False):
    """Bradley–Terry rating per target (best on top) with its 95 % interval as error bars."""
    rated = [r for r in rows if r["rating"] is not None]
    low = min((r["ciLow"] for r in rated if r["ciLow"] is not None), default=900.0)
    high = max((r["ciHigh"] for r in rated if r["ciHigh"] is not None), default=1100.0)
    pad = max(20.0, (high - low) * 0.05)
    settings = config(
        narrow,
        title="Rating (Elo scale, 95 % interval)",
        range=(low - pad, high + pad),
        zero=low - pad,  # bars start at the axis, not at rating 0
        value_formatter=lambda v: f"{v:.0f}",
        height=max(260, 70 + 34 * len(rated)),
    )
    chart = pygal.HorizontalBar(**{**settings, "truncate_label": -1})
    labels, key, note = axis_names([target_name(r["provider"], r["target"]) for r in rated], narrow)
    chart.x_labels = labels[::-1]
    values = []
    for r in reversed(rated):
        value = {"value": round(r["rating"], 1)}
        # A one-sided entry (never won or never lost) has no interval to draw.
        if r["ciLow"] is not None and r["ciHigh"] is not None:
            value["ci"] = {"low": r["ciLow"], "high": r["ciHigh"]}
        values.append(value)
    chart.add("rating", values)
    return render(add_names_key(chart, key, note, narrow))

"""Server-side SVG charts (pygal): no JavaScript, no external assets, inlinable in report.html.

Each function takes plain data (from app.results) and returns an SVG string. `narrow=True` gives a
layout drawn for phone widths (~390 px): fewer, larger labels. A chart with a legend grows taller
by the legend's rows (one series a row, below the plot), so the legend is never cut off.
"""

import math
import sys

import pygal
from pygal.style import Style

from .averages import breakdown
from .averages import latency_samples
from .averages import model_averages
from .averages import run_targets

# pygal appends a legacy sys.meta_path finder (no find_spec) for its map plugins; after that every
# failed optional import in the process (flask_wtf's babel, ...) raises ImportWarning. We draw no
# maps, so take it out again.
sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != "PluginImportFixer"]

PALETTE = (
    "#2f5bea",
    "#1f8a4c",
    "#c0392b",
    "#a86500",
    "#7d3cbc",
    "#1c6fa8",
    "#d35400",
    "#5d6778",
    "#16a085",
    "#8e44ad",
)


def _style(narrow):
    big = 22 if narrow else 14
    return Style(
        background="transparent",
        plot_background="transparent",
        foreground="#1d2330",
        foreground_strong="#1d2330",
        foreground_subtle="#c9ced8",
        font_family="system-ui, -apple-system, 'Segoe UI', Roboto, Arial, sans-serif",
        colors=PALETTE,
        opacity=".85",
        opacity_hover=".95",
        guide_stroke_color="#dde1e8",
        major_guide_stroke_color="#dde1e8",
        major_guide_stroke_dasharray="4,4",
        label_font_size=big,
        major_label_font_size=big,
        legend_font_size=big,
        value_font_size=big - 2,
        title_font_size=big + 2,
        tooltip_font_size=big,
        no_data_font_size=big + 4,
    )


def _config(narrow, **extra):
    config = {
        # No XML declaration (inlinable), no tooltip script (no external asset, no JS).
        "disable_xml_declaration": True,
        "js": [],
        "style": _style(narrow),
        "width": 480 if narrow else 640,
        "height": 420 if narrow else 360,
        "legend_at_bottom": True,
        "legend_at_bottom_columns": 1,
        "truncate_label": 18 if narrow else 30,
        "print_values": False,
        "show_legend": False,
        "margin": 10,
        "margin_right": 24,
        "no_data_text": "No data yet",
        "max_scale": 5 if narrow else 10,
    }
    config.update(extra)
    return config


def _with_legend(config, series):
    """Show the legend below the plot, one series a row, and add the height it takes.

    pygal reserves legend rows by floor division (series // columns), which cuts off the last row
    whenever the columns do not divide the series; one column a row is exact, and no label can
    run into its neighbour's. The plot keeps its size: the picture grows instead.
    """
    font = config["style"].legend_font_size
    rows = max(1, series)
    config.update(
        show_legend=True,
        legend_at_bottom=True,
        legend_at_bottom_columns=1,
        truncate_legend=None,  # None: pygal fits each label to the width
        height=config["height"] + config["margin"] + round(font * 1.5 * rows),
    )
    return config


def nice_ticks(top, count):
    """About `count` round axis values from 0 up to at least `top` (steps of 1, 2, 2.5 or 5)."""
    if not top or top <= 0 or not math.isfinite(top):
        return [0, 1]
    raw = top / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    return [round(i * step, 6) for i in range(math.ceil(top / step - 1e-9) + 1)]


def short_number(value):
    """An axis value kept short: 850, 1.2k, 35k, 0.5."""
    if value is None:
        return ""
    if abs(value) >= 1000:
        return f"{value / 1000:.3g}k"
    return f"{value:.3g}"


def drop_scripts(root):
    """pygal always embeds an inline config <script> for its tooltips; we ship no JS at all."""
    for parent in root.iter():
        for child in list(parent):
            if isinstance(child.tag, str) and child.tag.rsplit("}", 1)[-1] == "script":
                parent.remove(child)
    return root


def short(label, limit):
    """A label cut in the middle to `limit` characters (pygal does not truncate y-axis labels)."""
    if len(label) <= limit:
        return label
    head = (limit - 1) // 2
    return label[:head] + "…" + label[-(limit - 1 - head) :]


def _labels(averages, narrow):
    return [short(row["label"], 16 if narrow else 26) for row in averages]


def _render(chart):
    chart.add_xml_filter(drop_scripts)
    if not chart.raw_series:
        # Nothing to draw (no answers, every item failed, no model): pygal's "No data yet"
        # chart. Its axis labels would fail without a series ('_adapt'), so it gets none.
        chart.y_labels = None
    return chart.render(is_unicode=True)


def _value_axis(top, narrow):
    """Range and labels for a value axis from 0 to `top`: few enough to read at phone width."""
    ticks = nice_ticks(top, 4 if narrow else 8)
    return {"range": (0, ticks[-1]), "y_labels": ticks, "value_formatter": short_number}


def score_chart(averages, narrow=False):
    """Average score per model (0–100), with its 95 % bootstrap CI as error bars."""
    chart = pygal.HorizontalBar(
        **_config(narrow, title="Average score (95 % CI)", **_value_axis(100, narrow))
    )
    # pygal draws horizontal bars bottom-up: reversed, the first model is on top as in the table.
    chart.x_labels = _labels(averages, narrow)[::-1]
    values = []
    for row in reversed(averages):
        if row["avg_score"] is None:
            values.append(None)
            continue
        value = {"value": round(row["avg_score"], 1)}
        if row.get("ci_low") is not None:
            value["ci"] = {"low": row["ci_low"], "high": row["ci_high"]}
        values.append(value)
    chart.add("Score", values)
    return _render(chart)


def speed_chart(averages, narrow=False):
    """Average tokens per second per model."""
    values = [
        None if row["avg_tokens_per_second"] is None else round(row["avg_tokens_per_second"], 1)
        for row in averages
    ]
    top = max((v for v in values if v is not None), default=0)
    chart = pygal.HorizontalBar(
        **_config(narrow, title="Tokens per second", **_value_axis(top, narrow))
    )
    chart.x_labels = _labels(averages, narrow)[::-1]
    chart.add("tokens/s", values[::-1])
    return _render(chart)


def latency_chart(averages, samples, narrow=False):
    """Answer time distribution (ms) per model as box plots: min, quartiles, max."""
    series = [(row["label"], samples.get(row["target_id"]) or []) for row in averages]
    series = [(label, values) for label, values in series if values]
    top = max((max(values) for _, values in series), default=0)
    # The whole range from 0 to just above the slowest answer: every box and whisker inside.
    ticks = [t for t in nice_ticks(top, 4 if narrow else 8) if t <= top * 1.05]
    config = _config(
        narrow,
        title="Answer time (ms)",
        box_mode="extremes",
        range=(0, top * 1.05 if top else 1),
        y_labels=ticks,
        value_formatter=short_number,
    )
    chart = pygal.Box(**_with_legend(config, len(series)))
    for label, values in series:
        chart.add(label, values)
    return _render(chart)


def category_chart(table, narrow=False):
    """Average score per category per model as grouped horizontal bars.

    A model with no score in a category (only judge failures, or no items) gets no bar, never a
    zero: judge failures are counted apart from low scores. The breakdown table says "no score".
    """
    keys = [short(row["key"] or "(none)", 16 if narrow else 26) for row in table["rows"]]
    models = table["models"]
    bar = 22 if narrow else 14  # per bar, so many categories or models stay readable
    base = _config(narrow)["height"]
    height = max(base, 90 + len(keys) * max(1, len(models)) * bar + 12 * len(keys))
    config = _config(
        narrow, title=f"Score per {table['by']}", height=height, **_value_axis(100, narrow)
    )
    chart = pygal.HorizontalBar(**_with_legend(config, len(models)))
    chart.x_labels = keys[::-1]  # bottom-up: reversed, the first category is on top
    for index, model in enumerate(models):
        chart.add(
            model["label"],
            [
                None if row["cells"][index]["avg"] is None else round(row["cells"][index]["avg"], 1)
                for row in reversed(table["rows"])
            ],
        )
    return _render(chart)


CHARTS = ("score", "speed", "latency", "category")


def run_chart(run, name, narrow=False, *, averages=None, by_category=None, estimates=False):
    """Chart `name` (one of CHARTS) of `run` as SVG; reads only what that chart needs.

    `averages` (model_averages rows, run order) and `by_category` (the category breakdown) are
    used when given, so a caller that already has them (report.html) reads nothing twice.
    Estimated token rates are drawn only when `estimates` is asked for.
    """

    if name in ("score", "speed"):
        averages = model_averages(run, estimates=estimates) if averages is None else averages
        draw = score_chart if name == "score" else speed_chart
        return draw(averages, narrow)
    if name == "latency":
        if averages is None:
            # Only ids and labels: no need for the averages' aggregate query.
            averages = [
                {"target_id": tid, "label": f"{provider}/{label}"}
                for tid, provider, _model, label in run_targets(run)
            ]
        return latency_chart(averages, latency_samples(run), narrow)
    if name == "category":
        if by_category is None:
            by_category = breakdown(run, "category")
        return category_chart(by_category, narrow)
    raise ValueError(f"unknown chart {name!r}")


def chart_config(narrow, legend_series=0, **extra):
    """The house style for a chart drawn outside this module (app.ratings' report charts); with
    `legend_series` the legend goes below, one series a row."""
    config = _config(narrow, **extra)
    return _with_legend(config, legend_series) if legend_series else config


def render_svg(chart):
    """A pygal chart as inlinable SVG text without scripts."""
    return _render(chart)

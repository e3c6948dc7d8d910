"""Server-side SVG charts (pygal): no JavaScript, no external assets, inlinable in report.html.

Each function takes plain data (from app.results) and returns an SVG string. `narrow=True` gives a
layout drawn for phone widths (~390 px): fewer, larger labels. A chart with a legend grows taller
by the legend's rows (one series a row, below the plot), so the legend is never cut off.
"""

import math
import sys

import pygal
from pygal.style import Style

from ..db.models import FINISHED
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


def model_label(name, limit):
    """A model's name that fits `limit` characters and still says which model it is: the part
    before the last "/" (an organisation, "HuggingFaceTB/") goes first, then the middle."""
    if len(name) > limit and "/" in name:
        name = name.rsplit("/", 1)[1]
    return short(name, limit)


def chart_labels(rows, limit):
    """Axis labels for rows with a provider-qualified "label" ("provider/model"): the model's
    name alone, the provider kept only where two rows would otherwise read the same."""
    names = [row.get("target_label") or row["label"].split("/", 1)[-1] for row in rows]
    out = []
    for row, name in zip(rows, names, strict=True):
        if names.count(name) > 1:
            name = row["label"]
        out.append(model_label(name, limit))
    return out


def _labels(averages, narrow):
    return chart_labels(averages, 20 if narrow else 34)


# A speed chart turns logarithmic when its fastest model is this many times its slowest.
LOG_RATIO = 20
# A box plot's axis stops at this many times the largest upper quartile; slower answers are
# drawn at the edge as marked outliers and the title says how far they went.
CLIP_FACTOR = 3.0
# What an empty chart says: "yet" only while the run may still bring answers.
NOT_YET = "No data yet"
NONE_FINISHED = "No completed answers to draw"


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


def score_chart(averages, narrow=False, empty=NOT_YET):
    """Average score per model (0–100), with its 95 % bootstrap CI as error bars."""
    chart = pygal.HorizontalBar(
        **_config(
            narrow,
            title="Average score (95 % CI)",
            no_data_text=empty,
            **_value_axis(100, narrow),
        )
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


def speed_chart(averages, narrow=False, empty=NOT_YET):
    """Average tokens per second per model; on a log scale when one model is far faster (a
    fake server at 25 000 tok/s would flatten every other bar)."""
    values = [
        None if row["avg_tokens_per_second"] is None else round(row["avg_tokens_per_second"], 1)
        for row in averages
    ]
    known = [v for v in values if v is not None and v > 0]
    top = max(known, default=0)
    if known and top / min(known) >= LOG_RATIO:
        low = 10 ** math.floor(math.log10(min(known)))
        high = 10 ** math.ceil(math.log10(top))
        ticks = [10**e for e in range(round(math.log10(low)), round(math.log10(high)) + 1)]
        axis = {
            "logarithmic": True,
            "range": (low, high),
            "zero": low,  # bars start at the axis's left end, not at pygal's smallest value
            "y_labels": ticks,
            "value_formatter": short_number,
        }
        title = "Tokens per second (log scale)"
    else:
        axis, title = _value_axis(top, narrow), "Tokens per second"
    chart = pygal.HorizontalBar(**_config(narrow, title=title, no_data_text=empty, **axis))
    chart.x_labels = _labels(averages, narrow)[::-1]
    chart.add("tokens/s", values[::-1])
    return _render(chart)


def latency_chart(averages, samples, narrow=False, empty=NOT_YET):
    """Answer time distribution (ms) per model as box plots: min, quartiles, max."""
    series = [(row["label"], samples.get(row["target_id"]) or []) for row in averages]
    series = [(label, values) for label, values in series if values]
    top = max((max(values) for _, values in series), default=0)
    cap = CLIP_FACTOR * max((_upper_quartile(values) for _, values in series), default=0)
    title = "Answer time (ms)"
    if cap and top > cap:
        # One slow answer would flatten every box: the axis stops at `cap`, answers past it are
        # drawn at the edge as outlier dots and the title says how far the slowest went.
        past = sum(v > cap for _, values in series for v in values)
        title = (
            f"Answer time (ms), cut at {short_number(cap)}: "
            f"{past} slower, up to {short_number(top)}"
        )
        series = [(label, [min(v, cap) for v in values]) for label, values in series]
        top = cap
    # The whole range from 0 to just above the slowest answer: every box and whisker inside.
    ticks = [t for t in nice_ticks(top, 4 if narrow else 8) if t <= top * 1.05]
    config = _config(
        narrow,
        title=title,
        box_mode="tukey",
        range=(0, top * 1.05 if top else 1),
        y_labels=ticks,
        value_formatter=short_number,
        no_data_text=empty,
    )
    chart = pygal.Box(**_with_legend(config, len(series)))
    for label, values in series:
        chart.add(label, values)
    return _render(chart)


def _upper_quartile(values):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, (3 * len(ordered)) // 4)]


def category_chart(table, narrow=False, empty=NOT_YET):
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
        narrow,
        title=f"Score per {table['by']}",
        height=height,
        no_data_text=empty,
        # Every bar says its score, so a 0.0 reads "0.0" while no score (no bar) says nothing.
        print_values=True,
        print_zeroes=True,
        print_values_position="top",
        **_value_axis(100, narrow),
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
            formatter=lambda v: f"{v:.1f}",
        )
    return _render(chart)


CHARTS = ("score", "speed", "latency", "category")


def run_chart(run, name, narrow=False, *, averages=None, by_category=None, estimates=False):
    """Chart `name` (one of CHARTS) of `run` as SVG; reads only what that chart needs.

    `averages` (model_averages rows, run order) and `by_category` (the category breakdown) are
    used when given, so a caller that already has them (report.html) reads nothing twice.
    Estimated token rates are drawn only when `estimates` is asked for.
    """

    empty = NONE_FINISHED if run.status == FINISHED else NOT_YET
    if name in ("score", "speed"):
        averages = model_averages(run, estimates=estimates) if averages is None else averages
        draw = score_chart if name == "score" else speed_chart
        return draw(averages, narrow, empty)
    if name == "latency":
        if averages is None:
            # Only ids and labels: no need for the averages' aggregate query.
            averages = [
                {"target_id": tid, "label": f"{provider}/{label}", "target_label": label}
                for tid, provider, _model, label in run_targets(run)
            ]
        return latency_chart(averages, latency_samples(run), narrow, empty)
    if name == "category":
        if by_category is None:
            by_category = breakdown(run, "category")
        return category_chart(by_category, narrow, empty)
    raise ValueError(f"unknown chart {name!r}")


def chart_config(narrow, legend_series=0, **extra):
    """The house style for a chart drawn outside this module (app.ratings' report charts); with
    `legend_series` the legend goes below, one series a row."""
    config = _config(narrow, **extra)
    return _with_legend(config, legend_series) if legend_series else config


def render_svg(chart):
    """A pygal chart as inlinable SVG text without scripts."""
    return _render(chart)

"""A run's charts drawn from plain data (app.results' averages, samples and breakdowns): average
score, tokens per second, answer times and score per category, as inlinable SVG."""

import pygal

from ..charts.bar_values import values_beside_bars
from ..charts.key import add_key
from ..charts.key import add_names_key
from ..charts.labels import axis_names
from ..charts.labels import series_key
from ..charts.labels import short
from ..charts.palette import PALETTE
from ..charts.render import render
from ..charts.style import config
from ..charts.ticks import log_axis
from ..charts.ticks import nice_ticks
from ..charts.ticks import short_number
from ..charts.ticks import value_axis

# A speed chart turns logarithmic when its fastest model is this many times its slowest.
LOG_RATIO = 20
# A box plot's axis stops at this many times the largest upper quartile; slower answers are
# drawn at the edge as marked outliers and the title says how far they went.
CLIP_FACTOR = 3.0
# What an empty chart says: "yet" only while the run may still bring answers.
NOT_YET = "No data yet"
NONE_FINISHED = "No completed answers to draw"
# Answers completed but the server sent no token counts (some servers never do).
NO_TOKENS = "No token counts from this server"


def _names(averages, narrow):
    """(axis labels, key, note): each target by its one name, never cut (charts.labels)."""
    return axis_names([row["label"] for row in averages], narrow)


def _font(narrow):
    return 22 if narrow else 14


def score_chart(averages, narrow=False, empty=NOT_YET):
    """Average score per model (0–100), with its 95 % bootstrap CI as error bars."""
    chart = pygal.HorizontalBar(
        **config(
            narrow,
            title="Average score (95 % CI)",
            no_data_text=empty,
            truncate_label=-1,
            **value_axis(100, narrow),
        )
    )
    labels, key, note = _names(averages, narrow)
    # pygal draws horizontal bars bottom-up: reversed, the first model is on top as in the table.
    chart.x_labels = labels[::-1]
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
    return render(add_names_key(chart, key, note, narrow))


def speed_chart(averages, narrow=False, empty=NOT_YET):
    """Decode speed per answer (each answer's own tokens/s, averaged) per model, not the
    throughput over the run (the speed table has that); on a log scale when one model is far
    faster (a fake server at 25 000 tok/s would flatten every other bar)."""
    values = [
        None if row["avg_tokens_per_second"] is None else round(row["avg_tokens_per_second"], 1)
        for row in averages
    ]
    known = [v for v in values if v is not None and v > 0]
    top = max(known, default=0)
    if known and top / min(known) >= LOG_RATIO:
        axis, title = log_axis(min(known), top), "Decode speed per answer (tokens/s, log scale)"
    else:
        axis, title = value_axis(top, narrow), "Decode speed per answer (tokens/s)"
    chart = pygal.HorizontalBar(
        **config(narrow, title=title, no_data_text=empty, truncate_label=-1, **axis)
    )
    labels, key, note = _names(averages, narrow)
    chart.x_labels = labels[::-1]
    chart.add("tokens/s", values[::-1])
    return render(add_names_key(chart, key, note, narrow))


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
    settings = config(
        narrow,
        title=title,
        box_mode="tukey",
        range=(0, top * 1.05 if top else 1),
        y_labels=ticks,
        value_formatter=short_number,
        no_data_text=empty,
    )
    chart = pygal.Box(**settings)
    for label, values in series:
        chart.add(label, values)
    # Each box's colour and its target's whole name in a key (pygal's legend cuts names).
    return render(add_key(chart, series_key([s[0] for s in series], PALETTE), _font(narrow)))


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
    base = config(narrow)["height"]
    height = max(base, 90 + len(keys) * max(1, len(models)) * bar + 12 * len(keys))
    settings = config(
        narrow,
        title=f"Score per {table['by']}",
        height=height,
        no_data_text=empty,
        # Every bar says its score, so a 0.0 reads "0.0" while no score (no bar) says nothing.
        print_values=True,
        print_zeroes=True,
        print_values_position="top",
        **value_axis(100, narrow),
    )
    chart = pygal.HorizontalBar(**settings)
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
    # Labels inside long bars and after short ones: centred on a short bar's end they smudge.
    chart.add_xml_filter(values_beside_bars(settings["style"].value_font_size))
    key = series_key([m["label"] for m in models], PALETTE)
    return render(add_key(chart, key, _font(narrow)))

"""Server-side SVG charts (pygal): no JavaScript, no external assets, inlinable in report.html.

Each function takes plain data (from app.results) and returns an SVG string. `narrow=True` gives a
layout drawn for phone widths (~390 px): fewer, larger labels and the legend below.
"""

import sys

import pygal
from pygal.style import Style

# pygal appends a legacy sys.meta_path finder (no find_spec) for its map plugins; after that every
# failed optional import in the process (flask_wtf's babel, ...) raises ImportWarning. We draw no
# maps, so take it out again.
sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != "PluginImportFixer"]

PALETTE = ("#2f5bea", "#1f8a4c", "#c0392b", "#a86500", "#7d3cbc", "#1c6fa8", "#d35400",
           "#5d6778", "#16a085", "#8e44ad")


def _style(narrow):
    big = 22 if narrow else 14
    return Style(
        background="transparent", plot_background="transparent",
        foreground="#1d2330", foreground_strong="#1d2330", foreground_subtle="#c9ced8",
        font_family="system-ui, -apple-system, 'Segoe UI', Roboto, Arial, sans-serif",
        colors=PALETTE, opacity=".85", opacity_hover=".95", guide_stroke_color="#dde1e8",
        major_guide_stroke_color="#dde1e8", major_guide_stroke_dasharray="4,4",
        label_font_size=big, major_label_font_size=big, legend_font_size=big,
        value_font_size=big - 2, title_font_size=big + 2, tooltip_font_size=big,
        no_data_font_size=big + 4,
    )


def _config(narrow, **extra):
    config = {
        # No XML declaration (inlinable), no tooltip script (no external asset, no JS).
        "disable_xml_declaration": True, "js": [], "style": _style(narrow),
        "width": 480 if narrow else 640, "height": 420 if narrow else 360,
        "legend_at_bottom": True, "legend_at_bottom_columns": 1 if narrow else 3,
        "truncate_legend": 28 if narrow else 40, "truncate_label": 18 if narrow else 30,
        "print_values": False, "show_legend": True, "margin": 10, "margin_right": 24,
        "no_data_text": "No data yet",
        "max_scale": 5 if narrow else 10,
    }
    config.update(extra)
    return config


def _drop_scripts(root):
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
    return label[:head] + "…" + label[-(limit - 1 - head):]


def _labels(averages, narrow):
    return [short(row["label"], 16 if narrow else 26) for row in averages]


def _render(chart):
    chart.add_xml_filter(_drop_scripts)
    return chart.render(is_unicode=True)


def score_chart(averages, narrow=False):
    """Average score per model (0–100), with its 95 % bootstrap CI as error bars."""
    chart = pygal.HorizontalBar(**_config(narrow, title="Average score (95 % CI)", range=(0, 100),
                                          show_legend=False))
    chart.x_labels = _labels(averages, narrow)
    values = []
    for row in averages:
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
    chart = pygal.HorizontalBar(**_config(narrow, title="Tokens per second", show_legend=False))
    chart.x_labels = _labels(averages, narrow)
    chart.add("tokens/s", [None if row["avg_tokens_per_second"] is None
                           else round(row["avg_tokens_per_second"], 1) for row in averages])
    return _render(chart)


def latency_chart(averages, samples, narrow=False):
    """Answer time distribution (ms) per model as box plots: min, quartiles, max."""
    chart = pygal.Box(**_config(narrow, title="Answer time (ms)", box_mode="extremes",
                                show_legend=True))
    for row in averages:
        values = samples.get(row["target_id"]) or []
        if values:
            chart.add(row["label"], values)
    return _render(chart)


def category_chart(table, narrow=False):
    """Average score per category per model: a radar from 3 categories on, else grouped bars."""
    keys = [row["key"] or "(none)" for row in table["rows"]]
    cls = pygal.Radar if len(keys) >= 3 else pygal.Bar
    title = f"Score per {table['by']}"
    chart = cls(**_config(narrow, title=title, fill=False, range=(0, 100)))
    chart.x_labels = keys
    for index, model in enumerate(table["models"]):
        chart.add(model["label"], [
            None if row["cells"][index]["avg"] is None else round(row["cells"][index]["avg"], 1)
            for row in table["rows"]])
    return _render(chart)


CHARTS = ("score", "speed", "latency", "category")

"""The speed charts of a run, drawn from plain data: score against p90 answer time with the Pareto
frontier, TTFT and ITL distributions, a per-request timeline that shows queueing, and throughput,
p90 TTFT and goodput against load. The pure parts (the frontier, the bins, the timeline's bars)
are functions of their own; run_speed_charts.py reads a run and calls these.

Every model's label is drawn in full in a key under its chart (pygal's legend cuts labels to fit,
and two cut names can read the same)."""

import bisect
import math
import zlib
from html import escape

import pygal

from ..charts.key import add_key
from ..charts.key import wrap
from ..charts.palette import FONT
from ..charts.palette import INK
from ..charts.palette import MUTED
from ..charts.palette import PALETTE
from ..charts.render import render
from ..charts.style import config
from ..charts.style import style
from ..charts.ticks import nice_ticks
from ..charts.ticks import short_number
from ..charts.timeline import timeline_chart
from ..latency import bucket_value

# The timeline draws at most this many answers of a target: enough to see a queue build up at a
# concurrency limit, few enough for one row each.
TIMELINE_MAX = 200
# A distribution's bins: this many between 0 and the largest target's p99 (slower values are
# counted in the last bin, which the title says).
BINS = 24
# Log-spaced bins (this many to a power of ten) when the slowest target's values are this many
# times the fastest's.
PER_DECADE = 5
LOG_RATIO = 20
LOG_SHIFT = 10
FRONTIER_COLOR = INK
SLO_COLOR = "#c0392b"


def _font(narrow):
    return 22 if narrow else 14


def _color(index):
    return PALETTE[index % len(PALETTE)]


def pareto_frontier(points):
    """The points ([{"label", "x", "y"}]: x a time, lower is better; y a score, higher is better)
    no other point beats on both, ordered by x. A point with no x or no y is on no frontier;
    two equal points are both on it (neither beats the other)."""
    known = [p for p in points if p.get("x") is not None and p.get("y") is not None]
    front = [
        p
        for p in known
        if not any(
            q["x"] <= p["x"] and q["y"] >= p["y"] and (q["x"] < p["x"] or q["y"] > p["y"])
            for q in known
        )
    ]
    return sorted(front, key=lambda p: (p["x"], -p["y"]))


def quality_speed_points(speed, averages):
    """[{"label", "x": p90 answer time in s, "y": average score}] per target of `speed`
    (run_speed()) and `averages` (model_averages rows), in the run's order; None where unknown."""
    scores = {row["target_id"]: row.get("avg_score") for row in averages}
    points = []
    for target in speed["targets"]:
        p90 = (target.get("e2eMs") or {}).get("p90")
        points.append(
            {
                "label": target["label"],
                "x": None if p90 is None else p90 / 1000.0,
                "y": scores.get(target["targetId"]),
            }
        )
    return points


def empty_svg(title, sentence, narrow=False):
    """A chart's place when it has nothing to draw: its title and a sentence saying what is
    missing, both wrapped to the width."""
    font = _font(narrow)
    width = 480 if narrow else 640
    row = round(font * 1.35)
    heads = wrap(title, int((width - 24) / ((font + 2) * 0.6)))
    lines = wrap(sentence, int((width - 24) / (font * 0.56)))
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} '
        f'{font + (len(heads) + len(lines)) * row + 16}" class="chart-empty" role="img" '
        f'aria-label="{escape(title)}: {escape(sentence)}" font-family="{escape(FONT)}" '
        f'font-size="{font}"><title>{escape(title)}</title>',
    ]
    for n, line in enumerate(heads):
        out.append(
            f'<text x="12" y="{font + 6 + n * row}" font-size="{font + 2}" font-weight="600" '
            f'fill="{INK}">{escape(line)}</text>'
        )
    for n, line in enumerate(lines):
        y = font + 10 + (len(heads) + n) * row
        out.append(f'<text x="12" y="{y}" fill="{MUTED}">{escape(line)}</text>')
    out.append("</svg>")
    return "".join(out)


def _styled(narrow, colors):
    look = style(narrow)
    look.colors = tuple(colors)
    look.value_label_font_size = _font(narrow)  # the numbers printed at the points
    return look


def quality_speed_chart(points, narrow=False):
    """Score against p90 answer time, one numbered point per target, the Pareto frontier (the
    targets no other target beats on both) as a dashed line; the key names each point in full and
    says which are on the frontier."""
    title = "Score against p90 answer time"
    drawn = [(n, p) for n, p in enumerate(points) if p["x"] is not None and p["y"] is not None]
    if not drawn:
        missing = "no target has both a score and an answer time yet"
        return empty_svg(title, missing, narrow)
    front = pareto_frontier([p for _, p in drawn])
    on_front = {id(p) for p in front}
    top = max(p["x"] for _, p in drawn)
    x_ticks = nice_ticks(top * 1.08, 3 if narrow else 6)
    colors = [_color(n) for n, _ in drawn] + [FRONTIER_COLOR]
    chart = pygal.XY(
        **config(
            narrow,
            title=title,
            style=_styled(narrow, colors),
            stroke=False,
            dots_size=9 if narrow else 7,
            print_labels=True,
            range=(0, 100),
            xrange=(0, x_ticks[-1]),
            x_labels=x_ticks,
            y_labels=nice_ticks(100, 4 if narrow else 5),
            x_title="p90 answer time (s)",
            y_title="Average score",
            value_formatter=short_number,
            x_value_formatter=short_number,
        )
    )
    for n, p in drawn:
        chart.add(p["label"], [{"value": (p["x"], p["y"]), "label": str(n + 1)}])
    if len(front) > 1:
        chart.add(
            "Pareto frontier",
            [(p["x"], p["y"]) for p in front],
            stroke=True,
            show_dots=False,
            stroke_style={"width": 2, "dasharray": "6,4"},
        )
    entries = []
    for n, p in enumerate(points):
        words = (
            f"{p['label']}: p90 {seconds_text(p['x'])}, score {p['y']:.1f}"
            if p["x"] is not None and p["y"] is not None
            else f"{p['label']}: not drawn ({'no score' if p['y'] is None else 'no answer time'})"
        )
        if id(p) in on_front:
            words += " (on the frontier)"
        entries.append({"label": words, "color": _color(n), "mark": str(n + 1)})
    add_key(
        chart,
        entries,
        _font(narrow),
        note="Frontier: no other model is both faster and better. Up and left is better.",
    )
    return render(chart)


def seconds_text(seconds):
    """A duration kept short: "850 ms" under a second, "1.57 s" from one."""
    # 0.9996 s is "1 s", not "1e+03 ms" (.3g of 999.6 rounds to an exponent).
    if seconds * 1000 < 999.5:
        return f"{seconds * 1000:.3g} ms"
    return f"{seconds:.3g} s"


def bin_edges(top, count=BINS):
    """count + 1 round bin edges from 0 to at least `top` (> 0), evenly spaced."""
    if not top or top <= 0 or not math.isfinite(top):
        top = 1.0
    step = nice_ticks(top, count)[1]
    return [round(i * step, 6) for i in range(math.ceil(top / step - 1e-9) + 1)] or [0, step]


def log_bin_edges(low, top, per_decade=PER_DECADE):
    """Bin edges spaced evenly on a log scale, `per_decade` to a power of ten, from at or below
    `low` to at or above `top` (both > 0)."""
    first = math.floor(math.log10(low) * per_decade + 1e-9)
    last = math.ceil(math.log10(top) * per_decade - 1e-9)
    return [float(f"{10 ** (k / per_decade):.3g}") for k in range(first, max(last, first + 1) + 1)]


def choose_edges(low, top):
    """The bins of a distribution whose values run from `low` to `top`: log-spaced when the
    slowest is LOG_RATIO times the fastest or more (a fast model's shape would otherwise sit
    in the first bin), else even from 0."""
    if low and low > 0 and top and top / low >= LOG_RATIO:
        return log_bin_edges(low, top)
    return bin_edges(top)


def is_log(edges):
    """Whether `edges` are log-spaced (log_bin_edges) rather than even from 0."""
    return edges[0] > 0


def _bin(value, edges):
    return min(max(bisect.bisect_right(edges, value) - 1, 0), len(edges) - 2)


def bin_counts(values, edges):
    """How many `values` fall in each bin [edges[i], edges[i+1]); values at or past the last edge
    in the last bin, below the first in the first."""
    counts = [0] * (len(edges) - 1)
    for v in values:
        if v is None or v != v:  # NaN
            continue
        counts[_bin(v, edges)] += 1
    return counts


def bin_histogram(hist, edges):
    """bin_counts() of an app.latency gap histogram ({bucket: count}), each bucket at its value."""
    counts = [0] * (len(edges) - 1)
    for bucket, n in hist.items():
        counts[_bin(bucket_value(bucket), edges)] += n
    return counts


def distribution_chart(series, *, title, narrow=False, missing="no values recorded"):
    """The share of values per bin for each target, as lines over shared bins: `series`
    [{"label", "edges", "counts", "past"?: values past the last edge}] (one set of edges for
    all; log-spaced edges draw on a log axis)."""
    drawn = [(n, s) for n, s in enumerate(series) if sum(s["counts"])]
    if not drawn:
        return empty_svg(title, missing, narrow)
    edges = drawn[0][1]["edges"]
    log = is_log(edges)
    shares = [[100.0 * c / sum(s["counts"]) for c in s["counts"]] for _, s in drawn]
    top = max(max(row) for row in shares)
    if any(s.get("past") for _, s in drawn):
        title = f"{title} (slower ones in the last bin)"
    if log:
        # pygal's XY has no log x axis: x is log10(ms), labelled back in ms, shifted so that 1 ms
        # is not at x = 0 (pygal draws its y axis there, a black line across the plot).
        where = [math.log10(e) + LOG_SHIFT for e in edges]
        centres = [(a + b) / 2 for a, b in zip(where, where[1:], strict=False)]
        x_range = (where[0], where[-1])
        step = 1 if where[-1] - where[0] <= (3 if narrow else 5) else 2
        x_labels = [float(d) for d in range(math.ceil(where[0]), math.floor(where[-1]) + 1, step)]
        axis = {
            "x_value_formatter": lambda v: short_number(10 ** (v - LOG_SHIFT)),
            "x_title": "ms (log scale)",
        }
    else:
        centres = [(a + b) / 2 for a, b in zip(edges, edges[1:], strict=False)]
        x_range = (0, edges[-1])
        x_labels = nice_ticks(edges[-1], 3 if narrow else 6)
        axis = {"x_value_formatter": short_number, "x_title": "ms"}
    chart = pygal.XY(
        **config(
            narrow,
            title=title,
            style=_styled(narrow, [_color(n) for n, _ in drawn]),
            stroke=True,
            dots_size=3 if narrow else 2,
            fill=False,
            range=(0, nice_ticks(top, 4)[-1]),
            y_labels=nice_ticks(top, 4 if narrow else 5),
            xrange=x_range,
            x_labels=x_labels,
            y_title="% of values",
            value_formatter=short_number,
            **axis,
        )
    )
    for (_n, s), row in zip(drawn, shares, strict=True):
        chart.add(
            s["label"],
            [(x, round(v, 2)) for x, v in zip(centres, row, strict=True)],
            stroke_style={"width": 3},
        )
    entries = [
        {
            "label": f"{s['label']}: {sum(s['counts']):,} values"
            if sum(s["counts"])
            else f"{s['label']}: none recorded",
            "color": _color(n),
        }
        for n, s in enumerate(series)
    ]
    add_key(chart, entries, _font(narrow))
    return render(chart)


def timeline_bars(answers, limit=TIMELINE_MAX):
    """The timeline's bars of the first `limit` answers by send time: `answers` [(sent_ts in s,
    queue_ms or None, ttft_ms or None, e2e_ms)], each bar in s from the first send:
    {"start", "queueEnd", "firstEnd", "end", "title"}. Answers without a send time or answer time
    are left out; a queue longer than the TTFT is cut at it (the wait for the first token includes
    the queue)."""
    # By send time then answer time only: a tie's queue or TTFT may be None, and None does not
    # compare with a number (two answers sent in one instant failed the page).
    known = sorted(
        (a for a in answers if a[0] is not None and a[3] is not None), key=lambda a: (a[0], a[3])
    )[:limit]
    if not known:
        return []
    t0 = known[0][0]
    bars = []
    for sent, queue, ttft, e2e in known:
        start = sent - t0
        first = None if ttft is None else start + min(ttft, e2e) / 1000.0
        queued = None
        if queue is not None:
            queued = start + min(queue, ttft if ttft is not None else e2e, e2e) / 1000.0
        words = [f"sent at {start:.2f} s"]
        if queue is not None:
            words.append(f"queued {queue:,.0f} ms")
        if ttft is not None:
            words.append(f"first token {ttft:,.0f} ms")
        words.append(f"done {e2e:,.0f} ms")
        bars.append(
            {
                "start": round(start, 6),
                "queueEnd": None if queued is None else round(queued, 6),
                "firstEnd": None if first is None else round(first, 6),
                "end": round(start + e2e / 1000.0, 6),
                "title": ", ".join(words),
            }
        )
    return bars


NO_SEND_TIMES = "no send times recorded: the timeline needs streamed answers"


def request_timeline(label, bars, total, narrow=False):
    """The per-request timeline of one target (`total`: its answers with a send time)."""
    title = f"Requests over time: {label}"
    if not bars:
        return empty_svg(title, NO_SEND_TIMES, narrow)
    note = None
    if total > len(bars):
        note = f"the first {len(bars)} of {total:,} answers by send time"
    chart_id = f"timeline-{zlib.crc32(label.encode()):08x}"
    return timeline_chart(bars, title=title, narrow=narrow, note=note, chart_id=chart_id)


def load_chart(series, *, title, unit, narrow=False, slo=None, slo_label="SLO", load="load"):
    """A figure against load, one line per target: `series` [{"label", "points": [(load,
    value)]}]; `slo`: a horizontal line at that value (a p90 TTFT limit); `load`: what the load
    is ("concurrency", "requests/s")."""
    drawn = [(n, s) for n, s in enumerate(series) if any(v is not None for _, v in s["points"])]
    if not drawn:
        return empty_svg(title, "no load steps with this figure", narrow)
    loads = sorted({x for _, s in drawn for x, v in s["points"] if v is not None})
    values = [v for _, s in drawn for _, v in s["points"] if v is not None]
    top = max(values + ([slo] if slo else []))
    colors = [_color(n) for n, _ in drawn] + ([SLO_COLOR] if slo else [])
    chart = pygal.XY(
        **config(
            narrow,
            title=title,
            style=_styled(narrow, colors),
            stroke=True,
            dots_size=6 if narrow else 4,
            range=(0, nice_ticks(top, 4)[-1]),
            y_labels=nice_ticks(top, 4 if narrow else 5),
            xrange=(0, loads[-1] * 1.05 or 1),
            x_labels=loads if len(loads) <= (5 if narrow else 10) else None,
            x_title=load,
            y_title=unit,
            value_formatter=short_number,
            x_value_formatter=short_number,
        )
    )
    for _n, s in drawn:
        chart.add(
            s["label"],
            [(x, v) for x, v in s["points"] if v is not None],
            stroke_style={"width": 3},
        )
    entries = [{"label": s["label"], "color": _color(n)} for n, s in enumerate(series)]
    if slo:
        chart.add(
            slo_label,
            [(0, slo), (loads[-1] * 1.05 or 1, slo)],
            show_dots=False,
            stroke_style={"width": 2, "dasharray": "8,4"},
        )
        entries.append({"label": f"{slo_label}: {short_number(slo)} {unit}", "color": SLO_COLOR})
    add_key(chart, entries, _font(narrow))
    return render(chart)

"""Time-series line charts as inline SVG: lines with 95 % CI bands, breaks, linked runs.

pygal draws no confidence band and cannot end a line at a point and say why, and
its point links need its tooltip script; this small renderer does just that, with no script:
each run is a column (an <a> to the run, its numbers in a <title> tooltip) over every line's
point at that time, a break is a gap with a dashed marker. One link per run rather than per
point keeps a 200-run, 5-model chart small, and easier to hit than overlapping dots.
"""

import calendar
import datetime as dt
from html import escape

from .palette import FONT
from .palette import GUIDE
from .palette import INK
from .palette import MUTED
from .palette import PALETTE
from .ticks import nice_ticks
from .ticks import short_number

DOTS_MAX = 60  # points per series drawn as dots when they link nowhere


def epoch(t):
    """Seconds since 1970 of a naive-UTC datetime (or a number, returned as it is)."""
    if isinstance(t, dt.datetime):
        return calendar.timegm(t.timetuple()) + t.microsecond / 1e6
    return float(t)


def _time_label(seconds, span):
    when = dt.datetime.fromtimestamp(seconds, dt.UTC)
    if span <= 1200:
        return when.strftime("%H:%M:%S")
    if span <= 2 * 86400:
        return when.strftime("%H:%M")
    if span <= 400 * 86400:
        return when.strftime("%b %d")
    return when.strftime("%Y-%m")


def _segments(points):
    """Runs of consecutive points with a value, split where a point breaks the line."""
    segment = []
    for p in points:
        if p.get("y") is None:
            if segment:
                yield segment
            segment = []
            continue
        if p.get("break") and segment:
            yield segment
            segment = []
        segment.append(p)
    if segment:
        yield segment


class _Frame:
    """Where things go: the plot box, the scales, and the legend below (the picture grows by
    the legend's rows, so a label is never cut off)."""

    def __init__(self, width, height, left, legend_rows, t0, t1, y_min, y_top, font):
        self.width, self.left = width, left
        self.font = font
        self.row = font + 8
        self.top = font + 22
        self.right = width - 14
        self.bottom = height - (font + 14)
        self.legend_top = height
        self.height = height + (legend_rows * self.row + 6 if legend_rows else 0)
        self.t0, self.t1 = t0, t1
        self.y_min, self.y_top = y_min, y_top

    def x(self, t):
        return self.left + (self.right - self.left) * (t - self.t0) / ((self.t1 - self.t0) or 1)

    def y(self, value):
        span = (self.y_top - self.y_min) or 1
        value = min(max(value, self.y_min), self.y_top)
        return self.bottom - (self.bottom - self.top) * (value - self.y_min) / span


def line_chart(
    series,
    *,
    title,
    unit="",
    y_max=None,
    width=720,
    height=300,
    narrow=False,
    chart_id="chart",
    columns=(),
    t_range=None,
):
    """SVG of `series`: [{"name", "points": [{"t", "y", "low"?, "high"?, "title"?, "break"?:
    reason}]}]; y from 0 to y_max (default: a round number above the data). `columns`:
    [{"t", "href", "title"}], one linked column per run. `t_range` (epoch s or datetimes)
    fixes the time axis, so charts drawn side by side share it."""
    font = 20 if narrow else 12
    width, height = (480, height + 60) if narrow else (width, height)
    named = [s for s in series if any(p.get("y") is not None for p in s["points"])]
    times = [epoch(p["t"]) for s in named for p in s["points"] if p.get("y") is not None]
    values = [
        v for s in named for p in s["points"] for v in (p.get("y"), p.get("high")) if v is not None
    ]
    ticks = nice_ticks(y_max if y_max is not None else max(values, default=1), 4 if narrow else 5)
    t0, t1 = (min(times), max(times)) if times else (0.0, 1.0)
    if t_range is not None:
        t0, t1 = epoch(t_range[0]), epoch(t_range[1])
    if t1 - t0 < 60:  # a single moment: a minute around it
        middle = (t0 + t1) / 2
        t0, t1 = middle - 30, middle + 30
    frame = _Frame(width, height, 56 if narrow else 46, len(named), t0, t1, 0, ticks[-1], font)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {frame.height}" '
        f'class="linechart" role="group" aria-labelledby="{chart_id}-title" '
        f'font-family="{escape(FONT)}" font-size="{font}">',
        f'<title id="{chart_id}-title">{escape(title)}</title>',
        f'<text x="{frame.left}" y="{font + 6}" font-size="{font + 2}" font-weight="600" '
        f'fill="{INK}">{escape(title)}</text>',
    ]
    for tick in ticks:
        y = frame.y(tick)
        out.append(
            f'<line x1="{frame.left}" x2="{frame.right}" y1="{y:.1f}" y2="{y:.1f}" '
            f'stroke="{GUIDE}" stroke-dasharray="4,4"/>'
            f'<text x="{frame.left - 6}" y="{y + font / 3:.1f}" text-anchor="end" '
            f'fill="{MUTED}">{short_number(tick)}{escape(unit)}</text>'
        )
    if not named:
        out.append(
            f'<text x="{width / 2}" y="{(frame.top + frame.bottom) / 2}" text-anchor="middle" '
            f'fill="{MUTED}">No data to draw</text></svg>'
        )
        return "".join(out)
    count = 3 if narrow else 6
    for i in range(count):
        t = t0 + (t1 - t0) * i / (count - 1)
        anchor = "start" if i == 0 else "end" if i == count - 1 else "middle"
        out.append(
            f'<text x="{frame.x(t):.1f}" y="{frame.bottom + font + 6}" text-anchor="{anchor}" '
            f'fill="{MUTED}">{_time_label(t, t1 - t0)}</text>'
        )
    for index, s in enumerate(named):
        out += _series_svg(s, PALETTE[index % len(PALETTE)], frame, narrow)
    out += _columns_svg(columns, frame)
    for index, s in enumerate(named):
        y = frame.legend_top + (index + 1) * frame.row - 4
        color = PALETTE[index % len(PALETTE)]
        out.append(
            f'<rect x="{frame.left}" y="{y - font + 2}" width="{font}" height="{font}" '
            f'fill="{color}"/><text x="{frame.left + font + 6}" y="{y}" '
            f'fill="{INK}">{escape(s["name"])}</text>'
        )
    out.append("</svg>")
    return "".join(out)


def _series_svg(s, color, frame, narrow):
    out = []
    radius = 4 if narrow else 3
    for segment in _segments(s["points"]):
        xs = [frame.x(epoch(p["t"])) for p in segment]
        if all(p.get("low") is not None and p.get("high") is not None for p in segment):
            upper = " ".join(
                f"{x:.1f},{frame.y(p['high']):.1f}" for x, p in zip(xs, segment, strict=True)
            )
            lower = " ".join(
                f"{x:.1f},{frame.y(p['low']):.1f}"
                for x, p in reversed(list(zip(xs, segment, strict=True)))
            )
            if len(segment) == 1:
                x = xs[0]
                out.append(
                    f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{frame.y(segment[0]["low"]):.1f}" '
                    f'y2="{frame.y(segment[0]["high"]):.1f}" stroke="{color}" '
                    'stroke-opacity=".35" stroke-width="6"/>'
                )
            else:
                out.append(f'<polygon points="{upper} {lower}" fill="{color}" fill-opacity=".15"/>')
        if len(segment) > 1:
            line = " ".join(
                f"{x:.1f},{frame.y(p['y']):.1f}" for x, p in zip(xs, segment, strict=True)
            )
            out.append(f'<polyline points="{line}" fill="none" stroke="{color}" stroke-width="2"/>')
        first = segment[0]
        if first.get("break"):
            x = xs[0]
            out.append(
                f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{frame.top}" y2="{frame.bottom}" '
                f'stroke="{color}" stroke-dasharray="3,3" stroke-opacity=".7">'
                f"<title>{escape(str(first['break']))}</title></line>"
            )
        # A dense line reads better without its dots; a point alone between breaks needs one.
        if len(s["points"]) <= DOTS_MAX or len(segment) == 1:
            out.append(f'<g fill="{color}">')
            for x, p in zip(xs, segment, strict=True):
                tip = escape(p.get("title") or short_number(p["y"]))
                out.append(
                    f'<circle cx="{x:.1f}" cy="{frame.y(p["y"]):.1f}" r="{radius}">'
                    f"<title>{tip}</title></circle>"
                )
            out.append("</g>")
    return out


def _columns_svg(columns, frame):
    """One transparent, linked column per run, as wide as the gap to its neighbours."""
    xs = sorted(
        ((frame.x(epoch(c["t"])), c) for c in columns if c.get("href")), key=lambda pair: pair[0]
    )
    if not xs:
        return []
    out = ['<g class="linechart__runs" fill="transparent">']
    for index, (x, column) in enumerate(xs):
        left = (x + xs[index - 1][0]) / 2 if index else x - 6
        right = (x + xs[index + 1][0]) / 2 if index + 1 < len(xs) else x + 6
        left, right = max(left, x - 12), min(right, x + 12)
        out.append(
            f'<a href="{escape(column["href"])}"><rect x="{left:.1f}" y="{frame.top}" '
            f'width="{max(right - left, 1):.1f}" height="{frame.bottom - frame.top}">'
            f"<title>{escape(column.get('title') or '')}</title></rect></a>"
        )
    out.append("</g>")
    return out

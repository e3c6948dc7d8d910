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

from .key import key_svg
from .key import wrap
from .palette import FONT
from .palette import GUIDE
from .palette import INK
from .palette import MUTED
from .palette import PALETTE
from .ticks import nice_ticks
from .ticks import short_number

DOTS_MAX = 60  # points per series drawn as dots when they link nowhere
# With `clip_outliers`, the axis stops at this many times the values' upper quartile when a
# value goes past it: one run at 25 000 tok/s (a fake server) would flatten every other line.
CLIP_FACTOR = 3.0
CLIP_MIN_VALUES = 4  # fewer values than this: no quartile worth trusting, nothing is clipped


def clip_top(values):
    """The axis top that keeps one outlier from flattening the rest: CLIP_FACTOR times the upper
    quartile when some value is past it, else None (draw everything)."""
    ordered = sorted(v for v in values if v is not None)
    if len(ordered) < CLIP_MIN_VALUES:
        return None
    cap = CLIP_FACTOR * ordered[(3 * len(ordered)) // 4]
    return cap if cap > 0 and ordered[-1] > cap else None


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
    clip_outliers=False,
):
    """SVG of `series`: [{"name", "points": [{"t", "y", "low"?, "high"?, "title"?, "break"?:
    reason}]}]; y from 0 to y_max (default: a round number above the data). `columns`:
    [{"t", "href", "title"}], one linked column per run. `t_range` (epoch s or datetimes)
    fixes the time axis, so charts drawn side by side share it. `clip_outliers`: the axis stops
    short of a far outlier (clip_top), drawn at the top edge as a marked triangle, and the title
    says how many points went past and how far."""
    font = 20 if narrow else 12
    width, height = (480, height + 60) if narrow else (width, height)
    named = [s for s in series if any(p.get("y") is not None for p in s["points"])]
    times = [epoch(p["t"]) for s in named for p in s["points"] if p.get("y") is not None]
    values = [
        v for s in named for p in s["points"] for v in (p.get("y"), p.get("high")) if v is not None
    ]
    cap = clip_top([p.get("y") for s in named for p in s["points"]]) if clip_outliers else None
    if cap is not None:
        past = [v for v in (p.get("y") for s in named for p in s["points"]) if v and v > cap]
        title = (
            f"{title} — axis cut at {short_number(cap)}{unit}: {len(past)} "
            f"{'point' if len(past) == 1 else 'points'} above (▲), up to {short_number(max(past))}"
            f"{unit}"
        )
        values = [min(v, cap) for v in values]
    top = cap if cap is not None else y_max if y_max is not None else max(values, default=1)
    ticks = nice_ticks(top, 4 if narrow else 5)
    if cap is not None:
        ticks = [t for t in ticks if t <= cap] + ([cap] if ticks[-1] > cap else [])
    t0, t1 = (min(times), max(times)) if times else (0.0, 1.0)
    if t_range is not None:
        t0, t1 = epoch(t_range[0]), epoch(t_range[1])
    if t1 - t0 < 60:  # a single moment: a minute around it
        middle = (t0 + t1) / 2
        t0, t1 = middle - 30, middle + 30
    left = 56 if narrow else 46
    # A bold title is wider than the key's text: ~0.62 of its size a character.
    heads = wrap(title, int((width - left - 12) / ((font + 2) * 0.62)))
    extra = (len(heads) - 1) * (font + 6)
    frame = _Frame(width, height + extra, left, 0, t0, t1, 0, ticks[-1], font)
    frame.top += extra
    out = [
        f'<title id="{chart_id}-title">{escape(title)}</title>',
        *(
            f'<text x="{frame.left}" y="{font + 6 + n * (font + 6)}" font-size="{font + 2}" '
            f'font-weight="600" fill="{INK}">{escape(line)}</text>'
            for n, line in enumerate(heads)
        ),
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
        return _header(width, frame.height, chart_id, font) + "".join(out)
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
        if cap is not None:
            out += _clipped_svg(s, PALETTE[index % len(PALETTE)], frame, cap, font)
    out += _columns_svg(columns, frame)
    # Each series' whole name under the plot, wrapped to the width: never cut.
    entries = [
        {"label": s["name"], "color": PALETTE[index % len(PALETTE)]}
        for index, s in enumerate(named)
    ]
    key, key_height = key_svg(entries, frame.left, frame.legend_top, width - frame.left, font)
    out.append(f'<g class="chart-key">{key}</g></svg>')
    return _header(width, frame.legend_top + key_height + 10, chart_id, font) + "".join(out)


def _header(width, height, chart_id, font):
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height:g}" '
        f'class="linechart" role="group" aria-labelledby="{chart_id}-title" '
        f'font-family="{escape(FONT)}" font-size="{font}">'
    )


def _clipped_svg(s, color, frame, cap, font):
    """A triangle at the top edge for each point past the cut axis, its value beside it."""
    out = []
    for p in s["points"]:
        if p.get("y") is None or p["y"] <= cap:
            continue
        x, y = frame.x(epoch(p["t"])), frame.top
        # The value beside its triangle, on the side with room (the last run is at the edge).
        right = x > (frame.left + frame.right) / 2
        anchor, tx = ("end", x - 8) if right else ("start", x + 8)
        out.append(
            f'<path d="M{x - 6:.1f} {y + 4:.1f} L{x + 6:.1f} {y + 4:.1f} L{x:.1f} {y - 6:.1f} Z" '
            f'fill="{color}"><title>{escape(p.get("title") or short_number(p["y"]))}</title></path>'
            f'<text x="{tx:.1f}" y="{y + 4:.1f}" text-anchor="{anchor}" fill="{INK}" '
            f'font-size="{font - 2}">{short_number(p["y"])}</text>'
        )
    return out


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

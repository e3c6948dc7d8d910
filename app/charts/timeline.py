"""A Gantt-like timeline as inline SVG: one thin bar per request, from sent to its last token,
split into its wait in a queue (where the server says), its wait for the first token and its
streaming. pygal has no such chart (stacked bars with a transparent first part would need one
series per part and per row); this draws it directly, with no script, in the house look."""

from html import escape

from .key import key_svg
from .key import wrap
from .palette import FONT
from .palette import GUIDE
from .palette import INK
from .palette import MUTED
from .ticks import nice_ticks
from .ticks import short_number

# The parts of a bar, in order, and their colours.
PARTS = (
    ("queue", "#c0392b", "waiting in the server's queue"),
    ("first", "#e0a030", "waiting for the first token"),
    ("stream", "#2f5bea", "streaming the answer"),
)


def timeline_chart(bars, *, title, narrow=False, chart_id="timeline", note=None):
    """SVG of `bars` ([{"start", "queueEnd"?, "firstEnd"?, "end", "title"}], seconds from the
    first send), one row each, top to bottom in send order."""
    font = 22 if narrow else 14
    width = 480 if narrow else 640
    left, right = 12, width - 24
    # The title names a model in full: wrapped, never cut (bold runs a little wider).
    lines = wrap(title, int((width - 24) / ((font + 2) * 0.6)))
    top = font * 2 + 10 + (len(lines) - 1) * round((font + 2) * 1.3)
    count = len(bars)
    row = max(1.5, min(14.0, (300 if narrow else 260) / max(count, 1)))
    bottom = top + row * count
    span = max((b["end"] for b in bars), default=1) or 1
    ticks = nice_ticks(span, 3 if narrow else 6)
    scale = (right - left) / ticks[-1]
    out = [
        f'<text x="{left}" y="{font + 6 + n * round((font + 2) * 1.3)}" font-size="{font + 2}" '
        f'font-weight="600" fill="{INK}">{escape(line)}</text>'
        for n, line in enumerate(lines)
    ]
    for tick in ticks:
        x = left + tick * scale
        anchor = "start" if tick == 0 else "end" if tick == ticks[-1] else "middle"
        out.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top}" y2="{bottom:.1f}" stroke="{GUIDE}" '
            f'stroke-dasharray="4,4"/><text x="{x:.1f}" y="{bottom + font + 6:.1f}" '
            f'text-anchor="{anchor}" fill="{MUTED}">{short_number(tick)} s</text>'
        )
    height = max(row - (0.6 if row > 3 else 0), 1)
    for index, bar in enumerate(bars):
        y = top + index * row
        edges = [bar["start"], bar.get("queueEnd"), bar.get("firstEnd"), bar["end"]]
        start = bar["start"]
        out.append(f"<g><title>{escape(bar.get('title') or '')}</title>")
        for (_name, color, _words), end in zip(PARTS, edges[1:], strict=True):
            if end is None or end <= start:
                continue
            out.append(
                f'<rect x="{left + start * scale:.1f}" y="{y:.1f}" '
                f'width="{max((end - start) * scale, 0.5):.1f}" height="{height:.1f}" '
                f'fill="{color}"/>'
            )
            start = end
        out.append("</g>")
    used = {"queue"} if any(b.get("queueEnd") is not None for b in bars) else set()
    used |= {"first"} if any(b.get("firstEnd") is not None for b in bars) else set()
    entries = [
        {"label": words, "color": color}
        for name, color, words in PARTS
        if name in used or name == "stream"
    ]
    if note:
        entries.append({"label": note, "color": "transparent"})
    key, key_height = key_svg(entries, left, bottom + font + 12, width, font)
    total = bottom + font + 12 + key_height + font
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {total:.0f}" '
        f'class="timeline" role="img" aria-labelledby="{chart_id}-title" '
        f'font-family="{escape(FONT)}" font-size="{font}">'
        f'<title id="{chart_id}-title">{escape(title)}</title>' + "".join(out) + key + "</svg>"
    )

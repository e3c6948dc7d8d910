"""A key under a chart that names each series in full: pygal fits its legend to the width by
cutting labels, and a model's name cut in the middle can read as another model's. Each entry is a
colour swatch (or a number printed at the point) and its label, wrapped over as many lines as it
needs; the picture grows by the key's height."""

from html import escape

from pygal.etree import etree

from .palette import FONT
from .palette import INK
from .palette import MUTED

# The average width of a character of the house font, in font sizes (system-ui at 12-22 px).
CHAR_WIDTH = 0.56


def wrap(text, width):
    """`text` over lines of at most `width` characters, broken at spaces, "/", "-" or ":" where it
    can, inside a word only where a word is longer than a line. No character is dropped."""
    width = max(4, width)
    lines = []
    rest = text
    while len(rest) > width:
        # A space may sit just past the line (it is dropped); a "/" or "-" stays at the end of
        # its line, so it must fit in it.
        space = rest.rfind(" ", 0, width + 1)
        mark = max(rest.rfind(c, 0, width) for c in "/-:_")
        cut = max(space, mark + 1 if mark > 0 else -1)
        if cut <= 0:
            cut = width
        lines.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip(" ")
    lines.append(rest)
    return lines


def key_lines(entries, width, font):
    """[(entry index, line)] of `entries` ([{"label", ...}]) wrapped to a picture `width` px
    wide with a `font` px font, after a swatch."""
    chars = int((width - 2 * font - 24) / (font * CHAR_WIDTH))
    return [
        (index, line) for index, entry in enumerate(entries) for line in wrap(entry["label"], chars)
    ]


def add_key(chart, entries, font, note=None):
    """Draw `entries` ([{"label", "color"?, "mark"?}]) under `chart` (a pygal chart, not yet
    rendered): a swatch of the entry's colour, or its mark (a number printed at its point), then
    its label in full. `note`: a muted line under the key."""

    def draw(root):
        _x, _y, w, h = (float(v) for v in root.get("viewBox").split())
        row = round(font * 1.35)
        lines = key_lines(entries, w, font)
        group = etree.SubElement(
            root, "g", {"class": "chart-key", "font-family": FONT, "font-size": str(font)}
        )
        y = h + 4
        last = None
        for index, line in lines:
            y += row
            entry = entries[index]
            if index != last:
                y += 4 if last is not None else 0
                # One group per entry, its label whole in a <title> (a tooltip, and one string
                # for a screen reader however the lines wrap).
                item = etree.SubElement(group, "g", {"class": "chart-key__entry"})
                etree.SubElement(item, "title").text = entry["label"]
                _swatch(item, entry, 12, y, font)
            last = index
            text = etree.SubElement(item, "text", {"x": str(18 + font * 1.6), "y": str(y)})
            text.set("fill", INK)
            text.text = line
        if note:
            for line in wrap(note, int((w - 24) / (font * CHAR_WIDTH))):
                y += row
                text = etree.SubElement(group, "text", {"x": "12", "y": str(y), "fill": MUTED})
                text.text = line
        root.set("viewBox", f"0 0 {w:g} {y + font:g}")
        return root

    chart.add_xml_filter(draw)
    return chart


def _swatch(group, entry, x, y, font):
    color = entry.get("color") or MUTED
    if entry.get("mark"):
        circle = etree.SubElement(
            group,
            "circle",
            {"cx": str(x + font * 0.6), "cy": str(y - font * 0.35), "r": str(font * 0.7)},
        )
        circle.set("fill", color)
        mark = etree.SubElement(
            group,
            "text",
            {
                "x": str(x + font * 0.6),
                "y": str(y - font * 0.35 + font * 0.35),
                "text-anchor": "middle",
                "fill": "#fff",
                "font-size": str(round(font * 0.8)),
                "font-weight": "600",
            },
        )
        mark.text = entry["mark"]
        return
    etree.SubElement(
        group,
        "rect",
        {
            "x": str(x),
            "y": str(y - font * 0.85),
            "width": str(font),
            "height": str(font),
            "fill": color,
        },
    )


def key_svg(entries, x, y, width, font):
    """The same key as SVG text for a hand-drawn chart: (svg, height)."""
    row = round(font * 1.35)
    out = []
    last = None
    top = y
    for index, line in key_lines(entries, width, font):
        y += row
        entry = entries[index]
        if index != last:
            y += 4 if last is not None else 0
            color = entry.get("color") or MUTED
            out.append(
                f'<rect x="{x}" y="{y - font * 0.85:.1f}" width="{font}" height="{font}" '
                f'fill="{color}"><title>{escape(entry["label"])}</title></rect>'
            )
        last = index
        out.append(f'<text x="{x + font * 1.6 + 6:.1f}" y="{y}" fill="{INK}">{escape(line)}</text>')
    return "".join(out), y - top


def add_names_key(chart, entries, note, narrow):
    """The key of charts.labels.axis_names under `chart` when the axis could not hold the names
    whole (nothing when it could)."""
    if entries or note:
        add_key(chart, entries, 22 if narrow else 14, note=note)
    return chart

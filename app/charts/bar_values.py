"""Value labels of a horizontal bar chart that stay readable on short bars. pygal centres each
label on its bar's end, so on a short bar it sits half on the bar and half on the axis and reads
as a smudge ("1 1.0" at phone width). Here a label goes inside its bar's end in white where the
bar is long enough to hold it, and just after the end in ink where it is not."""

from .key import CHAR_WIDTH

# Space between a label and its bar's end, in font sizes.
GAP = 0.3
# A label inside its bar, as a class the chart's own <style> colours (pygal's CSS colours every
# value label black, and a CSS rule outranks an SVG fill attribute).
INSIDE = "inside"


def _local(tag):
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _classes(el):
    return (el.get("class") or "").split()


def _bars(root):
    """(x start, x end, y top, y bottom) of every bar's rectangle."""
    out = []
    for el in root.iter():
        if _local(el.tag) == "rect" and "tooltip-trigger" in _classes(el):
            if None in (el.get("x"), el.get("y"), el.get("height")):
                continue
            x, y = float(el.get("x")), float(el.get("y"))
            # pygal writes no width for a zero's bar.
            width = float(el.get("width") or 0)
            out.append((x, x + width, y, y + float(el.get("height"))))
    return out


def _style_element(root):
    styles = [el for el in root.iter() if _local(el.tag) == "style"]
    return styles[-1] if styles else None


def values_beside_bars(font_size):
    """An xml filter for a pygal HorizontalBar with print_values: each value label inside its
    bar's end (white) when the bar holds it, else just after the end (ink)."""

    def place(root):
        bars = _bars(root)
        gap = GAP * font_size
        moved_inside = False
        for el in root.iter():
            if _local(el.tag) != "text" or "value" not in _classes(el):
                continue
            y = float(el.get("y"))
            bar = next((b for b in bars if b[2] <= y <= b[3]), None)
            if bar is None:
                continue
            start, end = bar[0], bar[1]
            width = len(el.text or "") * CHAR_WIDTH * font_size
            if end - start >= width + 2 * gap:
                el.set("x", f"{end - gap:.2f}")
                el.set("text-anchor", "end")
                el.set("class", " ".join([*_classes(el), INSIDE]))
                moved_inside = True
            else:
                el.set("x", f"{end + gap:.2f}")
                el.set("text-anchor", "start")
        style = _style_element(root)
        if moved_inside and style is not None and root.get("id"):
            # More specific than pygal's ".text-overlay .color-N text" rule.
            rule = f"\n#{root.get('id')} .text-overlay text.value.{INSIDE}{{fill:#fff}}"
            style.text = (style.text or "") + rule
        return root

    return place

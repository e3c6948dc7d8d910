"""The house look of a pygal chart: its Style and its configuration. `narrow=True` is drawn for
phone widths (~390 px): fewer, larger labels. A chart with a legend grows taller by the legend's
rows (one series a row, below the plot), so the legend is never cut off."""

from pygal.style import Style

from .palette import FONT
from .palette import GUIDE
from .palette import INK
from .palette import PALETTE
from .palette import SUBTLE


def _font_size(narrow):
    return 22 if narrow else 14


def _shared(narrow):
    """What every pygal chart shares: no background, the palette, the font and its sizes."""
    big = _font_size(narrow)
    return {
        "background": "transparent",
        "plot_background": "transparent",
        "foreground": INK,
        "foreground_strong": INK,
        "foreground_subtle": SUBTLE,
        "font_family": FONT,
        "colors": PALETTE,
        "label_font_size": big,
        "major_label_font_size": big,
        "legend_font_size": big,
        "title_font_size": big + 2,
        "no_data_font_size": big + 4,
    }


def style(narrow):
    """Bars, boxes and points: near-solid fills over dashed grey guides."""
    big = _font_size(narrow)
    return Style(
        **_shared(narrow),
        opacity=".85",
        opacity_hover=".95",
        guide_stroke_color=GUIDE,
        major_guide_stroke_color=GUIDE,
        major_guide_stroke_dasharray="4,4",
        value_font_size=big - 2,
        tooltip_font_size=big,
    )


def outline_style(narrow):
    """Overlapping outlines (a radar): faint fills, so every line stays visible, over pygal's
    own guides."""
    return Style(**_shared(narrow), opacity=".12", opacity_hover=".3")


def config(narrow, legend=None, **extra):
    """The keyword arguments of a pygal chart in the house style, `extra` on top. `legend`: how
    many series the legend below the plot lists, one a row (at least one row); None: no legend."""
    settings = {
        # No XML declaration (inlinable), no tooltip script (no external asset, no JS).
        "disable_xml_declaration": True,
        "js": [],
        "style": style(narrow),
        "width": 480 if narrow else 640,
        "height": 420 if narrow else 360,
        "legend_at_bottom": True,
        "legend_at_bottom_columns": 1,
        "truncate_label": 18 if narrow else 30,
        "print_values": False,
        "show_legend": False,
        "margin": 10,
        "margin_right": 36,  # room for the last x label, centred on the edge ("100k")
        "no_data_text": "No data yet",
        "max_scale": 5 if narrow else 10,
    }
    settings.update(extra)
    return settings if legend is None else _with_legend(settings, legend)


def _with_legend(settings, series):
    """Show the legend below the plot, one series a row, and add the height it takes.

    pygal reserves legend rows by floor division (series // columns), which cuts off the last row
    whenever the columns do not divide the series; one column a row is exact, and no label can
    run into its neighbour's. The plot keeps its size: the picture grows instead.
    """
    font = settings["style"].legend_font_size
    rows = max(1, series)
    settings.update(
        show_legend=True,
        legend_at_bottom=True,
        legend_at_bottom_columns=1,
        truncate_legend=None,  # None: pygal fits each label to the width
        height=settings["height"] + settings["margin"] + round(font * 1.5 * rows),
    )
    return settings

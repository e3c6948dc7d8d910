"""A pygal chart as inlinable SVG text: no XML declaration (the configuration's), no script."""

import sys

import pygal  # noqa: F401  (imported here so the import hook below is there to take out)

# pygal appends a legacy sys.meta_path finder (no find_spec) for its map plugins; after that every
# failed optional import in the process (flask_wtf's babel, ...) raises ImportWarning. We draw no
# maps, so take it out again.
sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != "PluginImportFixer"]


def drop_scripts(root):
    """pygal always embeds an inline config <script> for its tooltips; we ship no JS at all."""
    for parent in root.iter():
        for child in list(parent):
            if isinstance(child.tag, str) and child.tag.rsplit("}", 1)[-1] == "script":
                parent.remove(child)
    return root


def render(chart):
    """`chart` as SVG text without scripts."""
    chart.add_xml_filter(drop_scripts)
    if not chart.raw_series:
        # Nothing to draw (no answers, every item failed, no model): pygal's "No data yet"
        # chart. Its axis labels would fail without a series ('_adapt'), so it gets none.
        chart.y_labels = None
    return chart.render(is_unicode=True)

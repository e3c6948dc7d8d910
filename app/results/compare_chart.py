"""The compare page's chart: the score change per model, one bar per compared run (pygal,
in the house style of app.charts)."""

import pygal

from ..charts.key import add_key
from ..charts.labels import axis_names
from ..charts.labels import series_key
from ..charts.render import render
from ..charts.style import config

# One colour per compared run, none of them green or red: a bar's colour names its run, and
# better or worse is read from the side of zero it falls on.
RUN_COLOURS = ("#2f5bea", "#a86500", "#7d3cbc", "#1c6fa8", "#5d6778", "#d35400")


def delta_chart(series, narrow=False, title="Score change vs the baseline (points)"):
    """Horizontal bars, one row per model, one colour per run: B's score minus the
    baseline's (paired on shared tasks where possible). `series` from delta_series()."""
    labels = []
    for _run_id, values in series:
        labels += [label for label in values if label not in labels]
    top = max([abs(v) for _run, values in series for v in values.values() if v is not None] or [1])
    top = max(5.0, float(top))
    settings = config(
        narrow,
        title=title,
        range=(-top, top),
        include_x_axis=True,
        height=max(220, 90 + 40 * len(labels) * max(1, len(series))) if not narrow else 420,
    )
    settings["style"].colors = RUN_COLOURS
    settings["truncate_label"] = -1
    chart = pygal.HorizontalBar(**settings)
    # Each target by its one name where it fits, else by a letter named in full in the key.
    names, key, _note = axis_names(labels, narrow)
    chart.x_labels = names[::-1]
    for run_id, values in series:
        chart.add(
            run_id,
            [
                None if values.get(label) is None else round(values[label], 1)
                for label in reversed(labels)
            ],
        )
    # The runs by colour (when more than one), then the letters' targets: all whole.
    entries = series_key([run_id for run_id, _ in series], RUN_COLOURS) if len(series) > 1 else []
    if entries or key:
        add_key(chart, entries + key, 22 if narrow else 14)
    return render(chart)

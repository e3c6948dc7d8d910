"""The compare page's chart: the score change per model, one bar per compared run (pygal,
in the house style of app.charts)."""

import pygal

from ..charts.labels import short
from ..charts.render import render
from ..charts.style import config

# One colour per compared run, none of them green or red: a bar's colour names its run, and
# better or worse is read from the side of zero it falls on.
RUN_COLOURS = ("#2f5bea", "#a86500", "#7d3cbc", "#1c6fa8", "#5d6778", "#d35400")


def model_names(labels):
    """The labels as drawn: "provider/model", or only the model when every label has the
    same provider (so a narrow chart keeps the model's name whole)."""
    providers = {label.split("/", 1)[0] for label in labels}
    if len(providers) == 1 and all("/" in label for label in labels):
        return [label.split("/", 1)[1] for label in labels]
    return list(labels)


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
        legend=len(series) if len(series) > 1 else None,
        title=title,
        range=(-top, top),
        include_x_axis=True,
        height=max(220, 90 + 40 * len(labels) * max(1, len(series))) if not narrow else 420,
    )
    settings["style"].colors = RUN_COLOURS
    chart = pygal.HorizontalBar(**settings)
    chart.x_labels = [short(name, 16 if narrow else 26) for name in model_names(labels)][::-1]
    for run_id, values in series:
        chart.add(
            short(run_id, 24 if narrow else 40),
            [
                None if values.get(label) is None else round(values[label], 1)
                for label in reversed(labels)
            ],
        )
    return render(chart)

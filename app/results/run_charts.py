"""The charts a run's page and report.html show: each read from the database (only what that chart
needs) and drawn by app.results.charts."""

from ..db.models import FINISHED
from ..db.target_name import target_name
from .averages import breakdown
from .averages import kept_latency_samples
from .averages import model_averages
from .averages import run_targets
from .charts import NO_TOKENS
from .charts import NONE_FINISHED
from .charts import NOT_YET
from .charts import category_chart
from .charts import latency_chart
from .charts import score_chart
from .charts import speed_chart
from .kept import code_stamp
from .kept import kept_figures

CHARTS = ("score", "speed", "latency", "category")
# The code that draws them, in the stamp of a kept chart (kept_run_chart).
_CODE = code_stamp(__file__, ("charts.py", "run_charts.py", "../charts/*.py"))


def kept_run_chart(run, name, narrow=False, estimates=False):
    """run_chart(run, name, narrow, estimates=estimates) as the results page shows it, kept while
    the run holds (kept.py): drawing one reads kept figures, but the latency chart's box plots
    and pygal's drawing still took 20-80 ms a view. ValueError for an unknown name."""
    if name not in CHARTS:
        raise ValueError(f"unknown chart {name!r}")
    kept_as = f"chart:{name}:{'narrow' if narrow else 'wide'}{':estimates' if estimates else ''}"
    return kept_figures(
        run,
        kept_as,
        lambda: run_chart(run, name, narrow, estimates=estimates),
        also=f"{_CODE}|{run.status}",
    )


def run_chart(run, name, narrow=False, *, averages=None, by_category=None, estimates=False):
    """Chart `name` (one of CHARTS) of `run` as SVG; reads only what that chart needs.

    `averages` (model_averages rows, run order) and `by_category` (the category breakdown) are
    used when given, so a caller that already has them (report.html) reads nothing twice.
    Estimated token rates are drawn only when `estimates` is asked for.
    """

    empty = NONE_FINISHED if run.status == FINISHED else NOT_YET
    if name in ("score", "speed"):
        averages = model_averages(run, estimates=estimates) if averages is None else averages
        draw = score_chart if name == "score" else speed_chart
        return draw(averages, narrow, _empty(name, averages, empty))
    if name == "latency":
        if averages is None:
            # Only ids and labels: no need for the averages' aggregate query.
            averages = [
                {"target_id": tid, "label": target_name(provider, label), "target_label": label}
                for tid, provider, _model, label in run_targets(run)
            ]
        return latency_chart(averages, kept_latency_samples(run), narrow, empty)
    if name == "category":
        if by_category is None:
            by_category = breakdown(run, "category")
        return category_chart(by_category, narrow, empty)
    raise ValueError(f"unknown chart {name!r}")


def _empty(name, averages, empty):
    """What an empty chart says: what is missing when answers did complete (a server that sends
    no token counts), else that there is nothing yet."""
    if not any(row.get("completed") for row in averages):
        return empty
    if name == "speed" and all(row.get("avg_tokens_per_second") is None for row in averages):
        return NO_TOKENS
    if name == "score" and all(row.get("avg_score") is None for row in averages):
        return "No scores yet: no answer has been judged"
    return empty

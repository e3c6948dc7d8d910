"""Everything the Trends page shows, from its filters: the charts (wide and narrow), where
lines break and why, and for a chosen collection current vs previous vs baseline."""

from ..db.models import FINISHED
from ..db.models import Run
from ..db.models import RunCollection
from ..results.composite import DEFAULT_SETTINGS
from ..results.composite import composite_rule
from .baselines import collection_summary
from .charts import PointCache
from .charts import category_trend_charts
from .charts import radar_chart
from .charts import trend_charts
from .trends import collection_of
from .trends import filter_choices
from .trends import trends

FILTERS = ("collection", "judge", "model", "category", "from", "to")
METRICS = ("score", "composite", "tokensPerSecond", "ttftMs")
PIN_CHOICES = 50  # finished runs offered as a baseline
TABLE_POINTS = 10  # runs per model in the page's table (the API has them all)


def breaks(data):
    """Where lines break, one entry per run and reason: {runId, finishedAt, reason, series},
    oldest first."""
    found = {}
    for s in data["series"]:
        for p in s["points"]:
            if not p["comparable"]:
                key = (p["finishedAt"], p["runId"], p["breakReason"])
                found.setdefault(key, []).append(s["target"])
    return [
        {"finishedAt": at, "runId": run_id, "reason": reason, "series": series}
        for (at, run_id, reason), series in sorted(found.items())
    ]


def pin_choices(collection):
    """The collection's finished runs, newest first (run_id, finished_at)."""
    runs = RunCollection.select(RunCollection.run).where(RunCollection.collection == collection.id)
    return list(
        Run.select(Run.run_id, Run.finished_at)
        .where(Run.id.in_(runs) & (Run.status == FINISHED))
        .order_by(Run.finished_at.desc())
        .limit(PIN_CHOICES)
    )


def _baseline_line(summary):
    """The baseline run's composite (all models) as the composite chart's flat line, or None."""
    if not summary or not summary["baselineRun"] or not summary["baselineMetrics"]:
        return None
    value = summary["baselineMetrics"]["overall"].get("composite")
    return {"runId": summary["baselineRun"]["runId"], "value": value}


def trends_view(filters, link, composite_settings=DEFAULT_SETTINGS):
    """The page's context; `link(run_id)` is a run's URL (this package knows no URLs)."""
    filters = {k: (filters.get(k) or "").strip() for k in FILTERS}
    # Speed figures only for the runs the table shows (the charts use the aggregates).
    data = trends(filters, composite_settings, speed_points=TABLE_POINTS)
    cache = PointCache(link)
    collection = collection_of(filters["collection"])
    summary = collection_summary(collection.id, composite_settings) if collection else None
    baseline = {"composite": _baseline_line(summary)}
    context = {
        "filters": filters,
        "choices": filter_choices(),
        "data": data,
        "points": sum(len(s["points"]) for s in data["series"]),
        "charts": {
            metric: trend_charts(data, metric, cache, baseline.get(metric)) for metric in METRICS
        },
        "breaks": breaks(data),
        "table_points": TABLE_POINTS,
        "collection": collection,
        "summary": None,
        "composite_rule": composite_rule(composite_settings),
    }
    if collection is not None:
        context.update(
            summary=summary,
            pin_choices=pin_choices(collection),
            category_chart=category_trend_charts(summary["domainTrend"], cache),
            # The radar is pygal's, whose <style> a page's CSP refuses: the page shows it as an
            # image of its own SVG document (radar_svg), as the results page does its charts.
            radar=bool(summary["latestMetrics"]),
        )
    return context


def radar_svg(collection_ref, narrow=False):
    """The collection's radar (current, previous and baseline score per category) as SVG; None
    when it has no finished run yet. ValidationError for an unknown collection."""
    collection = collection_of((collection_ref or "").strip())
    if collection is None:
        return None
    summary = collection_summary(collection.id)
    if not summary["latestMetrics"]:
        return None
    return radar_chart(
        summary["latestMetrics"], summary["previousMetrics"], summary["baselineMetrics"], narrow
    )

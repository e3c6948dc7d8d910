"""Baselines and a collection's summary: current vs previous vs baseline.

A baseline is a finished run pinned per collection. The summary (BenchmarkSummary)
holds the collection's latest run, the previous comparable one and the baseline, each with its
metrics per series and per category, a comparison table per metric, and the trends.
"""

from collections import namedtuple

from ..catalog.collections import get_collection
from ..clock import isoformat
from ..clock import utcnow
from ..db.connection import database
from ..db.models import Baseline
from ..db.models import Run
from ..db.models import RunAggregate
from ..db.models import RunCollection
from ..db.models import RunDigest
from ..errors import ValidationError
from ..results.composite import DEFAULT_SETTINGS
from ..results.composite_figures import aggregate_composite
from ..results.kept_runs import kept_on_target_counts
from ..runs.queries import get_run
from ..runs.state import run_state

A = RunAggregate
# (key, label, which way is better): the rows of the comparison, one table per metric.
METRICS = (
    ("score", "Score", "higher"),
    ("tokens_per_second", "Tokens/s", "higher"),
    ("ttft_p50_ms", "TTFT p50 (ms)", "lower"),
    ("time_p50_ms", "Answer time p50 (ms)", "lower"),
    ("failure_rate", "Failed items (%)", "lower"),
    ("composite", "Composite score", "higher"),
)
SAME = 1e-9


def pin_baseline(collection_id, run_id, now=None):
    """Pin a finished run that covered the collection as its baseline; returns the Baseline."""
    collection = get_collection(collection_id)
    try:
        run = get_run(run_id)
    except Exception as exc:
        raise ValidationError.field("runId", getattr(exc, "message", str(exc))) from None
    if run_state(run) != "finished":
        raise ValidationError.field(
            "runId", f"run {run_id} is {run_state(run)}; pin a finished run"
        )
    covers = RunCollection.select().where(
        (RunCollection.run == run) & (RunCollection.collection == collection.id)
    )
    if not covers.exists():
        raise ValidationError.field(
            "runId", f"run {run_id} did not run collection {collection.name!r}; pin one that did"
        )
    with database.atomic():
        Baseline.delete().where(Baseline.collection == collection.id).execute()
        return Baseline.create(collection=collection.id, run=run.id, pinned_at=now or utcnow())


def unpin_baseline(collection_id):
    """Remove the collection's baseline (nothing happens when there is none)."""
    collection = get_collection(collection_id)
    Baseline.delete().where(Baseline.collection == collection.id).execute()


def baseline_of(collection):
    """The collection's baseline run, or None."""
    row = Baseline.get_or_none(Baseline.collection == collection.id)
    return Run.get_or_none(Run.id == row.run_id) if row else None


def _digests(collection):
    """The collection's digested runs, newest first."""
    runs = RunCollection.select(RunCollection.run).where(RunCollection.collection == collection.id)
    return list(
        RunDigest.select(RunDigest, Run)
        .join(Run, on=(RunDigest.run == Run.id))
        .where(RunDigest.run.in_(runs))
        .order_by(RunDigest.finished_at.desc(), RunDigest.run.desc())
    )


ROW_FIELDS = (
    A.run,
    A.target,
    A.series,
    A.category,
    A.score,
    A.ci_low,
    A.ci_high,
    A.n,
    A.items,
    A.failed,
    A.tokens_per_second,
    A.ttft_p50_ms,
    A.time_p50_ms,
)


Row = namedtuple("Row", [f.name for f in ROW_FIELDS])


def _latency_targets(run_pks):
    """{run pk: latencyTargetMs} of the runs that set one."""
    out = {}
    for pk, settings in Run.select(Run.id, Run.settings).where(Run.id.in_(list(run_pks))).tuples():
        value = (settings or {}).get("latencyTargetMs")
        if value is not None:
            out[pk] = float(value)
    return out


def metrics_by_run(run_pks, composite_settings=DEFAULT_SETTINGS):
    """{run pk: run metrics} for many digested runs, in one query (and two more for the
    composite score's latency targets, reading items only of runs that set one).

    Read straight from the cursor: every column is a number or text as SQLite stores it, and
    peewee's per-value conversion was most of a 200-run summary's time.
    """
    rows = {pk: [] for pk in run_pks}
    query = A.select(*ROW_FIELDS).where(A.run.in_(list(run_pks)))
    for values in database.execute_sql(*query.sql()):
        row = Row(*values)
        rows[row.run].append(row)
    targets = _latency_targets(run_pks)
    counts = kept_on_target_counts(targets)
    return {
        pk: _metrics(found, targets.get(pk), counts, composite_settings)
        for pk, found in rows.items()
    }


def run_metrics(run_pk, composite_settings=DEFAULT_SETTINGS):
    """{overall, series: {name: metrics}, categories: {category: score}} of one digested run."""
    return metrics_by_run([run_pk], composite_settings)[run_pk]


def _metrics(rows, target_ms=None, counts=None, settings=DEFAULT_SETTINGS):
    series, categories = {}, {}
    cat_sums = {}
    for r in rows:
        values = {
            "score": r.score,
            "ci_low": r.ci_low,
            "ci_high": r.ci_high,
            "n": r.n,
            "tokens_per_second": r.tokens_per_second,
            "ttft_p50_ms": r.ttft_p50_ms,
            "time_p50_ms": r.time_p50_ms,
            "failure_rate": 100.0 * r.failed / r.items if r.items else None,
            "items": r.items,
        }
        if r.category == "":
            on_target = (counts or {}).get((r.run, r.target, ""))
            composite = aggregate_composite(r.score, r.time_p50_ms, target_ms, on_target, settings)
            values["composite"] = composite.score if composite else None
            values["composite_formula"] = composite.formula() if composite else None
            values["on_target"] = on_target
            series[r.series] = values
        elif r.score is not None:
            total, n = cat_sums.get(r.category, (0.0, 0))
            cat_sums[r.category] = (total + r.score * r.n, n + r.n)
    for category, (total, n) in sorted(cat_sums.items()):
        categories[category] = total / n if n else None
    overall = _overall(series.values())
    # All models together: the weighted score, the series' mean median time, their answers.
    on_target = [r.pop("on_target") for r in series.values()]
    met = sum(c[0] for c in on_target if c)
    answers = sum(c[1] for c in on_target if c)
    composite = aggregate_composite(
        overall["score"], overall["time_p50_ms"], target_ms, (met, answers), settings
    )
    overall["composite"] = composite.score if composite else None
    overall["composite_formula"] = composite.formula() if composite else None
    return {"overall": overall, "series": series, "categories": categories}


def _overall(rows):
    """All series together: scores weighted by answers, speeds averaged over series."""
    rows = list(rows)

    def mean(key):
        values = [r[key] for r in rows if r[key] is not None]
        return sum(values) / len(values) if values else None

    scored = sum(r["n"] for r in rows if r["score"] is not None)
    items = sum(r["items"] for r in rows)
    failed = sum(
        r["failure_rate"] * r["items"] / 100 for r in rows if r["failure_rate"] is not None
    )
    return {
        "score": (
            sum(r["score"] * r["n"] for r in rows if r["score"] is not None) / scored
            if scored
            else None
        ),
        "tokens_per_second": mean("tokens_per_second"),
        "ttft_p50_ms": mean("ttft_p50_ms"),
        "time_p50_ms": mean("time_p50_ms"),
        "failure_rate": 100.0 * failed / items if items else None,
    }


def _run_info(digest_or_run):
    if digest_or_run is None:
        return None
    run = digest_or_run.run if isinstance(digest_or_run, RunDigest) else digest_or_run
    return {
        "runId": run.run_id,
        "finishedAt": isoformat(run.finished_at),
        "judge": f"{run.judge_provider_name}/{run.judge_model}",
        "triggeredBy": run.triggered_by,
    }


def comparison(current, previous, baseline):
    """One table per metric: rows per series (and all together) with baseline, previous,
    current, the change against previous and whether it is better or worse."""
    names = sorted(set(current["series"]) | set((previous or {}).get("series", {})))
    tables = []
    for key, label, better in METRICS:
        rows = []
        for name in ["All models", *names]:

            def value(metrics, name=name, key=key):
                if metrics is None:
                    return None
                source = metrics["overall"] if name == "All models" else metrics["series"].get(name)
                return None if source is None else source.get(key)

            now, before, base = value(current), value(previous), value(baseline)
            # The composite's sum, shown beside the current number.
            formula = value(current, key="composite_formula") if key == "composite" else None
            change = None if now is None or before is None else now - before
            verdict = "same"
            if change is not None and abs(change) > SAME:
                up = change > 0
                verdict = "better" if up == (better == "higher") else "worse"
            rows.append(
                {
                    "series": name,
                    "baseline": base,
                    "previous": before,
                    "current": now,
                    "change": change,
                    "verdict": verdict if change is not None else None,
                    "formula": formula,
                }
            )
        tables.append({"metric": key, "label": label, "better": better, "rows": rows})
    return tables


def collection_summary(collection_id, composite_settings=DEFAULT_SETTINGS):
    """The dashboard's BenchmarkSummary for one collection: latest, previous and baseline runs with
    their metrics, the comparison tables, the score trend and the per-category trend."""
    collection = get_collection(collection_id)
    digests = _digests(collection)
    latest = digests[0] if digests else None
    previous = None
    if latest is not None:
        previous = next(
            (
                d
                for d in digests[1:]
                if d.judge_key == latest.judge_key and d.tasks_key == latest.tasks_key
            ),
            None,
        )
    base_run = baseline_of(collection)
    pks = {d.run_id for d in digests} | ({base_run.id} if base_run else set())
    by_run = metrics_by_run(pks, composite_settings)
    current_m = by_run[latest.run_id] if latest else None
    previous_m = by_run[previous.run_id] if previous else None
    baseline_m = by_run[base_run.id] if base_run else None
    trend, domain = [], {}
    for d in reversed(digests):
        metrics = by_run[d.run_id]
        trend.append(
            {"runId": d.run.run_id, "date": isoformat(d.finished_at), **metrics["overall"]}
        )
        for category, score in metrics["categories"].items():
            domain.setdefault(category, []).append(
                {"runId": d.run.run_id, "date": isoformat(d.finished_at), "score": score}
            )
    return {
        "collection": {"id": collection.id, "name": collection.name},
        "latestRun": _run_info(latest),
        "previousRun": _run_info(previous),
        "baselineRun": _run_info(base_run),
        "latestMetrics": current_m,
        "previousMetrics": previous_m,
        "baselineMetrics": baseline_m,
        "comparison": comparison(current_m, previous_m, baseline_m) if current_m else [],
        "trend": trend,
        "domainTrend": domain,
    }

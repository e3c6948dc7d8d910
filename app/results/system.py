"""A run's system metrics beside its throughput: the charts and peaks of the run's pages."""

from ..catalog.provider_loaded import loaded_models_reader
from ..charts.linechart import epoch
from ..charts.linechart import line_chart
from ..clock import utcnow
from ..db.connection import database
from ..db.models import Provider
from ..runs.queries import active_run
from ..sysmetrics.sample import current_metrics
from ..sysmetrics.series import peaks
from ..sysmetrics.store import chart_samples
from ..sysmetrics.store import latest_sample
from .kept import kept_figures
from .kept import stamp
from .recent import Recent

# The charts of a few runs' latest views: six line charts drawn on every view of a run's
# results page were a tenth of its time, and a finished run's never change.
_drawn = Recent(8)
BUCKETS = 120  # throughput points at most, whatever the run's length
MIN_BUCKET_SECONDS = 10
FRESH_SECONDS = 10  # a running run's sample this recent answers "now" without measuring again


def system_metrics_now(now=None):
    """GET /api/system/metrics: the running run's latest sample when it is
    fresh, else a reading taken now (with the models loaded on every server that can say)."""
    run = active_run()
    running = run is not None and run.state == "running"
    sample = latest_sample(run) if running else None
    if sample is not None and epoch(now or utcnow()) - sample["t"] > FRESH_SECONDS:
        sample = None
    if sample is not None:
        return current_metrics(1, sample=sample)
    return current_metrics(1 if running else 0, loaded_models_reader(Provider.select()))


# One query: the run's first and last answer times, then the mean tokens/s per bucket of
# answers (julian days keep the arithmetic in the database: SQLite's julianday() on the text it
# stores, PostgreSQL's epoch of the timestamp).
THROUGHPUT_SQL = (
    "WITH span AS (SELECT MIN({jd}) AS lo, MAX({jd}) AS hi "
    "FROM item WHERE run_id = ? AND answered_at IS NOT NULL) "
    "SELECT span.lo, span.hi, {floor}(({item_jd} - span.lo) * 86400.0 / "
    "{greatest}(?, (span.hi - span.lo) * 86400.0 / ?)){floor_end} AS bucket, "
    "AVG(item.tokens_per_second) "
    "FROM item, span WHERE item.run_id = ? AND item.answered_at IS NOT NULL "
    "AND item.tokens_per_second IS NOT NULL GROUP BY bucket, span.lo, span.hi ORDER BY bucket"
)
DIALECT = {
    "sqlite": {
        "jd": "julianday(answered_at)",
        "item_jd": "julianday(item.answered_at)",
        "floor": "CAST(",
        "floor_end": " AS INTEGER)",
        "greatest": "MAX",
    },
    "postgres": {
        "jd": "(EXTRACT(EPOCH FROM answered_at) / 86400.0 + 2440587.5)",
        "item_jd": "(EXTRACT(EPOCH FROM item.answered_at) / 86400.0 + 2440587.5)",
        "floor": "CAST(FLOOR(",
        "floor_end": ") AS BIGINT)",
        "greatest": "GREATEST",
    },
}
JULIAN_EPOCH = 2440587.5  # julianday('1970-01-01')


def throughput(run, buckets=BUCKETS):
    """[(epoch s, mean tokens/s of the answers in that bucket)], at most about `buckets`."""
    sql = THROUGHPUT_SQL.format(**DIALECT["postgres" if database.is_postgres else "sqlite"])
    rows = database.execute_sql(sql, (run.id, MIN_BUCKET_SECONDS, buckets, run.id)).fetchall()
    if not rows:
        return []
    lo, hi = rows[0][0], rows[0][1]
    start = (lo - JULIAN_EPOCH) * 86400.0
    size = max(MIN_BUCKET_SECONDS, (hi - lo) * 86400.0 / buckets)
    return [(start + (bucket + 0.5) * size, tps) for _lo, _hi, bucket, tps in rows]


def _line(name, samples, key, scale=1.0):
    return {
        "name": name,
        "points": [
            {
                "t": s["t"],
                "y": None if s.get(key) is None else s[key] * scale,
                "title": f"{name}: {s[key] * scale:.1f}" if s.get(key) is not None else None,
            }
            for s in samples
        ],
    }


CHARTS = (
    ("load", "CPU and GPU load (%)"),
    ("memory", "Memory (GiB)"),
    ("throughput", "Throughput (tokens/s)"),
)


def system_view(run):
    """{"samples": n, "peaks", "latest", "charts": {load, memory, throughput: {wide, narrow}}}:
    the run's system metrics beside its throughput, drawn for wide and narrow screens."""
    samples = chart_samples(run)
    rates = kept_figures(run, "throughput", lambda: throughput(run))
    # The throughput comes from the run's items (their stamp), the rest from its samples, which
    # are only added to: the same stamp, count and ends draw the same charts.
    ends = (samples[0]["t"], samples[-1]["t"]) if samples else None
    key = (database.database, run.id, stamp(run), len(samples), ends)
    charts = _drawn.get(key)
    if charts is None:
        charts = _charts(samples, rates)
        _drawn.put(key, charts)
    return {
        "samples": len(samples),
        "peaks": peaks(samples),
        "latest": samples[-1] if samples else None,
        "charts": charts,
    }


def _charts(samples, rates):
    """The three charts of system_view, each drawn wide and narrow."""
    load = [_line("CPU %", samples, "cpuPercent")]
    memory = [
        _line("RAM used (GiB)", samples, "ramUsedGb"),
        _line("our RSS (GiB)", samples, "rssMb", 1 / 1024),
    ]
    if any(s.get("gpuUtilPercent") is not None for s in samples):
        load.append(_line("GPU %", samples, "gpuUtilPercent"))
    if any(s.get("vramUsedGb") is not None for s in samples):
        memory.append(_line("VRAM used (GiB)", samples, "vramUsedGb"))
    totals = [s.get("ramTotalGb") or 0 for s in samples] + [
        s.get("vramTotalGb") or 0 for s in samples
    ]
    speed = [
        {
            "name": "tokens/s (answers)",
            "points": [{"t": t, "y": v, "title": f"{v:.1f} tokens/s"} for t, v in rates],
        }
    ]
    # One time axis for the three charts, so load and memory sit beside the throughput.
    times = [s["t"] for s in samples] + [t for t, _ in rates]
    t_range = (min(times), max(times)) if times else None
    lines = {"load": (load, 100), "memory": (memory, max(totals, default=0) or None)}
    lines["throughput"] = (speed, None)
    charts = {}
    for name, title in CHARTS:
        series, top = lines[name]
        charts[name] = {
            variant: line_chart(
                series,
                title=title,
                y_max=top,
                narrow=variant == "narrow",
                height=240,
                chart_id=f"sys-{name}-{variant}",
                t_range=t_range,
            )
            for variant in ("wide", "narrow")
        }
    return charts

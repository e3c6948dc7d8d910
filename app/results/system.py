"""A run's system metrics beside its throughput: the charts and peaks of the run's pages."""

from peewee import fn

from ..clock import db_text
from ..clock import utcnow
from ..engine.sampling import ollama_loaded_models
from ..models import Item
from ..models import Provider
from ..runs.queries import active_run
from ..sysmetrics.sample import current_metrics
from ..sysmetrics.series import peaks
from ..sysmetrics.store import chart_samples
from ..sysmetrics.store import latest_sample
from .linechart import epoch
from .linechart import line_chart

BUCKETS = 120  # throughput points at most, whatever the run's length
MIN_BUCKET_SECONDS = 10
FRESH_SECONDS = 10  # a running run's sample this recent answers "now" without measuring again


def system_metrics_now(now=None):
    """GET /api/system/metrics (seed 002 §8): the running run's latest sample when it is
    fresh, else a reading taken now (with the models loaded on every Ollama provider)."""
    run = active_run()
    running = run is not None and run.state == "running"
    sample = latest_sample(run) if running else None
    if sample is not None and epoch(now or utcnow()) - sample["t"] > FRESH_SECONDS:
        sample = None
    if sample is not None:
        return current_metrics(1, sample=sample)
    return current_metrics(1 if running else 0, ollama_loaded_models(Provider.select()))


def throughput(run, buckets=BUCKETS):
    """[(epoch s, mean tokens/s of the answers in that bucket)], bucketed in SQL."""
    first, last = (
        Item.select(fn.MIN(Item.answered_at), fn.MAX(Item.answered_at))
        .where((Item.run == run) & Item.answered_at.is_null(False))
        .tuples()
        .get()
    )
    if first is None:
        return []
    start = epoch(first)
    size = max(MIN_BUCKET_SECONDS, (epoch(last) - start) / buckets)
    # julianday keeps the bucketing in SQLite: seconds since the first answer / bucket size.
    bucket = (
        (fn.julianday(Item.answered_at) - fn.julianday(db_text(first))) * 86400.0 / size
    ).cast("INTEGER")
    rows = (
        Item.select(bucket, fn.AVG(Item.tokens_per_second))
        .where(
            (Item.run == run)
            & Item.answered_at.is_null(False)
            & Item.tokens_per_second.is_null(False)
        )
        .group_by(bucket)
        .order_by(bucket)
        .tuples()
    )
    return [(start + (index + 0.5) * size, tps) for index, tps in rows]


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


def system_view(run, narrow=False):
    """{"samples": n, "peaks", "latest", "charts": {cpu, memory, throughput}} for a run."""
    samples = chart_samples(run)
    tps = throughput(run)
    latest = samples[-1] if samples else None
    load = [_line("CPU %", samples, "cpuPercent")]
    memory = [
        _line("RAM used (GiB)", samples, "ramUsedGb"),
        _line("our RSS (GiB)", samples, "rssMb", 1 / 1024),
    ]
    if any(s.get("gpuUtilPercent") is not None for s in samples):
        load.append(_line("GPU %", samples, "gpuUtilPercent"))
    if any(s.get("vramUsedGb") is not None for s in samples):
        memory.append(_line("VRAM used (GiB)", samples, "vramUsedGb"))
    top_memory = max(
        [s.get("ramTotalGb") or 0 for s in samples] + [s.get("vramTotalGb") or 0 for s in samples],
        default=None,
    )
    speed = [
        {
            "name": "tokens/s (answers)",
            "points": [{"t": t, "y": v, "title": f"{v:.1f} tokens/s"} for t, v in tps],
        }
    ]
    suffix = "-narrow" if narrow else ""
    return {
        "samples": len(samples),
        "peaks": peaks(samples),
        "latest": latest,
        "charts": {
            "load": line_chart(
                load,
                title="CPU and GPU load (%)",
                y_max=100,
                narrow=narrow,
                height=240,
                chart_id=f"sys-load{suffix}",
            ),
            "memory": line_chart(
                memory,
                title="Memory (GiB)",
                y_max=top_memory or None,
                narrow=narrow,
                height=240,
                chart_id=f"sys-mem{suffix}",
            ),
            "throughput": line_chart(
                speed,
                title="Throughput (tokens/s)",
                narrow=narrow,
                height=240,
                chart_id=f"sys-tps{suffix}",
            ),
        },
    }

"""The speed charts a run's page and report.html show: each reads only what it needs (run_speed's
figures, which are cached, or one query on the answers' timing columns) and is drawn by
app.results.speed_charts."""

from array import array

from ..db.connection import database
from ..latency import bucket_value
from ..latency import unpack_lists
from ..runs.outcomes import IS_ANSWER_FAILED
from ..runs.outcomes import I
from .averages import model_averages
from .goodput import run_goodput
from .kept import code_stamp
from .kept import kept_figures
from .speed import run_speed
from .speed_charts import TIMELINE_MAX
from .speed_charts import bin_counts
from .speed_charts import bin_histogram
from .speed_charts import choose_edges
from .speed_charts import distribution_chart
from .speed_charts import load_chart
from .speed_charts import quality_speed_chart
from .speed_charts import quality_speed_points
from .speed_charts import request_timeline
from .speed_charts import timeline_bars

# Every speed chart but the timeline, which is one per target. The load charts are drawn only
# for a run with load steps (speed_chart_names says which a run has).
RUN_WIDE = ("quality-speed", "ttft", "itl")
LOAD = ("load-throughput", "load-ttft", "goodput")
SPEED_CHARTS = (*RUN_WIDE, "timeline", *LOAD)
CAPTIONS = {
    "quality-speed": "Average score against p90 answer time per model; the dashed line joins "
    "the models no other model beats on both (the Pareto frontier).",
    "ttft": "Time to first token: the share of answers in each time bin, per model.",
    "itl": "Inter-token latency: the share of token gaps in each time bin, per model.",
    "timeline": "Each answer from sent to last token, in send order: red while queued at the "
    "server (where it says), amber until the first token, blue while streaming.",
    "load-throughput": "Output tokens/s over the answering window at each load step.",
    "load-ttft": "p90 time to first token at each load step, with the SLO's limit.",
    "goodput": "Goodput (answers per second that meet the SLO) at each load step.",
}


def _steps(target):
    steps = target.get("steps")
    return steps if isinstance(steps, list) else []


def has_load_steps(speed):
    """Whether any target of `speed` (run_speed()) was measured at more than one load step."""
    return any(len(_steps(t)) > 1 for t in speed["targets"])


def speed_chart_names(run, speed):
    """The run-wide speed charts `run` has, in the order shown (the load charts only with load
    steps; goodput only with an SLO)."""
    names = list(RUN_WIDE)
    if has_load_steps(speed):
        names += ["load-throughput", "load-ttft"]
        if (run.settings or {}).get("slo"):
            names.append("goodput")
    return names


# The charts drawn are kept (kept.py: per process and in RunFigures), by chart, width and
# target, under the run's stamp and the code that draws them: a page shows up to a dozen, and
# the distributions decode every answer's gaps (seconds on a 100 000-item run), so a finished
# run's charts are drawn once (exports/warm.py draws them before anyone looks), not per view.
_DRAWN_BY = ("speed_charts.py", "run_speed_charts.py", "speed.py", "goodput.py", "../charts/*.py")
_CODE = code_stamp(__file__, _DRAWN_BY)


def speed_chart(run, name, narrow=False, *, target=None, averages=None, speed=None):
    """Speed chart `name` (one of SPEED_CHARTS) of `run` as SVG; "timeline" needs `target` (a
    target id of the run). `averages` and `speed`, when a caller has them, are not read again.
    ValueError for an unknown name or target."""
    if name not in SPEED_CHARTS:
        raise ValueError(f"unknown chart {name!r}")
    kept_as = f"speed-chart:{name}:{'narrow' if narrow else 'wide'}"
    if target is not None:
        kept_as += f":{int(target)}"
    return kept_figures(
        run, kept_as, lambda: _draw(run, name, narrow, target, averages, speed), also=_CODE
    )


def _draw(run, name, narrow, target, averages, speed):
    if name == "quality-speed":
        averages = model_averages(run) if averages is None else averages
        speed = run_speed(run, averages) if speed is None else speed
        return quality_speed_chart(quality_speed_points(speed, averages), narrow)
    speed = run_speed(run, averages) if speed is None else speed
    if name == "ttft":
        return _ttft(run, speed, narrow)
    if name == "itl":
        return _itl(run, speed, narrow)
    if name == "timeline":
        labels = {t["targetId"]: t["label"] for t in speed["targets"]}
        if target not in labels:
            raise ValueError(f"unknown target {target!r}")
        return timeline(run, target, labels[target], narrow)
    return _load(run, name, speed, narrow)


def _top(speed, figure):
    """The bins' end: a little past the largest target's p99, so one slow answer does not squeeze
    every other into the first bins."""
    tops = [t[figure]["p99"] for t in speed["targets"] if t[figure]["p99"] is not None]
    return max(tops, default=0) * 1.1


def _ttft(run, speed, narrow):
    values = {}  # target id -> its answers' TTFTs, packed (8 bytes each, not a float object)
    query = I.select(I.target, I.ttft_ms).where(
        (I.run == run) & I.ttft_ms.is_null(False) & I.time_taken_ms.is_null(False)
    )
    # Row by row from the cursor: no list of every row (a 1M-item run's was ~100 MiB).
    for target_id, ttft in database.execute(query.where(~IS_ANSWER_FAILED)):
        values.setdefault(target_id, array("d")).append(ttft)
    low = min((min(v) for v in values.values() if v), default=0)
    edges = choose_edges(low, _top(speed, "ttftMs"))
    series = [
        {
            "label": t["label"],
            "edges": edges,
            "counts": bin_counts(values.get(t["targetId"], ()), edges),
            "past": any(v >= edges[-1] for v in values.get(t["targetId"], ())),
        }
        for t in speed["targets"]
    ]
    return distribution_chart(
        series,
        title="Time to first token",
        narrow=narrow,
        missing="no time to first token recorded: it needs streamed answers",
    )


def _itl(run, speed, narrow):
    merged = {}
    query = I.select(I.target, I.itl_hist).where(
        (I.run == run) & I.itl_hist.is_null(False) & I.time_taken_ms.is_null(False)
    )
    for target_id, blob in database.execute(query.where(~IS_ANSWER_FAILED)):
        if not blob:
            continue
        into = merged.setdefault(target_id, {})
        for b, n in zip(*unpack_lists(blob), strict=True):
            into[b] = into.get(b, 0) + n
    low = min((bucket_value(min(h)) for h in merged.values() if h), default=0)
    # Gaps under half a millisecond (bucket 0) read as half a millisecond on a log axis.
    edges = choose_edges(max(low, 0.5), _top(speed, "itlMs"))
    series = []
    for t in speed["targets"]:
        hist = merged.get(t["targetId"], {})
        counts = bin_histogram(hist, edges)
        series.append(
            {
                "label": t["label"],
                "edges": edges,
                "counts": counts,
                "past": (t["itlMs"]["max"] or 0) >= edges[-1],
            }
        )
    return distribution_chart(
        series,
        title="Inter-token latency",
        narrow=narrow,
        missing="no token gaps recorded: they need answers streamed in more than one chunk",
    )


def timeline(run, target_id, label, narrow=False, limit=TIMELINE_MAX):
    """The per-request timeline of one target: its first `limit` answers by send time."""
    known = (
        (I.run == run)
        & (I.target == target_id)
        & I.sent_ts.is_null(False)
        & I.time_taken_ms.is_null(False)
    )
    total = I.select().where(known & ~IS_ANSWER_FAILED).count()
    query = (
        I.select(I.sent_ts, I.queue_ms, I.ttft_ms, I.time_taken_ms)
        .where(known & ~IS_ANSWER_FAILED)
        .order_by(I.sent_ts, I.id)
        .limit(limit)
    )
    bars = timeline_bars(database.execute(query).fetchall(), limit)
    return request_timeline(label, bars, total, narrow)


def load_points(targets, value):
    """[{"label", "points": [(load, value)]}] of the targets' steps (each {"load", ...}); `value`
    picks a step's figure (None when it has none). Steps without a load are left out."""
    return [
        {
            "label": t["label"],
            "points": sorted(
                (float(s["load"]), value(s)) for s in _steps(t) if s.get("load") is not None
            ),
        }
        for t in targets
    ]


def _figure(step, *path):
    for key in path:
        step = step.get(key) if isinstance(step, dict) else None
    return step


# What a step's load is, by the run's load mode (settings.load.mode).
LOAD_AXIS = {"concurrency": "concurrency", "rate": "requests/s"}


def _load(run, name, speed, narrow):
    settings = run.settings or {}
    slo = settings.get("slo") or {}
    load = settings.get("load") if isinstance(settings.get("load"), dict) else {}
    axis = LOAD_AXIS.get(load.get("mode"), "load")
    if name == "load-throughput":
        series = load_points(
            speed["targets"], lambda s: _figure(s, "window", "outputTokensPerSecond")
        )
        return load_chart(
            series, title="Throughput against load", unit="tokens/s", narrow=narrow, load=axis
        )
    if name == "load-ttft":
        series = load_points(speed["targets"], lambda s: _figure(s, "ttftMs", "p90"))
        return load_chart(
            series,
            title="p90 TTFT against load",
            unit="ms",
            narrow=narrow,
            slo=slo.get("ttftP90Ms"),
            slo_label="SLO p90 TTFT",
            load=axis,
        )
    goodput = run_goodput(run, speed=speed) if slo else None
    targets = (goodput or {}).get("targets", [])
    series = load_points(targets, lambda s: s.get("goodput"))
    return load_chart(
        series, title="Goodput against load", unit="answers/s", narrow=narrow, load=axis
    )


def speed_figures(run, narrow=True, *, averages=None, speed=None):
    """[(name, caption, svg)] of every speed chart `run` has (a timeline per target), for
    report.html."""
    averages = model_averages(run) if averages is None else averages
    speed = run_speed(run, averages) if speed is None else speed
    out = [
        (name, CAPTIONS[name], speed_chart(run, name, narrow, averages=averages, speed=speed))
        for name in speed_chart_names(run, speed)
    ]
    for t in speed["targets"]:
        svg = speed_chart(run, "timeline", narrow, target=t["targetId"], speed=speed)
        out.append(("timeline", CAPTIONS["timeline"], svg))
    return out

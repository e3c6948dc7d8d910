"""JSON API: system metrics now and a run's samples; a run's stability."""

from flask import Blueprint
from flask import jsonify
from flask import request

from ..errors import ValidationError
from ..results.stability import stability
from ..results.system import system_metrics_now
from ..runs.queries import get_run
from ..sysmetrics.series import peaks
from ..sysmetrics.store import run_samples

bp = Blueprint("system", __name__)


@bp.get("/system/metrics")
def metrics_now():
    """cpuUsagePercent, ramUsedGb, ramTotalGb, vramUsedGb, vramTotalGb (null without a GPU),
    ollamaModelsLoaded, activeBenchmarks."""
    return jsonify(system_metrics_now())


@bp.get("/runs/<run_id>/system-metrics")
def run_metrics(run_id):
    """The samples taken during the run (?since=<epoch seconds>) and their peaks."""
    run = get_run(run_id)
    since = request.args.get("since")
    try:
        since = None if since in (None, "") else float(since)
    except ValueError:
        raise ValidationError.field("since", "use epoch seconds, e.g. 1732380000") from None
    samples = run_samples(run, since=since)
    return jsonify(
        {"runId": run.run_id, "count": len(samples), "peaks": peaks(samples), "samples": samples}
    )


@bp.get("/runs/<run_id>/stability")
def run_stability(run_id):
    """Per task and model: mean and SD over repeats, unstable share, the judge's spread."""
    return jsonify(stability(get_run(run_id), limit=100_000))

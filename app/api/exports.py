"""JSON API: exports, a run's results, and comparing two runs."""

from flask import Blueprint
from flask import current_app
from flask import jsonify
from flask import request

from ..errors import ValidationError
from ..exports import files
from ..exports.summary import results_dict
from ..results.composite import settings_from
from ..results.goodput import run_goodput
from ..results.kept_compare import kept_compare_runs
from ..results.speed import run_speed
from ..runs.queries import get_run
from .replies import attachment

bp = Blueprint("exports", __name__)


@bp.post("/runs/<run_id>/export")
def export_run(run_id):
    """The run as a file: {"format": "CSV"|"MD"|"JSON"|"HTML"|"JSONL", "includeDetailed": bool}
    (JSONL: results.jsonl, one line per item as `llmbench report` writes it)."""
    body = request.get_json(silent=True)
    if not isinstance(body, dict):
        raise ValidationError.field(
            "body", 'send a JSON object such as {"format": "CSV", "includeDetailed": true}'
        )
    fmt = body.get("format")
    errors = []
    if not isinstance(fmt, str) or fmt.upper() not in files.FORMATS:
        errors.append({"field": "format", "message": f"must be one of {', '.join(files.FORMATS)}"})
    detailed = body.get("includeDetailed", True)
    if not isinstance(detailed, bool):
        errors.append({"field": "includeDetailed", "message": "must be true or false"})
    if errors:
        raise ValidationError(errors)
    run = get_run(run_id)
    settings = settings_from(current_app.config)
    return attachment(*files.download(run, files.kind_for(fmt, detailed), settings))


@bp.get("/runs/<run_id>/results")
def run_results(run_id):
    """Per-model averages (with score CI) and category/difficulty breakdowns; `?estimates=1`
    lets estimated token rates into the tokens/s averages."""
    estimates = request.args.get("estimates") in ("1", "true", "yes")
    return jsonify(results_dict(get_run(run_id), estimates=estimates))


@bp.get("/runs/<run_id>/speed")
def run_speed_figures(run_id):
    """Per target (and per category within it): TTFT, ITL, TPOT, end-to-end time and decode
    rate percentiles with CIs, throughput over the answering window, error rates and flags;
    `slo`: the run's SLO attainment and goodput per target and load step (null without one)."""
    run = get_run(run_id)
    speed = run_speed(run)
    return jsonify({**speed, "slo": run_goodput(run, speed=speed)})


@bp.get("/compare")
def compare_runs():
    """Compare run `a` (before) with run `b` (after), kept while both runs hold."""
    errors = [
        {"field": name, "message": "give a run id"}
        for name in ("a", "b")
        if not (request.args.get(name) or "").strip()
    ]
    if errors:
        raise ValidationError(errors)
    run_a = get_run(request.args["a"].strip())
    run_b = get_run(request.args["b"].strip())
    settings = settings_from(current_app.config)
    return jsonify(kept_compare_runs(run_a, run_b, composite_settings=settings))

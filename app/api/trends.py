"""JSON API: trends over time, baselines and collection summaries, regression alerts."""

from flask import Blueprint
from flask import current_app
from flask import jsonify
from flask import request

from ..clock import isoformat
from ..errors import ValidationError
from ..results.composite import settings_from
from ..schedules.alerts import alert_to_dict
from ..schedules.alerts import dismiss_alert
from ..schedules.alerts import list_alerts
from ..schedules.baselines import collection_summary
from ..schedules.baselines import pin_baseline
from ..schedules.baselines import unpin_baseline
from ..schedules.trends import trends
from .replies import json_body

bp = Blueprint("trends", __name__)
TREND_FILTERS = ("collection", "judge", "model", "category", "from", "to")


def _args(*allowed):
    unknown = sorted(set(request.args) - set(allowed))
    if unknown:
        raise ValidationError.field(
            unknown[0], f"unknown query parameter; use {', '.join(allowed)}"
        )
    return request.args


@bp.get("/trends")
def trend_series():
    """Score and speed over time per target: ?collection=&judge=&model=&category=&from=&to=."""
    args = _args(*TREND_FILTERS)
    settings = settings_from(current_app.config)
    return jsonify(trends({k: args.get(k) for k in TREND_FILTERS}, settings))


@bp.put("/collections/<int:collection_id>/baseline")
def baseline_pin(collection_id):
    """Pin a finished run as the collection's baseline: {"runId": "..."}."""
    body = json_body()
    run_id = body.get("runId")
    if not isinstance(run_id, str) or not run_id.strip():
        raise ValidationError.field("runId", "give the id of a finished run of this collection")
    baseline = pin_baseline(collection_id, run_id.strip())
    return jsonify(
        {
            "collectionId": collection_id,
            "runId": baseline.run.run_id,
            "pinnedAt": isoformat(baseline.pinned_at),
        }
    )


@bp.delete("/collections/<int:collection_id>/baseline")
def baseline_unpin(collection_id):
    """Remove the collection's baseline."""
    unpin_baseline(collection_id)
    return "", 204


@bp.get("/collections/<int:collection_id>/summary")
def summary(collection_id):
    """Latest, previous and baseline metrics, the comparison per metric, the trends."""
    return jsonify(collection_summary(collection_id, settings_from(current_app.config)))


@bp.get("/alerts")
def alert_list():
    """Regression alerts newest first: ?state=open|dismissed."""
    args = _args("state")
    return jsonify([alert_to_dict(a) for a in list_alerts(state=args.get("state"))])


@bp.post("/alerts/<int:alert_id>/dismiss")
def alert_dismiss(alert_id):
    """Dismiss an alert."""
    return jsonify(alert_to_dict(dismiss_alert(alert_id)))

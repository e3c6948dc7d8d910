"""JSON API: the queue of runs waiting for the engine."""

from flask import Blueprint
from flask import jsonify

from ..clock import isoformat
from ..runs.dto import run_summary
from ..runs.queue import cancel_queued
from ..runs.queue import queued_runs

bp = Blueprint("queue", __name__)


@bp.get("/queue")
def queue_list():
    """The queued runs, first in line first."""
    return jsonify(
        [
            {
                "runId": run.run_id,
                "position": run.position,
                "queuedAt": isoformat(run.queued_at),
                "templateId": run.template_id,
                "triggeredBy": run.triggered_by,
                "note": run.trigger_note,
            }
            for run in queued_runs()
        ]
    )


@bp.delete("/queue/<run_id>")
def queue_cancel(run_id):
    """Take a run out of the queue (it becomes stopped; continue it later if you like)."""
    return jsonify(run_summary(cancel_queued(run_id)))

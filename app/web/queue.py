"""The queue in the pages: cancelling a queued run."""

from flask import Blueprint
from flask import flash
from flask import redirect
from flask import request
from flask import url_for

from ..errors import LlmbenchError
from ..runs.queue import cancel_queued
from .back import local_path

bp = Blueprint("queue", __name__)


@bp.post("/queue/<run_id>/cancel")
def cancel(run_id):
    """Take a run out of the queue (it becomes stopped; it can be continued later)."""
    try:
        cancel_queued(run_id)
        flash(f"Run {run_id} left the queue; continue it later if you like.", "success")
    except LlmbenchError as exc:
        flash(exc.message, "error")
    return redirect(local_path(request.form.get("next")) or url_for("dashboard.index"), code=303)

"""Trends: score and speed over time, current vs previous vs baseline, pinning a baseline."""

from flask import Blueprint
from flask import Response
from flask import abort
from flask import current_app
from flask import flash
from flask import redirect
from flask import render_template
from flask import request
from flask import url_for

from ..errors import LlmbenchError
from ..results.composite import settings_from
from ..schedules.baselines import pin_baseline
from ..schedules.baselines import unpin_baseline
from ..schedules.trends_view import radar_svg
from ..schedules.trends_view import trends_view
from .back import local_path

bp = Blueprint("trends", __name__)


def _run_link(run_id):
    return url_for("results.show", run_id=run_id)


@bp.get("/trends")
def index():
    """The Trends page; every filter is in the URL (bookmarkable)."""
    try:
        context = trends_view(request.args, _run_link, settings_from(current_app.config))
    except LlmbenchError as exc:
        # A bad filter (a typed date, a collection gone): say so and show everything instead.
        flash(exc.message, "error")
        return redirect(url_for("trends.index"))
    return render_template("trends/index.html", **context)


@bp.get("/trends/radar.svg")
def radar():
    """A collection's radar as an SVG document (`?collection=`, `?size=narrow` for phones)."""
    try:
        svg = radar_svg(request.args.get("collection"), request.args.get("size") == "narrow")
    except LlmbenchError:
        abort(404)
    if svg is None:
        abort(404)
    response = Response(svg, mimetype="image/svg+xml")
    response.headers["Cache-Control"] = "no-cache"
    return response


@bp.post("/collections/<int:collection_id>/baseline")
def pin(collection_id):
    """Pin the chosen finished run as the collection's baseline."""
    try:
        baseline = pin_baseline(collection_id, (request.form.get("runId") or "").strip())
        flash(f"Run {baseline.run.run_id} is now the baseline.", "success")
    except LlmbenchError as exc:
        flash(exc.message, "error")
    return redirect(
        local_path(request.form.get("next")) or url_for("trends.index", collection=collection_id)
    )


@bp.post("/collections/<int:collection_id>/baseline/delete")
def unpin(collection_id):
    """Remove the collection's baseline."""
    unpin_baseline(collection_id)
    flash("The baseline was removed.", "success")
    return redirect(url_for("trends.index", collection=collection_id))

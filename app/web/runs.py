"""Web pages: runs. (placeholder until its owner fills it in)"""

from flask import Blueprint

bp = Blueprint("runs", __name__, url_prefix="/runs")


@bp.get("/")
def index():
    """Run history (placeholder)."""
    return "runs"


@bp.get("/<run_id>")
def show(run_id):
    """Live run view (placeholder)."""
    return run_id

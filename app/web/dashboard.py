"""Web pages: dashboard. (placeholder until its owner fills it in)"""

from flask import Blueprint

bp = Blueprint("dashboard", __name__, url_prefix="" or None)


@bp.get("/")
def index():
    """Dashboard (placeholder)."""
    return "llmbench"

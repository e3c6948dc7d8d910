"""Web pages: settings. (placeholder until its owner fills it in)"""

from flask import Blueprint

bp = Blueprint("settings", __name__, url_prefix="/settings" or None)


@bp.get("/")
def index():
    """Settings (placeholder)."""
    return "settings"

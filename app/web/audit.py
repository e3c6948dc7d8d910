"""The audit log page (admins): who did what, newest first, one page at a time."""

from flask import Blueprint
from flask import render_template
from flask import request

from ..accounts.audit import page
from ..clock import local_text

bp = Blueprint("audit", __name__)


@bp.get("/audit")
def index():
    """One page of the audit log, newest first."""
    number = request.args.get("page", "1")
    number = int(number) if number.isascii() and number.isdigit() and len(number) < 9 else 1
    entries, more = page(max(1, number))
    return render_template(
        "audit/index.html", entries=entries, page=max(1, number), more=more, local_text=local_text
    )

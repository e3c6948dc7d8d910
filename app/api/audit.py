"""JSON API: the audit log, exported (admins only, web/access.py)."""

from flask import Blueprint
from flask import Response
from flask import jsonify
from flask import request

from ..accounts.audit import entry_dict
from ..accounts.audit import jsonl_lines
from ..accounts.audit import page
from ..errors import ValidationError

bp = Blueprint("audit", __name__)


@bp.get("/audit")
def audit_export():
    """Every entry as JSON lines (?format=jsonl), or one page of them as JSON (?page=N)."""
    if request.args.get("format") == "jsonl":
        return Response(
            jsonl_lines(),
            mimetype="application/jsonl",
            headers={"Content-Disposition": 'attachment; filename="audit.jsonl"'},
        )
    text = request.args.get("page") or "1"
    if not (text.isascii() and text.isdigit() and 1 <= len(text) <= 6 and int(text) >= 1):
        raise ValidationError.field("page", "a page number: 1, 2, ... up to 999999")
    number = int(text)
    entries, more = page(number)
    return jsonify({"entries": [entry_dict(e) for e in entries], "page": number, "more": more})

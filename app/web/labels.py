"""Labels out and in: download people's ratings and votes (CSV, JSONL, JSON), import them back.

Downloads are the API's GET endpoints; imports are forms (CSRF) that store all or nothing and
list every problem with its line.
"""

from flask import Blueprint
from flask import flash
from flask import render_template
from flask import request

from ..errors import ValidationError
from ..errors import format_error
from ..ratings import labels
from ..results.compare import run_choices
from .people import me

bp = Blueprint("labels", __name__)

KINDS = {"ratings": labels.import_ratings, "votes": labels.import_votes}


def _render(errors=None, kind=None, status=200):
    return (
        render_template(
            "labels/index.html",
            runs=run_choices(),
            run=request.values.get("run", ""),
            formats=labels.FORMATS,
            errors=errors or [],
            failed_kind=kind,
        ),
        status,
    )


@bp.get("/labels")
def index():
    """Download links (all runs, or ?run=) and the two import forms."""
    return _render()


@bp.post("/labels/<kind>/import")
def import_file(kind):
    """Import ratings or votes from an uploaded file: all or nothing, errors with their line."""
    if kind not in KINDS:
        return _render(["Unknown import: use ratings or votes."], None, 404)
    upload = request.files.get("file")
    if upload is None or not upload.filename:
        return _render(["Pick a file to import."], kind, 400)
    fmt = request.form.get("format") or upload.filename.rsplit(".", 1)[-1].lower()
    try:
        fmt = labels.parse_format(fmt)
        text = upload.read().decode("utf-8-sig")
        result = KINDS[kind](text, fmt, person=me())
    except UnicodeDecodeError:
        return _render(["The file is not UTF-8 text."], kind, 400)
    except ValidationError as exc:
        lines = [format_error({**e, "file": upload.filename}) for e in exc.errors]
        return _render(lines, kind, 400)
    if kind == "ratings":
        flash(f"Imported {result} ratings from {upload.filename}.", "success")
    else:
        flash(
            f"Imported {result['stored']} votes from {upload.filename}"
            + (f" ({result['skipped']} were stored already)." if result["skipped"] else "."),
            "success",
        )
    return _render()

"""JSON API: people's ratings (PUT/DELETE per item), their export and import, the judge check."""

from flask import Blueprint
from flask import g
from flask import jsonify
from flask import request
from flask import url_for

from ..errors import ValidationError
from ..ratings import judge_check
from ..ratings import labels
from ..ratings.kept import kept_judge_check
from ..ratings.people import is_person
from ..ratings.people import person_of
from ..ratings.store import clear_rating
from ..ratings.store import get_item
from ..ratings.store import put_rating
from ..ratings.store import rating_history
from ..ratings.store import rating_to_dict
from ..runs.judge_jobs import job_progress
from ..runs.queries import get_run
from .replies import attachment
from .replies import json_body

bp = Blueprint("ratings", __name__)

# A cross-site HTML form can send multipart without a preflight, and the API skips CSRF tokens;
# a custom header cannot be sent cross-site without a CORS preflight we never grant.
UPLOAD_HEADER = "X-Requested-With"
TEXT_TYPES = {"text/csv": "csv", "application/x-ndjson": "jsonl", "application/jsonl": "jsonl"}


def me():
    """This request's person: "human", or "human:<account name>" once accounts sign in."""
    return person_of(g.get("account"))


def query_args(*allowed):
    """The query string, or a 400 naming a parameter this endpoint does not know."""
    unknown = sorted(set(request.args) - set(allowed))
    if unknown:
        raise ValidationError.field(
            unknown[0], f"unknown query parameter; use {', '.join(allowed)}"
        )
    return request.args


def import_text():
    """(text, format) of an import: raw CSV/JSONL/JSON, JSON {content, format}, or a multipart
    `file` (with the X-Requested-With header)."""
    fmt = request.args.get("format")
    if request.mimetype == "multipart/form-data":
        if not request.headers.get(UPLOAD_HEADER):
            raise ValidationError.field(
                "headers", f"send the header {UPLOAD_HEADER}: llmbench with a multipart upload"
            )
        upload = request.files.get("file")
        if upload is None or not upload.filename:
            raise ValidationError.field("file", "attach the file as form field 'file'")
        fmt = fmt or request.form.get("format") or upload.filename.rsplit(".", 1)[-1]
        data = upload.read()
    elif request.is_json:
        body = request.get_json(silent=True)
        if isinstance(body, dict) and "content" in body:
            if not isinstance(body["content"], str):
                raise ValidationError.field("content", "must be the file's text")
            return body["content"], labels.parse_format(body.get("format") or fmt or "json")
        data, fmt = request.get_data(), fmt or "json"
    elif request.mimetype in TEXT_TYPES:
        data, fmt = request.get_data(), fmt or TEXT_TYPES[request.mimetype]
    else:
        raise ValidationError.field(
            "body", "send CSV (text/csv), JSONL (application/x-ndjson) or JSON"
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ValidationError.field("file", "must be UTF-8 text") from None
    return text, labels.parse_format(fmt)


@bp.put("/runs/<run_id>/items/<int:item_id>/rating")
def rating_put(run_id, item_id):
    """Rate an item: {"rating": 1-5, "tags": [...], "notes": "..."} -> 200 and the rating."""
    rating = put_rating(run_id, item_id, json_body(), rater=me())
    return jsonify(
        rating_to_dict(rating) or {"itemId": item_id, "rating": None, "tags": [], "notes": ""}
    )


@bp.delete("/runs/<run_id>/items/<int:item_id>/rating")
def rating_delete(run_id, item_id):
    """Clear my rating, tags and notes of an item (the old ones stay in its history)."""
    clear_rating(run_id, item_id, rater=me())
    return "", 204


@bp.get("/runs/<run_id>/items/<int:item_id>/rating/history")
def rating_history_get(run_id, item_id):
    """My rating's earlier values, newest first: who changed it, when, what it was."""
    get_item(run_id, item_id)
    return jsonify(rating_history(item_id, me()))


@bp.get("/ratings")
def ratings_export():
    """Ratings with tags and notes: ?runId=&model=&target=&tag=&format=json|csv|jsonl."""
    args = query_args("runId", "model", "target", "tag", "format")
    fmt = labels.parse_format(args.get("format"))
    run_id = args.get("runId") or None
    if run_id:
        get_run(run_id)  # an unknown run is a 404, not an empty file
    rows = labels.rating_rows(run_id, args.get("model"), args.get("tag"), args.get("target"))
    name = f"ratings-{run_id}" if run_id else "ratings"
    return attachment(
        labels.export_chunks(rows, labels.RATING_COLUMNS, fmt),
        f"{name}.{fmt}",
        labels.CONTENT_TYPES[fmt],
    )


@bp.post("/ratings/import")
def ratings_import():
    """Import ratings (CSV, JSONL or JSON), matched by run id, task id and target; all or
    nothing, every problem with its line."""
    text, fmt = import_text()
    return jsonify({"imported": labels.import_ratings(text, fmt, person=me())}), 201


@bp.post("/runs/<run_id>/judge-check")
def judge_check_start(run_id):
    """Queue the judge check (the judge scores the tasks' references): 202, progress at GET."""
    job = judge_check.start(run_id)
    response = jsonify(job_progress(job))
    response.headers["Location"] = url_for("api.ratings.judge_check_get", run_id=run_id)
    return response, 202


@bp.get("/runs/<run_id>/judge-check")
def judge_check_get(run_id):
    """The latest reference check (ordered, tied and inverted tasks, mean per level), the
    judge's agreement with people (?rater=human:<name> for one person, else everyone pooled)
    and people's agreement with each other."""
    rater = query_args("rater").get("rater") or None
    if rater is not None and not is_person(rater):
        raise ValidationError.field("rater", 'must be one person: "human" or "human:<name>"')
    return jsonify(kept_judge_check(get_run(run_id), rater))

"""JSON API: import and export tasks in every dataset format."""

from flask import Blueprint
from flask import Response
from flask import jsonify
from flask import request

from ..datasets import exporter
from ..datasets import importer
from ..errors import ValidationError

bp = Blueprint("datasets", __name__)

# A cross-site HTML form can send multipart without a preflight, and this blueprint skips CSRF
# tokens; a custom header cannot be sent cross-site without a CORS preflight we never grant.
UPLOAD_HEADER = "X-Requested-With"


def _import_args(source):
    """collection and onDuplicate from the query string or the form/JSON body."""
    collection = source.get("collection", request.args.get("collection"))
    on_duplicate = source.get("onDuplicate", request.args.get("onDuplicate", "reject"))
    fmt = source.get("format", request.args.get("format"))
    if collection is not None and not isinstance(collection, str):
        raise ValidationError.field("collection", "must be a collection name")
    return fmt, collection or None, on_duplicate or "reject"


@bp.post("/tasks/import")
def tasks_import():
    """Import tasks (multipart `file`, repeatable, or JSON {content, format}); all or nothing."""
    if request.mimetype == "multipart/form-data":
        if not request.headers.get(UPLOAD_HEADER):
            raise ValidationError.field(
                "headers",
                f"send the header {UPLOAD_HEADER}: llmbench with a multipart upload (or send JSON)",
            )
        files = [f for f in request.files.getlist("file") if f and f.filename]
        if not files:
            raise ValidationError.field(
                "file",
                "attach the dataset file(s) as form field 'file' "
                "(repeat the field for several files)",
            )
        fmt, collection, on_duplicate = _import_args(request.form)
        # Several files are checked together: a task_id in two of them is a duplicate. The
        # uploads are passed as streams: one big line-format file is never read whole.
        data, name = [(f.filename, f.stream) for f in files], None
    elif request.is_json:
        body = request.get_json(silent=True)
        if not isinstance(body, dict):
            raise ValidationError.field("body", "send a JSON object {content, format, ...}")
        content = body.get("content")
        if not isinstance(content, str) or not content.strip():
            raise ValidationError.field("content", "the dataset text is required")
        fmt, collection, on_duplicate = _import_args(body)
        name = body.get("filename")
        if name is not None and not isinstance(name, str):
            raise ValidationError.field("filename", "must be a file name (text)")
        data, name = content.encode("utf-8", "surrogatepass"), name or None
    else:
        raise ValidationError.field("body", "send multipart/form-data with a file, or JSON")
    result = importer.import_tasks(
        data, fmt, filename=name, collection=collection, on_duplicate=on_duplicate
    )
    return jsonify(result.to_dict()), 201


@bp.get("/tasks/export")
def tasks_export():
    """Tasks (all, or ?collection=NAME) as a file; ?format=yaml, jsonl, csv, runner-jsonl, json."""
    fmt = exporter.export_format(request.args.get("format", "json"))
    collection = request.args.get("collection") or None
    # Built whole while the request's connection is open (streaming would outlive it).
    body = exporter.export_text(fmt, collection)
    mimetype = exporter.EXPORT_FORMATS[fmt][1]
    response = Response(body, mimetype=mimetype)
    response.headers["Content-Disposition"] = (
        f'attachment; filename="{exporter.filename(fmt, collection)}"'
    )
    return response

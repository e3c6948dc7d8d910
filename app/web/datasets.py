"""Web page: import tasks from a dataset file (task-list YAML, our JSON, LLM Runner CSV/JSONL,
apocbench JSONL) and export them."""

from flask import Blueprint
from flask import flash
from flask import redirect
from flask import render_template
from flask import request
from flask import url_for

from ..datasets import exporter
from ..datasets import importer
from ..db.models import Collection
from ..errors import ValidationError

bp = Blueprint("datasets", __name__, url_prefix="/settings/import")

FORMAT_CHOICES = [
    ("", "Guess from the file"),
    ("yaml", "Ollama-benchmarker YAML (task_id, expected_answer …)"),
    ("jsonl", "apocbench-style JSONL (id, prompt, rubric …)"),
    ("csv", "prompt CSV with variables (prompt_template, vars_json …)"),
    ("runner-jsonl", "prompt JSONL with variables (prompt_template, vars_json …)"),
    ("json", "llmbench JSON (tasks and collections)"),
]
# What each format looks like, for a person deciding which one their file is.
FORMAT_HELP = [
    (
        "Ollama-benchmarker YAML",
        ".yml / .yaml, a file or a list",
        "task_id, question, expected_answer: {most_expected, good_answer, pass_option}, "
        "incorrect_direction",
    ),
    (
        "apocbench-style JSONL",
        ".jsonl, one task a line",
        "id, category, difficulty, scenario, prompt, rubric [{id, text, weight}], auto_fail",
    ),
    (
        "prompt CSV/JSONL with variables",
        ".csv with a header row, or .jsonl",
        "task_id, template_version, prompt_template with {variables}, input_text, vars_json",
    ),
    ("llmbench JSON", ".json, as exported here", "tasks and the collections they belong to"),
]
EXPORT_CHOICES = [(fmt, label) for fmt, label in FORMAT_CHOICES if fmt]
DUPLICATE_CHOICES = [
    ("reject", "Reject the import", "nothing is saved if a task_id already exists"),
    ("skip", "Skip them", "existing tasks stay as they are"),
    ("update", "Update them", "existing tasks take the file's values"),
]


def _page(errors=None, form=None, status=200):
    names = [c.name for c in Collection.select(Collection.name).order_by(Collection.name)]
    return render_template(
        "datasets/import.html",
        errors=errors or [],
        form=form or {},
        collections=names,
        formats=FORMAT_CHOICES,
        format_help=FORMAT_HELP,
        export_formats=EXPORT_CHOICES,
        duplicates=DUPLICATE_CHOICES,
        subnav_active="import",
    ), status


@bp.get("/")
def index():
    """The upload form, and export links."""
    return _page()


@bp.post("/")
def upload():
    """Import the uploaded files together, all or nothing; errors listed with file, line, field."""
    form = request.form
    uploads = [f for f in request.files.getlist("file") if f and f.filename]
    try:
        if not uploads:
            raise ValidationError.field("file", "choose one or more dataset files to upload")
        result = importer.import_tasks(
            [(f.filename, f.stream) for f in uploads],  # streams: see importer.import_tasks
            form.get("format") or None,
            collection=form.get("collection") or None,
            on_duplicate=form.get("onDuplicate") or "reject",
        )
    except ValidationError as exc:
        return _page(exc.errors, form, 400)
    where = f" into collection “{result.collection}”" if result.collection else ""
    names = ", ".join(f.filename for f in uploads)
    flash(
        f"Imported {len(result.task_ids)} tasks from {names}{where}: "
        f"{result.created} created, {result.updated} updated, {result.skipped} skipped.",
        "success",
    )
    return redirect(url_for("datasets.index"))


@bp.get("/export")
def export():
    """Export form target: the same download as GET /api/tasks/export."""
    fmt = exporter.export_format(request.args.get("format", "json"))
    return redirect(
        url_for(
            "api.datasets.tasks_export",
            format=fmt,
            **({"collection": c} if (c := request.args.get("collection")) else {}),
        )
    )

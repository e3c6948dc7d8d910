"""Web pages: tasks (searchable, paginated list; add/edit with a prompt preview; delete)."""

import json
import re

from flask import Blueprint
from flask import flash
from flask import redirect
from flask import render_template
from flask import request
from flask import url_for

from ..catalog import templating
from ..catalog.task_checks import as_text
from ..catalog.task_checks import describe_checks
from ..catalog.task_checks import tool_names
from ..catalog.task_fields import clean_task
from ..catalog.tasks import create_task
from ..catalog.tasks import delete_task
from ..catalog.tasks import get_task
from ..catalog.tasks import list_categories
from ..catalog.tasks import search_tasks
from ..catalog.tasks import task_to_dict
from ..catalog.tasks import update_task
from ..errors import Conflict
from ..errors import ValidationError
from .extensions import htmx
from .settings import form_errors

bp = Blueprint("tasks", __name__, url_prefix="/settings/tasks")

PER_PAGE = 50
FIELDS = (
    "taskId",
    "category",
    "subcategory",
    "difficulty",
    "question",
    "systemPrompt",
    "excellent",
    "good",
    "pass",
    "incorrectAnswerDirection",
    "rubric",
    "autoFail",
    "tags",
    "vars",
    "templateVersion",
    "checks",
    "tools",
)


def _listing():
    args = request.args
    q, category = args.get("q", "").strip(), args.get("category", "")
    page = search_tasks(q, category, args.get("page", 1), PER_PAGE)
    return {"page": page, "q": q, "category": category, "categories": list_categories()}


@bp.get("/")
def index():
    """Tasks with a search box and a category filter (GET params, bookmarkable)."""
    return render_template("tasks/index.html", subnav_active="tasks", **_listing())


@bp.get("/table")
def table():
    """Fragment #task-table for the same query; the address bar shows the full page's URL."""
    response = render_template("tasks/_table.html", **_listing())
    args = {k: v for k, v in request.args.items() if v}
    return response, 200, {"HX-Push-Url": url_for("tasks.index", **args)}


def _form_from_task(task):
    d = task_to_dict(task)
    form = {f: d.get(f) or "" for f in FIELDS}
    form["rubric"] = json.dumps(task.rubric, indent=2, ensure_ascii=False) if task.rubric else ""
    form["autoFail"] = "\n".join(task.auto_fail or [])
    form["tags"] = ", ".join(task.tags or [])
    form["vars"] = "\n".join(f"{k} = {v}" for k, v in (task.vars or {}).items())
    # YAML reads best in a textarea; the field takes YAML or JSON back.
    for name in ("checks", "tools"):
        form[name] = as_text(getattr(task, name))
    return form


def _errors(exc):
    """Form errors by field; a problem inside a list field (`checks[0] (number).value`) is
    shown at its field's box, with the full path in the message."""
    errors, status = form_errors(exc, "taskId")
    out = {}
    for name, message in errors.items():
        head = re.split(r"[\[. ]", name, maxsplit=1)[0] if name else name
        if head != name and head in FIELDS:
            message = f"{name}: {message}"
        out.setdefault(head if head in FIELDS else name, message)
    return out, status


def _preview(form):
    """The question with its {variables} filled, or None when there is nothing to fill."""
    try:
        values = clean_task(
            {
                "task_id": "preview",
                "category": "preview",
                "question": form.get("question") or "?",
                "excellent": "-",
                "vars": form.get("vars"),
            }
        )
    except ValidationError:
        return None
    if not values.get("vars"):
        return None
    return templating.preview(values)


def _render_form(form, task=None, errors=None, status=200):
    return render_template(
        "tasks/form.html",
        form=form,
        task=task,
        errors=errors or {},
        categories=list_categories(),
        preview=_preview(form),
        # The saved checks, in words (the textarea holds what is being edited).
        check_rows=describe_checks(task.checks, has_reference=bool(task.excellent)) if task else [],
        tools=tool_names(task.tools) if task else [],
        subnav_active="tasks",
    ), status


@bp.get("/new")
def new():
    """An empty task form."""
    return _render_form({"difficulty": "medium", "category": request.args.get("category", "")})


@bp.post("/new")
def create():
    """Save a new task, or show the form again with what is wrong."""
    form = {f: request.form.get(f, "") for f in FIELDS}
    try:
        task = create_task(form)
    except (ValidationError, Conflict) as exc:
        return _render_form(form, None, *_errors(exc))
    flash(f"Task {task.task_id} added.", "success")
    return redirect(url_for("tasks.index"))


@bp.get("/<int:task_pk>/edit")
def edit(task_pk):
    """The task form, filled in."""
    task = get_task(task_pk)
    return _render_form(_form_from_task(task), task)


@bp.post("/<int:task_pk>/edit")
def update(task_pk):
    """Save changes to a task."""
    task = get_task(task_pk)
    form = {f: request.form.get(f, "") for f in FIELDS}
    try:
        task = update_task(task_pk, form)
    except (ValidationError, Conflict) as exc:
        return _render_form(form, task, *_errors(exc))
    flash(f"Task {task.task_id} saved.", "success")
    return redirect(url_for("tasks.index"))


@bp.post("/preview")
def preview():
    """Fragment #task-preview: the question with its variables filled in."""
    form = {f: request.form.get(f, "") for f in FIELDS}
    return render_template("tasks/_preview.html", preview=_preview(form))


@bp.post("/<int:task_pk>/delete")
def delete(task_pk):
    """Delete a task (htmx: remove its row)."""
    task = get_task(task_pk)
    delete_task(task_pk)
    if htmx:
        return ""
    flash(f"Task {task.task_id} deleted.", "success")
    return redirect(url_for("tasks.index"))

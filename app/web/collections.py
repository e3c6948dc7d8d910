"""Web pages: collections (list with counts, create, rename, delete, add/remove tasks)."""

from flask import Blueprint
from flask import flash
from flask import redirect
from flask import render_template
from flask import request
from flask import url_for

from ..catalog.collections import add_matching_tasks
from ..catalog.collections import add_tasks_to_collection
from ..catalog.collections import collection_tasks
from ..catalog.collections import create_collection
from ..catalog.collections import delete_collection
from ..catalog.collections import get_collection
from ..catalog.collections import list_collections
from ..catalog.collections import remove_task_from_collection
from ..catalog.collections import update_collection
from ..catalog.tasks import list_categories
from ..catalog.tasks import search_tasks
from ..errors import Conflict
from ..errors import ValidationError
from .extensions import htmx
from .settings import form_errors

bp = Blueprint("collections", __name__, url_prefix="/settings/collections")

CANDIDATES_PER_PAGE = 100


def _name_form():
    return {k: request.form.get(k, "") for k in ("name", "description")}


@bp.get("/")
def index(errors=None, form=None, status=200):
    """Collections with their task counts, and the create form."""
    return render_template(
        "collections/index.html",
        collections=list_collections(),
        errors=errors or {},
        form=form or {},
        subnav_active="collections",
    ), status


@bp.post("/new")
def create():
    """Create a collection."""
    form = _name_form()
    try:
        collection = create_collection(form["name"], form["description"])
    except (ValidationError, Conflict) as exc:
        errors, status = form_errors(exc)
        return index(errors, form, status)
    flash(f"Collection {collection.name} created. Add tasks to it below.", "success")
    return redirect(url_for("collections.show", collection_id=collection.id))


def _candidates(collection):
    args = request.args
    q, category = args.get("q", "").strip(), args.get("category", "")
    page = search_tasks(
        q, category, args.get("page", 1), CANDIDATES_PER_PAGE, exclude_collection=collection.id
    )
    return {"candidates": page, "q": q, "category": category, "categories": list_categories()}


@bp.get("/<int:collection_id>")
def show(collection_id, errors=None, form=None, status=200):
    """A collection's tasks (with remove buttons), rename form and the add-tasks list."""
    collection = get_collection(collection_id)
    return render_template(
        "collections/show.html",
        collection=collection,
        tasks=collection_tasks(collection),
        errors=errors or {},
        form=form or {"name": collection.name, "description": collection.description},
        subnav_active="collections",
        **_candidates(collection),
    ), status


@bp.get("/<int:collection_id>/candidates")
def candidates(collection_id):
    """Fragment #candidates: tasks not yet in the collection, filtered by category/search."""
    collection = get_collection(collection_id)
    return render_template(
        "collections/_candidates.html", collection=collection, **_candidates(collection)
    )


@bp.post("/<int:collection_id>/rename")
def rename(collection_id):
    """Rename a collection / change its description."""
    form = _name_form()
    try:
        collection = update_collection(collection_id, form["name"], form["description"])
    except (ValidationError, Conflict) as exc:
        errors, status = form_errors(exc)
        return show(collection_id, errors, form, status)
    flash(f"Collection saved as {collection.name}.", "success")
    return redirect(url_for("collections.show", collection_id=collection.id))


@bp.post("/<int:collection_id>/delete")
def delete(collection_id):
    """Delete a collection (its tasks stay)."""
    collection = get_collection(collection_id)
    delete_collection(collection_id)
    if htmx:
        return ""
    flash(f"Collection {collection.name} deleted; its tasks are kept.", "success")
    return redirect(url_for("collections.index"))


@bp.post("/<int:collection_id>/tasks")
def add_tasks(collection_id):
    """Add the ticked tasks."""
    ids = request.form.getlist("taskIds")
    if not ids:
        flash("Tick at least one task to add.", "error")
        return redirect(url_for("collections.show", collection_id=collection_id))
    try:
        collection = add_tasks_to_collection(collection_id, ids)
    except (ValidationError, Conflict) as exc:
        flash(exc.message, "error")
        return redirect(url_for("collections.show", collection_id=collection_id))
    flash(f"Added {len(ids)} task{'s' if len(ids) != 1 else ''} to {collection.name}.", "success")
    return redirect(url_for("collections.show", collection_id=collection_id))


@bp.post("/<int:collection_id>/tasks/all")
def add_all_shown(collection_id):
    """Add every task the search shows (all its pages), not only the ticked ones."""
    form = request.form
    q, category = form.get("q", "").strip(), form.get("category", "")
    collection, added = add_matching_tasks(collection_id, q, category)
    flash(f"Added {added} task{'s' if added != 1 else ''} to {collection.name}.", "success")
    return redirect(url_for("collections.show", collection_id=collection_id))


@bp.post("/<int:collection_id>/tasks/<int:task_pk>/remove")
def remove_task(collection_id, task_pk):
    """Take one task out of the collection (htmx: remove its row)."""
    remove_task_from_collection(collection_id, task_pk)
    if htmx:
        return ""
    flash("Task removed from the collection.", "success")
    return redirect(url_for("collections.show", collection_id=collection_id))

"""JSON API: tasks and collections."""

from flask import Blueprint
from flask import jsonify
from flask import request
from flask import url_for

from ..catalog.collections import add_tasks_to_collection
from ..catalog.collections import collection_to_dict
from ..catalog.collections import collections_to_dicts
from ..catalog.collections import create_collection_with_tasks
from ..catalog.collections import delete_collection
from ..catalog.collections import get_collection
from ..catalog.collections import list_collections
from ..catalog.collections import remove_task_from_collection
from ..catalog.collections import update_collection
from ..catalog.tasks import create_task
from ..catalog.tasks import delete_task
from ..catalog.tasks import get_task
from ..catalog.tasks import search_tasks
from ..catalog.tasks import task_query
from ..catalog.tasks import task_to_dict
from ..catalog.tasks import update_task
from ..errors import ValidationError
from .replies import created
from .replies import json_body

bp = Blueprint("tasks", __name__)


@bp.get("/tasks")
def task_list():
    """Tasks; ?q=&category= filter, ?page=&perPage= paginate (X-Total-Count header)."""
    args = request.args
    if "page" in args or "perPage" in args:
        page = search_tasks(
            args.get("q", ""),
            args.get("category", ""),
            args.get("page", 1),
            args.get("perPage", 50),
        )
        response = jsonify([task_to_dict(t) for t in page.items])
        response.headers["X-Total-Count"] = str(page.total)
        return response
    tasks = task_query(args.get("q", ""), args.get("category", ""))
    return jsonify([task_to_dict(t) for t in tasks])


@bp.post("/tasks")
def task_create():
    """Create a task; 409 when the taskId is taken."""
    task = create_task(json_body())
    return created(task_to_dict(task), url_for("api.tasks.task_get", task_pk=task.id))


@bp.get("/tasks/<int:task_pk>")
def task_get(task_pk):
    """One task."""
    return jsonify(task_to_dict(get_task(task_pk)))


@bp.put("/tasks/<int:task_pk>")
def task_update(task_pk):
    """Edit a task (fields not sent keep their values)."""
    return jsonify(task_to_dict(update_task(task_pk, json_body())))


@bp.delete("/tasks/<int:task_pk>")
def task_delete(task_pk):
    """Delete a task."""
    delete_task(task_pk)
    return "", 204


@bp.get("/collections")
def collection_list():
    """Collections with their task ids."""
    return jsonify(collections_to_dicts(list_collections()))


@bp.post("/collections")
def collection_create():
    """Create a collection (name unique), optionally with taskIds."""
    body = json_body()
    collection = create_collection_with_tasks(
        body.get("name"), body.get("description", ""), body.get("taskIds")
    )
    location = url_for("api.tasks.collection_get", collection_id=collection.id)
    return created(collection_to_dict(collection), location)


@bp.get("/collections/<int:collection_id>")
def collection_get(collection_id):
    """One collection."""
    return jsonify(collection_to_dict(get_collection(collection_id)))


@bp.put("/collections/<int:collection_id>")
def collection_update(collection_id):
    """Rename a collection or change its description."""
    body = json_body()
    collection = update_collection(collection_id, body.get("name"), body.get("description"))
    return jsonify(collection_to_dict(collection))


@bp.delete("/collections/<int:collection_id>")
def collection_delete(collection_id):
    """Delete a collection (its tasks stay)."""
    delete_collection(collection_id)
    return "", 204


@bp.post("/collections/<int:collection_id>/tasks")
def collection_add_tasks(collection_id):
    """Add tasks: a list of task ids or {"taskIds": [...]}; 409 on duplicates."""
    body = json_body(expect=(dict, list))
    ids = body.get("taskIds") if isinstance(body, dict) else body
    if ids is None:
        raise ValidationError.field("taskIds", "give a list of task ids")
    return jsonify(collection_to_dict(add_tasks_to_collection(collection_id, ids)))


@bp.delete("/collections/<int:collection_id>/tasks/<int:task_pk>")
def collection_remove_task(collection_id, task_pk):
    """Remove one task from a collection."""
    remove_task_from_collection(collection_id, task_pk)
    return "", 204

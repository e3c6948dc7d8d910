"""JSON API: tasks and collections (seed 000 §3.2, §7.2, §7.3)."""

from flask import jsonify
from flask import request
from flask import url_for

from .. import task_store as store
from ..errors import ValidationError
from . import bp
from ._util import created
from ._util import json_body


@bp.get("/tasks")
def task_list():
    """Tasks; ?q=&category= filter, ?page=&perPage= paginate (X-Total-Count header)."""
    args = request.args
    if "page" in args or "perPage" in args:
        page = store.search_tasks(
            args.get("q", ""),
            args.get("category", ""),
            args.get("page", 1),
            args.get("perPage", 50),
        )
        response = jsonify([store.task_to_dict(t) for t in page.items])
        response.headers["X-Total-Count"] = str(page.total)
        return response
    tasks = store.task_query(args.get("q", ""), args.get("category", ""))
    return jsonify([store.task_to_dict(t) for t in tasks])


@bp.post("/tasks")
def task_create():
    """Create a task; 409 when the taskId is taken."""
    task = store.create_task(json_body())
    return created(store.task_to_dict(task), url_for("api.task_get", task_pk=task.id))


@bp.get("/tasks/<int:task_pk>")
def task_get(task_pk):
    """One task."""
    return jsonify(store.task_to_dict(store.get_task(task_pk)))


@bp.put("/tasks/<int:task_pk>")
def task_update(task_pk):
    """Edit a task (fields not sent keep their values)."""
    return jsonify(store.task_to_dict(store.update_task(task_pk, json_body())))


@bp.delete("/tasks/<int:task_pk>")
def task_delete(task_pk):
    """Delete a task."""
    store.delete_task(task_pk)
    return "", 204


@bp.get("/collections")
def collection_list():
    """Collections with their task ids."""
    return jsonify(store.collections_to_dicts(store.list_collections()))


@bp.post("/collections")
def collection_create():
    """Create a collection (name unique), optionally with taskIds."""
    body = json_body()
    collection = store.create_collection_with_tasks(
        body.get("name"), body.get("description", ""), body.get("taskIds")
    )
    location = url_for("api.collection_get", collection_id=collection.id)
    return created(store.collection_to_dict(collection), location)


@bp.get("/collections/<int:collection_id>")
def collection_get(collection_id):
    """One collection."""
    return jsonify(store.collection_to_dict(store.get_collection(collection_id)))


@bp.put("/collections/<int:collection_id>")
def collection_update(collection_id):
    """Rename a collection or change its description."""
    body = json_body()
    collection = store.update_collection(collection_id, body.get("name"), body.get("description"))
    return jsonify(store.collection_to_dict(collection))


@bp.delete("/collections/<int:collection_id>")
def collection_delete(collection_id):
    """Delete a collection (its tasks stay)."""
    store.delete_collection(collection_id)
    return "", 204


@bp.post("/collections/<int:collection_id>/tasks")
def collection_add_tasks(collection_id):
    """Add tasks: a list of task ids or {"taskIds": [...]}; 409 on duplicates."""
    body = json_body(expect=(dict, list))
    ids = body.get("taskIds") if isinstance(body, dict) else body
    if ids is None:
        raise ValidationError.field("taskIds", "give a list of task ids")
    return jsonify(store.collection_to_dict(store.add_tasks_to_collection(collection_id, ids)))


@bp.delete("/collections/<int:collection_id>/tasks/<int:task_pk>")
def collection_remove_task(collection_id, task_pk):
    """Remove one task from a collection."""
    store.remove_task_from_collection(collection_id, task_pk)
    return "", 204

"""Collections: named sets of tasks with unique membership."""

from peewee import JOIN
from peewee import fn

from ..clock import isoformat
from ..db.connection import database
from ..db.models import Collection
from ..db.models import CollectionTask
from ..db.models import Task
from ..errors import Conflict
from ..errors import NotFound
from ..errors import ValidationError
from ..ids import digits_number
from ..ids import is_db_id
from .tasks import task_query


def _str(value):
    if value is None:
        return ""
    return value if isinstance(value, str) else None


def get_collection(collection_id):
    """The collection with this id, or NotFound."""
    collection = Collection.get_or_none(Collection.id == collection_id)
    if collection is None:
        raise NotFound(f"collection {collection_id} not found")
    return collection


def list_collections():
    """Collections by name, each with `task_count`."""
    count = fn.COUNT(CollectionTask.id)
    return list(
        Collection.select(Collection, count.alias("task_count"))
        .join(CollectionTask, JOIN.LEFT_OUTER)
        .group_by(Collection.id)
        .order_by(Collection.name)
    )


def collection_tasks(collection):
    """The collection's tasks, by category then taskId."""
    return list(
        Task.select()
        .join(CollectionTask)
        .where(CollectionTask.collection == collection.id)
        .order_by(Task.category, Task.task_id)
    )


def collection_to_dict(collection, task_ids=None):
    """CollectionDto plus description, taskCount and createdAt.

    `task_ids` (the member task ids, ascending) saves the query when the caller has them.
    """
    if task_ids is None:
        task_ids = _member_ids([collection.id]).get(collection.id, [])
    return {
        "id": collection.id,
        "name": collection.name,
        "description": collection.description,
        "taskIds": task_ids,
        "taskCount": len(task_ids),
        "createdAt": isoformat(collection.created_at),
    }


def collections_to_dicts(collections):
    """collection_to_dict for many collections, with one membership query for all of them."""
    members = _member_ids([c.id for c in collections])
    return [collection_to_dict(c, members.get(c.id, [])) for c in collections]


def _member_ids(collection_ids):
    """{collection id: [task ids ascending]} for these collections."""
    members = {}
    if not collection_ids:
        return members
    rows = (
        CollectionTask.select(CollectionTask.collection, CollectionTask.task)
        .where(CollectionTask.collection.in_(collection_ids))
        .order_by(CollectionTask.collection, CollectionTask.task)
        .tuples()
    )
    for collection_id, task_id in rows:
        members.setdefault(collection_id, []).append(task_id)
    return members


def _clean_collection(name, description):
    errors = []
    name = _str(name)
    description = _str(description)
    if name is None or not name.strip():
        errors.append({"field": "name", "message": "enter a name"})
    elif len(name.strip()) > 200:
        errors.append({"field": "name", "message": "at most 200 characters"})
    if description is None:
        errors.append({"field": "description", "message": "must be text"})
    elif len(description) > 2000:
        errors.append({"field": "description", "message": "at most 2000 characters"})
    if errors:
        raise ValidationError(errors)
    return name.strip(), description.strip()


def _check_collection_name_free(name, exclude=None):
    query = Collection.select().where(Collection.name == name)
    if exclude is not None:
        query = query.where(Collection.id != exclude)
    if query.exists():
        raise Conflict(f"a collection named {name!r} already exists")


def create_collection(name, description=""):
    """Create an empty collection; 409 when the name is taken."""
    name, description = _clean_collection(name, description)
    with database.atomic():
        _check_collection_name_free(name)
        return Collection.create(name=name, description=description)


def create_collection_with_tasks(name, description="", task_ids=None):
    """Create a collection and, when given, its first tasks; all or nothing."""
    with database.atomic():
        collection = create_collection(name, description if description is not None else "")
        if task_ids:
            add_tasks_to_collection(collection.id, task_ids)
    return collection


def update_collection(collection_id, name=None, description=None):
    """Rename a collection and/or change its description."""
    with database.atomic():
        collection = get_collection(collection_id)
        name, description = _clean_collection(
            collection.name if name is None else name,
            collection.description if description is None else description,
        )
        _check_collection_name_free(name, exclude=collection.id)
        collection.name, collection.description = name, description
        collection.save()
    return collection


def delete_collection(collection_id):
    """Delete a collection and its memberships (tasks stay)."""
    collection = get_collection(collection_id)
    with database.atomic():
        CollectionTask.delete().where(CollectionTask.collection == collection.id).execute()
        collection.delete_instance()


def _resolve_tasks(refs):
    """Task database ids (or taskId strings) → Task rows; ValidationError naming unknown ones."""
    if not isinstance(refs, list) or not refs:
        raise ValidationError.field("taskIds", "give a non-empty list of task ids")
    pks, keys, bad = [], [], []
    for ref in refs:
        if isinstance(ref, bool):
            bad.append(ref)
        elif isinstance(ref, int):
            pks.append(ref)
        elif isinstance(ref, str) and digits_number(ref) is not None:
            pks.append(digits_number(ref))
        elif isinstance(ref, str) and ref.strip():
            keys.append(ref.strip())
        else:
            bad.append(ref)
    found = {}
    lookable = [p for p in pks if is_db_id(p)]  # SQLite cannot even compare larger numbers
    if lookable:
        found.update({t.id: t for t in Task.select().where(Task.id.in_(lookable))})
    by_key = {t.task_id: t for t in Task.select().where(Task.task_id.in_(keys))} if keys else {}
    unknown = [p for p in pks if p not in found] + [k for k in keys if k not in by_key] + bad
    if unknown:
        raise ValidationError.field(
            "taskIds", "no such task: " + ", ".join(str(u) for u in unknown)
        )
    ordered = []
    for ref in refs:
        if isinstance(ref, int) or digits_number(ref) is not None:
            ordered.append(found[int(ref)])
        else:
            ordered.append(by_key[ref.strip()])
    return ordered


def add_tasks_to_collection(collection_id, task_pks):
    """Add tasks (all or nothing); 409 naming any already in the collection or given twice."""
    with database.atomic():
        collection = get_collection(collection_id)
        tasks = _resolve_tasks(task_pks)
        ids = [t.id for t in tasks]
        members = {
            r.task_id
            for r in CollectionTask.select(CollectionTask.task).where(
                (CollectionTask.collection == collection.id) & (CollectionTask.task.in_(ids))
            )
        }
        dupes, seen = [], set()
        for t in tasks:
            if t.id in members or t.id in seen:
                dupes.append(t.task_id)
            seen.add(t.id)
        if dupes:
            raise Conflict(
                f"already in collection {collection.name!r}: " + ", ".join(dict.fromkeys(dupes))
            )
        CollectionTask.insert_many(
            [{"collection": collection.id, "task": pk} for pk in ids]
        ).execute()
    return collection


def add_matching_tasks(collection_id, q="", category=""):
    """Add every task the search shows (text `q`, `category`) that is not in the collection
    yet, in one transaction; returns (collection, how many were added)."""
    with database.atomic():
        collection = get_collection(collection_id)
        query = task_query(q, category, exclude_collection=collection.id)
        ids = [t.id for t in query.select(Task.id)]
        for start in range(0, len(ids), 500):
            CollectionTask.insert_many(
                [{"collection": collection.id, "task": pk} for pk in ids[start : start + 500]]
            ).execute()
    return collection, len(ids)


def remove_task_from_collection(collection_id, task_pk):
    """Remove one task from a collection (the task stays)."""
    collection = get_collection(collection_id)
    deleted = (
        CollectionTask.delete()
        .where((CollectionTask.collection == collection.id) & (CollectionTask.task == task_pk))
        .execute()
    )
    if not deleted:
        raise NotFound(f"task {task_pk} is not in collection {collection.name!r}")
    return collection

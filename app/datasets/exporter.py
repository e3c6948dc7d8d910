"""Export tasks (all, or one collection) in every dataset format the importer reads."""

from ..db.models import Collection
from ..db.models import CollectionTask
from ..db.models import Task
from ..errors import NotFound
from ..errors import ValidationError
from . import json_tasks
from . import jsonl_tasks
from . import runner_tasks
from . import yaml_tasks
from .importer import ALIASES

# format -> (file extension, mimetype)
EXPORT_FORMATS = {
    "yaml": (".yaml", "application/yaml"),
    "jsonl": (".jsonl", "application/jsonl"),
    "csv": (".csv", "text/csv"),
    "runner-jsonl": (".runner.jsonl", "application/jsonl"),
    "json": (".json", "application/json"),
}


def select_tasks(collection=None):
    """Tasks in id order: all of them, or the members of one collection (by name)."""
    query = Task.select().order_by(Task.id)
    if collection:
        group = Collection.get_or_none(Collection.name == collection)
        if group is None:
            raise NotFound(f"no collection named {collection!r}")
        query = query.join(CollectionTask, on=(CollectionTask.task == Task.id)).where(
            CollectionTask.collection == group.id
        )
    return query


def _collections(collection=None):
    """[(name, description, [task_id, ...])] for the JSON document."""
    query = Collection.select().order_by(Collection.id)
    if collection:
        query = query.where(Collection.name == collection)
    members = {}
    rows = (
        CollectionTask.select(CollectionTask.collection, Task.task_id)
        .join(Task)
        .order_by(Task.id)
        .tuples()
    )
    for collection_id, task_id in rows:
        members.setdefault(collection_id, []).append(task_id)
    return [(c.name, c.description, members.get(c.id, [])) for c in query]


def export_format(fmt):
    """The canonical export format name, or ValidationError naming the choices."""
    name = ALIASES.get(str(fmt or "json").lower(), str(fmt or "json").lower())
    if name not in EXPORT_FORMATS:
        raise ValidationError.field(
            "format", f"unknown format {fmt!r}; use one of " + ", ".join(EXPORT_FORMATS)
        )
    return name


def filename(fmt, collection=None):
    """A download name like tasks-quick.yaml."""
    stem = (
        "tasks"
        if not collection
        else "tasks-"
        + "".join(ch if (ch.isascii() and ch.isalnum()) or ch in "-_" else "-" for ch in collection)
    )
    return stem + EXPORT_FORMATS[fmt][0]


def export_tasks(fmt="json", collection=None):
    """The export as an iterator of text chunks (generators for the line formats)."""
    fmt = export_format(fmt)
    tasks = select_tasks(collection)
    if fmt == "yaml":
        return iter([yaml_tasks.dump(list(tasks))])
    if fmt == "jsonl":
        return jsonl_tasks.dump_lines(tasks.iterator())
    if fmt == "csv":
        return runner_tasks.dump_csv(tasks.iterator())
    if fmt == "runner-jsonl":
        return runner_tasks.dump_jsonl(tasks.iterator())
    return iter([json_tasks.dump(list(tasks), _collections(collection))])


def export_text(fmt="json", collection=None):
    """The whole export as one string."""
    return "".join(export_tasks(fmt, collection))

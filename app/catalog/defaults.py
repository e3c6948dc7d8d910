"""Default providers and the built-in task bank: created on an empty database, restorable."""

import logging
from pathlib import Path

from ..clock import utcnow
from ..db.connection import database
from ..db.connection import in_values
from ..db.connection import insert_rows
from ..db.models import Collection
from ..db.models import CollectionTask
from ..db.models import Provider
from ..db.models import Task
from ..errors import ValidationError
from ..providers import formats
from .provider_fields import DEFAULT_TIMEOUT_SECONDS
from .providers import create_provider
from .task_fields import clean_task

log = logging.getLogger(__name__)

# Module-level so tests can point it at a fixture file.
BUILTIN_TASKS_PATH = Path(__file__).resolve().parent / "data" / "builtin_tasks.yaml"

DEFAULT_PROVIDERS = [
    {
        "name": "local-ollama",
        "type": formats.OLLAMA,
        "baseUrl": "http://localhost:11434",
        "timeoutSeconds": DEFAULT_TIMEOUT_SECONDS,
        "maxConcurrency": 1,
        "headers": [],
    },
    # An example: llama.cpp's llama-server (or vLLM, LM Studio) speaking the OpenAI format.
    {
        "name": "local-openai-compatible",
        "type": formats.OPENAI,
        "baseUrl": "http://127.0.0.1:18080",
        "timeoutSeconds": DEFAULT_TIMEOUT_SECONDS,
        "maxConcurrency": 1,
        "headers": [],
    },
]
QUICK = "quick"
FULL = "full"
COLLECTION_DESCRIPTIONS = {
    QUICK: "Built-in: 10 tasks for a fast check.",
    FULL: "Built-in: every task in the built-in bank.",
}


def load_builtin(path=None):
    """(tasks as cleaned model-field dicts, quick task_ids); ([], []) when the file is missing."""
    path = Path(path or BUILTIN_TASKS_PATH)
    if not path.exists():
        log.warning("built-in task bank %s not found: no built-in tasks loaded", path)
        return [], []
    # libyaml's safe loader where installed: the pure-Python one took ~0.3 s of a first start
    # (and of a `validate` without a database, which checks against the built-ins). Imported
    # here: only an empty database reads the bank, and a command on one that has it reads no
    # YAML for it (datasets/lines.py).
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    doc = yaml.load(path.read_text(encoding="utf-8"), Loader=loader) or {}  # noqa: S506 - safe
    errors, tasks = [], []
    for i, raw in enumerate(doc.get("tasks") or [], start=1):
        data = dict(raw) if isinstance(raw, dict) else raw
        if isinstance(data, dict) and "pass" in data:
            data["pass_answer"] = data.pop("pass")
        try:
            # The bank ships with the code and a test checks its JSON schemas: a new database
            # does not import jsonschema (~0.13 s of a first `llmbench run`) to check them again.
            tasks.append(clean_task(data, file=path.name, check_schemas=False))
        except ValidationError as exc:
            errors.extend({**e, "field": f"tasks[{i - 1}].{e.get('field')}"} for e in exc.errors)
    if errors:
        raise ValidationError(errors)
    quick = list((doc.get("collections") or {}).get(QUICK) or [])
    known = {t["task_id"] for t in tasks}
    unknown = [q for q in quick if q not in known]
    if unknown:
        raise ValidationError.field(
            "collections.quick", "unknown task_id: " + ", ".join(unknown), file=path.name
        )
    return tasks, quick


def is_empty():
    """True when the database has no providers and no tasks."""
    return not Provider.select().exists() and not Task.select().exists()


def ensure_defaults():
    """On an empty database, create the default providers, built-in tasks and collections."""
    if not is_empty():
        return False
    try:
        summary = reset_defaults()
    except ValidationError as exc:
        # A broken bank must not keep the app from starting: log it, create the providers.
        log.error("built-in task bank not loaded: %s", exc.message)
        with database.atomic():
            for spec in DEFAULT_PROVIDERS:
                create_provider(spec)
        return True
    log.info("first start: %s", summary)
    return True


def _ensure_collection(name):
    collection = Collection.get_or_none(Collection.name == name)
    if collection is None:
        collection = Collection.create(name=name, description=COLLECTION_DESCRIPTIONS[name])
    return collection


def _ensure_members(collection, task_pks):
    present = {
        r.task_id
        for r in CollectionTask.select(CollectionTask.task).where(
            CollectionTask.collection == collection.id
        )
    }
    missing = [pk for pk in dict.fromkeys(task_pks) if pk not in present]
    if missing:
        CollectionTask.insert_many(
            [{"collection": collection.id, "task": pk} for pk in missing]
        ).execute()
    return len(missing)


def reset_defaults():
    """Re-create missing default providers, restore built-in tasks and the quick/full collections.

    User-created providers, tasks, collections and memberships are never deleted.
    Returns a one-line summary.
    """
    tasks, quick = load_builtin()
    counts = {"providers": 0, "created": 0, "restored": 0, "members": 0}
    with database.atomic():
        for spec in DEFAULT_PROVIDERS:
            if not Provider.select().where(Provider.name == spec["name"]).exists():
                create_provider(spec)
                counts["providers"] += 1
        # One read of the stored built-ins and one insert of the missing ones: a row read and
        # a row written per task built each statement's SQL anew, most of a new database's
        # first start (and of a `validate` without a database, which checks against them).
        ids = [values["task_id"] for values in tasks]
        stored = {t.task_id: t for t in Task.select().where(in_values(Task.task_id, ids))}
        # A task_id twice in the bank: its last values, as writing them in turn left them.
        missing = list({v["task_id"]: v for v in tasks if v["task_id"] not in stored}.values())
        for keys in dict.fromkeys(tuple(values) for values in missing):
            insert_rows(Task, [values for values in missing if tuple(values) == keys])
        counts["created"] = len(missing)
        for values in tasks:
            task = stored.get(values["task_id"])
            if task is not None and any(getattr(task, f) != v for f, v in values.items()):
                for field, value in values.items():
                    setattr(task, field, value)
                task.updated_at = utcnow()
                task.save()
                counts["restored"] += 1
        ids_by_task = dict(
            Task.select(Task.task_id, Task.id).where(in_values(Task.task_id, ids)).tuples()
        )
        pks = {task_id: ids_by_task[task_id] for task_id in ids}
        if tasks:
            counts["members"] += _ensure_members(_ensure_collection(QUICK), [pks[t] for t in quick])
            counts["members"] += _ensure_members(_ensure_collection(FULL), list(pks.values()))
    return (
        f"defaults: {counts['providers']} providers created, {counts['created']} built-in "
        f"tasks created, {counts['restored']} restored, {counts['members']} collection "
        f"memberships restored ({len(tasks)} built-in tasks, your own data kept)"
    )

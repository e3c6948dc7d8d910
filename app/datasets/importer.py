"""Import tasks from files, all or nothing: check everything first, then save in one transaction."""

from contextlib import contextmanager
from dataclasses import dataclass
from dataclasses import field
from datetime import datetime
from functools import partial
from pathlib import Path

from peewee import SQL

from .. import jsontext
from ..clock import utcnow
from ..db.connection import built_once
from ..db.connection import database
from ..db.connection import in_values
from ..db.connection import insert_values
from ..db.connection import tuples_once
from ..db.models import Collection
from ..db.models import CollectionTask
from ..db.models import JSONField
from ..db.models import Task
from ..db.models import acyclic_json_text
from ..errors import ValidationError
from . import json_tasks
from . import jsonl_tasks
from . import promptfoo
from . import runner_tasks
from . import streaming
from . import yaml_tasks
from .common import TASK_FIELDS
from .common import Problems
from .common import summary_message
from .validate import finish

PARSERS = {
    "yaml": yaml_tasks.parse,
    "jsonl": jsonl_tasks.parse,
    "csv": runner_tasks.parse_csv,
    "runner-jsonl": runner_tasks.parse_jsonl,
    "json": json_tasks.parse,
    "promptfoo": promptfoo.parse,
}
FORMATS = tuple(PARSERS)
ALIASES = {
    "yml": "yaml",
    "runner-csv": "csv",
    "runner_jsonl": "runner-jsonl",
}
ON_DUPLICATE = ("reject", "skip", "update")
_EXTENSIONS = {".yml": "yaml", ".yaml": "yaml", ".csv": "csv", ".json": "json"}
MAX_ERRORS = 500  # a file with 100 000 bad lines still gets a readable answer
_BATCH = 200  # rows per INSERT: well under SQLite's bound-variable limit


@dataclass
class ImportResult:
    """What an import did."""

    created: int = 0
    updated: int = 0
    skipped: int = 0
    collection: str | None = None
    collections: list = field(default_factory=list)  # every collection that got tasks
    task_ids: list = field(default_factory=list)  # task_id of every task in the file(s)
    unsupported: list = field(default_factory=list)  # parts skipped: {file, line, field, message}

    def to_dict(self):
        """camelCase for the API."""
        out = {
            "created": self.created,
            "updated": self.updated,
            "skipped": self.skipped,
            "collection": self.collection,
            "collections": self.collections,
            "total": len(self.task_ids),
        }
        if self.unsupported:
            out["skippedUnsupported"] = self.unsupported
        return out


@dataclass
class DatasetSurvey:
    """What a run config needs of its dataset before importing it: each task's task_id and
    category in file order, and which task_ids are stored already (task_id -> pk)."""

    tasks: list  # [(task_id, category)]
    existing: dict
    unsupported: list = field(default_factory=list)  # left out (skip_unsupported): with lines
    matching: set = field(default_factory=set)  # task_ids whose id or question the pattern finds
    stored: bool = False  # saved as it was checked (survey's `collection`): nothing to import


@dataclass
class CheckedDataset:
    """Validated tasks (model field dicts, in file order) and collections; nothing saved yet."""

    tasks: list
    collections: dict
    existing: dict  # task_id -> pk of tasks already in the database
    unsupported: list = field(default_factory=list)  # skipped (skip_unsupported): with lines


def normalise_format(fmt):
    """A known format name or None; ValidationError names the choices."""
    if fmt in (None, "", "auto"):
        return None
    name = ALIASES.get(str(fmt).lower(), str(fmt).lower())
    if name not in PARSERS:
        raise ValidationError.field(
            "format", f"unknown format {fmt!r}; use one of " + ", ".join(FORMATS)
        )
    return name


def _options(fmt, on_duplicate):
    """The format normalised; ValidationError when either option is not one we know."""
    fmt = normalise_format(fmt)
    if on_duplicate not in ON_DUPLICATE:
        raise ValidationError.field("onDuplicate", "must be reject, skip or update")
    return fmt


def sniff(name, text):
    """Guess the format from the file name, else from the content."""
    suffix = Path(name or "").suffix.lower()
    if suffix in _EXTENSIONS:
        found = _EXTENSIONS[suffix]
        return "promptfoo" if found == "yaml" and promptfoo.looks_like(text) else found
    stripped = text.lstrip()
    first = next((ln for ln in stripped.splitlines() if ln.strip()), "")
    if suffix in (".jsonl", ".ndjson") or first.startswith("{"):
        if suffix not in (".jsonl", ".ndjson"):
            try:
                doc = jsontext.loads(stripped)
            except ValueError:
                doc = None
            if isinstance(doc, dict) and ("tasks" in doc or "format" in doc):
                return "json"
        try:
            keys = jsontext.loads(first)
        except ValueError:
            keys = {}
        return "runner-jsonl" if isinstance(keys, dict) and "prompt_template" in keys else "jsonl"
    if stripped.startswith("["):
        return "json"
    if "prompt_template" in first and "," in first:
        return "csv"
    return "promptfoo" if promptfoo.looks_like(text) else "yaml"


def read_sources(path_or_bytes, filename=None, problems=None):
    """[(label, text)] from bytes, a binary stream, a file, a folder of *.yml/*.yaml, or a list
    of those.

    A list may also hold (filename, bytes or stream) pairs: several uploads checked as one
    dataset.
    """
    problems = problems if problems is not None else Problems()
    if _is_stream(path_or_bytes):
        path_or_bytes = path_or_bytes.read()
    if isinstance(path_or_bytes, bytes | bytearray):
        return [_decode(bytes(path_or_bytes), filename or "upload", problems)]
    if isinstance(path_or_bytes, list | tuple):
        sources = []
        for item in path_or_bytes:
            upload = isinstance(item, tuple) and len(item) == 2
            if upload and (isinstance(item[1], bytes | bytearray) or _is_stream(item[1])):
                sources.extend(read_sources(item[1], item[0], problems))  # (filename, bytes)
            else:
                sources.extend(read_sources(item, None, problems))
        return sources
    path = Path(path_or_bytes)
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.suffix.lower() in (".yml", ".yaml"))
        if not files:
            problems.add(None, "the folder holds no *.yml or *.yaml files", file=str(path))
        return [_decode(p.read_bytes(), str(p), problems) for p in files]
    if not path.is_file():
        problems.add(None, "no such file or folder", file=str(path))
        return []
    return [_decode(path.read_bytes(), str(path), problems)]


def _is_stream(value):
    """A binary file object (an upload's stream, an open file)."""
    return hasattr(value, "read") and not isinstance(value, str | bytes | bytearray)


def _decode(data, label, problems):
    try:
        return label, data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        problems.add(None, f"is not UTF-8 text (byte {exc.start})", file=label)
        return label, ""


def check(path_or_bytes, fmt=None, filename=None, on_duplicate="reject", skip_unsupported=False):
    """Parse and validate everything without saving; ValidationError lists every problem.

    What a format cannot express (a promptfoo assert we do not run) is a problem, or with
    `skip_unsupported` left out and listed in CheckedDataset.unsupported."""
    fmt = _options(fmt, on_duplicate)
    problems = Problems()
    sources = read_sources(path_or_bytes, filename, problems)
    parsed, collections, unsupported = [], {}, []
    for label, text in sources:
        if not text.strip():
            if not problems.entries:
                problems.add(None, "the file is empty", file=label)
            continue
        dataset = PARSERS[fmt or sniff(label, text)](text, label)
        problems.entries.extend(dataset.problems)
        if skip_unsupported:
            unsupported.extend(dataset.unsupported)
        else:
            problems.entries.extend(
                {**e, "message": e["message"] + " (--skip-unsupported leaves it out)"}
                for e in dataset.unsupported
            )
        parsed.extend(dataset.tasks)
        collections.update(dataset.collections)
    if not parsed and not problems:
        problems.add(None, "no tasks found", file=sources[0][0] if sources else None)
    cleaned = []
    first_seen = {}
    for task in parsed:
        data = finish(task, problems)
        if data is None or task.bad:
            continue
        earlier = first_seen.get(data["task_id"])
        if earlier is not None:
            problems.add(
                task.where("task_id")[1],
                f"task_id {data['task_id']!r} is given twice (first at {_place(earlier)})",
                task.line,
                task.file,
            )
            continue
        first_seen[data["task_id"]] = task
        cleaned.append((task, data))
    existing = _existing_ids([d["task_id"] for _, d in cleaned])
    if on_duplicate == "reject":
        for task, data in cleaned:
            if data["task_id"] in existing:
                problems.add(
                    task.where("task_id")[1],
                    f"task_id {data['task_id']!r} already exists; choose skip or update "
                    "for duplicates, or rename it",
                    task.line,
                    task.file,
                )
    known = set(first_seen)
    for name, spec in collections.items():
        unknown = [i for i in spec["task_ids"] if i not in known]
        if unknown:
            stored = _existing_ids(unknown)  # one look-up for the whole list
            unknown = [i for i in unknown if i not in stored]
        if unknown:
            problems.add(
                f"collections.{name}",
                "unknown task_id(s): " + ", ".join(unknown[:10]),
                spec.get("line"),
                spec.get("file"),
            )
    if problems:
        # File by file (in the order read), each in line order.
        order = {label: n for n, (label, _) in enumerate(sources)}
        problems.entries.sort(key=lambda e: (order.get(e.get("file"), -1), e.get("line") or 0))
        entries = problems.entries
        if len(entries) > MAX_ERRORS:
            entries = entries[:MAX_ERRORS] + [
                {
                    "file": None,
                    "line": None,
                    "field": None,
                    "message": f"... and {len(entries) - MAX_ERRORS} more problems",
                }
            ]
        raise ValidationError(entries, message=summary_message(problems.entries))
    return CheckedDataset([d for _, d in cleaned], collections, existing, unsupported)


def _place(task):
    return (
        ", ".join(p for p in (task.file, f"line {task.line}" if task.line else None) if p)
        or "an earlier task"
    )


def _existing_ids(task_ids):
    """{task_id: pk} of those task_ids stored already."""
    found = {}
    for start in range(0, len(task_ids), 500):
        chunk = task_ids[start : start + 500]
        # The SQL is built once per chunk size: an import asks every batch of 200 tasks.
        count = len(chunk)
        rows = tuples_once(("existing_task_ids", count), partial(_ids_of, count), chunk)
        found.update({task_id: pk for pk, task_id in rows})
    return found


def _ids_of(count):
    return Task.select(Task.id, Task.task_id).where(in_values(Task.task_id, [""] * count))


def import_tasks(
    path_or_bytes,
    fmt=None,
    filename=None,
    collection=None,
    on_duplicate="reject",
    skip_unsupported=False,
):
    """Import tasks from a file, folder, list of paths, bytes or binary streams; all or nothing.

    One file in a line format (JSONL, LLM Runner CSV / JSONL) is read as a stream, twice (check,
    then save), so memory does not grow with its size; the rest is read whole.
    """
    if collection is not None:
        collection = collection.strip() or None
        if collection and len(collection) > 200:
            raise ValidationError.field("collection", "must be at most 200 characters")
    fmt = _options(fmt, on_duplicate)
    with _line_stream(path_or_bytes, fmt, filename) as (stream, whole, filename):
        if stream is not None:
            return _import_stream(*stream, collection, on_duplicate)
    checked = check(whole, fmt, filename, on_duplicate, skip_unsupported)
    # IMMEDIATE: take the write lock at BEGIN (a deferred read-then-write can fail in WAL mode).
    with database.atomic("IMMEDIATE"):
        # Look again inside the lock: another writer may have added one of these task_ids.
        checked.existing = _existing_ids([d["task_id"] for d in checked.tasks])
        if on_duplicate == "reject" and checked.existing:
            taken = ", ".join(sorted(checked.existing)[:10])
            raise ValidationError.field("task_id", f"already exists: {taken}")
        result = _save(checked, collection, on_duplicate)
    result.unsupported = checked.unsupported
    return result


def survey(
    path_or_bytes,
    fmt=None,
    on_duplicate="reject",
    skip_unsupported=False,
    pattern=None,
    collection=None,
):
    """Check a dataset as import_tasks would and keep only what a run config needs of it
    (DatasetSurvey); ValidationError as check() raises. One line-format file is read as a
    stream: a run's config must not hold its whole dataset in memory for the whole run.
    `pattern` (a compiled regex): the task ids whose id or question it finds are kept in
    `matching` (llmbench run --filter-pattern).

    With `collection`, the dataset is also imported into it as it is checked, in one read
    (`stored`); the caller holds the transaction and rolls it back when the run is not made,
    so a bad line anywhere leaves nothing stored. `existing` stays what was stored before."""
    fmt = _options(fmt, on_duplicate)
    matching = set()

    def match(data):
        if pattern is not None and (
            pattern.search(str(data["task_id"])) or pattern.search(str(data.get("question") or ""))
        ):
            matching.add(data["task_id"])

    if collection is not None:
        found = _survey_and_store(
            path_or_bytes, fmt, on_duplicate, skip_unsupported, collection, match
        )
        found.matching = matching
        return found

    with _line_stream(path_or_bytes, fmt, None) as (stream, whole, filename):
        if stream is not None:
            tasks = _check_stream(*stream, on_duplicate, seen=match)
            existing = _existing_ids(list(tasks))
            return DatasetSurvey(
                [(t, category) for t, (_line, category) in tasks.items()], existing, [], matching
            )
    checked = check(whole, fmt, filename, on_duplicate, skip_unsupported)
    for data in checked.tasks:
        match(data)
    return DatasetSurvey(
        [(d["task_id"], d["category"]) for d in checked.tasks],
        checked.existing,
        checked.unsupported,
        matching,
    )


def _survey_and_store(path_or_bytes, fmt, on_duplicate, skip_unsupported, collection, match):
    """survey() with its tasks saved as they are checked (the caller's transaction)."""
    if not database.in_transaction():
        raise RuntimeError("a survey that stores needs the caller's transaction")
    with _line_stream(path_or_bytes, fmt, None) as (stream, whole, filename):
        if stream is not None:
            result = ImportResult(collection=collection)
            saver = _StreamSaver(on_duplicate, result)
            tasks = _check_stream(*stream, on_duplicate, saver, seen=match)
            _add_members(collection, "", list(tasks))
            return DatasetSurvey(
                [(t, category) for t, (_line, category) in tasks.items()],
                saver.existing,
                stored=True,
            )
    checked = check(whole, fmt, filename, on_duplicate, skip_unsupported)
    for data in checked.tasks:
        match(data)
    _save(checked, collection, on_duplicate)
    return DatasetSurvey(
        [(d["task_id"], d["category"]) for d in checked.tasks],
        checked.existing,
        checked.unsupported,
        stored=True,
    )


@contextmanager
def _line_stream(path_or_bytes, fmt, filename):
    """((handle, format, label), None, label) when the input is one file in a line format (read
    as a stream, closed after); else (None, the input whole, its filename)."""
    source = streaming.single_source(path_or_bytes, filename)
    if source is None:
        yield None, path_or_bytes, filename
        return
    handle, label, owned = source
    try:
        line_fmt = fmt or sniff(label, streaming.peek(handle))
        if line_fmt in streaming.LINE_PARSERS:
            yield (handle, line_fmt, label), None, label
        else:
            handle.seek(0)
            yield None, handle.read(), label
    finally:
        if owned:
            handle.close()


def _check_stream(handle, fmt, label, on_duplicate, saver=None, seen=None):
    """Check every task of a line-format stream without keeping the tasks: {task_id: (line,
    category)} in file order, or ValidationError listing the problems (capped).

    A `saver` (_StreamSaver, inside the import's transaction) is given each task as it is
    checked, so one pass checks and saves; the error rolls back what it saved."""
    problems = streaming.CappedProblems(label, MAX_ERRORS)
    lines = {}  # task_id -> (line, category): duplicates are found without keeping the tasks
    for task, data in streaming.checked(handle, fmt, label, problems):
        earlier = lines.get(data["task_id"])
        if earlier is not None:
            problems.add(
                task.where("task_id")[1],
                f"task_id {data['task_id']!r} is given twice (first at line {earlier[0]})",
                task.line,
            )
        else:
            lines[data["task_id"]] = (task.line, data["category"])
            if seen is not None:  # what survey's pattern looks at, task by task
                seen(data)
            if saver is not None:
                saver.add(data)
    if saver is not None:
        saver.flush()
    if not lines and not problems:
        problems.add(None, "no tasks found")
    if on_duplicate == "reject":
        # What the saver found stored before it saved anything (it saves none of those).
        taken = saver.existing if saver is not None else _existing_ids(list(lines))
        for task_id in sorted(taken, key=lines.get):
            problems.add(
                "task_id",
                f"task_id {task_id!r} already exists; choose skip or update for duplicates, "
                "or rename it",
                lines[task_id][0],
            )
    if problems:
        entries = problems.entries
        if problems.more:
            entries = entries + [
                {
                    "file": None,
                    "line": None,
                    "field": None,
                    "message": f"... and {problems.more} more problems",
                }
            ]
        raise ValidationError(entries, message=summary_message(entries))
    return lines


def _import_stream(handle, fmt, label, collection, on_duplicate):
    """Import one line-format file read once as a stream, inside one transaction: each task is
    checked and saved in batches (keeping only the task ids); any problem raises and rolls the
    whole import back, so it is all or nothing. (It was read twice, check then save: the
    second read cost as much as the first.)"""
    result = ImportResult(collection=collection)
    with database.atomic("IMMEDIATE"):
        saver = _StreamSaver(on_duplicate, result)
        result.task_ids = list(_check_stream(handle, fmt, label, on_duplicate, saver))
        if collection:
            _add_members(collection, "", result.task_ids)
            result.collections.append(collection)
    return result


class _StreamSaver:
    """Saves checked tasks a batch at a time, looking up which are stored already batch by
    batch (inside the import's lock); with on_duplicate "reject" it saves nothing that is."""

    def __init__(self, on_duplicate, result):
        self.on_duplicate, self.result = on_duplicate, result
        self.batch, self.existing = [], {}

    def add(self, data):
        self.batch.append(data)
        if len(self.batch) >= _BATCH:
            self.flush()

    def flush(self):
        if not self.batch:
            return
        found = _existing_ids([data["task_id"] for data in self.batch])
        self.existing.update(found)
        # "reject" stores none of those found (_store skips them); the import then fails.
        _store(self.batch, found, self.on_duplicate, self.result)
        self.batch = []


def _add_members(name, description, task_ids):
    """Put the tasks (by task_id) into collection `name`, made when it does not exist."""
    group = Collection.get_or_none(Collection.name == name)
    if group is None:
        group = Collection.create(name=name, description=description or "")
    for start in range(0, len(task_ids), 500):
        chunk = task_ids[start : start + 500]
        # One INSERT ... SELECT a chunk (reading the pks back and inserting them as rows cost a
        # sixth of a 15 000-task import), its SQL built once per chunk size: peewee wrote the
        # 500 values' SQL anew for every chunk (most of a 15 000-task collection's cost).
        count = len(chunk)
        sql = built_once(("collection members", count), partial(_members_of, count))
        database.execute_sql(sql, [group.id, *chunk])


def _members_of(count):
    # The collection's pk bound as a number: PostgreSQL reads a bare parameter in a SELECT list
    # as text, which the integer column refuses.
    group_pk = SQL(f"CAST({database.param} AS BIGINT)", [0])
    tasks = Task.select(group_pk, Task.id).where(in_values(Task.task_id, [""] * count))
    fields = [CollectionTask.collection, CollectionTask.task]
    return CollectionTask.insert_from(tasks, fields).on_conflict_ignore().returning()


def _store(tasks, existing, on_duplicate, result):
    """Insert the new tasks in batches; update or skip those that exist (counted in result)."""
    now, rows = utcnow(), []
    stamp = Task.created_at.db_value(now)
    if not database.is_postgres and isinstance(stamp, datetime):
        # The text sqlite3's own adapter writes for it (isoformat(" ")), made once: adapted
        # as a bound value it was made twice a row (30 000 times for a 60k-call run's file).
        stamp = stamp.isoformat(" ")
    for data in tasks:
        pk = existing.get(data["task_id"])
        if pk is None:
            rows.append(_task_row(data, stamp))
            if len(rows) >= _BATCH:
                insert_values(Task, _ROW_FIELDS, rows)
                result.created += len(rows)
                rows = []
        elif on_duplicate == "update":
            values = {name: data.get(name) for name in TASK_FIELDS}
            Task.update(
                **{k: v for k, v in values.items() if k != "task_id"}, updated_at=now
            ).where(Task.id == pk).execute()
            result.updated += 1
        else:
            result.skipped += 1
    if rows:
        insert_values(Task, _ROW_FIELDS, rows)
        result.created += len(rows)


# A new task's row as insert_values takes it: its fields, then when it was made.
_ROW_FIELDS = [Task._meta.fields[name] for name in TASK_FIELDS] + [Task.created_at, Task.updated_at]
# The JSON columns' places in a row (the others are text).
_JSON_AT = tuple(
    at for at, name in enumerate(TASK_FIELDS) if isinstance(Task._meta.fields[name], JSONField)
)


def _task_row(data, stamp):
    """One checked task (model field dict) as a row of _ROW_FIELDS' database values; `stamp`
    is the time, as the database keeps it. A checked task's text is a str or None already
    (clean_task), as the database keeps it: only its lists and mappings are converted (JSON),
    where a db_value a field cost a third of the store."""
    row = list(map(data.get, TASK_FIELDS))
    for at in _JSON_AT:
        if row[at] is not None:
            row[at] = acyclic_json_text(row[at])
    row += (stamp, stamp)
    return row


def _save(checked, collection, on_duplicate):
    result = ImportResult(collection=collection, task_ids=[d["task_id"] for d in checked.tasks])
    _store(checked.tasks, checked.existing, on_duplicate, result)
    groups = dict(checked.collections)
    if collection:
        groups[collection] = {"task_ids": result.task_ids, "description": ""}
    for name, spec in groups.items():
        _add_members(name, spec.get("description"), spec["task_ids"])
        result.collections.append(name)
    return result

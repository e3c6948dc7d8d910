"""Our own JSON: {"tasks": [TaskDto-like camelCase objects], "collections": [{"name",
"description"?, "taskIds": [task_id, ...]}]}. A bare list of tasks is read too.

Task keys follow the API's task shape (taskId, category, subcategory, question, excellent,
good, pass, incorrectAnswerDirection) plus difficulty, systemPrompt, rubric, autoFail, tags, vars,
templateVersion, checks and tools. id, createdAt and updatedAt (from an API listing) are ignored;
other keys are rejected.
"""

import json

from ..catalog.tasks import task_to_dict
from .common import Dataset
from .common import ParsedTask
from .common import Problems
from .common import as_text
from .common import check_keys
from .common import norm_fields
from .lines import YamlSyntaxError
from .lines import array_element_lines
from .lines import load_json

FORMAT_NAME = "llmbench-tasks"
_TEXT = {
    "taskId": "task_id",
    "category": "category",
    "subcategory": "subcategory",
    "difficulty": "difficulty",
    "question": "question",
    "systemPrompt": "system_prompt",
    "excellent": "excellent",
    "good": "good",
    "pass": "pass_answer",
    "incorrectAnswerDirection": "incorrect_direction",
    "templateVersion": "template_version",
}
_STRUCTURED = {
    "rubric": "rubric",
    "autoFail": "auto_fail",
    "tags": "tags",
    "vars": "vars",
    "checks": "checks",
    "tools": "tools",
}
_IGNORED = {"id", "createdAt", "updatedAt", "collections"}
ALLOWED = set(_TEXT) | set(_STRUCTURED) | _IGNORED


def parse(text, file=None):
    """Read our JSON format; errors carry the line where the task's object starts."""
    problems = Problems(file)
    dataset = Dataset(problems=problems.entries)
    try:
        doc = load_json(text)
    except YamlSyntaxError as exc:
        problems.add(None, str(exc), exc.line)
        return dataset
    if isinstance(doc, list):
        items, lines = doc, array_element_lines(text)
    elif isinstance(doc, dict):
        if not check_keys(
            doc, {"format", "version", "tasks", "collections"}, ParsedTask({}, 1, file), problems
        ):
            return dataset
        items, lines = doc.get("tasks") or [], array_element_lines(text, "tasks")
        _collections(doc.get("collections"), text, dataset, problems)
    else:
        problems.add(None, 'must be an object {"tasks": [...], "collections": [...]}', 1)
        return dataset
    if not isinstance(items, list):
        problems.add("tasks", "must be a list of task objects", 1)
        return dataset
    for n, raw in enumerate(items):
        line = lines[n] if n < len(lines) else None
        task = _task(raw, n, line, file, problems)
        if task is not None:
            dataset.tasks.append(task)
    return dataset


def _collections(value, text, dataset, problems):
    if value is None:
        return
    lines = array_element_lines(text, "collections")
    if not isinstance(value, list):
        problems.add("collections", 'must be a list of {"name", "taskIds"}', None)
        return
    for n, raw in enumerate(value):
        line = lines[n] if n < len(lines) else None
        label = f"collections[{n}]"
        if (
            not isinstance(raw, dict)
            or not isinstance(raw.get("name"), str)
            or not raw["name"].strip()
        ):
            problems.add(f"{label}.name", "is required", line)
            continue
        unknown = sorted(set(raw) - {"id", "name", "description", "taskIds"})
        if unknown:
            problems.add(label, "unknown key(s) " + ", ".join(unknown), line)
            continue
        ids = raw.get("taskIds") or []
        if not isinstance(ids, list) or not all(isinstance(i, str | int) for i in ids):
            problems.add(f"{label}.taskIds", "must be a list of task_id strings", line)
            continue
        description = raw.get("description") or ""
        dataset.collections[raw["name"].strip()] = {
            "task_ids": [str(i) for i in ids],
            "line": line,
            "file": problems.file,
            "description": description if isinstance(description, str) else "",
        }


def _task(raw, n, line, file, problems):
    if not isinstance(raw, dict):
        problems.add(f"tasks[{n}]", "must be a task object", line)
        return None
    task = ParsedTask({}, line, file)
    before = len(problems.entries)
    for key, _ in raw.duplicates:
        problems.add(key, "is given twice in this task", line)
    check_keys(raw, ALLOWED, task, problems)
    for key, name in _TEXT.items():
        task.fields[name] = (line, key)
        if key in raw:
            task.data[name] = as_text(raw[key])
    for key, name in _STRUCTURED.items():
        task.fields[name] = (line, key)
    norm_fields(raw, task, problems, auto_fail="autoFail")
    task.bad = len(problems.entries) != before
    return task


def task_entry(t):
    """One stored task as our JSON object: its TaskDto without id, createdAt and updatedAt."""
    entry = task_to_dict(t)
    for key in ("id", "createdAt", "updatedAt"):
        del entry[key]
    return entry


def dump(tasks, collections):
    """The whole document; `collections` is [(name, description, [task_id, ...])]."""
    doc = {
        "format": FORMAT_NAME,
        "version": 1,
        "tasks": [task_entry(t) for t in tasks],
        "collections": [
            {"name": name, "description": description, "taskIds": ids}
            for name, description, ids in collections
        ],
    }
    return json.dumps(doc, ensure_ascii=False, indent=2) + "\n"

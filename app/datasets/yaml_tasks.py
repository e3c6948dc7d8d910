"""Task-list YAML: a list of {task_id, category, sub_category, question, expected_answer:
{most_expected, good_answer, pass_option}, incorrect_direction}.

Also read: the built-in bank's shape ({tasks: [...], collections: {name: [task_id, ...]}}) and the
flat names excellent/good/pass. Our extra fields (difficulty, system_prompt, rubric, auto_fail,
tags, vars, template_version, checks, tools) are optional keys, so every task survives an export
and re-import.
"""

import functools

from .common import Dataset
from .common import ParsedTask
from .common import Problems
from .common import as_text
from .common import check_keys
from .common import norm_fields
from .common import task_getter
from .lines import LineDict
from .lines import YamlSyntaxError
from .lines import load_yaml

# source key -> model field
_FLAT = {
    "task_id": "task_id",
    "category": "category",
    "sub_category": "subcategory",
    "subcategory": "subcategory",
    "difficulty": "difficulty",
    "question": "question",
    "system_prompt": "system_prompt",
    "excellent": "excellent",
    "good": "good",
    "pass": "pass_answer",
    "incorrect_direction": "incorrect_direction",
    "template_version": "template_version",
}
_PROSE = ("question", "system_prompt")  # never a number: one that reads as one is a mistake
_EXPECTED = {"most_expected": "excellent", "good_answer": "good", "pass_option": "pass_answer"}
_STRUCTURED = ("expected_answer", "rubric", "auto_fail", "tags", "vars", "checks", "tools")
ALLOWED = set(_FLAT) | set(_STRUCTURED)


def parse(text, file=None):
    """Read one YAML file into a Dataset (tasks, collections, problems)."""
    problems = Problems(file)
    dataset = Dataset(problems=problems.entries)
    try:
        doc = load_yaml(text)
    except YamlSyntaxError as exc:
        problems.add(None, str(exc), exc.line)
        return dataset
    items = doc
    if isinstance(doc, dict):
        if not check_keys(doc, {"tasks", "collections"}, ParsedTask({}, doc.line, file), problems):
            return dataset
        items = doc.get("tasks") or []
        _collections(doc.get("collections"), doc, dataset, problems)
    if doc is None:
        items = []
    if not isinstance(items, list):
        problems.add(
            "tasks",
            "must be a list of tasks (each starting with '- task_id: ...')",
            getattr(doc, "line", 1),
        )
        return dataset
    for n, raw in enumerate(items):
        task = _task(raw, n, file, problems)
        if task is not None:
            dataset.tasks.append(task)
    return dataset


def _collections(value, doc, dataset, problems):
    if value is None:
        return
    line = doc.line_of("collections")
    if not isinstance(value, dict):
        problems.add("collections", "must map a collection name to a list of task_ids", line)
        return
    for name, ids in value.items():
        where = value.line_of(name) if isinstance(value, LineDict) else line
        if not isinstance(ids, list) or not all(isinstance(i, str | int) for i in ids):
            problems.add(f"collections.{name}", "must be a list of task_ids", where)
            continue
        dataset.collections[str(name)] = {
            "task_ids": [str(i) for i in ids],
            "line": where,
            "file": problems.file,
            "description": "",
        }


def _task(raw, n, file, problems):
    line = getattr(raw, "line", None)
    if not isinstance(raw, dict):
        problems.add(f"tasks[{n}]", "must be a mapping with task_id, category, question, ...", line)
        return None
    task = ParsedTask({}, line, file)
    before = len(problems.entries)
    for key, dup_line in raw.duplicates:
        problems.add(key, "is given twice in this task", dup_line)
    check_keys(raw, ALLOWED, task, problems)
    for key, name in _FLAT.items():
        if key in raw:
            task.data[name] = as_text(raw[key])
            task.fields[name] = (raw.line_of(key), key)
    for key in _PROSE:
        value = raw.get(key)
        if isinstance(value, bool | int | float):
            # YAML reads `question: 5050` as a number: a question is text, so say so.
            problems.add(
                key, f"must be text, not the number {value!r} (quote it)", raw.line_of(key)
            )
    for key, name in _EXPECTED.items():
        task.fields.setdefault(name, (raw.line_of("expected_answer"), f"expected_answer.{key}"))
    expected = raw.get("expected_answer")
    if expected is not None:
        if not isinstance(expected, dict):
            problems.add(
                "expected_answer",
                "must be a mapping with most_expected, good_answer, pass_option",
                raw.line_of("expected_answer"),
            )
            expected = {}
        check_keys(expected, set(_EXPECTED), task, problems, "expected_answer.")
        for key, name in _EXPECTED.items():
            if key in expected:
                task.data[name] = as_text(expected[key])
                task.fields[name] = (expected.line_of(key), f"expected_answer.{key}")
    for name in _STRUCTURED[1:]:
        if name in raw:
            task.fields[name] = (raw.line_of(name), name)
    norm_fields(raw, task, problems)
    task.bad = len(problems.entries) != before
    return task


def _str(dumper, value):
    # Multi-line text as a literal block: readable and diff-friendly.
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


@functools.cache
def _dumper():
    """The safe dumper writing multi-line text as blocks; made on first export, so reading a
    dataset that is not YAML never imports yaml (lines._line_loader)."""
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    Dumper.add_representer(str, _str)
    return Dumper


def task_entry(t):
    """One task (model or dict with model fields) as a task-list YAML mapping."""
    get = task_getter(t)
    entry = {
        "task_id": get("task_id"),
        "category": get("category"),
        "sub_category": get("subcategory") or "",
        "difficulty": get("difficulty"),
        "question": get("question"),
    }
    if get("system_prompt"):
        entry["system_prompt"] = get("system_prompt")
    entry["expected_answer"] = {
        "most_expected": get("excellent") or "",
        "good_answer": get("good") or "",
        "pass_option": get("pass_answer") or "",
    }
    entry["incorrect_direction"] = get("incorrect_direction") or ""
    for name in ("rubric", "auto_fail", "tags", "vars", "template_version", "checks", "tools"):
        if get(name) not in (None, [], ""):
            entry[name] = get(name)
    return entry


def dump(tasks, collections=None):
    """Tasks as a task-list YAML list (always a list, so task-list tools read it as is)."""
    import yaml  # lazy, as _dumper

    entries = [task_entry(t) for t in tasks]
    return yaml.dump(entries, Dumper=_dumper(), sort_keys=False, allow_unicode=True, width=100)

"""One task's final check: the task store's field rules, then the template check."""

from ..catalog import templating
from ..catalog.task_fields import clean_task
from ..errors import ValidationError
from .common import TEXT_FIELDS

_TEXT_FIELDS = frozenset(TEXT_FIELDS)  # asked of every field of every task of a file


def finish(task, problems):
    """Validated model-field dict for a ParsedTask, or None after adding its problems."""
    data = task.data  # read, not changed: clean_task returns new values
    # The task store reads a list or mapping in a text field as "not given" (difficulty would
    # quietly become medium): name it here instead.
    shapes = [
        (name, value)
        for name, value in data.items()
        if name in _TEXT_FIELDS and value is not None and not isinstance(value, str)
    ]
    for name, value in shapes:
        line, label = task.where(name)
        kind = (
            "a list"
            if isinstance(value, list)
            else "a mapping"
            if isinstance(value, dict)
            else type(value).__name__
        )
        hint = " (easy, medium or hard)" if name == "difficulty" else ""
        problems.add(label, f"must be text{hint}, not {kind}", line, task.file)
    if shapes:
        return None
    try:
        # Files need no reference answer or rubric (rows have none): the judge then
        # grades on the question alone, and such a task survives its own export and re-import.
        cleaned = clean_task(data, line=task.line, file=task.file, require_reference=False)
    except ValidationError as exc:
        for entry in exc.errors:
            name = entry.get("field")
            line, label = _where(task, name) if name else (task.line, None)
            line, file = line or entry.get("line"), entry.get("file") or task.file
            if not problems.reported(file, line, label or name):  # the parser said it already
                problems.add(label or name, entry.get("message", "is not valid"), line, file)
        return None
    # clean_task has checked the placeholders against vars; without vars, an LLM Runner template
    # still may not hold a {name}. When the parser already found a problem (bad vars_json),
    # a missing value would only echo it.
    if task.template and cleaned.get("vars") is None and not task.bad:
        label = task.where(task.template)[1]
        return _literal_template(task, cleaned, label, problems)
    return cleaned


def _where(task, name):
    """(line, label) of a problem's field: a check's problem (`checks[0] (number).value`) is
    placed at the check's own line when the file gives it, else at its key's, and keeps its
    full name (the file's key is `checks` too)."""
    if name in task.fields or not name.startswith(("checks", "tools")):
        return task.where(name)
    item = name.split(" ", 1)[0].split(".", 1)[0]
    line = task.fields.get(item, (None, None))[0] or task.where(item.split("[", 1)[0])[0]
    return line, name


def _literal_template(task, cleaned, label, problems):
    """A template without vars: any {name} is an error; else it is saved as the text it sends.

    Stored filled (`{{` → `{`) and without vars, the task is sent exactly as checked here; the
    LLM Runner export escapes the braces again, so export and import give the same task.
    """
    name = task.template
    absent = templating.missing(cleaned.get(name), {})
    if absent:
        listed = ", ".join("{" + n + "}" for n in absent)
        problems.add(
            label,
            f"no value for {listed}: give it in vars_json, or write {{{{ and }}}} "
            "for literal braces",
            task.where(name)[0],
            task.file,
        )
        return None
    cleaned[name] = templating.fill(cleaned.get(name), {})
    return cleaned

"""One task's final check: the task store's field rules, then the template check."""

from .. import templating
from ..errors import ValidationError
from ..task_store import clean_task

_REFERENCES = ("excellent", "good", "pass_answer")
_NO_REFERENCE = "-"


def finish(task, problems):
    """Validated model-field dict for a ParsedTask, or None after adding its problems."""
    data = dict(task.data)
    # The task store asks a form for a reference answer or a rubric. Files need neither (seed 003
    # rows have none), so the judge grades those on the question alone; and a task stored without
    # one must survive its own export and re-import. A placeholder passes that one rule, then goes.
    placeholder = not data.get("rubric") and not any(data.get(name) for name in _REFERENCES)
    if placeholder:
        data["excellent"] = _NO_REFERENCE
    try:
        cleaned = clean_task(data, line=task.line, file=task.file)
        if placeholder:
            cleaned["excellent"] = ""
    except ValidationError as exc:
        for entry in exc.errors:
            name = entry.get("field")
            line, label = task.where(name) if name else (task.line, None)
            problems.add(label or name, entry.get("message", "is not valid"),
                         line or entry.get("line"), entry.get("file") or task.file)
        return None
    bad = False
    labels = {name: task.where(name)[1] for name in templating.TEMPLATE_FIELDS}
    for entry in templating.problems(cleaned, fields=labels):
        line, _ = task.where(entry["field"])
        problems.add(labels.get(entry["field"], entry["field"]), entry["message"],
                     line, task.file)
        bad = True
    return None if bad else cleaned

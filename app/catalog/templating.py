"""Prompt templates: `{name}` placeholders in a task's question and system prompt, filled from vars.

A task is a template only when it has `vars`; then every `{name}` must be a known variable and
`{{` / `}}` stand for literal braces. A task without vars is sent verbatim, so questions that
contain code with braces need no escaping.
"""

import json
import re

from .. import jsontext
from ..errors import ValidationError

# `{{` and `}}` first so an escaped brace is never read as the start of a placeholder.
_TOKEN = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")

# The task fields that may hold placeholders, in the order they are sent.
TEMPLATE_FIELDS = ("system_prompt", "question")


def variables(template):
    """The set of variable names a template uses (escaped braces excluded)."""
    if not template:
        return set()
    return {m.group(1) for m in _TOKEN.finditer(template) if m.group(1)}


def missing(template, vars):
    """Sorted names the template uses that `vars` does not define."""
    known = vars or {}
    return sorted(name for name in variables(template) if name not in known)


def fill(template, vars):
    """Replace `{name}` for known names; `{{`/`}}` become literal braces; unknown names stay."""
    if template is None:
        return None
    known = vars or {}

    def _sub(match):
        token = match.group(0)
        if token == "{{":
            return "{"
        if token == "}}":
            return "}"
        name = match.group(1)
        if name in known:
            return _text(known[name])
        return token

    return _TOKEN.sub(_sub, template)


def escape(text):
    """Text as a template that fills to exactly that text: every brace doubled."""
    if text is None:
        return None
    return text.replace("{", "{{").replace("}", "}}")


def _text(value):
    """A variable's value as prompt text (structured values as compact JSON)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _get(task, name):
    return task.get(name) if isinstance(task, dict) else getattr(task, name, None)


def problems(task, *, line=None, file=None, fields=None):
    """Error entries for placeholders without a value (empty when the task is not a template)."""
    task_vars = _get(task, "vars")
    if task_vars is None:
        return []
    fields = fields or {}
    entries = []
    for name in TEMPLATE_FIELDS:
        absent = missing(_get(task, name), task_vars)
        if absent:
            listed = ", ".join("{" + n + "}" for n in absent)
            entry = {
                "field": fields.get(name, name),
                "message": f"no value for {listed} in vars; add it to vars or write "
                f"{{{{ and }}}} for literal braces",
            }
            if line is not None:
                entry["line"] = line
            if file is not None:
                entry["file"] = file
            entries.append(entry)
    return entries


def render_task(task):
    """(system_prompt, question) as sent to a model; ValidationError if a variable is missing.

    `task` is a Task, an Item snapshot plus vars, or a dict with model field names.
    """
    entries = problems(task)
    if entries:
        task_id = _get(task, "task_id") or _get(task, "task_key")
        raise ValidationError(
            entries,
            message=f"task {task_id}: "
            + "; ".join(f"{e['field']}: {e['message']}" for e in entries),
        )
    task_vars = _get(task, "vars")
    system_prompt = _get(task, "system_prompt")
    question = _get(task, "question")
    if task_vars is None:
        return system_prompt, question
    return fill(system_prompt, task_vars), fill(question, task_vars)


def preview(task_data):
    """The filled question for the task form (never raises; unknown placeholders stay visible).

    `task_data` uses model field names; `vars` may be a dict or the JSON text of the form field.
    """
    task_vars = task_data.get("vars")
    if isinstance(task_vars, str):
        try:
            task_vars = jsontext.loads(task_vars) if task_vars.strip() else None
        except ValueError:
            task_vars = None
    question = task_data.get("question") or ""
    if not isinstance(task_vars, dict):
        return question
    return fill(question, task_vars)

"""Task fields: validation of every field of a task, with messages naming the fix."""

import math
import re

from .. import jsontext
from ..db.models import DIFFICULTIES
from ..errors import ValidationError
from . import templating
from .task_checks import clean_checks
from .task_checks import clean_tools

TASK_ID_RE = re.compile(r"^[A-Za-z0-9_.:-]+$")
# {name} placeholders; {{ and }} are literal braces.
TEXT_LIMIT = 100_000

# API (camelCase) spellings → model field names.
DTO_FIELDS = {
    "taskId": "task_id",
    "systemPrompt": "system_prompt",
    "pass": "pass_answer",
    "incorrectAnswerDirection": "incorrect_direction",
    "incorrectDirection": "incorrect_direction",
    "autoFail": "auto_fail",
    "templateVersion": "template_version",
}
# Task fields by their model names (app.models.Task), in export order.
TASK_FIELDS = (
    "task_id",
    "category",
    "subcategory",
    "difficulty",
    "question",
    "system_prompt",
    "excellent",
    "good",
    "pass_answer",
    "incorrect_direction",
    "rubric",
    "auto_fail",
    "tags",
    "vars",
    "template_version",
    "checks",
    "tools",
)


def _str(value):
    """Scalars as text (YAML may give numbers); None for lists/dicts."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return str(value)
    return value if isinstance(value, str) else None


def _num(value):
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if isinstance(value, (int, float)) and math.isfinite(value):
        return value
    return None


def _maybe_json(value):
    """Forms and CSV cells give JSON as text; parse it, or return the original on failure."""
    if isinstance(value, str) and value.strip()[:1] in ("[", "{"):
        try:
            return jsontext.loads(value)
        except ValueError:
            return value
    return value


def clean_task(data, *, line=None, file=None, require_reference=True, check_schemas=True):
    """Validate a task given with model field names; returns cleaned values or ValidationError.

    `require_reference=False` (imports) accepts a task with neither a reference answer nor a
    rubric: LLM Runner files have none, and the judge then grades on the question alone.
    `check_schemas=False` takes its json-schema checks' schemas as valid (parse_checks).
    """
    errors = []

    def err(field, message):
        entry = {"field": field, "message": message}
        if line is not None:
            entry["line"] = line
        if file is not None:
            entry["file"] = file
        errors.append(entry)

    if not isinstance(data, dict):
        err(None, "a task must be an object with task_id, category, question, ...")
        raise ValidationError(errors)
    out = {}
    _texts(data, _ID_TEXT, out, err)
    if out.get("task_id") and not TASK_ID_RE.match(out["task_id"]):
        err("task_id", "letters, digits and _ . : - only (no spaces)")
        out.pop("task_id")
    _texts(data, _HEAD_TEXT, out, err)
    difficulty = _str(data.get("difficulty"))
    if difficulty is None:
        err("difficulty", "must be text (easy, medium or hard)")
    elif (difficulty := difficulty.strip().lower() or "medium") not in DIFFICULTIES:
        err("difficulty", f"must be easy, medium or hard, not {difficulty!r}")
    else:
        out["difficulty"] = difficulty
    _texts(data, _BODY_TEXT, out, err)

    # A list or mapping not given (most of a file's tasks leave several out) is settled here,
    # not by the calls that would find nothing in it: the same values and problems.
    rubric, auto_fail, tags, variables = map(data.get, _STRUCTURED)
    out["rubric"] = None if rubric is None else _clean_rubric(_maybe_json(rubric), err)
    out["auto_fail"] = (
        None if auto_fail is None else _clean_strings(auto_fail, "auto_fail", "\n", err)
    )
    out["tags"] = (
        None if tags is None else _clean_strings(tags, "tags", ",", err, unique=True, limit=100)
    )
    out["vars"] = None if variables is None else _clean_vars(_maybe_json(variables), err)
    if data.get("tools") is None and data.get("checks") is None:
        out["tools"] = out["checks"] = None
    else:
        out["tools"], out["checks"] = _clean_checks_and_tools(data, out, err, check_schemas)

    refs = out.get("excellent") or out.get("good") or out.get("pass_answer")
    # Checks score an answer by rule: a task with them needs no reference for a judge.
    # (Checks given but not valid are reported above; a missing reference would only echo it.)
    scored = refs or out["rubric"] or data.get("checks") not in (None, "", [])
    if require_reference and not scored and "excellent" in out:
        err(
            "excellent",
            "give at least one reference answer (excellent, good or pass), rubric items or checks",
        )
    if out["vars"] and out.get("question"):
        missing = templating.missing(out["question"], out["vars"])
        if missing:
            err(
                "vars",
                "the question uses {" + "}, {".join(missing) + "} but vars do not "
                "define " + ("it" if len(missing) == 1 else "them"),
            )
    if out.get("system_prompt"):
        prompt = {"system_prompt": out["system_prompt"], "vars": out["vars"]}
        for entry in templating.problems(prompt, line=line, file=file):
            errors.append(entry)
    if errors:
        raise ValidationError(errors)
    return out


# A task's text fields: (field, required, at most this many characters, None when empty
# rather than ""), in the order their problems are listed: the task_id's pattern is checked
# after the first, difficulty before the last.
_ID_TEXT = (("task_id", True, 200, False),)
_HEAD_TEXT = (
    ("category", True, 100, False),
    ("subcategory", False, 100, False),
)
_BODY_TEXT = (
    ("question", True, TEXT_LIMIT, False),
    ("system_prompt", False, TEXT_LIMIT, True),
    ("excellent", False, TEXT_LIMIT, False),
    ("good", False, TEXT_LIMIT, False),
    ("pass_answer", False, TEXT_LIMIT, False),
    ("incorrect_direction", False, TEXT_LIMIT, False),
    ("template_version", False, 50, True),
)


_STRUCTURED = ("rubric", "auto_fail", "tags", "vars")


def _texts(data, rules, out, err):
    """The text fields of `rules` into `out`, stripped; a problem is err'd and its field left
    out. One loop over a table, not a call per field: an import checks ten per task."""
    for field, required, limit, null in rules:
        value = data.get(field)
        if value is None:  # not given: most of a file's optional fields
            if required:
                err(field, "required")
            else:
                out[field] = None if null else ""
            continue
        if value.__class__ is not str:  # text as given mostly; else as _str reads it
            value = _str(value)
            if value is None:
                err(field, "must be text")
                continue
        value = value.strip()
        if required and not value:
            err(field, "required")
        elif len(value) > limit:
            err(field, f"at most {limit} characters")
        else:
            out[field] = value or (None if null else "")


def _clean_checks_and_tools(data, out, err, check_schemas=True):
    """(tools, checks) as given, or None each; a problem is reported naming the task (a file's
    or a form's error list then says which task), the check and its field. Asked only when
    either is given (clean_task settles most tasks of a file, which give neither)."""
    tools = checks = None
    named = f" (task {out['task_id']})" if out.get("task_id") else ""
    try:
        tools = clean_tools(data.get("tools"))
    except ValidationError as exc:
        for entry in exc.errors:
            err(entry["field"], entry["message"] + named)
        return None, None
    try:
        # Reference metrics with no value of their own compare with the excellent answer.
        checks = clean_checks(
            data.get("checks"),
            has_reference=bool(out.get("excellent")),
            tools=tools,
            check_schemas=check_schemas,
        )
    except ValidationError as exc:
        for entry in exc.errors:
            err(entry["field"], entry["message"] + named)
    return tools, checks


def _clean_rubric(value, err):
    if value in (None, "", []):
        return None
    if not isinstance(value, list):
        err("rubric", 'a list of {"id", "text", "weight", "max_score"} items')
        return None
    items, seen = [], set()
    for i, item in enumerate(value):
        where = f"rubric[{i}]"
        if not isinstance(item, dict):
            err(where, 'an object {"id", "text", "weight", "max_score"}')
            continue
        rid = _str(item.get("id"))
        text = _str(item.get("text"))
        weight = _num(item.get("weight", 1))
        max_score = _num(item.get("max_score", item.get("maxScore", 1)))
        ok = True
        if not rid or not rid.strip() or len(rid) > 100:
            err(f"{where}.id", "an id of 1 to 100 characters")
            ok = False
        elif rid.strip() in seen:
            err(f"{where}.id", f"the id {rid.strip()} is used twice")
            ok = False
        if not text or not text.strip():
            err(f"{where}.text", "required")
            ok = False
        if weight is None or weight <= 0:
            err(f"{where}.weight", "a number greater than 0")
            ok = False
        if max_score is None or max_score <= 0:
            err(f"{where}.max_score", "a number greater than 0")
            ok = False
        if ok:
            seen.add(rid.strip())
            items.append(
                {"id": rid.strip(), "text": text.strip(), "weight": weight, "max_score": max_score}
            )
    return items or None


def _clean_strings(value, field, sep, err, unique=False, limit=TEXT_LIMIT):
    if value in (None, "", []):
        return None
    if isinstance(value, str):
        value = value.split(sep)
    if not isinstance(value, list):
        err(field, "a list of text values")
        return None
    items = []  # checked and stripped in one pass: an import asks twice per task
    for v in value:
        if not isinstance(v, str):
            err(field, "a list of text values")
            return None
        if v := v.strip():
            items.append(v)
    if unique:
        items = list(dict.fromkeys(items))
    if max(map(len, items), default=0) > limit:
        err(field, f"each at most {limit} characters")
        return None
    return items or None


def _clean_vars(value, err):
    if value in (None, "", {}):
        return None
    if isinstance(value, str):
        value = _vars_from_lines(value)
    if not isinstance(value, dict):
        err("vars", 'an object of name → value, e.g. {"city": "Paris"}')
        return None
    out = {}
    for name, val in value.items():
        if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", str(name)):
            err("vars", f"{name!r} is not a variable name (letters, digits, _)")
            return None
        text = _str(val)
        if text is None:
            err("vars", f"the value of {name} must be text or a number")
            return None
        out[str(name)] = text
    return out


def _vars_from_lines(text):
    """'name = value' lines (a form's textarea) → dict; None when a line has no '='."""
    out = {}
    for raw in text.splitlines():
        if not raw.strip():
            continue
        name, sep, value = raw.partition("=")
        if not sep:
            return None
        out[name.strip()] = value.strip()
    return out


def _normalise(data):
    """Accept camelCase DTO keys or model names; returns (model-named dict, spelling map)."""
    out, spelled = {}, {}
    for key, value in (data or {}).items():
        name = DTO_FIELDS.get(key, key)
        out[name] = value
        if name != key:
            spelled[name] = key
    return out, spelled


def _respell(exc, spelled):
    """Name each error's field the way the caller spelled it."""
    for entry in exc.errors:
        field = entry.get("field") or ""
        head, sep, rest = field.partition("[")
        if head in spelled:
            entry["field"] = spelled[head] + sep + rest
    return ValidationError(exc.errors)


def clean_task_input(data, current=None):
    """Validate API/form input (camelCase or model names); `current` fills the fields not given."""
    if not isinstance(data, dict):
        raise ValidationError("send a JSON object with the task's fields")
    values, spelled = _normalise(data)
    if current is not None:
        merged = {f: getattr(current, f) for f in TASK_FIELDS}
        merged.update(values)
        values = merged
    try:
        return clean_task(values)
    except ValidationError as exc:
        raise _respell(exc, spelled) from None

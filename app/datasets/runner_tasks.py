"""LLM Runner CSV and JSONL: task_id, template_version, prompt_template, input_text,
vars_json.

`prompt_template` is always a template, filled with `vars_json`: a `{name}` without a value is an
error (write `{{` and `}}` for literal braces). With an `input_text`, the template is the system
prompt and the input text the question; without one, the template is the question.
Optional columns carry the rest of a task: category (default "general"), subcategory, difficulty,
excellent, good, pass, incorrect_direction, rubric_json, auto_fail_json, tags_json, and checks and
tools (a JSON list in the cell: see docs/CLI.md, "Checks and tools").
"""

import csv
import io
import json

from .. import jsontext
from ..catalog import templating
from ..files.csvcells import SafeWriter
from ..files.csvcells import restore
from .common import Dataset
from .common import ParsedTask
from .common import Problems
from .common import as_text
from .common import json_lines
from .common import norm_difficulty
from .common import norm_rubric
from .common import norm_str_list
from .common import norm_vars
from .common import take_checks
from .common import task_getter
from .lines import LineDict

SEED_COLUMNS = ["task_id", "template_version", "prompt_template", "input_text", "vars_json"]
EXTRA_COLUMNS = [
    "category",
    "subcategory",
    "difficulty",
    "excellent",
    "good",
    "pass",
    "incorrect_direction",
    "rubric_json",
    "auto_fail_json",
    "tags_json",
    "checks",
    "tools",
]
COLUMNS = SEED_COLUMNS + EXTRA_COLUMNS
DEFAULT_CATEGORY = "general"

_TEXT = {
    "task_id": "task_id",
    "template_version": "template_version",
    "category": "category",
    "subcategory": "subcategory",
    "difficulty": "difficulty",
    "excellent": "excellent",
    "good": "good",
    "pass": "pass_answer",
    "incorrect_direction": "incorrect_direction",
}


def parse_csv(text, file=None):
    """Read LLM Runner CSV (header row required); line numbers count the header as line 1."""
    problems = Problems(file)
    return Dataset(tasks=list(iter_csv(text, file, problems)), problems=problems.entries)


def iter_csv(text, file, problems):
    """The ParsedTasks of LLM Runner CSV text or lines (kept ends), one at a time."""
    lines = io.StringIO(text, newline="") if isinstance(text, str) else text
    reader = csv.reader(lines)
    try:
        header = next(reader, None)
    except csv.Error as exc:
        problems.add(None, f"not valid CSV: {exc}", 1)
        return
    if not header:
        problems.add(None, "the file is empty; the first line must name the columns", 1)
        return
    header = [h.strip().lstrip("\ufeff") for h in header]
    unknown = [h for h in header if h not in COLUMNS]
    for name in unknown:
        problems.add(name, "unknown column; allowed: " + ", ".join(COLUMNS), 1)
    if "prompt_template" not in header or "task_id" not in header:
        problems.add(None, "the header must have task_id and prompt_template columns", 1)
    if problems:
        return
    while True:
        start = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            problems.add(None, f"not valid CSV: {exc}", start)
            break
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            problems.add(None, f"has {len(row)} cells, the header has {len(header)}", start)
            continue
        # Our own export neutralised formula-like cells with a leading ' (files/csvcells.py).
        raw = LineDict(zip(header, (restore(cell) for cell in row), strict=True))
        task = _task(raw, start, file, problems, empty_is_none=True)
        if task is not None:
            yield task


def parse_jsonl(text, file=None):
    """Read LLM Runner JSONL (same keys as the CSV columns; JSON values may be objects)."""
    problems = Problems(file)
    return Dataset(tasks=list(iter_jsonl(text, file, problems)), problems=problems.entries)


def iter_jsonl(text, file, problems):
    """The ParsedTasks of LLM Runner JSONL text or lines, one at a time."""
    for number, raw in json_lines(text, problems):
        unknown = sorted(set(raw) - set(COLUMNS))
        for key in unknown:
            problems.add(key, "unknown key; allowed: " + ", ".join(COLUMNS), number)
        if unknown:
            continue
        task = _task(raw, number, file, problems, empty_is_none=False)
        if task is not None:
            yield task


def _task(raw, line, file, problems, *, empty_is_none):
    task = ParsedTask({}, line, file)
    for key in raw:
        task.fields[_field(key)] = (line, key)
    if empty_is_none:
        raw = {k: (v if v.strip() else None) for k, v in raw.items()}
    for key, name in _TEXT.items():
        if key in raw:
            task.data[name] = as_text(raw[key])
    task.data["category"] = task.data.get("category") or DEFAULT_CATEGORY
    template = as_text(raw.get("prompt_template"))
    input_text = as_text(raw.get("input_text"))
    if input_text:
        task.data["system_prompt"] = template
        task.data["question"] = input_text
        task.fields["system_prompt"] = (line, "prompt_template")
        task.fields["question"] = (line, "input_text")
        task.template = "system_prompt"
    else:
        task.data["question"] = template
        task.fields["question"] = (line, "prompt_template")
        task.template = "question"
    before = len(problems.entries)
    task.data["difficulty"] = norm_difficulty(task.data.get("difficulty"))
    task.data["vars"] = norm_vars(raw.get("vars_json"), "vars_json", task, problems)
    task.data["rubric"] = norm_rubric(
        _json(raw.get("rubric_json"), "rubric_json", line, problems), "rubric_json", task, problems
    )
    for key, name in (("auto_fail_json", "auto_fail"), ("tags_json", "tags")):
        value = _json(raw.get(key), key, line, problems)
        task.data[name] = norm_str_list(value, key, task, problems, name)
    take_checks(
        {key: _json(raw.get(key), key, line, problems) for key in ("checks", "tools")}, task
    )
    task.bad = len(problems.entries) != before
    return task


def _field(key):
    return {
        "vars_json": "vars",
        "rubric_json": "rubric",
        "auto_fail_json": "auto_fail",
        "tags_json": "tags",
        "pass": "pass_answer",
        "prompt_template": "question",
        "input_text": "question",
    }.get(key, key)


def _json(value, label, line, problems):
    if not isinstance(value, str):
        return value
    try:
        return jsontext.loads(value)
    except ValueError as exc:
        problems.add(label, f"is not valid JSON ({exc.msg} at column {exc.colno})", line)
        return None


def _row(t):
    get = task_getter(t)
    system_prompt = get("system_prompt")
    template = system_prompt if system_prompt else get("question")
    if not get("vars"):
        # prompt_template is always a template: a task sent verbatim has its braces doubled.
        template = templating.escape(template)
    return {
        "task_id": get("task_id"),
        "template_version": get("template_version") or "",
        "prompt_template": template,
        "input_text": get("question") if system_prompt else "",
        "vars_json": get("vars"),
        "category": get("category"),
        "subcategory": get("subcategory") or "",
        "difficulty": get("difficulty") or "",
        "excellent": get("excellent") or "",
        "good": get("good") or "",
        "pass": get("pass_answer") or "",
        "incorrect_direction": get("incorrect_direction") or "",
        "rubric_json": get("rubric"),
        "auto_fail_json": get("auto_fail"),
        "tags_json": get("tags"),
        "checks": get("checks"),
        "tools": get("tools"),
    }


def dump_csv(tasks):
    """LLM Runner CSV rows (header first), streamed; JSON columns as compact JSON text; text
    cells neutralised against formulas (a leading ', taken off again on import)."""
    buffer = io.StringIO()
    writer = SafeWriter(buffer)

    def flush():
        text = buffer.getvalue()
        buffer.seek(0)
        buffer.truncate(0)
        return text

    writer.writerow(COLUMNS)
    yield flush()
    for t in tasks:
        row = _row(t)
        for key in ("vars_json", "rubric_json", "auto_fail_json", "tags_json", "checks", "tools"):
            value = row[key]
            row[key] = "" if value is None else json.dumps(value, ensure_ascii=False)
        # A cell that starts like a formula gets a ' in front (OWASP); import takes it off.
        writer.writerow([row[c] for c in COLUMNS])
        yield flush()


def dump_jsonl(tasks):
    """LLM Runner JSONL, one object per task; JSON columns as JSON values."""
    for t in tasks:
        row = {k: v for k, v in _row(t).items() if v not in (None, "")}
        yield json.dumps(row, ensure_ascii=False) + "\n"

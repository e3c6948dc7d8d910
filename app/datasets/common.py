"""Shared pieces of the dataset formats: parsed tasks, error collection, value normalisers."""

import json
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

from .. import jsontext
from ..catalog.task_fields import TASK_FIELDS
from ..db.models import DIFFICULTIES
from ..errors import ValidationError
from ..errors import format_error
from .lines import LineDict

# The text fields among the task fields (the rest are lists and mappings).
STRUCTURED_FIELDS = ("rubric", "auto_fail", "tags", "vars", "checks", "tools")
TEXT_FIELDS = tuple(f for f in TASK_FIELDS if f not in STRUCTURED_FIELDS)


@dataclass
class ParsedTask:
    """One task read from a file: model field names, where it came from, per-key lines."""

    data: dict
    line: int | None = None
    file: str | None = None
    # model field name -> (line, name of the key in the source file)
    fields: dict = field(default_factory=dict)
    bad: bool = False  # the parser already reported a problem: check the rest, save nothing
    # The model field holding a template even without vars (prompt_template): a
    # {name} in it then needs a value; without vars it is saved as its literal text.
    template: str | None = None

    def where(self, name):
        """(line, source field name) for a model field, falling back to the task's line."""
        line, label = self.fields.get(name, (None, None))
        return (line or self.line), (label or name)


@dataclass
class Dataset:
    """What a file held: tasks, collections by name (task_id lists), and every problem found."""

    tasks: list = field(default_factory=list)
    collections: dict = field(default_factory=dict)
    problems: list = field(default_factory=list)
    # Parts the format cannot express (a promptfoo assert we do not run): {file, line, field,
    # message}; a problem unless the import skips them.
    unsupported: list = field(default_factory=list)


class Problems:
    """Collects error entries {file, line, field, message} instead of stopping at the first."""

    def __init__(self, file=None, entries=None):
        self.file = file
        self.entries = entries if entries is not None else []
        self._seen, self._indexed = set(), 0

    def add(self, field_name, message, line=None, file=None):
        entry = {"file": file or self.file, "line": line, "field": field_name, "message": message}
        self.entries.append(entry)

    def reported(self, file, line, field_name):
        """True when a problem with this file, line and field is listed already (no echo)."""
        for entry in self.entries[self._indexed :]:
            self._seen.add((entry.get("file"), entry.get("line"), entry.get("field")))
        self._indexed = len(self.entries)
        return (file, line, field_name) in self._seen

    def __bool__(self):
        return bool(self.entries)

    def raise_if_any(self):
        if self.entries:
            raise ValidationError(self.entries, message=summary_message(self.entries))


def summary_message(entries, limit=20):
    """One readable message for many problems (the full list travels in `errors`)."""
    head = [format_error(e) for e in entries[:limit]]
    more = len(entries) - limit
    if more > 0:
        head.append(f"... and {more} more")
    noun = "problem" if len(entries) == 1 else "problems"
    return f"{len(entries)} {noun} found, nothing was imported:\n" + "\n".join(head)


def folder_problem(path):
    """Why files cannot be written under folder `path` (None when they can); leaves nothing."""
    probe = Path(path)
    while not probe.exists() and probe.parent != probe:
        probe = probe.parent  # the folder is made when needed: its nearest existing parent counts
    if not probe.is_dir():
        return f"{probe} is a file, not a folder"
    # Lazy: tempfile (~7 ms to import) only where files are to be written, not for every
    # command that reads a dataset.
    import tempfile

    try:
        Path(tempfile.mkdtemp(dir=probe, prefix=".llmbench-check-")).rmdir()
    except OSError as exc:
        return f"cannot write in {probe}: {exc.strerror or exc}"
    return None


def json_lines(text, problems):
    """(line number, object) for each JSON object line; bad JSON or a non-object is reported.

    `text` is the whole text, or an iterable of its lines (a stream: see importer.py).
    """
    lines = text.splitlines() if isinstance(text, str) else text
    for number, raw_line in enumerate(lines, start=1):
        if not raw_line or raw_line.isspace():  # strip() copied every line to find none
            continue
        try:
            # Plain dicts: a line's keys are all on its line, so a LineDict would know no more
            # than the line number given here, and its hook cost a Python call per object
            # (a third of the parse of a 60k-call dataset).
            raw = jsontext.loads_line(raw_line)
        except json.JSONDecodeError as exc:
            problems.add(None, f"not valid JSON: {exc.msg} (column {exc.colno})", number)
            continue
        if not isinstance(raw, dict):
            problems.add(None, "each line must be a JSON object", number)
            continue
        yield number, raw


def task_getter(task):
    """`get(name)` for a task given as a model or as a dict of model field names."""
    return task.get if isinstance(task, dict) else (lambda name: getattr(task, name))


def as_text(value):
    """A scalar a person wrote in a file (42, 3.5, true, a date) as text; None stays None."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value  # lists/dicts: left for the validator to reject with its field name


# Other benches' words for a difficulty (an apocbench bank's "Expert"), as the three llmbench
# keeps.
DIFFICULTY_WORDS = {
    "beginner": "easy",
    "basic": "easy",
    "simple": "easy",
    "trivial": "easy",
    "intermediate": "medium",
    "moderate": "medium",
    "normal": "medium",
    "advanced": "hard",
    "difficult": "hard",
    "expert": "hard",
    "very hard": "hard",
}


def norm_difficulty(value):
    """'Easy' / 'MEDIUM' / ' hard ' -> 'easy' / 'medium' / 'hard', and other benches' words
    ('Expert' -> 'hard', DIFFICULTY_WORDS); other values pass through (the check names them)."""
    if isinstance(value, str):
        lowered = value.lower()
        if lowered in DIFFICULTIES:  # most files' own words: nothing more to tidy
            return lowered
        lowered = " ".join(lowered.split())
        if lowered in DIFFICULTIES:
            return lowered
        return DIFFICULTY_WORDS.get(lowered, value)
    return value


def norm_rubric(value, label, task, problems):
    """Rubric items to {id, text, weight, max_score}; strings become items r1, r2, ..."""
    if value is None or value == []:
        return None
    line, _ = task.where("rubric")
    if not isinstance(value, list):
        problems.add(label, "must be a list of items {id, text, weight, max_score}", line)
        return None
    items = []
    seen = set()
    for n, raw in enumerate(value, start=1):
        where = f"{label}[{n - 1}]"
        # YAML items know their own lines (and their keys'); JSON lines are one line each.
        item_line = getattr(raw, "line", None) or line

        def key_line(key, raw=raw, item_line=item_line):
            found = raw.line_of(key) if isinstance(raw, LineDict) else None
            return found or item_line

        if isinstance(raw, str):
            raw = {"id": f"r{n}", "text": raw}
        if not isinstance(raw, dict):
            problems.add(
                where, "must be an object {id, text, weight, max_score} or a string", item_line
            )
            continue
        unknown = sorted(set(raw) - {"id", "text", "weight", "max_score", "maxScore"})
        if unknown:
            problems.add(
                where,
                f"unknown key(s) {', '.join(unknown)}; allowed: id, text, weight, "
                f"max_score (or maxScore)",
                key_line(unknown[0]),
            )
            continue
        item_id = as_text(raw.get("id")) or f"r{n}"
        text = as_text(raw.get("text"))
        if not isinstance(text, str) or not text.strip():
            problems.add(f"{where}.text", "is required", key_line("text"))
            continue
        if item_id in seen:
            problems.add(f"{where}.id", f"duplicate rubric id {item_id!r}", key_line("id"))
            continue
        seen.add(item_id)
        weight = raw.get("weight", 1)
        # The key as the file writes it: the apocbench format says maxScore, ours max_score.
        max_key = "maxScore" if "maxScore" in raw and "max_score" not in raw else "max_score"
        max_score = raw.get(max_key, 1)
        bad = False
        for key, number in (("weight", weight), (max_key, max_score)):
            if isinstance(number, bool) or not isinstance(number, int | float) or number <= 0:
                problems.add(f"{where}.{key}", "must be a number greater than 0", key_line(key))
                bad = True
        if not bad:
            items.append(
                {"id": item_id, "text": text.strip(), "weight": weight, "max_score": max_score}
            )
    return items or None


def norm_str_list(value, label, task, problems, name):
    """A list of non-empty strings (auto-fail rules, tags); a single string becomes a list."""
    if value is None or value == []:
        return None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        problems.add(label, "must be a list of strings", task.where(name)[0])
        return None
    out = []
    for n, item in enumerate(value):
        item = as_text(item)
        # Stripped once, and the line looked up only for a problem: an import asks per task.
        text = item.strip() if isinstance(item, str) else ""
        if not text:
            problems.add(f"{label}[{n}]", "must be a non-empty string", task.where(name)[0])
            continue
        out.append(text)
    return out or None


def norm_vars(value, label, task, problems):
    """Template variables: a JSON object (or its text); None means 'not a template'."""
    if value is None or value == "":
        return None
    line, _ = task.where("vars")
    if isinstance(value, str):
        try:
            value = jsontext.loads(value)
        except ValueError as exc:
            problems.add(label, f"is not valid JSON ({exc.msg} at column {exc.colno})", line)
            return None
    if not isinstance(value, dict):
        problems.add(label, 'must be a JSON object like {"name": "value"}', line)
        return None
    for key in value:
        if not isinstance(key, str) or not key.isidentifier():
            problems.add(label, f"variable name {key!r} must be letters, digits and _", line)
            return None
    return value


def norm_fields(raw, task, problems, auto_fail="auto_fail"):
    """Difficulty, rubric, auto-fail rules, tags and vars, read from `raw` into `task.data`."""
    task.data["difficulty"] = norm_difficulty(task.data.get("difficulty"))
    task.data["rubric"] = norm_rubric(raw.get("rubric"), "rubric", task, problems)
    task.data["auto_fail"] = norm_str_list(
        raw.get(auto_fail), auto_fail, task, problems, "auto_fail"
    )
    task.data["tags"] = norm_str_list(raw.get("tags"), "tags", task, problems, "tags")
    task.data["vars"] = norm_vars(raw.get("vars"), "vars", task, problems)
    take_checks(raw, task)


def plain(value):
    """Parsed file data as plain JSON values (a LineDict becomes a dict): stored as given."""
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    return value


def take_checks(raw, task, keys=("checks", "tools")):
    """A task's checks and tools as the file gives them (the task store validates them), and
    the line of each check, so a problem names the check's own line."""
    checks_key, tools_key = keys
    task.data["checks"] = plain(raw.get(checks_key))
    task.data["tools"] = plain(raw.get(tools_key))
    items = raw.get(checks_key)
    if isinstance(items, list):
        for n, item in enumerate(items):
            if getattr(item, "line", None):
                task.fields[f"checks[{n}]"] = (item.line, checks_key)


def check_keys(raw, allowed, task, problems, prefix=""):
    """Reject unknown keys, naming each with its line and the allowed ones."""
    unknown = [k for k in raw if k not in allowed]
    for key in unknown:
        line = getattr(raw, "key_lines", {}).get(key, task.line)
        problems.add(f"{prefix}{key}", "unknown key; allowed: " + ", ".join(sorted(allowed)), line)
    return not unknown

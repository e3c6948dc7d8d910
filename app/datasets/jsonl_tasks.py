"""Apocbench JSONL: one strict object per line {id, category, difficulty, scenario: [str], prompt,
rubric: [{id, text, weight?, maxScore?}], auto_fail: [str], version?, source?}.

Strict, as the format says: every key but version and source is required (scenario, rubric and
auto_fail may be empty lists, not strings), the prompt is non-empty text, unknown keys are
rejected, and errors use the file's own key names (`id`, `prompt`, `maxScore`). The scenario
bullets are put before the prompt in the question. So that our own tasks survive an export and
re-import, these optional keys are known too: subcategory, system_prompt, excellent, good, pass,
incorrect_direction, tags, vars, checks, tools.
"""

import json
from types import MappingProxyType

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

SEED_KEYS = {
    "id",
    "category",
    "difficulty",
    "scenario",
    "prompt",
    "rubric",
    "auto_fail",
    "version",
    "source",
}
EXTRA_KEYS = {
    "subcategory",
    "system_prompt",
    "excellent",
    "good",
    "pass",
    "incorrect_direction",
    "tags",
    "vars",
    "checks",
    "tools",
}
ALLOWED = SEED_KEYS | EXTRA_KEYS
REQUIRED = ("id", "category", "difficulty", "scenario", "prompt", "rubric", "auto_fail")
# Model field -> this format's key, so every error names the key as the file writes it.
KEY_OF = {
    "task_id": "id",
    "question": "prompt",
    "template_version": "version",
    "pass_answer": "pass",
    "auto_fail": "auto_fail",
    "rubric": "rubric",
}

_TEXT = {
    "id": "task_id",
    "category": "category",
    "difficulty": "difficulty",
    "version": "template_version",
    "subcategory": "subcategory",
    "system_prompt": "system_prompt",
    "excellent": "excellent",
    "good": "good",
    "pass": "pass_answer",
    "incorrect_direction": "incorrect_direction",
}


def parse(text, file=None):
    """Read apocbench JSONL; every bad line is reported with its number."""
    problems = Problems(file)
    return Dataset(tasks=list(iter_tasks(text, file, problems)), problems=problems.entries)


def iter_tasks(lines, file, problems):
    """The ParsedTasks of apocbench JSONL text or lines, one at a time (problems added)."""
    for number, raw in json_lines(lines, problems):
        yield _task(raw, number, file, problems)


def _task(raw, line, file, problems):
    # Every field is on the task's own line: `where` falls back to it, and a JSON line's checks
    # know no lines of their own (take_checks adds none), so every task shares one read-only
    # table of its fields' labels (a dict copied per line was a tenth of its check).
    data = {}
    task = ParsedTask(data, line, file, _FIELDS_VIEW)
    entries = problems.entries
    before = len(entries)
    if not ALLOWED.issuperset(raw):
        for key in sorted(set(raw) - ALLOWED):
            problems.add(key, "unknown key; allowed: " + ", ".join(sorted(ALLOWED)), line)
    if not _REQUIRED.issubset(raw):
        for key in REQUIRED:
            if key not in raw:
                problems.add(key, _MISSING.get(key, "is required"), line)
    for key, name in _TEXT_ITEMS:
        if key in raw:
            value = raw[key]
            data[name] = value if value.__class__ is str else as_text(value)
    data["question"] = _question(raw, line, problems)
    data["difficulty"] = norm_difficulty(data.get("difficulty"))
    # A value a file leaves out (most of its optional keys) settled here, not by a call that
    # finds nothing to read: the same values and problems, in the same order.
    rubric = raw.get("rubric")
    if rubric is not None and not isinstance(rubric, list):
        problems.add("rubric", "must be a list of items {id, text, weight?, maxScore?}", line)
        rubric = None
    data["rubric"] = norm_rubric(rubric, "rubric", task, problems) if rubric else None
    auto_fail = raw.get("auto_fail")
    if auto_fail is not None and not isinstance(auto_fail, list):
        problems.add("auto_fail", 'must be a list of rules (["rule", ...]; [] for none)', line)
        auto_fail = None
    data["auto_fail"] = (
        norm_str_list(auto_fail, "auto_fail", task, problems, "auto_fail") if auto_fail else None
    )
    tags = raw.get("tags")
    if tags is not None:
        tags = norm_str_list(tags, "tags", task, problems, "tags")
    source = raw.get("source")
    if source is not None:
        source = as_text(source)
        if not isinstance(source, str):
            problems.add("source", "must be text", line)
        elif source and (tags is None or f"source:{source}" not in tags):
            tags = (tags or []) + [f"source:{source}"]  # no column of its own; kept as a tag
    data["tags"] = tags or None
    found = raw.get("vars")
    data["vars"] = None if found is None else norm_vars(found, "vars", task, problems)
    if "checks" in raw or "tools" in raw:
        take_checks(raw, task)
    else:
        data["checks"] = data["tools"] = None
    task.bad = len(entries) != before
    return task


_TEXT_ITEMS = tuple(_TEXT.items())
_KEY_OF_TEXT = {name: key for key, name in _TEXT.items()}
_REQUIRED = frozenset(REQUIRED)
# Model field -> (its line: the task's, this format's key) of every field a task's problems may
# name: worked out once, not per line (it was a tenth of a line's check).
_FIELDS = {
    name: (None, KEY_OF.get(name, _KEY_OF_TEXT.get(name, name)))
    for name in (
        *_TEXT.values(),
        "question",
        "rubric",
        "auto_fail",
        "tags",
        "vars",
        "checks",
        "tools",
    )
}
_FIELDS_VIEW = MappingProxyType(_FIELDS)
_MISSING = {
    "scenario": "is required: a list of bullet strings ([] for none)",
    "rubric": "is required: a list of rubric items {id, text, weight?, maxScore?} ([] for none)",
    "auto_fail": "is required: a list of auto-fail rules ([] for none)",
    "difficulty": "is required (Easy, Medium or Hard)",
}


def _question(raw, line, problems):
    prompt = raw.get("prompt")
    if prompt is not None and not isinstance(prompt, str):
        problems.add("prompt", "must be text", line)
        return None
    if isinstance(prompt, str) and not prompt.strip() and "prompt" in raw:
        problems.add("prompt", "must not be empty", line)
        return None
    if prompt is None:
        return None  # reported as missing above
    scenario = raw.get("scenario")
    if scenario in (None, []):
        return prompt
    if not isinstance(scenario, list) or not all(isinstance(s, str) for s in scenario):
        problems.add("scenario", 'must be a list of strings (["bullet", ...])', line)
        return prompt  # the scenario is what is wrong: no "prompt" echo
    bullets = "\n".join(f"- {s.strip()}" for s in scenario if s.strip())
    return f"{bullets}\n\n{prompt}" if bullets else prompt


def task_entry(t):
    """One task as an apocbench JSONL object (its question becomes `prompt`, scenario empty)."""
    get = task_getter(t)
    entry = {
        "id": get("task_id"),
        "category": get("category"),
        "difficulty": (get("difficulty") or "medium").capitalize(),
        "scenario": [],
        "prompt": get("question"),
        "rubric": [
            {
                "id": r["id"],
                "text": r["text"],
                "weight": r.get("weight", 1),
                "maxScore": r.get("max_score", 1),
            }
            for r in (get("rubric") or [])
        ],
        "auto_fail": list(get("auto_fail") or []),
    }
    if get("template_version"):
        entry["version"] = get("template_version")
    for key, name in (
        ("subcategory", "subcategory"),
        ("system_prompt", "system_prompt"),
        ("excellent", "excellent"),
        ("good", "good"),
        ("pass", "pass_answer"),
        ("incorrect_direction", "incorrect_direction"),
        ("tags", "tags"),
        ("vars", "vars"),
        ("checks", "checks"),
        ("tools", "tools"),
    ):
        if get(name) not in (None, "", []):
            entry[key] = get(name)
    return entry


def dump_lines(tasks):
    """Apocbench JSONL, one line per task."""
    for t in tasks:
        yield json.dumps(task_entry(t), ensure_ascii=False) + "\n"

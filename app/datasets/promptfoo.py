"""A promptfoo suite (`promptfooconfig.yaml`) read as tasks: each prompt x test is one task.

    prompts:     ["text with {{var}}", "file://prompt.txt", {raw|id, label?}]  (a .txt file
                 may hold several prompts split by a `---` line; a .json file chat messages)
    tests:       [{description?, vars?, assert?, options?, metadata?}] or "file://tests.yaml"
    defaultTest: {vars?, assert?, options?}: merged into every test (the test's own win)

A task's id is the test's description made an id (else test-<n>), with -p<k> when there are
several prompts; its question is the prompt with the vars filled in; its category the test's
metadata.category, else the suite's name. Asserts become checks (asserts.py); an llm-rubric
the task's rubric for the judge. An assert we cannot run is listed in `Dataset.unsupported`
with its file and line: the importer refuses the suite, or skips it when asked.
"""

import json
import re
from pathlib import Path

from .asserts import to_check
from .common import Dataset
from .common import ParsedTask
from .common import Problems
from .common import as_text
from .common import plain
from .lines import LineDict
from .lines import YamlSyntaxError
from .lines import load_yaml

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*(\|[^}]*)?\}\}")
_TAG = re.compile(r"\{%.*?%\}", re.S)
_TOP_LINE = re.compile(r"^(prompts|tests)\s*:", re.M)
_ID_CHARS = re.compile(r"[^A-Za-z0-9_.:-]+")
_FILE = "file://"


def looks_like(text):
    """A YAML text with top-level prompts: and tests: keys (cheap: no parse)."""
    return {m.group(1) for m in _TOP_LINE.finditer(text)} == {"prompts", "tests"}


def suite_name(file):
    """The suite's name: its folder's when the file is promptfooconfig.yaml, else its stem."""
    path = Path(file or "promptfoo")
    stem = path.stem.split(".")[0]
    if stem.lower() == "promptfooconfig" and path.resolve().parent.name:
        return path.resolve().parent.name
    return stem or "promptfoo"


def parse(text, file=None):
    """Read one promptfoo config into a Dataset (tasks, a collection named for the suite,
    problems, and the unsupported asserts in `unsupported`)."""
    problems = Problems(file)
    dataset = Dataset(problems=problems.entries)
    try:
        doc = load_yaml(text)
    except YamlSyntaxError as exc:
        problems.add(None, str(exc), exc.line)
        return dataset
    if not isinstance(doc, LineDict):
        problems.add(None, "a promptfoo config must be a mapping with prompts and tests", 1)
        return dataset
    reader = _Reader(doc, file, problems, dataset)
    reader.read()
    return dataset


def provider_ids(doc):
    """The config's providers as (id, config mapping or {}, line)."""
    out = []
    for raw in doc.get("providers") or []:
        if isinstance(raw, str):
            out.append((raw, {}, doc.line_of("providers")))
        elif isinstance(raw, dict):
            out.append((raw.get("id"), raw.get("config") or {}, getattr(raw, "line", None)))
        else:
            out.append((raw, {}, doc.line_of("providers")))
    return out


class _Reader:
    def __init__(self, doc, file, problems, dataset):
        self.doc, self.file, self.problems, self.dataset = doc, file, problems, dataset
        self.base = Path(file).parent if file else Path(".")
        self.name = suite_name(file)

    def add(self, field, message, line, file=None):
        self.problems.add(field, message, line, file or self.file)

    def read(self):
        doc = self.doc
        if "scenarios" in doc:
            self.add(
                "scenarios",
                "scenarios are not supported; list the tests under tests:",
                doc.line_of("scenarios"),
            )
        prompts = self.prompts(doc.get("prompts"))
        tests, tests_file = self.tests(doc.get("tests"))
        default = doc.get("defaultTest") or LineDict()
        if not isinstance(default, dict):
            self.add(
                "defaultTest",
                "must be a mapping {vars, assert, options}",
                doc.line_of("defaultTest"),
            )
            default = LineDict()
        ids = []
        for n, test in enumerate(tests, start=1):
            if not isinstance(test, dict):
                self.add(
                    f"tests[{n - 1}]",
                    "must be a mapping {description, vars, assert}",
                    getattr(test, "line", None) or doc.line_of("tests"),
                    tests_file,
                )
                continue
            ids.extend(self.test(n, test, default, prompts, tests_file))
        if ids:
            description = doc.get("description")
            self.dataset.collections[self.name] = {
                "task_ids": ids,
                "line": doc.line,
                "file": self.file,
                "description": description if isinstance(description, str) else "",
            }

    def load_file(self, ref, field, line, file=None):
        """The text of a file:// reference (relative to the config), or None (reported)."""
        path = self.base / ref[len(_FILE) :].strip()
        try:
            return str(path), path.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            why = getattr(exc, "strerror", None) or str(exc)
            self.add(field, f"cannot read {path}: {why}", line, file)
            return str(path), None

    def prompts(self, value):
        """[(system_prompt or None, template)]."""
        line = self.doc.line_of("prompts")
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not value:
            self.add("prompts", "must be a list of prompts (text or file://...)", line)
            return []
        out = []
        for k, raw in enumerate(value):
            field = f"prompts[{k}]"
            if isinstance(raw, dict):
                raw = raw.get("raw") or raw.get("id")
            if not isinstance(raw, str) or not raw.strip():
                self.add(field, "must be the prompt's text or file://path", line)
                continue
            if not raw.startswith(_FILE):
                out.append((None, raw))
                continue
            path, text = self.load_file(raw, field, line)
            if text is None:
                continue
            if path.endswith(".json"):
                out.extend(self.chat_prompt(text, field, line))
            else:
                parts = re.split(r"^-{3,}\s*$", text, flags=re.M)
                out.extend((None, p.strip()) for p in parts if p.strip())
        return out

    def chat_prompt(self, text, field, line):
        try:
            messages = json.loads(text)
        except ValueError as exc:
            self.add(field, f"is not valid JSON: {exc}", line)
            return []
        ok = isinstance(messages, list) and all(
            isinstance(m, dict) and isinstance(m.get("content"), str) for m in messages
        )
        if not ok:
            self.add(field, "a .json prompt must be a list of {role, content} messages", line)
            return []
        system = "\n\n".join(m["content"] for m in messages if m.get("role") == "system")
        user = "\n\n".join(m["content"] for m in messages if m.get("role") != "system")
        return [(system or None, user)]

    def tests(self, value):
        """(the tests as a list, the file they came from)."""
        line = self.doc.line_of("tests")
        if isinstance(value, str) and value.startswith(_FILE):
            path, text = self.load_file(value, "tests", line)
            if text is None:
                return [], None
            try:
                value = load_yaml(text)
            except YamlSyntaxError as exc:
                self.add(None, str(exc), exc.line, path)
                return [], None
            if not isinstance(value, list):
                self.add("tests", "the tests file must hold a list of tests", 1, path)
                return [], None
            return value, path
        if not isinstance(value, list):
            self.add("tests", "must be a list of tests or file://tests.yaml", line)
            return [], None
        return value, None

    def test(self, n, test, default, prompts, tests_file):
        where = tests_file or self.file
        line = test.line
        merged_vars = {**(default.get("vars") or {}), **(test.get("vars") or {})}
        options = {**(default.get("options") or {}), **(test.get("options") or {})}
        asserts = [
            *[(a, default, "defaultTest.assert") for a in default.get("assert") or []],
            *[(a, test, f"tests[{n - 1}].assert") for a in test.get("assert") or []],
        ]
        if "transform" in options or "postprocess" in options:
            self.add(
                f"tests[{n - 1}].options", "transform/postprocess are not supported", line, where
            )
        checks, rubric = [], []
        for k, (item, owner, label) in enumerate(asserts):
            item_file = where if owner is test else self.file
            item_line = getattr(item, "line", None) or owner.line
            kind, result = to_check(item)
            if kind == "check":
                checks.append(result)
            elif kind == "rubric":
                rubric.append(result)
            else:
                self.dataset.unsupported.append(
                    {
                        "file": item_file,
                        "line": item_line,
                        "field": f"{label}[{k}]",
                        "message": result,
                    }
                )
        base = _task_id(test.get("description"), n)
        metadata = test.get("metadata") or {}
        category = metadata.get("category") if isinstance(metadata, dict) else None
        ids = []
        for k, (system, template) in enumerate(prompts, start=1):
            question = self.fill(template, merged_vars, f"tests[{n - 1}].vars", line, where)
            if question is None:
                continue
            question = f"{options.get('prefix') or ''}{question}{options.get('suffix') or ''}"
            task_id = f"{base}-p{k}" if len(prompts) > 1 else base
            task = ParsedTask({}, line, where)
            task.data = {
                "task_id": task_id,
                "category": as_text(category) or self.name,
                "question": question,
                "system_prompt": system,
                "rubric": [
                    {"id": f"r{i}", "text": t, "weight": 1, "max_score": 1}
                    for i, t in enumerate(rubric, start=1)
                ]
                or None,
                "checks": checks or None,
                "tags": ["promptfoo"],
            }
            task.fields["task_id"] = (test.line_of("description"), "description")
            task.fields["checks"] = (test.line_of("assert"), "assert")
            self.dataset.tasks.append(task)
            ids.append(task_id)
        return ids

    def fill(self, template, values, field, line, file):
        """The template with each {{var}} filled; None when a var is missing (reported)."""
        if _TAG.search(template):
            self.add(
                field, "Nunjucks {% ... %} tags are not supported; use {{var}} only", line, file
            )
            return None
        missing = []

        def value_of(match):
            name, filters = match.group(1), match.group(2)
            if filters:
                missing.append(f"{name} (the filter {filters.strip()} is not supported)")
                return ""
            value = values
            for part in name.split("."):
                value = value.get(part) if isinstance(value, dict) else None
            if value is None:
                missing.append(name)
                return ""
            if isinstance(value, str) and value.startswith(_FILE):
                _path, text = self.load_file(value, f"{field}.{name}", line, file)
                return text or ""
            if isinstance(value, list | dict):
                return json.dumps(plain(value))
            return as_text(value)

        filled = _PLACEHOLDER.sub(value_of, template)
        if missing:
            self.add(field, "no value for " + ", ".join(missing), line, file)
            return None
        return filled


def _task_id(description, n):
    if isinstance(description, str) and description.strip():
        slug = _ID_CHARS.sub("-", description.strip().lower()).strip("-")[:80]
        if slug:
            return slug
    return f"test-{n}"

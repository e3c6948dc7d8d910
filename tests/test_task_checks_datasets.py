"""Tasks' checks and tools in task files: read in every format, refused with the task, line,
check and field, written by every export, and the same after export and import again."""

import csv
import io
import json
from pathlib import Path

import pytest
import yaml

from app.datasets import exporter
from app.datasets import importer
from app.db.models import Collection
from app.db.models import CollectionTask
from app.db.models import Task
from app.errors import ValidationError

CHECKS = [
    {"type": "number", "value": 42, "tolerance": "1%"},
    {"type": "json-schema", "value": {"type": "object", "required": ["a"]}, "gate": True},
    {"type": "contains-any", "value": ["forty-two", "42"], "weight": 2, "threshold": 100},
    {"type": "tool-call", "value": [{"name": "add", "arguments": {"a": 40, "b": 2}}]},
]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "add",
            "description": "Adds two numbers",
            "parameters": {"type": "object", "properties": {"a": {"type": "number"}}},
        },
    }
]
YAML_TASKS = """\
- task_id: good_one
  category: Math
  question: What is 40 + 2?
  excellent: "42"
  checks:
    - {type: number, value: 42}
- task_id: bad_one
  category: Math
  question: What is 40 + 2?
  excellent: "42"
  checks:
    - type: contains
      value: "42"
    - type: number
      value: forty-two
"""


def _import(text, name, **kwargs):
    return importer.import_tasks(text.encode(), filename=name, **kwargs)


def _errors(text, name, **kwargs):
    with pytest.raises(ValidationError) as info:
        _import(text, name, **kwargs)
    return info.value.errors


def _clear():
    CollectionTask.delete().execute()
    Collection.delete().execute()
    Task.delete().execute()


def test_a_yaml_file_gives_a_task_its_checks(app):
    _import(YAML_TASKS.split("- task_id: bad_one")[0], "tasks.yaml")
    assert Task.get(Task.task_id == "good_one").checks == [{"type": "number", "value": 42}]


def test_a_bad_check_in_yaml_names_the_task_the_check_and_its_line_and_stores_no_task(app):
    errors = _errors(YAML_TASKS, "tasks.yaml")
    (entry,) = errors
    assert entry["field"] == "checks[1] (number).value"
    assert entry["line"] == 14  # the bad check's own line
    assert entry["file"] == "tasks.yaml" and "bad_one" in entry["message"]
    assert Task.select().count() == 0


def test_a_jsonl_line_gives_a_task_its_checks_and_tools(app):
    line = {
        "id": "j1",
        "category": "Math",
        "difficulty": "Easy",
        "scenario": [],
        "prompt": "Add 40 and 2 with the tool.",
        "rubric": [],
        "auto_fail": [],
        "checks": CHECKS,
        "tools": TOOLS,
    }
    _import(json.dumps(line) + "\n", "bank.jsonl")
    task = Task.get(Task.task_id == "j1")
    assert task.checks == CHECKS and task.tools == TOOLS


def test_a_bad_check_in_jsonl_names_its_line_and_no_task_is_stored(app):
    base = {
        "id": "j1",
        "category": "Math",
        "difficulty": "Easy",
        "scenario": [],
        "prompt": "p",
        "rubric": [],
        "auto_fail": [],
    }
    lines = [
        json.dumps(base),
        json.dumps({**base, "id": "j2", "checks": [{"type": "length"}]}),
    ]
    errors = _errors("\n".join(lines) + "\n", "bank.jsonl")
    assert [(e["line"], e["field"]) for e in errors] == [(2, "checks[0] (length).min")]
    assert Task.select().count() == 0


def test_a_csv_checks_column_holds_the_checks_as_json(app):
    rows = [
        ["task_id", "prompt_template", "excellent", "checks", "tools"],
        ["c1", "What is 40 + 2?", "42", json.dumps(CHECKS), json.dumps(TOOLS)],
    ]
    buffer = io.StringIO()
    csv.writer(buffer).writerows(rows)
    _import(buffer.getvalue(), "tasks.csv")
    task = Task.get(Task.task_id == "c1")
    assert task.checks == CHECKS and task.tools == TOOLS


def test_a_bad_check_in_a_csv_row_names_the_row_line_and_the_check(app):
    rows = [
        ["task_id", "prompt_template", "checks"],
        ["c1", "q", json.dumps([{"type": "contains", "value": "x"}])],
        ["c2", "q", json.dumps([{"type": "regex", "value": "("}])],
    ]
    buffer = io.StringIO()
    csv.writer(buffer).writerows(rows)
    errors = _errors(buffer.getvalue(), "tasks.csv")
    assert [(e["line"], e["field"]) for e in errors] == [(3, "checks[0] (regex).value")]
    assert "c2" in errors[0]["message"]
    assert Task.select().count() == 0


def test_a_csv_checks_cell_that_is_not_json_is_named(app):
    text = 'task_id,prompt_template,checks\nc1,q,"[{type: number"\n'
    errors = _errors(text, "tasks.csv")
    assert errors[0]["field"] == "checks" and errors[0]["line"] == 2


def test_our_json_format_reads_checks_and_tools(app):
    doc = {"tasks": [{"taskId": "o1", "category": "Math", "question": "q", "checks": CHECKS}]}
    errors = _errors(json.dumps(doc), "tasks.json")
    # The tool-call check names a tool the task does not offer.
    assert errors[0]["field"] == "checks[3] (tool-call).value[0]"
    doc["tasks"][0]["tools"] = TOOLS
    _import(json.dumps(doc), "tasks.json")
    assert Task.get(Task.task_id == "o1").tools == TOOLS


@pytest.mark.parametrize("fmt", list(exporter.EXPORT_FORMATS))
def test_an_export_imported_again_gives_the_same_checks_and_tools(app, fmt):
    doc = {
        "tasks": [
            {"taskId": "t1", "category": "Math", "question": "q", "checks": CHECKS, "tools": TOOLS},
            {"taskId": "t2", "category": "Math", "question": "q2", "excellent": "x"},
        ]
    }
    _import(json.dumps(doc), "tasks.json")
    before = {t.task_id: (t.checks, t.tools) for t in Task.select()}
    text = exporter.export_text(fmt)
    _clear()
    importer.import_tasks(text.encode(), fmt, filename=exporter.filename(fmt))
    assert {t.task_id: (t.checks, t.tools) for t in Task.select()} == before


def test_the_yaml_export_writes_checks_as_a_list(app):
    _import(YAML_TASKS.split("- task_id: bad_one")[0], "tasks.yaml")
    (entry,) = yaml.safe_load(exporter.export_text("yaml"))
    assert entry["checks"] == [{"type": "number", "value": 42}]
    assert "tools" not in entry


def test_the_csv_export_writes_checks_as_json_text(app):
    _import(YAML_TASKS.split("- task_id: bad_one")[0], "tasks.yaml")
    rows = list(csv.DictReader(io.StringIO(exporter.export_text("csv"))))
    assert json.loads(rows[0]["checks"]) == [{"type": "number", "value": 42}]
    assert rows[0]["tools"] == ""


def test_the_docs_checks_example_imports(app):
    text = (Path(__file__).parent.parent / "docs" / "CLI.md").read_text(encoding="utf-8")
    section = text.split("### Checks and tools", 1)[1]
    example = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    _import(example, "example.yaml")
    assert [c["type"] for c in Task.get(Task.task_id == "invoice_total").checks] == [
        "json",
        "json-schema",
        "contains",
        "length",
    ]

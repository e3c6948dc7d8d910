"""Exports: every format round-trips (export, import into an empty database, same tasks)."""

import csv
import io
import json
from pathlib import Path

import pytest
import yaml

from app.datasets import exporter
from app.datasets import importer
from app.datasets.common import TASK_FIELDS
from app.db.models import Collection
from app.db.models import CollectionTask
from app.db.models import Task
from app.errors import NotFound
from app.errors import ValidationError

DATA = Path(__file__).parent / "data"
SAMPLES = [
    DATA / n
    for n in (
        "seed001_tasks.yml",
        "seed004_bank.jsonl",
        "seed003_runner.csv",
        "seed003_runner.jsonl",
        "llmbench_tasks.json",
        "yaml_folder",
    )
]
EXTRA = """\
- task_id: multi_line
  category: Writing
  difficulty: hard
  question: |
    Line one with "quotes", a comma, and {{braces}}.
    Line two: ünïcode ✓
  system_prompt: You are {role}.
  vars: {role: an editor}
  template_version: t9
  expected_answer: {most_expected: "A, B", good_answer: "", pass_option: "x"}
  rubric:
    - {id: r1, text: "Keeps both lines", weight: 2.5, max_score: 3}
  auto_fail: ["Drops line two"]
  tags: [writing, edge]
"""


def _snapshot():
    return {t.task_id: {f: getattr(t, f) for f in TASK_FIELDS} for t in Task.select()}


def _clear():
    CollectionTask.delete().execute()
    Collection.delete().execute()
    Task.delete().execute()


@pytest.fixture
def stored(app):
    importer.import_tasks(SAMPLES)
    importer.import_tasks(EXTRA.encode(), filename="extra.yml", collection="edge")
    return _snapshot()


@pytest.mark.parametrize("fmt", list(exporter.EXPORT_FORMATS))
def test_export_then_import_into_an_empty_database_gives_the_same_tasks(stored, fmt):
    text = exporter.export_text(fmt)
    _clear()
    importer.import_tasks(text.encode(), fmt, filename=exporter.filename(fmt))
    assert _snapshot() == stored


@pytest.mark.parametrize("fmt", list(exporter.EXPORT_FORMATS))
def test_the_exported_file_name_is_enough_to_guess_the_format(stored, fmt):
    text = exporter.export_text(fmt)
    _clear()
    importer.import_tasks(text.encode(), filename=exporter.filename(fmt))
    assert _snapshot() == stored


def test_json_export_keeps_collections(stored):
    text = exporter.export_text("json")
    _clear()
    importer.import_tasks(text.encode(), filename="tasks.json")
    names = {c.name: sorted(m.task.task_id for m in c.memberships) for c in Collection.select()}
    assert names == {"Proofreading Suite": ["proof_001"], "edge": ["multi_line"]}


def test_exporting_one_collection_holds_only_its_tasks(stored):
    doc = json.loads(exporter.export_text("json", "edge"))
    assert [t["taskId"] for t in doc["tasks"]] == ["multi_line"]
    assert doc["collections"] == [{"name": "edge", "description": "", "taskIds": ["multi_line"]}]


def test_yaml_export_uses_seed_001_names(stored):
    entries = yaml.safe_load(exporter.export_text("yaml", "edge"))
    assert entries[0]["expected_answer"] == {
        "most_expected": "A, B",
        "good_answer": "",
        "pass_option": "x",
    }
    assert entries[0]["sub_category"] == ""


def test_jsonl_export_is_seed_004_shaped(stored):
    line = json.loads(exporter.export_text("jsonl", "edge"))
    assert (line["id"], line["difficulty"], line["version"]) == ("multi_line", "Hard", "t9")
    assert line["rubric"] == [
        {"id": "r1", "text": "Keeps both lines", "weight": 2.5, "maxScore": 3}
    ]


def test_csv_export_has_the_seed_003_columns_first(stored):
    rows = list(csv.reader(io.StringIO(exporter.export_text("csv", "edge"))))
    assert rows[0][:5] == [
        "task_id",
        "template_version",
        "prompt_template",
        "input_text",
        "vars_json",
    ]
    assert rows[1][:5] == [
        "multi_line",
        "t9",
        "You are {role}.",
        rows[1][3],
        '{"role": "an editor"}',
    ]
    assert rows[1][3].startswith("Line one")


def test_csv_export_ends_rows_with_crlf(stored):
    assert exporter.export_text("csv", "edge").endswith("\r\n")


def test_an_unknown_collection_is_not_found(app):
    with pytest.raises(NotFound):
        exporter.export_text("json", "nope")


def test_an_unknown_export_format_names_the_choices(app):
    with pytest.raises(ValidationError) as info:
        exporter.export_text("xml")
    assert "yaml" in info.value.message

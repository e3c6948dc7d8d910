"""Seed 004's strict datasets, in the user's words: required keys, list shapes, the file's own key
names, the line of the bad value, no cascade of echoed errors."""

import json

import pytest

from app.datasets import importer
from app.db.models import Task
from app.errors import ValidationError
from app.runconfig import reader

GOOD = {
    "id": "w1",
    "category": "Water",
    "difficulty": "Easy",
    "scenario": ["The tap stopped."],
    "prompt": "How do you make water safe?",
    "rubric": [{"id": "boil", "text": "Boil it", "maxScore": 2}],
    "auto_fail": ["Drinks it untreated"],
}


def _errors(text, name):
    with pytest.raises(ValidationError) as info:
        importer.check(text.encode(), filename=name)
    return info.value.errors


def _line(**change):
    data = {**GOOD, **change}
    return json.dumps({k: v for k, v in data.items() if v is not ...})


def test_a_complete_seed_004_line_is_valid(app):
    assert [t["task_id"] for t in importer.check(_line().encode(), filename="b.jsonl").tasks] == [
        "w1"
    ]


@pytest.mark.parametrize("key", ["id", "category", "difficulty", "scenario", "prompt", "rubric"])
def test_a_missing_seed_004_key_is_an_error_naming_it(app, key):
    errors = _errors(_line(**{key: ...}), "b.jsonl")
    assert [(e["line"], e["field"]) for e in errors] == [(1, key)]
    assert errors[0]["message"].startswith("is required")


def test_a_missing_auto_fail_is_an_error(app):
    errors = _errors(_line(auto_fail=...), "b.jsonl")
    assert [(e["line"], e["field"]) for e in errors] == [(1, "auto_fail")]


def test_empty_lists_are_allowed_for_scenario_rubric_and_auto_fail(app):
    checked = importer.check(
        _line(scenario=[], rubric=[], auto_fail=[]).encode(), filename="b.jsonl"
    )
    assert checked.tasks[0]["question"] == GOOD["prompt"]


@pytest.mark.parametrize(
    "change, field",
    [
        ({"scenario": "a string"}, "scenario"),
        ({"auto_fail": "a string"}, "auto_fail"),
        ({"rubric": "a string"}, "rubric"),
        ({"prompt": ""}, "prompt"),
        ({"prompt": "   "}, "prompt"),
    ],
)
def test_a_wrong_shape_is_an_error_not_a_guess(app, change, field):
    errors = _errors(_line(**change), "b.jsonl")
    assert [(e["line"], e["field"]) for e in errors] == [(1, field)]


def test_a_prompt_is_required_even_with_a_scenario(app):
    errors = _errors(_line(prompt=...), "b.jsonl")
    assert [e["field"] for e in errors] == ["prompt"]  # said once: no "question" echo


def test_errors_use_the_files_key_names(app):
    errors = _errors(_line(rubric=[{"id": "r", "text": "t", "maxScore": -1}], id=...), "b.jsonl")
    fields = {e["field"] for e in errors}
    assert fields == {"id", "rubric[0].maxScore"}
    assert not {"task_id", "rubric[0].max_score"} & fields


def test_a_duplicate_id_names_id(app):
    errors = _errors(_line() + "\n" + _line(), "b.jsonl")
    assert [(e["line"], e["field"]) for e in errors] == [(2, "id")]


RUBRIC_YAML = """\
- task_id: t1
  category: C
  question: Q
  expected_answer:
    most_expected: A
  rubric:
    - id: a
      text: first
      weight: 1
    - id: b
      text: second
      weight: 0
    - id: c
      text: third
      max_score: -2
"""


def test_yaml_rubric_errors_name_the_line_of_the_bad_value(app):
    errors = _errors(RUBRIC_YAML, "t.yml")
    assert [(e["line"], e["field"]) for e in errors] == [
        (12, "rubric[1].weight"),
        (15, "rubric[2].max_score"),
    ]


@pytest.mark.parametrize("value", ["5050", "3.5", "true"])
def test_a_yaml_question_that_is_not_text_is_an_error(app, value):
    text = f"- task_id: t\n  category: C\n  question: {value}\n  excellent: A\n"
    errors = _errors(text, "t.yml")
    assert [(e["line"], e["field"]) for e in errors] == [(3, "question")]
    assert "must be text" in errors[0]["message"]


def test_a_quoted_yaml_number_is_a_question(app):
    text = '- task_id: t\n  category: C\n  question: "5050"\n  expected_answer: {most_expected: A}'
    assert importer.check(text.encode(), filename="t.yml").tasks[0]["question"] == "5050"


def test_a_bad_vars_json_is_reported_once_without_a_missing_value_echo(app):
    text = 'task_id,prompt_template,vars_json\nt,Hi {country},"{not json"\n'
    errors = _errors(text, "r.csv")
    assert [(e["line"], e["field"]) for e in errors] == [(2, "vars_json")]


def test_a_missing_env_var_in_a_base_url_is_one_error(app):
    config = (
        "run: {name: x, collections: [c]}\n"
        "providers:\n  - name: p\n    type: OPENAI\n    base_url: ${NOT_SET}\n"
        "judge: {provider: p, model: j}\ntargets: [{provider: p, model: m}]\n"
    )
    with pytest.raises(ValidationError) as info:
        reader.parse(config, "c.yml", environ={})
    messages = [(e["field"], e["message"]) for e in info.value.errors]
    assert ("providers[0].base_url", "environment variable NOT_SET is not set") in messages
    assert not [m for _f, m in messages if "base URL" in m]


def test_nothing_is_saved_when_a_line_is_not_strict(app):
    with pytest.raises(ValidationError):
        importer.import_tasks((_line() + "\n" + _line(id="w2", scenario="x")).encode(), "jsonl")
    assert Task.select().count() == 0


def test_an_exported_jsonl_imports_back_under_the_strict_rules(app):
    from app.datasets import exporter

    importer.import_tasks(_line().encode(), filename="b.jsonl")
    text = exporter.export_text("jsonl", None)
    Task.delete().execute()
    assert importer.import_tasks(text.encode(), filename="again.jsonl").created == 1


def test_validating_a_dataset_without_a_database_adds_no_database_note(tmp_path):
    from click.testing import CliRunner

    from app.cli import main
    from tests.conftest import TEST_KEY_B64

    bad = tmp_path / "b.jsonl"
    bad.write_text(_line(scenario="x"))
    env = {"LLMBENCH_DB": str(tmp_path / "none.db"), "LLMBENCH_MASTER_KEY_BASE64": TEST_KEY_B64}
    result = CliRunner().invoke(main, ["validate", str(bad)], env=env)
    assert result.exit_code == 2
    assert "scenario" in result.stderr and "database" not in result.stderr

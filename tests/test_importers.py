"""Importing tasks: every format, every problem with file + line + field, all or nothing."""

import json
from pathlib import Path

import pytest

from app.datasets import importer
from app.db.models import Collection
from app.db.models import CollectionTask
from app.db.models import Task
from app.errors import ValidationError

DATA = Path(__file__).parent / "data"


def _import(text, name, **kwargs):
    return importer.import_tasks(text.encode(), filename=name, **kwargs)


def _errors(text, name, **kwargs):
    with pytest.raises(ValidationError) as info:
        _import(text, name, **kwargs)
    return info.value.errors


def _where(errors):
    return [(e.get("line"), e.get("field")) for e in errors]


def _task(task_id):
    return Task.get(Task.task_id == task_id)


# ---- every format ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, task_ids",
    [
        ("seed001_tasks.yml", ["java_hello_world", "french_greeting"]),
        ("seed004_bank.jsonl", ["water-001", "fire-002"]),
        ("seed003_runner.csv", ["greet-1", "summarise-1"]),
        ("seed003_runner.jsonl", ["greet-2", "translate-2"]),
        ("llmbench_tasks.json", ["proof_001", "math_add"]),
        ("yaml_folder", ["py_sum", "de_thanks"]),
    ],
)
def test_each_sample_file_imports_its_tasks(app, name, task_ids):
    result = importer.import_tasks(DATA / name)
    assert (result.created, result.updated, result.skipped) == (len(task_ids), 0, 0)
    assert sorted(t.task_id for t in Task.select()) == sorted(task_ids)


def test_seed001_yaml_maps_expected_answer_and_sub_category(app):
    importer.import_tasks(DATA / "seed001_tasks.yml")
    task = _task("french_greeting")
    assert (task.category, task.subcategory) == ("Translation", "French")
    assert (task.excellent, task.good, task.pass_answer) == (
        "Bonjour, comment allez-vous ?",
        "Bonjour, comment ça va ?",
        "Bonjour",
    )
    assert task.incorrect_direction.startswith("Answers in Spanish")
    assert task.difficulty == "medium"


def test_seed004_jsonl_normalises_rubric_scenario_and_difficulty(app):
    importer.import_tasks(DATA / "seed004_bank.jsonl")
    water = _task("water-001")
    assert water.difficulty == "easy"
    assert water.question == (
        "- The tap water stopped.\n- You have a pot and a fire.\n\n"
        "How do you make stream water safe to drink?"
    )
    assert water.rubric == [
        {"id": "boil", "text": "Boil for at least one minute", "weight": 2, "max_score": 1},
        {"id": "filter", "text": "Filter sediment first", "weight": 1, "max_score": 1},
    ]
    assert water.auto_fail == ["Recommends drinking untreated water"]
    fire = _task("fire-002")
    assert (fire.template_version, fire.tags) == ("v7", ["source:manual"])


def test_seed003_csv_template_is_the_question_or_the_system_prompt(app):
    importer.import_tasks(DATA / "seed003_runner.csv")
    greet = _task("greet-1")
    assert (greet.question, greet.system_prompt) == ("Say hello to {name} in {language}.", None)
    assert greet.vars == {"name": "Ada", "language": "French"}
    assert (greet.template_version, greet.category, greet.excellent) == ("v1", "general", "")
    summary = _task("summarise-1")
    assert summary.system_prompt == "You summarise text in one sentence."
    assert summary.question.startswith("The quick brown fox")


def test_seed003_jsonl_takes_vars_as_object_or_json_text(app):
    importer.import_tasks(DATA / "seed003_runner.jsonl")
    assert _task("greet-2").vars == {"name": "Bob"}
    assert _task("translate-2").vars == {"lang": "Spanish"}


def test_our_json_creates_its_collections(app):
    result = importer.import_tasks(DATA / "llmbench_tasks.json")
    group = Collection.get(Collection.name == "Proofreading Suite")
    assert group.description == "grammar"
    assert [m.task.task_id for m in group.memberships] == ["proof_001"]
    assert result.collections == ["Proofreading Suite"]


def test_a_folder_imports_every_yaml_file_in_it(app):
    result = importer.import_tasks(DATA / "yaml_folder", collection="folder")
    assert result.created == 2
    assert CollectionTask.select().count() == 2


def test_several_paths_import_together(app):
    result = importer.import_tasks([DATA / "seed001_tasks.yml", DATA / "seed004_bank.jsonl"])
    assert result.created == 4


@pytest.mark.parametrize(
    "text, fmt",
    [
        (
            "- task_id: a\n  category: c\n  question: q\n  expected_answer: {most_expected: x}\n",
            "yaml",
        ),
        (
            '{"id": "a", "category": "c", "difficulty": "Easy", "scenario": [], "prompt": "q", '
            '"rubric": ["x"], "auto_fail": []}\n',
            "jsonl",
        ),
        ("task_id,prompt_template\na,q\n", "csv"),
        ('{"task_id": "a", "prompt_template": "q"}\n', "runner-jsonl"),
        (
            '{"tasks": [{"taskId": "a", "category": "c", "question": "q", "excellent": "x"}]}',
            "json",
        ),
    ],
)
def test_the_format_is_guessed_from_the_content(app, text, fmt):
    assert importer.sniff("upload", text) == fmt
    assert _import(text, "upload").created == 1


def test_an_explicit_format_wins_over_the_extension(app):
    text = "task_id,prompt_template\na,q\n"
    assert _import(text, "data.txt", fmt="csv").created == 1


# ---- every problem: file, line, field ----------------------------------------------------

BAD_YAML = """\
- task_id: ok_one
  category: C
  question: Q
  expected_answer: {most_expected: A}
- task_id: bad one
  category: C
  difficulty: extreme
  question: Q
  expected_answer:
    most_expectd: A
  colour: red
"""


def test_yaml_problems_name_file_line_and_field(app):
    errors = _errors(BAD_YAML, "bank.yml")
    assert {e["file"] for e in errors} == {"bank.yml"}
    assert _where(errors) == [
        (5, "task_id"),
        (7, "difficulty"),
        (10, "expected_answer.most_expectd"),
        (11, "colour"),
    ]


def test_yaml_syntax_error_names_the_line(app):
    errors = _errors("- task_id: a\n  question: [unclosed\n", "broken.yml")
    assert errors[0]["line"] in (2, 3) and "not valid YAML" in errors[0]["message"]


# Every seed 004 key but the one a line is about (scenario, rubric, auto_fail may be empty).
FULL = '"category": "C", "difficulty": "Easy", "scenario": [], "auto_fail": []'
BAD_JSONL = "\n".join(
    [
        '{"id": "a1", ' + FULL + ', "prompt": "Q", "rubric": []}',
        '{"id": "a2", ' + FULL + ', "prompt": "Q", "rubric": [], "extra": 1}',
        '{"id": "a3", ' + FULL + ', "prompt": "Q",',
        '{"id": "a4", ' + FULL + ', "prompt": "Q", '
        '"rubric": [{"id": "r", "text": "t", "weight": -1}]}',
        '{"id": "a5", ' + FULL + ', "rubric": [{"id": "r", "text": "t"}]}',
    ]
)


def test_seed004_jsonl_problems_name_line_and_field(app):
    errors = _errors(BAD_JSONL, "bank.jsonl")
    where = set(_where(errors))
    assert (2, "extra") in where  # unknown keys are rejected
    assert (3, None) in where  # not JSON
    assert (4, "rubric[0].weight") in where
    assert (5, "prompt") in where  # the question is called prompt in this format
    assert not [w for w in where if w[0] == 1]  # an empty rubric is allowed


def test_seed003_csv_problems_count_the_header_as_line_one(app):
    text = (
        "task_id,template_version,prompt_template,vars_json\n"
        'ok,v1,Hello {name},"{""name"": ""x""}"\n'
        't2,v1,Hello {name} {city},"{""name"": ""x""}"\n'
        't3,v1,Hi,"{not json"\n'
        "t4,v1\n"
    )
    where = set(_where(_errors(text, "tasks.csv")))
    assert {(3, "vars_json"), (4, "vars_json"), (5, None)} <= where


def test_seed003_csv_unknown_column_is_reported_on_the_header(app):
    errors = _errors("task_id,prompt_template,colour\na,q,red\n", "tasks.csv")
    assert _where(errors) == [(1, "colour")]


def test_our_json_problem_names_the_line_where_the_task_starts(app):
    text = json.dumps(
        {
            "tasks": [
                {"taskId": "a", "category": "c", "question": "q", "excellent": "x"},
                {"taskId": "b", "category": "c", "question": "q", "excellent": "x", "colour": 1},
            ]
        },
        indent=2,
    )
    errors = _errors(text, "tasks.json")
    line = text.splitlines().index("    {", 3) + 1
    assert _where(errors) == [(line, "colour")]


def test_a_missing_template_variable_is_an_import_error(app):
    text = (
        "- task_id: t\n  category: c\n  question: 'Hi {name} from {city}'\n"
        "  vars: {name: Ada}\n  expected_answer: {most_expected: x}\n"
    )
    errors = _errors(text, "t.yml")
    assert any("{city}" in e["message"] for e in errors)


@pytest.mark.parametrize(
    "text, name",
    [
        ("task_id,prompt_template,vars_json\nt,Hi {who},\n", "runner.csv"),
        ("task_id,prompt_template\nt,Hi {who}\n", "runner.csv"),
        ('{"task_id": "t", "prompt_template": "Hi {who}"}\n', "runner.jsonl"),
        ('{"task_id": "t", "prompt_template": "Hi {who}", "vars_json": ""}\n', "runner.jsonl"),
    ],
)
def test_a_seed003_placeholder_without_vars_is_an_import_error(app, text, name):
    fmt = "csv" if name.endswith(".csv") else "runner-jsonl"
    errors = _errors(text, name, fmt=fmt)
    assert [(e["file"], e["line"], e["field"]) for e in errors] == [
        (name, 2 if fmt == "csv" else 1, "prompt_template")
    ]
    assert "{who}" in errors[0]["message"]
    assert Task.select().count() == 0


def test_a_seed003_template_without_vars_is_saved_as_the_text_it_sends(app):
    from app.catalog import templating

    _import("task_id,prompt_template\nt,Write {{who}} literally\n", "runner.csv")
    task = _task("t")
    assert (task.question, task.vars) == ("Write {who} literally", None)
    assert templating.render_task(task) == (None, "Write {who} literally")


def test_seed003_input_text_is_not_a_template(app):
    _import("task_id,prompt_template,input_text\nt,Be brief,Explain {x} in f'{x}'\n", "r.csv")
    assert (_task("t").system_prompt, _task("t").question) == ("Be brief", "Explain {x} in f'{x}'")


@pytest.mark.parametrize(
    "text, name, line, field",
    [
        (
            "- task_id: t\n  category: c\n  difficulty: [1]\n  question: q\n"
            "  expected_answer: {most_expected: x}\n",
            "t.yml",
            3,
            "difficulty",
        ),
        (
            "- task_id: t\n  category: {a: 1}\n  question: q\n"
            "  expected_answer: {most_expected: x}\n",
            "t.yml",
            2,
            "category",
        ),
        (
            '{"id": "t", "category": "C", "difficulty": ["hard"], "scenario": [], "prompt": "Q", '
            '"rubric": ["x"], "auto_fail": []}\n',
            "bank.jsonl",
            1,
            "difficulty",
        ),
    ],
)
def test_a_list_or_mapping_in_a_text_field_is_an_error_not_a_default(app, text, name, line, field):
    errors = _errors(text, name)
    assert [(e["file"], e["line"], e["field"]) for e in errors] == [(name, line, field)]
    assert "must be text" in errors[0]["message"]
    assert Task.select().count() == 0


def test_nothing_is_saved_when_one_line_is_bad(app):
    good = '"prompt": "Q", "rubric": ["x"], ' + FULL
    lines = [f'{{"id": "g{n}", {good}}}' for n in range(5)]
    lines.append('{"id": "bad", "category": "C", "colour": 1}')
    _errors("\n".join(lines), "bank.jsonl", collection="never")
    assert Task.select().count() == 0
    assert Collection.select().count() == 0


def test_a_bad_line_after_saved_batches_rolls_back_every_task(app):
    # More good lines than one save batch: the stream saves them before it reads the bad one.
    good = '"prompt": "Q", "rubric": ["x"], ' + FULL
    lines = [f'{{"id": "g{n}", {good}}}' for n in range(450)]
    lines.append('{"id": "bad", "category": "C", "colour": 1}')
    errors = _errors("\n".join(lines), "bank.jsonl", collection="never")
    assert [e["line"] for e in errors] == [451] * len(errors)
    assert Task.select().count() == 0
    assert Collection.select().count() == 0


def test_a_task_id_given_twice_names_the_first_place(app):
    text = "task_id,prompt_template\na,q\nb,q\na,q2\n"
    errors = _errors(text, "x.csv")
    assert _where(errors) == [(4, "task_id")]
    assert "line 2" in errors[0]["message"]


def test_an_empty_file_is_an_error(app):
    assert _errors("", "empty.yml")[0]["message"] == "the file is empty"


def test_an_unknown_format_is_rejected(app):
    with pytest.raises(ValidationError) as info:
        _import("x", "a.txt", fmt="xml")
    assert info.value.errors[0]["field"] == "format"


# ---- duplicates --------------------------------------------------------------------------

V1 = "task_id,category,prompt_template\nt1,c,first\nt2,c,second\n"
V2 = "task_id,category,prompt_template\nt1,c,changed\nt3,c,third\n"


def test_duplicates_rejected_by_default_name_the_line(app):
    _import(V1, "v1.csv")
    errors = _errors(V2, "v2.csv")
    assert _where(errors) == [(2, "task_id")] and "already exists" in errors[0]["message"]
    assert Task.select().count() == 2


def test_duplicates_skipped_keep_the_stored_task(app):
    _import(V1, "v1.csv")
    result = _import(V2, "v2.csv", on_duplicate="skip")
    assert (result.created, result.updated, result.skipped) == (1, 0, 1)
    assert _task("t1").question == "first"


def test_duplicates_updated_take_the_files_values(app):
    _import(V1, "v1.csv")
    result = _import(V2, "v2.csv", on_duplicate="update")
    assert (result.created, result.updated, result.skipped) == (1, 1, 0)
    assert _task("t1").question == "changed"


def test_an_import_into_an_existing_collection_adds_its_tasks(app):
    _import(V1, "v1.csv", collection="bank")
    _import(V2, "v2.csv", collection="bank", on_duplicate="skip")
    group = Collection.get(Collection.name == "bank")
    assert sorted(m.task.task_id for m in group.memberships) == ["t1", "t2", "t3"]


def test_check_validates_without_saving(app):
    checked = importer.check(DATA / "seed001_tasks.yml")
    assert [t["task_id"] for t in checked.tasks] == ["java_hello_world", "french_greeting"]
    assert Task.select().count() == 0


def test_a_missing_system_prompt_variable_is_named_at_its_line(app):
    text = (
        "- task_id: t\n  category: c\n  question: q\n  system_prompt: 'In {lang}'\n  vars: {x: 1}\n"
    )
    errors = _errors(text, "t.yml")
    assert [(e["file"], e["line"], e["field"]) for e in errors] == [("t.yml", 4, "system_prompt")]
    assert errors[0]["message"].startswith("no value for {lang} in vars")
    assert Task.select().count() == 0


# ---- what a run config keeps of its dataset ----------------------------------------------


@pytest.mark.parametrize("name", ["seed004_bank.jsonl", "seed001_tasks.yml", "yaml_folder"])
def test_a_survey_keeps_each_tasks_id_and_category_in_file_order_and_saves_nothing(app, name):
    checked = importer.check(DATA / name, on_duplicate="update")
    surveyed = importer.survey(DATA / name, on_duplicate="update")
    assert surveyed.tasks == [(d["task_id"], d["category"]) for d in checked.tasks]
    assert surveyed.existing == {}
    assert Task.select().count() == 0


def test_a_survey_knows_which_tasks_are_stored_already(app):
    importer.import_tasks(DATA / "seed004_bank.jsonl")
    surveyed = importer.survey(DATA / "seed004_bank.jsonl", on_duplicate="skip")
    assert set(surveyed.existing) == {"water-001", "fire-002"}
    assert surveyed.existing["water-001"] == _task("water-001").id


def test_a_survey_of_a_line_file_names_a_task_id_given_twice_by_its_line(app):
    line = json.dumps(
        {
            "id": "q1",
            "category": "c",
            "difficulty": "Easy",
            "scenario": [],
            "prompt": "Why?",
            "rubric": [],
            "auto_fail": [],
        }
    )
    with pytest.raises(ValidationError) as info:
        importer.survey([("bank.jsonl", (line + "\n" + line + "\n").encode())])
    assert [(e["line"], e["message"]) for e in info.value.errors] == [
        (2, "task_id 'q1' is given twice (first at line 1)")
    ]

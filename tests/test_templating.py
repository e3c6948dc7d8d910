"""Prompt templates: {name} placeholders, {{ }} escapes, missing variables, preview."""

import pytest

from app.catalog import templating
from app.catalog.collections import add_tasks_to_collection
from app.catalog.collections import create_collection
from app.catalog.providers import create_provider
from app.catalog.tasks import create_task
from app.errors import ValidationError
from app.runs.lifecycle import create_run


def test_variables_lists_names_once_and_ignores_escaped_braces():
    assert templating.variables("Hi {name}, {{literal}} and {name} in {city}") == {"name", "city"}


def test_variables_ignores_code_braces_that_are_not_names():
    assert templating.variables("class A { void f() { x = 1; } } {0} { spaced }") == set()


def test_fill_replaces_known_names_and_unescapes_braces():
    assert templating.fill("{greet}, {{name}}!", {"greet": "Hello"}) == "Hello, {name}!"


def test_fill_leaves_unknown_names_visible():
    assert templating.fill("{a} and {b}", {"a": "1"}) == "1 and {b}"


def test_fill_renders_numbers_and_structures_as_text():
    assert templating.fill("{n} {items}", {"n": 3, "items": ["x", "y"]}) == '3 ["x", "y"]'


def test_missing_names_what_vars_do_not_define():
    assert templating.missing("{a} {b} {c}", {"b": "x"}) == ["a", "c"]


def test_task_without_vars_is_sent_verbatim():
    task = {
        "task_id": "t",
        "question": "Use {braces} and {{x}}",
        "system_prompt": None,
        "vars": None,
    }
    assert templating.render_task(task) == (None, "Use {braces} and {{x}}")


def test_a_template_with_empty_vars_needs_a_value_for_every_placeholder():
    task = {"task_id": "t", "question": "Hi {who}", "system_prompt": None, "vars": {}}
    with pytest.raises(ValidationError) as info:
        templating.render_task(task)
    assert "task t" in info.value.message and "{who}" in info.value.message


def test_run_start_refuses_a_template_task_with_a_missing_variable(app, fake):
    from app.db.models import Run
    from app.db.models import Task

    provider = create_provider({"name": "fake", "type": "OPENAI", "base_url": fake.url})
    task = create_task({"task_id": "t", "category": "c", "question": "Hi", "excellent": "x"})
    Task.update(question="Hi {who}", vars={}).where(Task.id == task.id).execute()
    collection = create_collection("c")
    add_tasks_to_collection(collection.id, [task.id])
    with pytest.raises(ValidationError) as info:
        create_run(
            {
                "judgeProviderId": provider.id,
                "judgeModel": "fake-model",
                "targets": [{"providerId": provider.id, "model": "fake-model"}],
                "collectionIds": [collection.id],
            }
        )
    assert "{who}" in info.value.message
    assert Run.select().count() == 0


def test_render_task_fills_question_and_system_prompt():
    task = {
        "task_id": "t",
        "question": "Translate {text}",
        "system_prompt": "You speak {lang}.",
        "vars": {"text": "hi", "lang": "French"},
    }
    assert templating.render_task(task) == ("You speak French.", "Translate hi")


def test_render_task_names_the_task_field_and_variable_when_one_is_missing():
    task = {
        "task_id": "t1",
        "question": "Translate {text} to {lang}",
        "system_prompt": None,
        "vars": {"text": "hi"},
    }
    with pytest.raises(ValidationError) as info:
        templating.render_task(task)
    assert info.value.errors[0]["field"] == "question"
    assert "{lang}" in info.value.message and "t1" in info.value.message


def test_problems_carry_file_line_and_source_field_name():
    task = {"question": "{x}", "vars": {}, "system_prompt": None}
    entries = templating.problems(
        task, line=7, file="a.csv", fields={"question": "prompt_template"}
    )
    assert entries == [
        {"field": "prompt_template", "line": 7, "file": "a.csv", "message": entries[0]["message"]}
    ]
    assert "{x}" in entries[0]["message"]


def test_preview_fills_from_json_text_and_never_raises():
    assert templating.preview({"question": "Hi {n}", "vars": '{"n": "Ada"}'}) == "Hi Ada"
    assert templating.preview({"question": "Hi {n}", "vars": "{not json"}) == "Hi {n}"
    assert templating.preview({"question": "Hi {n} {m}", "vars": {"n": "Ada"}}) == "Hi Ada {m}"

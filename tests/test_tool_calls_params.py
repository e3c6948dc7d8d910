"""A target's JSON mode (response_format) and tool choice are checked with the run spec: a
400 naming the field, or the value kept as given."""

import pytest
from bs4 import BeautifulSoup

from app.catalog.collections import add_tasks_to_collection
from app.catalog.collections import create_collection
from app.catalog.tasks import create_task
from app.db.models import RunTarget
from app.runs.spec import clean_params
from tests.engine_helpers import make_provider

PATH = ("targets", 0, "params")
SCHEMA_FORMAT = {"type": "json_schema", "json_schema": {"name": "a", "schema": {"type": "object"}}}
NAMED = {"type": "function", "function": {"name": "get_weather"}}


def clean(params):
    errors = []
    return clean_params(params, PATH, errors), errors


@pytest.mark.parametrize("value", [{"type": "json_object"}, SCHEMA_FORMAT])
def test_a_valid_response_format_is_kept_as_given(value):
    assert clean({"response_format": value}) == ({"response_format": value}, [])


@pytest.mark.parametrize("value", ["auto", "none", "required", NAMED])
def test_a_valid_tool_choice_is_kept_as_given(value):
    assert clean({"tool_choice": value}) == ({"tool_choice": value}, [])


def test_a_response_format_as_json_text_is_read_as_its_object():
    assert clean({"response_format": '{"type": "json_object"}'})[0] == {
        "response_format": {"type": "json_object"}
    }


@pytest.mark.parametrize(
    "value",
    ["json", {"type": "text"}, {"type": "json_schema"}, {"type": "json_schema", "json_schema": {}}],
)
def test_a_bad_response_format_names_the_field(value):
    params, errors = clean({"response_format": value})
    assert params == {}
    assert [e["field"] for e in errors] == ["targets[0].params.response_format"]


@pytest.mark.parametrize(
    "value", ["always", {"type": "function"}, {"type": "function", "function": {"name": ""}}, 3]
)
def test_a_bad_tool_choice_names_the_field(value):
    params, errors = clean({"tool_choice": value})
    assert params == {}
    assert [e["field"] for e in errors] == ["targets[0].params.tool_choice"]
    assert "auto, none, required" in errors[0]["message"]


def test_the_api_answers_400_naming_a_bad_tool_choice(app, client, fake):
    provider = make_provider(fake)
    task = {"taskId": "t1", "category": "c", "question": "Q?", "excellent": "A."}
    task = client.post("/api/tasks", json=task)
    assert task.status_code == 201, task.json
    run = {
        "runId": "bad-choice",
        "taskIds": [task.json["id"]],
        "targets": [{"providerId": provider.id, "model": "m1", "params": {"tool_choice": "x"}}],
    }
    response = client.post("/api/runs", json=run)
    assert response.status_code == 400
    assert "targets[0].params.tool_choice" in response.get_data(as_text=True)


def form_for(fake, **params):
    """The new-run form with one target (m1 on the fake server) and these params typed."""
    provider = make_provider(fake)
    task = create_task({"task_id": "t1", "category": "c", "question": "Q?", "excellent": "A"})
    collection = create_collection("quick")
    add_tasks_to_collection(collection.id, [task.id])
    key = f"{provider.id}:m1"
    form = {
        "judgeProviderId": provider.id,
        "judgeModel": "m1",
        "target": [key],
        "collectionIds": collection.id,
        "name": "web",
    }
    return key, {**form, **{f"{key}#{name}": value for name, value in params.items()}}


def test_the_new_run_form_takes_json_mode_and_tool_choice(client, fake):
    _, form = form_for(fake, response_format='{"type": "json_object"}', tool_choice="required")
    response = client.post("/runs", data=form)
    assert response.status_code == 302, response.get_data(as_text=True)[:2000]
    assert RunTarget.get().params == {
        "response_format": {"type": "json_object"},
        "tool_choice": "required",
    }


def test_the_new_run_form_shows_a_bad_tool_choice_at_its_input(client, fake):
    key, form = form_for(fake, tool_choice="always")
    response = client.post("/runs", data=form)
    assert response.status_code == 400
    page = BeautifulSoup(response.get_data(as_text=True), "html.parser")
    field = page.find("input", attrs={"name": f"{key}#tool_choice"})
    assert field["aria-invalid"] == "true" and field["value"] == "always"

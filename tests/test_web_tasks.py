"""Task pages: searchable paginated list (htmx fragment), add/edit with preview, delete."""

import json

import pytest
from bs4 import BeautifulSoup

from app.catalog.tasks import create_task
from app.db.models import Task

HX = {"HX-Request": "true"}


def soup(response):
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


def form_data(**overrides):
    data = {
        "taskId": "geo_001",
        "category": "Geography",
        "subcategory": "Capitals",
        "difficulty": "easy",
        "question": "What is the capital of {country}?",
        "systemPrompt": "",
        "excellent": "Paris.",
        "good": "Paris",
        "pass": "paris",
        "incorrectAnswerDirection": "another city",
        "rubric": "",
        "autoFail": "",
        "tags": "geo, europe",
        "vars": "country = France",
        "templateVersion": "",
    }
    data.update(overrides)
    return data


def make_tasks(n, category="Math"):
    for i in range(n):
        create_task(
            {
                "taskId": f"{category.lower()}_{i:03d}",
                "category": category,
                "question": f"Q{i}",
                "excellent": "a",
            }
        )


def test_list_page_has_search_category_filter_and_the_table(client):
    make_tasks(2)
    make_tasks(1, "Logic")
    page = soup(client.get("/settings/tasks/"))
    assert page.select_one("form[role=search] input[name=q]")
    assert [o["value"] for o in page.select("#task-category option")] == ["", "Logic", "Math"]
    assert len(page.select("#task-table tbody tr")) == 3


def test_search_and_category_work_without_js(client):
    make_tasks(3)
    make_tasks(2, "Logic")
    page = soup(client.get("/settings/tasks/?category=Logic"))
    assert [td.get_text(strip=True) for td in page.select("#task-table tbody td:first-child")] == [
        "logic_000",
        "logic_001",
    ]
    page = soup(client.get("/settings/tasks/?q=math_002"))
    assert len(page.select("#task-table tbody tr")) == 1


def test_table_fragment_is_the_swap_target_and_pushes_the_page_url(client):
    make_tasks(3)
    response = client.get("/settings/tasks/table?q=math_001", headers=HX)
    root = soup(response).find()
    assert root["id"] == "task-table" and root["hx-target"] == "this"
    assert len(root.select("tbody tr")) == 1
    assert response.headers["HX-Push-Url"] == "/settings/tasks/?q=math_001"


def test_the_list_is_paginated(client):
    make_tasks(55)
    page = soup(client.get("/settings/tasks/?page=2"))
    assert len(page.select("#task-table tbody tr")) == 5
    prev = page.select_one(".pagination a")
    assert "page=1" in prev["href"] and "/settings/tasks/table" in prev["hx-get"]


def test_empty_list_says_so(client):
    assert "No tasks yet" in soup(client.get("/settings/tasks/")).select_one(".empty").get_text()


def test_create_saves_every_field_and_redirects(client):
    response = client.post(
        "/settings/tasks/new",
        data=form_data(
            rubric='[{"id": "r1", "text": "names Paris", "weight": 2, "max_score": 10}]',
            autoFail="names Lyon\nrefuses",
        ),
    )
    assert response.status_code == 302
    task = Task.get(Task.task_id == "geo_001")
    assert task.tags == ["geo", "europe"] and task.vars == {"country": "France"}
    assert task.rubric[0]["weight"] == 2 and task.auto_fail == ["names Lyon", "refuses"]
    assert task.pass_answer == "paris" and task.incorrect_direction == "another city"


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"taskId": ""}, "taskId"),
        ({"taskId": "has space"}, "taskId"),
        ({"category": ""}, "category"),
        ({"question": ""}, "question"),
        ({"rubric": "[{not json"}, "rubric"),
        ({"vars": "city = Paris"}, "vars"),
        ({"difficulty": "x"}, "difficulty"),
    ],
)
def test_a_bad_field_rerenders_400_marked_with_values_kept(client, overrides, field):
    response = client.post("/settings/tasks/new", data=form_data(**overrides))
    assert response.status_code == 400
    page = soup(response)
    assert page.select_one(f"[name={field}]")["aria-invalid"] == "true"
    assert page.select_one("[name=excellent]").get_text() == "Paris."
    assert Task.select().count() == 0


def test_a_taken_task_id_rerenders_409(client):
    make_tasks(1)
    response = client.post("/settings/tasks/new", data=form_data(taskId="math_000"))
    assert response.status_code == 409
    assert soup(response).select_one("[name=taskId]")["aria-invalid"] == "true"


def test_edit_form_is_filled_in(client):
    client.post(
        "/settings/tasks/new",
        data=form_data(rubric='[{"id": "r1", "text": "t", "weight": 1, "max_score": 5}]'),
    )
    task = Task.get()
    page = soup(client.get(f"/settings/tasks/{task.id}/edit"))
    assert page.select_one("[name=taskId]")["value"] == "geo_001"
    assert json.loads(page.select_one("[name=rubric]").get_text())[0]["id"] == "r1"
    assert page.select_one("[name=vars]").get_text() == "country = France"
    assert "capital of France" in page.select_one("#task-preview").get_text()


def test_edit_saves_changes(client):
    make_tasks(1)
    task = Task.get()
    response = client.post(f"/settings/tasks/{task.id}/edit", data=form_data(taskId="math_000"))
    assert response.status_code == 302
    assert Task.get_by_id(task.id).category == "Geography"


def test_preview_fragment_fills_the_variables(client):
    response = client.post("/settings/tasks/preview", data=form_data(), headers=HX)
    root = soup(response).find()
    assert root["id"] == "task-preview"
    assert root.select_one("pre").get_text() == "What is the capital of France?"


def test_delete_with_htmx_and_without(client):
    make_tasks(2)
    first, second = Task.select().order_by(Task.id)
    assert client.post(f"/settings/tasks/{first.id}/delete", headers=HX).get_data() == b""
    assert client.post(f"/settings/tasks/{second.id}/delete").status_code == 302
    assert Task.select().count() == 0


def test_unknown_task_edit_is_404(client):
    assert client.get("/settings/tasks/999/edit").status_code == 404


def test_a_task_id_too_big_for_sqlite_is_404(client):
    assert client.get(f"/settings/tasks/{2**70}/edit").status_code == 404

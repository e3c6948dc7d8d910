"""Tasks' checks and tools on the task form: YAML or JSON in, errors at the box, shown in words."""

from bs4 import BeautifulSoup

from app.catalog.tasks import create_task
from app.db.models import Task


def soup(response):
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


def form_data(**overrides):
    data = {
        "taskId": "sum_001",
        "category": "Math",
        "difficulty": "easy",
        "question": "What is 40 + 2?",
        "excellent": "42",
        "checks": "",
        "tools": "",
    }
    data.update(overrides)
    return data


def test_the_form_saves_checks_written_as_yaml(client):
    checks = "- type: number\n  value: 42\n- {type: regex, value: '^\\d+$', gate: true}\n"
    response = client.post("/settings/tasks/new", data=form_data(checks=checks))
    assert response.status_code == 302
    assert Task.get(Task.task_id == "sum_001").checks == [
        {"type": "number", "value": 42},
        {"type": "regex", "value": "^\\d+$", "gate": True},
    ]


def test_the_form_saves_checks_written_as_json(client):
    response = client.post(
        "/settings/tasks/new", data=form_data(checks='[{"type": "contains", "value": "42"}]')
    )
    assert response.status_code == 302
    assert Task.get(Task.task_id == "sum_001").checks == [{"type": "contains", "value": "42"}]


def test_a_bad_check_is_shown_at_the_checks_box_naming_the_check_and_saves_nothing(client):
    response = client.post(
        "/settings/tasks/new", data=form_data(checks="- type: number\n  value: lots\n")
    )
    assert response.status_code == 400
    page = soup(response)
    message = page.select_one("#err-checks").get_text()
    assert "checks[0] (number).value" in message and "sum_001" in message
    assert page.select_one("#f-checks")["aria-invalid"] == "true"
    assert "value: lots" in page.select_one("#f-checks").get_text()  # what was typed stays
    assert not Task.select().exists()


def test_checks_that_are_not_yaml_are_named(client):
    response = client.post("/settings/tasks/new", data=form_data(checks="- type: [number\n"))
    assert response.status_code == 400
    assert "not valid YAML or JSON" in response.get_data(as_text=True)


def test_the_edit_page_shows_the_checks_in_words_and_as_yaml(client):
    task = create_task(
        {
            "taskId": "sum_001",
            "category": "Math",
            "question": "q",
            "excellent": "42",
            "checks": [
                {"type": "number", "value": 42, "tolerance": 0.5},
                {"type": "contains", "value": "forty", "gate": True, "threshold": 100},
            ],
            "tools": [{"type": "function", "function": {"name": "add"}}],
        }
    )
    page = soup(client.get(f"/settings/tasks/{task.id}/edit"))
    rows = [
        [td.get_text(" ", strip=True) for td in tr.select("td")]
        for tr in page.select("table.task-checks tbody tr")
    ]
    assert rows[0][:5] == ["number", "42", "100", "no", "1"]
    assert "tolerance: 0.5" in rows[0][5]
    assert rows[1][:4] == ["contains", "forty", "100", "gate"]
    assert "add" in page.select_one(".task-tools").get_text()
    assert "type: number" in page.select_one("#f-checks").get_text()


def test_editing_a_task_keeps_its_checks_when_the_form_is_saved_unchanged(client):
    task = create_task(
        {
            "taskId": "sum_001",
            "category": "Math",
            "question": "q",
            "excellent": "42",
            "checks": [{"type": "number", "value": 42}],
        }
    )
    page = soup(client.get(f"/settings/tasks/{task.id}/edit"))
    data = {
        field["name"]: field.get("value") or field.get_text()
        for field in page.select("form.task-form [name]")
        if field["name"] != "csrf_token"
    }
    data["difficulty"] = "medium"
    response = client.post(f"/settings/tasks/{task.id}/edit", data=data)
    assert response.status_code == 302
    assert Task.get_by_id(task.id).checks == [{"type": "number", "value": 42}]


def test_the_task_list_counts_each_tasks_checks(client):
    create_task(
        {
            "taskId": "sum_001",
            "category": "Math",
            "question": "q",
            "checks": [{"type": "number", "value": 42}, {"type": "contains", "value": "4"}],
        }
    )
    page = soup(client.get("/settings/tasks/"))
    assert page.select_one('#task-table td[data-label="Checks"]').get_text(strip=True) == "2"


def test_deeply_nested_checks_are_a_form_error_not_a_crash(client):
    for text in ("[" * 5000, "- " * 5000 + "x", '{"a":' * 3000):
        for field in ("checks", "tools"):
            response = client.post("/settings/tasks/new", data=form_data(**{field: text}))
            assert response.status_code == 400
            assert "nests deeper" in soup(response).select_one(f"#err-{field}").get_text()


def test_yaml_aliases_in_checks_are_refused(client):
    text = "- &c {type: contains, value: x}\n- *c\n"
    response = client.post("/settings/tasks/new", data=form_data(checks=text))
    assert response.status_code == 400
    assert "aliases" in soup(response).select_one("#err-checks").get_text()

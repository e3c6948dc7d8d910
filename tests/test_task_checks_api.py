"""Tasks' checks and tools through the JSON API: stored as given, validated, shown."""

from app.db.models import Task

TASK = {
    "taskId": "math_x",
    "category": "Math",
    "question": "What is 6 × 7?",
    "excellent": "42",
}
CHECKS = [{"type": "number", "value": 42}, {"type": "regex", "value": "^\\d+$", "gate": True}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather for a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


def test_a_task_created_with_checks_and_tools_keeps_them_as_given(client):
    response = client.post("/api/tasks", json={**TASK, "checks": CHECKS, "tools": TOOLS})
    assert response.status_code == 201, response.json
    assert response.json["checks"] == CHECKS and response.json["tools"] == TOOLS
    task = Task.get(Task.task_id == "math_x")
    assert task.checks == CHECKS and task.tools == TOOLS


def test_task_json_says_null_when_a_task_has_no_checks(client):
    body = client.post("/api/tasks", json=TASK).json
    assert body["checks"] is None and body["tools"] is None
    assert client.get(f"/api/tasks/{body['id']}").json["checks"] is None


def test_a_bad_check_answers_400_naming_the_check_field_and_task_and_stores_nothing(client):
    bad = [{"type": "number", "value": 42}, {"type": "number", "value": "forty-two"}]
    response = client.post("/api/tasks", json={**TASK, "checks": bad})
    assert response.status_code == 400
    (entry,) = response.json["errors"]
    assert entry["field"] == "checks[1] (number).value"
    assert "math_x" in entry["message"]
    assert not Task.select().where(Task.task_id == "math_x").exists()


def test_an_unknown_check_type_answers_400(client):
    response = client.post("/api/tasks", json={**TASK, "checks": [{"type": "magic"}]})
    assert response.status_code == 400
    assert response.json["errors"][0]["field"] == "checks[0].type"


def test_updating_checks_replaces_them_and_other_fields_keep_their_values(client):
    pk = client.post("/api/tasks", json={**TASK, "checks": CHECKS}).json["id"]
    changed = [{"type": "contains", "value": "42"}]
    response = client.put(f"/api/tasks/{pk}", json={"checks": changed})
    assert response.status_code == 200 and response.json["checks"] == changed
    assert response.json["question"] == TASK["question"]


def test_a_bad_check_on_update_changes_nothing(client):
    pk = client.post("/api/tasks", json={**TASK, "checks": CHECKS}).json["id"]
    response = client.put(f"/api/tasks/{pk}", json={"checks": [{"type": "json", "value": 1}]})
    assert response.status_code == 400
    assert response.json["errors"][0]["field"] == "checks[0] (json).value"
    assert Task.get_by_id(pk).checks == CHECKS


def test_an_empty_checks_list_is_stored_as_none(client):
    body = client.post("/api/tasks", json={**TASK, "checks": []}).json
    assert body["checks"] is None


def test_a_reference_metric_without_a_value_needs_an_excellent_answer(client):
    check = [{"type": "rouge-l"}]
    ok = client.post("/api/tasks", json={**TASK, "checks": check})
    assert ok.status_code == 201
    bare = {**TASK, "taskId": "bare", "excellent": "", "good": "x"}
    response = client.post("/api/tasks", json={**bare, "checks": check})
    assert response.status_code == 400
    assert response.json["errors"][0]["field"] == "checks[0] (rouge-l).value"


def test_a_task_with_checks_needs_no_reference_answer(client):
    body = {**TASK, "excellent": "", "checks": [{"type": "number", "value": 42}]}
    assert client.post("/api/tasks", json=body).status_code == 201


def test_a_tool_without_a_name_answers_400_naming_it(client):
    tools = [{"type": "function", "function": {"parameters": {"type": "object"}}}]
    response = client.post("/api/tasks", json={**TASK, "tools": tools})
    assert response.status_code == 400
    assert response.json["errors"][0]["field"] == "tools[0].function.name"


def test_tool_parameters_must_be_an_object(client):
    tools = [{"type": "function", "function": {"name": "f", "parameters": ["city"]}}]
    response = client.post("/api/tasks", json={**TASK, "tools": tools})
    assert response.status_code == 400
    assert response.json["errors"][0]["field"] == "tools[0].function.parameters"


def test_a_tool_must_be_of_type_function(client):
    response = client.post(
        "/api/tasks", json={**TASK, "tools": [{"type": "code", "function": {"name": "f"}}]}
    )
    assert response.status_code == 400
    assert response.json["errors"][0]["field"] == "tools[0].type"


def test_a_tool_call_check_must_name_one_of_the_tasks_tools(client):
    check = [{"type": "tool-call", "value": {"name": "get_time"}}]
    response = client.post("/api/tasks", json={**TASK, "tools": TOOLS, "checks": check})
    assert response.status_code == 400
    (entry,) = response.json["errors"]
    assert entry["field"] == "checks[0] (tool-call).value"
    assert "get_weather" in entry["message"]


def test_a_tool_call_check_naming_an_offered_tool_is_kept(client):
    check = [{"type": "tool-call", "value": {"name": "get_weather", "arguments": {"city": "Oslo"}}}]
    response = client.post("/api/tasks", json={**TASK, "tools": TOOLS, "checks": check})
    assert response.status_code == 201 and response.json["checks"] == check

"""JSON API: tasks and collections (seed 000 §3.2, §7.2, §7.3) with 400/404/409."""

import pytest

from app.db.models import Task

TASK = {
    "taskId": "proof_001",
    "category": "Proofreading",
    "subcategory": "Grammar",
    "question": "Fix grammar in: 'This are wrong.'",
    "excellent": "This is wrong.",
    "good": "This is wrong.",
    "pass": "This is wrong.",
    "incorrectAnswerDirection": "missing_subject",
}


def create_task(client, **overrides):
    response = client.post("/api/tasks", json={**TASK, **overrides})
    assert response.status_code == 201, response.json
    return response.json


def test_create_task_answers_201_with_location_and_the_dto(client):
    response = client.post(
        "/api/tasks",
        json={
            **TASK,
            "difficulty": "hard",
            "tags": ["g"],
            "rubric": [{"id": "r1", "text": "fixes verb", "weight": 2, "max_score": 5}],
        },
    )
    assert response.status_code == 201
    body = response.json
    assert response.headers["Location"] == f"/api/tasks/{body['id']}"
    assert {k: body[k] for k in TASK} == TASK
    assert body["difficulty"] == "hard" and body["rubric"][0]["weight"] == 2
    assert body["createdAt"].endswith("Z")


def test_a_duplicate_task_id_answers_409(client):
    create_task(client)
    response = client.post("/api/tasks", json=TASK)
    assert response.status_code == 409 and "proof_001" in response.json["error"]


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"taskId": ""}, "taskId"),
        ({"taskId": "a/b"}, "taskId"),
        ({"category": ""}, "category"),
        ({"question": ""}, "question"),
        ({"difficulty": "extreme"}, "difficulty"),
        ({"rubric": [{"id": "r", "text": "t", "weight": 0}]}, "rubric[0].weight"),
        ({"autoFail": "not a list"}, None),
        ({"vars": {"x": "1"}, "question": "{y}?"}, "vars"),
        ({"systemPrompt": ["x"]}, "systemPrompt"),
    ],
)
def test_a_bad_field_answers_400_naming_it(client, overrides, field):
    response = client.post("/api/tasks", json={**TASK, **overrides})
    if field is None:  # a plain string is one rule: accepted
        assert response.status_code == 201
        return
    assert response.status_code == 400
    assert [e["field"] for e in response.json["errors"]] == [field]
    assert Task.select().count() == 0


def test_a_non_json_body_answers_400(client):
    response = client.post("/api/tasks", data="taskId=x")
    assert response.status_code == 400


def test_list_search_category_and_pagination(client):
    for i in range(5):
        create_task(client, taskId=f"p_{i}")
    create_task(client, taskId="m_1", category="Math", question="2+2?")
    assert len(client.get("/api/tasks").json) == 6
    assert [t["taskId"] for t in client.get("/api/tasks?category=Math").json] == ["m_1"]
    assert [t["taskId"] for t in client.get("/api/tasks?q=2%2B2").json] == ["m_1"]
    page = client.get("/api/tasks?page=2&perPage=4")
    assert len(page.json) == 2 and page.headers["X-Total-Count"] == "6"


def test_get_put_delete_a_task(client):
    created = create_task(client)
    url = f"/api/tasks/{created['id']}"
    assert client.get(url).json == created
    updated = client.put(url, json={"good": "This is wrong!"}).json
    assert updated["good"] == "This is wrong!" and updated["question"] == TASK["question"]
    assert client.delete(url).status_code == 204
    assert client.get(url).status_code == 404


def test_put_to_a_taken_task_id_answers_409(client):
    create_task(client)
    other = create_task(client, taskId="proof_002")
    assert client.put(f"/api/tasks/{other['id']}", json={"taskId": "proof_001"}).status_code == 409


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/api/tasks/999"),
        ("put", "/api/tasks/999"),
        ("delete", "/api/tasks/999"),
        ("put", "/api/collections/999"),
        ("delete", "/api/collections/999"),
        ("post", "/api/collections/999/tasks"),
        ("delete", "/api/collections/999/tasks/1"),
    ],
)
def test_unknown_ids_answer_404(client, method, path):
    response = getattr(client, method)(path, json={"name": "x", "taskIds": [1]})
    assert response.status_code == 404


# -- collections --------------------------------------------------------------------------


def test_create_collection_answers_201_with_task_ids(client):
    t = create_task(client)
    response = client.post(
        "/api/collections", json={"name": "Proofreading Suite", "taskIds": [t["id"]]}
    )
    assert response.status_code == 201
    assert response.headers["Location"] == f"/api/collections/{response.json['id']}"
    assert response.json["taskIds"] == [t["id"]] and response.json["name"] == "Proofreading Suite"
    assert client.get("/api/collections").json == [response.json]


def test_a_duplicate_collection_name_answers_409(client):
    client.post("/api/collections", json={"name": "quick"})
    assert client.post("/api/collections", json={"name": "quick"}).status_code == 409


def test_a_collection_without_a_name_answers_400(client):
    response = client.post("/api/collections", json={"name": ""})
    assert response.status_code == 400 and response.json["errors"][0]["field"] == "name"


def test_rename_a_collection_and_409_on_a_taken_name(client):
    c = client.post("/api/collections", json={"name": "a"}).json
    client.post("/api/collections", json={"name": "b"})
    assert client.put(f"/api/collections/{c['id']}", json={"name": "c"}).json["name"] == "c"
    assert client.put(f"/api/collections/{c['id']}", json={"name": "b"}).status_code == 409


def test_add_tasks_then_duplicates_answer_409_naming_them(client):
    t1, t2 = create_task(client), create_task(client, taskId="proof_002")
    c = client.post("/api/collections", json={"name": "c"}).json
    url = f"/api/collections/{c['id']}/tasks"
    assert client.post(url, json=[t1["id"]]).json["taskIds"] == [t1["id"]]
    response = client.post(url, json={"taskIds": [t2["id"], t1["id"]]})
    assert response.status_code == 409 and "proof_001" in response.json["error"]
    assert client.get("/api/collections").json[0]["taskIds"] == [t1["id"]]


def test_add_unknown_tasks_answers_400(client):
    c = client.post("/api/collections", json={"name": "c"}).json
    response = client.post(f"/api/collections/{c['id']}/tasks", json=[12345])
    assert response.status_code == 400 and "12345" in response.json["error"]


def test_remove_a_task_from_a_collection(client):
    t = create_task(client)
    c = client.post("/api/collections", json={"name": "c", "taskIds": [t["id"]]}).json
    url = f"/api/collections/{c['id']}/tasks/{t['id']}"
    assert client.delete(url).status_code == 204
    assert client.delete(url).status_code == 404


def test_delete_a_collection_keeps_its_tasks(client):
    t = create_task(client)
    c = client.post("/api/collections", json={"name": "c", "taskIds": [t["id"]]}).json
    assert client.delete(f"/api/collections/{c['id']}").status_code == 204
    assert client.get("/api/collections").json == []
    assert client.get(f"/api/tasks/{t['id']}").status_code == 200


BIG = 2**70  # past SQLite's integers: no such row, never a 500


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", f"/api/tasks/{BIG}"),
        ("put", f"/api/tasks/{BIG}"),
        ("get", f"/api/collections/{BIG}"),
        ("delete", f"/api/collections/{BIG}/tasks/{BIG}"),
        ("get", f"/api/providers/{BIG}"),
        ("delete", f"/api/prices/{BIG}"),
    ],
)
def test_ids_too_big_for_sqlite_answer_404(client, method, path):
    response = getattr(client, method)(path, json={"name": "x", "taskIds": [1]})
    assert response.status_code == 404


def test_adding_a_task_id_too_big_for_sqlite_answers_400(client):
    c = client.post("/api/collections", json={"name": "c"}).json
    response = client.post(f"/api/collections/{c['id']}/tasks", json=[BIG, str(BIG)])
    assert response.status_code == 400 and str(BIG) in response.json["error"]


def test_a_system_prompt_variable_missing_from_vars_answers_400(client):
    response = client.post(
        "/api/tasks", json={**TASK, "systemPrompt": "Reply in {language}", "vars": {"x": "1"}}
    )
    assert response.status_code == 400
    assert [e["field"] for e in response.json["errors"]] == ["systemPrompt"]
    assert "{language}" in response.json["errors"][0]["message"]
    assert Task.select().count() == 0


@pytest.mark.parametrize("difficulty", [["hard"], {"level": "hard"}])
def test_a_difficulty_that_is_not_text_answers_400(client, difficulty):
    response = client.post("/api/tasks", json={**TASK, "difficulty": difficulty})
    assert response.status_code == 400
    errors = response.json["errors"]
    assert [e["field"] for e in errors] == ["difficulty"]
    assert errors[0]["message"] == "must be text (easy, medium or hard)"


def test_collection_list_gives_each_collection_its_own_task_ids(client):
    t1, t2 = create_task(client), create_task(client, taskId="proof_002")
    client.post("/api/collections", json={"name": "a", "taskIds": [t2["id"], t1["id"]]})
    client.post("/api/collections", json={"name": "b", "taskIds": [t2["id"]]})
    client.post("/api/collections", json={"name": "c"})
    listed = {
        c["name"]: (c["taskIds"], c["taskCount"]) for c in client.get("/api/collections").json
    }
    assert listed == {"a": ([t1["id"], t2["id"]], 2), "b": ([t2["id"]], 1), "c": ([], 0)}

"""JSON API: providers (seed 000 §3.1, §3.5), prices and status, with §3 status codes."""

import datetime as dt

import pytest

from app.db.models import Lease
from app.db.models import Provider
from app.db.models import Run
from tests.test_provider_store import SECRET
from tests.test_provider_store import closed_port_url
from tests.test_provider_store import provider_data


def create(client, **overrides):
    response = client.post("/api/providers", json=provider_data(**overrides))
    assert response.status_code == 201, response.json
    return response.json


def test_create_answers_201_with_location_and_the_dto(client):
    response = client.post("/api/providers", json=provider_data())
    assert response.status_code == 201
    body = response.json
    assert response.headers["Location"] == f"/api/providers/{body['id']}"
    assert body["name"] == "p1" and body["type"] == "OPENAI"
    assert body["modelsEndpoint"] == "/v1/models"
    assert body["headers"][0]["valueMasked"] == "****5b4a"
    assert "value" not in body["headers"][0]


def test_list_and_get_mask_secrets(client):
    created = create(client)
    listed = client.get("/api/providers").json
    assert [p["id"] for p in listed] == [created["id"]]
    one = client.get(f"/api/providers/{created['id']}")
    assert one.status_code == 200 and one.json == created
    assert SECRET not in one.get_data(as_text=True)


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"name": ""}, "name"),
        ({"type": "X"}, "type"),
        ({"baseUrl": "ftp://h"}, "baseUrl"),
        ({"modelsEndpoint": "models"}, "modelsEndpoint"),
        ({"inferenceEndpoint": "x y"}, "inferenceEndpoint"),
        ({"timeoutSeconds": 0}, "timeoutSeconds"),
        ({"maxConcurrency": 100}, "maxConcurrency"),
        ({"headers": [{"key": "a b", "value": "1"}]}, "headers[0].key"),
        ({"headers": [{"key": "A", "value": "1\n2"}]}, "headers[0].value"),
        ({"baseUrl": "http://[::1"}, "baseUrl"),
        # JSON says what type a value is: nothing is quietly converted.
        ({"name": 5}, "name"),
        ({"type": ["OPENAI"]}, "type"),
        ({"timeoutSeconds": "30"}, "timeoutSeconds"),
        ({"maxConcurrency": "2"}, "maxConcurrency"),
        ({"maxConcurrency": 2.0}, "maxConcurrency"),
        ({"headers": [{"key": "A", "value": "1", "isSecret": "yes"}]}, "headers[0].isSecret"),
        ({"headers": [{"key": "A", "value": 5}]}, "headers[0].value"),
    ],
)
def test_a_bad_field_answers_400_naming_it_and_saves_nothing(client, overrides, field):
    response = client.post("/api/providers", json=provider_data(**overrides))
    assert response.status_code == 400
    assert [e["field"] for e in response.json["errors"]] == [field]
    assert response.json["error"]
    assert Provider.select().count() == 0


def test_a_header_value_http_cannot_carry_answers_400_naming_the_header(client):
    response = client.post(
        "/api/providers",
        json=provider_data(
            headers=[{"key": "X-Weather", "value": "snow \u2603", "isSecret": True}]
        ),
    )
    assert response.status_code == 400
    error = response.json["errors"][0]
    assert error["field"] == "headers[0].value" and "X-Weather" in error["message"]
    assert Provider.select().count() == 0


def test_a_put_with_a_wrong_type_answers_400_and_changes_nothing(client):
    provider_id = create(client)["id"]
    response = client.put(f"/api/providers/{provider_id}", json={"name": 7})
    assert response.status_code == 400 and response.json["errors"][0]["field"] == "name"
    assert client.get(f"/api/providers/{provider_id}").json["name"] == provider_data()["name"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"data": "name=x", "content_type": "application/x-www-form-urlencoded"}, "Content-Type"),
        ({"data": "{not json", "content_type": "application/json"}, "not valid JSON"),
        ({"json": ["a list"]}, "object"),
    ],
)
def test_a_body_that_is_not_a_json_object_answers_400(client, kwargs, message):
    response = client.post("/api/providers", **kwargs)
    assert response.status_code == 400 and message in response.json["error"]


def test_a_duplicate_name_answers_409(client):
    create(client)
    response = client.post("/api/providers", json=provider_data())
    assert response.status_code == 409 and "p1" in response.json["error"]


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/api/providers/999"),
        ("put", "/api/providers/999"),
        ("delete", "/api/providers/999"),
        ("post", "/api/providers/999/test-models"),
        ("get", "/api/providers/999/models"),
        ("post", "/api/providers/999/test-inference"),
    ],
)
def test_an_unknown_provider_answers_404(client, method, path):
    response = getattr(client, method)(path, json={"model": "m", "prompt": "p"})
    assert response.status_code == 404 and "999" in response.json["error"]


def test_put_edits_and_keeps_a_secret_sent_empty(client, fake):
    created = create(client, baseUrl=fake.url)
    response = client.put(
        f"/api/providers/{created['id']}",
        json={
            "name": "renamed",
            "headers": [{"key": "Authorization", "value": "", "isSecret": True}],
        },
    )
    assert response.status_code == 200 and response.json["name"] == "renamed"
    assert response.json["headers"][0]["valueMasked"] == "****5b4a"
    client.post(f"/api/providers/{created['id']}/test-models")
    assert fake.calls[-1]["headers"]["Authorization"] == SECRET


def test_put_with_a_bad_field_answers_400_and_changes_nothing(client):
    created = create(client)
    response = client.put(f"/api/providers/{created['id']}", json={"name": "n", "baseUrl": "x"})
    assert response.status_code == 400
    assert client.get(f"/api/providers/{created['id']}").json["name"] == "p1"


def test_delete_answers_204_then_404(client):
    created = create(client)
    assert client.delete(f"/api/providers/{created['id']}").status_code == 204
    assert client.get(f"/api/providers/{created['id']}").status_code == 404


def test_test_models_lists_the_servers_models(client, fake):
    fake.models = ["m2", "m1"]
    created = create(client, baseUrl=fake.url)
    body = client.post(f"/api/providers/{created['id']}/test-models").json
    assert body["success"] is True and [m["id"] for m in body["models"]] == ["m1", "m2"]


def test_test_models_on_a_closed_port_is_a_200_with_the_error(client):
    created = create(client, baseUrl=closed_port_url())
    response = client.post(f"/api/providers/{created['id']}/test-models")
    assert response.status_code == 200
    assert response.json["success"] is False and "connect" in response.json["error"].lower()


def test_models_endpoint_lists_models(client, fake):
    created = create(client, baseUrl=fake.url, type="OLLAMA")
    assert [m["id"] for m in client.get(f"/api/providers/{created['id']}/models").json] == [
        "fake-model"
    ]


def test_models_endpoint_on_a_broken_server_answers_502_with_a_message(client, fake):
    fake.enqueue(path="/v1/models", malformed=True)
    created = create(client, baseUrl=fake.url)
    response = client.get(f"/api/providers/{created['id']}/models")
    assert response.status_code == 502 and response.json["error"]


def test_test_inference_returns_the_answer_and_metrics(client, fake):
    text = "Hi there, how are you today? Fine, thanks for asking."
    fake.enqueue(text, chunk_delay=0.05)  # ~400 ms: a rate even for a starved reader
    created = create(client, baseUrl=fake.url)
    body = client.post(
        f"/api/providers/{created['id']}/test-inference",
        json={"model": "fake-model", "prompt": "Hello"},
    ).json
    assert body["success"] is True and body["answer"] == text
    assert body["wallMs"] > 0 and body["tokens"] and body["tokensPerSecond"] and body["raw"]


def test_test_inference_on_a_closed_port_is_a_200_with_the_error(client):
    created = create(client, baseUrl=closed_port_url())
    response = client.post(
        f"/api/providers/{created['id']}/test-inference", json={"model": "m", "prompt": "Hello"}
    )
    assert response.status_code == 200 and response.json["success"] is False
    assert response.json["error"]


def test_test_inference_without_a_model_answers_400(client):
    created = create(client)
    response = client.post(f"/api/providers/{created['id']}/test-inference", json={"prompt": "x"})
    assert response.status_code == 400 and response.json["errors"][0]["field"] == "model"


# -- prices -------------------------------------------------------------------------------


def test_prices_put_one_then_list(client):
    response = client.put(
        "/api/prices", json={"providerName": "or", "model": "m", "inputPer1m": 1, "outputPer1m": 2}
    )
    assert response.status_code == 200
    assert response.json == client.get("/api/prices").json
    assert response.json[0]["inputPer1m"] == 1.0


def test_prices_put_a_list_is_all_or_nothing(client):
    response = client.put(
        "/api/prices",
        json=[
            {"providerName": "or", "model": "a", "inputPer1m": 1, "outputPer1m": 2},
            {"providerName": "or", "model": "", "inputPer1m": 1, "outputPer1m": 2},
        ],
    )
    assert response.status_code == 400 and response.json["errors"][0]["field"] == "[1].model"
    assert client.get("/api/prices").json == []


def test_prices_delete(client):
    [price] = client.put("/api/prices", json={"providerName": "or", "model": "m"}).json
    assert client.delete(f"/api/prices/{price['id']}").status_code == 204
    assert client.delete(f"/api/prices/{price['id']}").status_code == 404


# -- status -------------------------------------------------------------------------------


def test_status_when_idle(client):
    body = client.get("/api/status").json
    assert body["status"] == "ok" and body["activeRun"] is None and body["orchestrator"] is None
    assert body["schemaVersion"] >= 1 and body["version"]


def test_status_names_the_active_run_and_the_lease_holder(client):
    from app.clock import utcnow

    Run.create(run_id="demo-20250101-000000", judge_provider_name="p", judge_model="j")
    Lease.create(
        name="orchestrator", holder="host:123", expires_at=utcnow() + dt.timedelta(seconds=15)
    )
    body = client.get("/api/status").json
    assert body["activeRun"] == "demo-20250101-000000" and body["state"] == "running"
    assert body["orchestrator"]["holder"] == "host:123" and body["orchestrator"]["heartbeatAt"]


def test_a_cross_site_browser_post_to_the_api_is_refused(client):
    headers = {"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}
    response = client.post("/api/providers", json=provider_data(), headers=headers)
    assert response.status_code == 403
    assert client.get("/api/providers").json == []


def test_a_same_origin_browser_post_to_the_api_is_accepted(client):
    response = client.post(
        "/api/providers",
        json=provider_data(),
        headers={"Origin": "http://localhost", "Sec-Fetch-Site": "same-origin"},
    )
    assert response.status_code == 201

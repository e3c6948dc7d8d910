"""JSON API for runs: start, list, show, control, items, logs, re-judge, delete (seed 000 §3.3)."""

import pytest

from app.db.models import COMPLETED
from app.db.models import FAILED
from app.db.models import Item
from app.engine import lease
from app.runs.queries import get_run
from app.runs.state import run_state
from tests.engine_helpers import FakeClock
from tests.engine_helpers import drive
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks


@pytest.fixture
def body(app, fake):
    lease.acquire("test-holder", 15.0)  # as a running server's orchestrator would hold it
    p = make_provider(fake)
    coll = make_tasks(3)
    return {
        "judgeProviderId": p.id,
        "judgeModel": "judge",
        "collectionIds": [coll.id],
        "targets": [{"providerId": p.id, "model": "m1", "params": {"temperature": 0}}],
    }


def start(client, body, **extra):
    response = client.post("/api/runs", json={**body, **extra})
    assert response.status_code == 201, response.json
    return response.json


def test_post_creates_and_starts_a_run(client, body):
    response = client.post("/api/runs", json={**body, "runId": "api-1"})
    assert response.status_code == 201
    assert response.headers["Location"].endswith("/api/runs/api-1")
    data = response.json
    assert data["runId"] == "api-1" and data["state"] == "running"
    assert data["phase"] == "BENCHMARKING" and data["totalItems"] == 3
    assert data["counts"]["NEW"] == 3 and data["targets"][0]["params"] == {"temperature": 0}


def test_post_invalid_is_400_with_every_field(client, body):
    response = client.post("/api/runs", json={"targets": [], "judgeProviderId": 1})
    assert response.status_code == 400
    # The judge is optional only as a whole (checks may score every task): half a judge is not.
    assert {"judgeModel", "targets", "collectionIds"} <= {
        e["field"] for e in response.json["errors"]
    }


def test_post_without_json_is_400(client):
    response = client.post("/api/runs", data="x", content_type="text/plain")
    assert response.status_code == 400


def test_second_start_is_409_naming_the_active_run(client, body):
    first = start(client, body)
    response = client.post("/api/runs", json=body)
    assert response.status_code == 409 and first["runId"] in response.json["error"]


def test_list_filters_by_status_and_state(client, body):
    first = start(client, body, runId="one")
    client.post(f"/api/runs/{first['runId']}/stop")
    start(client, body, runId="two")
    assert [r["runId"] for r in client.get("/api/runs").json] == ["two", "one"]
    assert [r["runId"] for r in client.get("/api/runs?state=stopped").json] == ["one"]
    assert [r["runId"] for r in client.get("/api/runs?status=PENDING").json] == ["two", "one"]
    assert client.get("/api/runs?status=FINISHED").json == []
    assert client.get("/api/runs?state=bogus").status_code == 400


def test_get_unknown_run_is_404(client):
    assert client.get("/api/runs/nope").status_code == 404
    assert client.post("/api/runs/nope/pause").status_code == 404


def test_pause_resume_stop(client, body):
    run_id = start(client, body)["runId"]
    assert client.post(f"/api/runs/{run_id}/resume").status_code == 400  # not paused
    paused = client.post(f"/api/runs/{run_id}/pause")
    assert paused.status_code == 200 and paused.json["state"] == "paused"
    assert client.post(f"/api/runs/{run_id}/pause").status_code == 400
    assert client.post(f"/api/runs/{run_id}/resume").json["state"] == "running"
    stopped = client.post(f"/api/runs/{run_id}/stop")
    assert stopped.json["state"] == "stopped" and stopped.json["controlReason"]
    resumed = client.post(f"/api/runs/{run_id}/resume", json={"maxBudgetUsd": 2})
    assert resumed.json["settings"]["maxBudgetUsd"] == 2.0


def test_items_are_filtered_and_paginated(client, body):
    run_id = start(client, body)["runId"]
    first = Item.select().order_by(Item.id).first()
    Item.update(status=FAILED).where(Item.id == first.id).execute()
    page = client.get(f"/api/runs/{run_id}/items?perPage=2&page=2").json
    assert page["total"] == 3 and page["pages"] == 2 and len(page["items"]) == 1
    failed = client.get(f"/api/runs/{run_id}/items?status=FAILED").json
    assert [i["id"] for i in failed["items"]] == [first.id]
    assert client.get(f"/api/runs/{run_id}/items?model=other").json["total"] == 0
    assert client.get(f"/api/runs/{run_id}/items?status=DONE").status_code == 400
    assert client.get(f"/api/runs/{run_id}/items?page=x").status_code == 400


def test_items_continue_after_an_item(client, body):
    run_id = start(client, body)["runId"]
    first = client.get(f"/api/runs/{run_id}/items?perPage=2").json
    assert first["nextAfter"] == first["items"][-1]["id"]
    rest = client.get(f"/api/runs/{run_id}/items?perPage=2&after={first['nextAfter']}").json
    assert [i["id"] for i in first["items"] + rest["items"]] == [
        i.id for i in Item.select().order_by(Item.id)
    ]
    assert rest["nextAfter"] is None and rest["total"] == 3
    assert client.get(f"/api/runs/{run_id}/items?after=x").status_code == 400


def test_logs_since_and_limit(client, body):
    run_id = start(client, body)["runId"]
    client.post(f"/api/runs/{run_id}/pause")
    client.post(f"/api/runs/{run_id}/resume")
    logs = client.get(f"/api/runs/{run_id}/logs").json
    assert [e["event"] for e in logs["logs"]] == ["run_started", "paused", "resumed"]
    since = client.get(f"/api/runs/{run_id}/logs?since={logs['logs'][0]['id']}&limit=1").json
    assert [e["event"] for e in since["logs"]] == ["paused"]
    assert since["lastId"] == logs["logs"][1]["id"]


def test_delete_is_409_while_active_then_204(client, body):
    run_id = start(client, body)["runId"]
    assert client.delete(f"/api/runs/{run_id}").status_code == 409
    client.post(f"/api/runs/{run_id}/stop")
    assert client.delete(f"/api/runs/{run_id}").status_code == 204
    assert client.get(f"/api/runs/{run_id}").status_code == 404


def test_retry_judge_and_retry_failed(client, body, app):
    run_id = start(client, body)["runId"]
    drive(dict(app.config), FakeClock())
    items = list(Item.select().order_by(Item.id))
    Item.update(status=FAILED, error_stage="judge").where(Item.id == items[1].id).execute()
    # A completed item is judged again only on purpose (rejudge), never by retry-judge.
    assert client.post(f"/api/runs/{run_id}/items/{items[0].id}/retry-judge").status_code == 409
    one = client.post(f"/api/runs/{run_id}/items/{items[0].id}/rejudge")
    assert one.status_code == 200 and one.json["status"] == "WAITING_FOR_JUDGE"
    assert client.get(f"/api/runs/{run_id}").json["state"] == "running"
    failed = client.post(f"/api/runs/{run_id}/retry-failed")
    assert failed.json["queued"] == 1
    drive(dict(app.config), FakeClock())
    assert Item.select().where(Item.status == COMPLETED).count() == 3
    assert run_state(get_run(run_id)) == "finished"
    assert client.post(f"/api/runs/{run_id}/items/999/retry-judge").status_code == 404

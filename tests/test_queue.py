"""The queue: runs waiting for the engine (state `queued`), started oldest first, cancellable."""

import pytest

from app.db.models import Run
from app.engine import lease
from app.engine.orchestrator import tick
from app.runs.live import continuable_runs
from app.runs.queries import get_run
from app.runs.state import run_state
from tests.engine_helpers import FakeClock
from tests.engine_helpers import drive
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks

HOLDER = "test-holder"


@pytest.fixture
def body(app, fake):
    lease.acquire(HOLDER, 15.0)
    provider = make_provider(fake)
    collection = make_tasks(2)
    return {
        "judgeProviderId": provider.id,
        "judgeModel": "judge",
        "collectionIds": [collection.id],
        "targets": [{"providerId": provider.id, "model": "m1"}],
    }


def start(client, body, **extra):
    return client.post("/api/runs", json={**body, **extra})


def test_a_second_run_without_queue_is_still_a_409(client, body):
    assert start(client, body).status_code == 201
    second = start(client, body)
    assert second.status_code == 409
    assert "one run at a time" in second.get_json()["error"]


def test_queue_true_while_a_run_is_active_answers_202_queued(client, body):
    first = start(client, body).get_json()["runId"]
    reply = start(client, body, queue=True)
    assert reply.status_code == 202
    data = reply.get_json()
    assert data["state"] == "queued"
    assert reply.headers["Location"].endswith(f"/api/runs/{data['runId']}")
    assert run_state(get_run(first)) == "running"


def test_queue_true_on_a_free_engine_starts_at_once(client, body):
    reply = start(client, body, queue=True)
    assert reply.status_code == 202
    assert reply.get_json()["state"] == "running"


def test_queue_must_be_a_boolean(client, body):
    reply = start(client, body, queue="yes")
    assert reply.status_code == 400
    assert reply.get_json()["errors"][0]["field"] == "queue"
    assert Run.select().count() == 0


def test_a_queued_run_starts_when_the_active_run_finishes(app, client, body):
    clock = FakeClock()
    first = start(client, body).get_json()["runId"]
    queued = start(client, body, queue=True).get_json()["runId"]
    config = dict(app.config)
    result = drive(config, clock, holder=HOLDER)
    assert result["runId"] == first and result["state"] == "finished"
    assert run_state(get_run(queued)) == "queued"  # not started before the engine was free
    result = tick(config, holder=HOLDER, now=clock)
    assert result["runId"] == queued
    assert get_run(queued).started_at is not None
    drive(config, clock, holder=HOLDER)
    assert run_state(get_run(queued)) == "finished"


def test_queued_runs_start_first_in_line_first(app, client, body):
    start(client, body)
    second = start(client, body, queue=True).get_json()["runId"]
    third = start(client, body, queue=True).get_json()["runId"]
    listed = client.get("/api/queue").get_json()
    assert [(q["runId"], q["position"]) for q in listed] == [(second, 1), (third, 2)]
    clock = FakeClock()
    drive(dict(app.config), clock, holder=HOLDER)
    result = tick(dict(app.config), holder=HOLDER, now=clock)
    assert result["runId"] == second
    assert run_state(get_run(third)) == "queued"


def test_a_paused_run_does_not_hold_the_queue(app, client, body):
    first = start(client, body).get_json()["runId"]
    queued = start(client, body, queue=True).get_json()["runId"]
    client.post(f"/api/runs/{first}/pause")
    result = tick(dict(app.config), holder=HOLDER, now=FakeClock())
    assert result["runId"] == queued
    assert run_state(get_run(first)) == "paused"  # still resumable, once this one is done


def test_a_start_beside_a_paused_run_is_not_refused(client, body):
    first = start(client, body).get_json()["runId"]
    client.post(f"/api/runs/{first}/pause")
    second = start(client, body)
    assert second.status_code == 201, second.get_json()
    assert run_state(get_run(second.get_json()["runId"])) == "running"


def test_cancelling_a_queued_run_stops_it_and_it_never_starts(app, client, body):
    start(client, body)
    queued = start(client, body, queue=True).get_json()["runId"]
    reply = client.delete(f"/api/queue/{queued}")
    assert reply.status_code == 200
    assert reply.get_json()["state"] == "stopped"
    assert "cancelled while queued" in reply.get_json()["controlReason"]
    assert client.get("/api/queue").get_json() == []
    clock = FakeClock()
    drive(dict(app.config), clock, holder=HOLDER)
    assert tick(dict(app.config), holder=HOLDER, now=clock)["runId"] is None
    assert run_state(get_run(queued)) == "stopped"


def test_only_a_queued_run_can_be_cancelled(client, body):
    running = start(client, body).get_json()["runId"]
    reply = client.delete(f"/api/queue/{running}")
    assert reply.status_code == 400
    assert "not queued" in reply.get_json()["error"]
    assert run_state(get_run(running)) == "running"


def test_a_queued_run_is_not_offered_to_continue(client, body):
    start(client, body)
    queued = start(client, body, queue=True).get_json()["runId"]
    assert queued not in [r.run_id for r in continuable_runs()]


def test_the_run_history_filters_queued_runs(client, body):
    start(client, body)
    queued = start(client, body, queue=True).get_json()["runId"]
    listed = client.get("/api/runs?state=queued").get_json()
    assert [r["runId"] for r in listed] == [queued]

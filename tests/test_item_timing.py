"""Each answer's stream timing, stored by the engine and shown: a run on the paced server
(tests/pacedserver.py, real HTTP, both wire formats) stores the token events, the gaps between
them as a histogram, the first answer token, when the request was sent, the reasoning tokens
and the queue estimate; the API item reads them back."""

import pytest

from app import latency
from app.db.models import Item
from app.engine import lease
from tests.engine_helpers import FakeClock
from tests.engine_helpers import drive
from tests.engine_helpers import make_provider
from tests.pacedserver import MODEL
from tests.pacedserver import PacedServer

WIRES = ["OPENAI", "OLLAMA"]
# Scored by a check alone: the run needs no judge.
TASK = {"category": "Speed", "question": "Count?", "checks": [{"type": "contains", "value": "a"}]}


@pytest.fixture
def paced():
    servers = []

    def start(**schedule):
        server = PacedServer(**{"ttft": 0.02, "tokens": 12, "itl": 0.01, **schedule}).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def run_on(app, client, server, type="OPENAI", tasks=1, max_concurrency=1):
    """A run with no judge of `tasks` tasks on the paced server; its items once it finished."""
    lease.acquire("test-holder", 15.0)
    provider = make_provider(None, type=type, url=server.url, max_concurrency=max_concurrency)
    ids = []
    for n in range(tasks):
        task = client.post("/api/tasks", json={**TASK, "taskId": f"t{n}"})
        assert task.status_code == 201, task.json
        ids.append(task.json["id"])
    target = {"providerId": provider.id, "model": MODEL}
    body = {"runId": "timed", "taskIds": ids, "targets": [target]}
    response = client.post("/api/runs", json=body)
    assert response.status_code == 201, response.json
    assert drive(dict(app.config), FakeClock())["state"] == "finished"
    return list(Item.select().order_by(Item.id))


def answers_logged(server):
    """The server's log entries of the answers: streamed ones (a warm-up or an Ollama unload is
    not), in the order they finished."""
    return [e for e in server.log if e["completed"] and e["channels"] != ["whole"]]


@pytest.mark.parametrize("type", WIRES)
def test_a_streamed_answer_stores_one_event_per_token(app, client, paced, type):
    server = paced()
    (item,) = run_on(app, client, server, type)
    assert item.chunks == server.tokens == item.tokens_generated


@pytest.mark.parametrize("type", WIRES)
def test_the_token_gaps_are_stored_as_a_histogram_near_the_servers_own(app, client, paced, type):
    server = paced()
    (item,) = run_on(app, client, server, type)
    (entry,) = answers_logged(server)
    found = latency.histogram_summary(latency.unpack(item.itl_hist))
    assert found["count"] == server.tokens - 1
    sent = latency.summary(latency.gaps(entry["sent"]))
    # Loose on purpose (a shared machine): the pacing is the server's, the gaps are ours.
    assert sent["mean"] * 0.5 <= found["mean"] <= sent["mean"] * 1.5 + 1.0


@pytest.mark.parametrize("type", WIRES)
def test_the_first_answer_token_comes_no_sooner_than_the_first_token(app, client, paced, type):
    (item,) = run_on(app, client, paced(reasoning_tokens=3), type)
    assert item.ttft_ms is not None
    assert item.first_answer_ms >= item.ttft_ms
    assert item.last_token_ms >= item.first_answer_ms


@pytest.mark.parametrize("type", WIRES)
def test_the_request_is_stamped_before_the_server_received_it(app, client, paced, type):
    server = paced()
    (item,) = run_on(app, client, server, type)
    (entry,) = answers_logged(server)
    assert item.sent_ts is not None
    assert item.sent_ts <= entry["first_sent_wall"]


@pytest.mark.parametrize("type", WIRES)
def test_a_one_chunk_answer_stores_no_gaps_and_the_api_says_itl_is_not_measurable(
    app, client, paced, type
):
    (item,) = run_on(app, client, paced(one_chunk=True), type)
    assert item.chunks == 1 and item.itl_hist is None
    shown = client.get(f"/api/runs/timed/items/{item.id}").json
    assert shown["itl"] is None and shown["itlMeasurable"] is False
    assert shown["chunks"] == 1


def test_the_api_item_shows_the_timing(app, client, paced):
    (item,) = run_on(app, client, paced())
    shown = client.get(f"/api/runs/timed/items/{item.id}").json
    assert shown["itlMeasurable"] is True
    assert set(shown["itl"]) == {"mean", "p50", "p90", "p99", "max"}
    assert shown["firstAnswerMs"] == item.first_answer_ms
    assert shown["lastTokenMs"] == item.last_token_ms
    assert shown["sentAt"].endswith("Z")
    tpot = (item.time_taken_ms - item.ttft_ms) / (item.tokens_generated - 1)
    assert shown["tpotMs"] == pytest.approx(tpot)


@pytest.mark.parametrize("type", WIRES)
def test_a_reasoning_stream_stores_its_reasoning_tokens(app, client, paced, type):
    (item,) = run_on(app, client, paced(reasoning_tokens=4), type)
    assert item.reasoning_tokens == 4
    assert item.chunks == 4 + 12


@pytest.mark.parametrize("type", WIRES)
def test_the_queue_estimate_holds_the_wait_for_a_server_slot(app, client, paced, type):
    # One slot, two requests at once: the second waits for the first. TTFT less the server's
    # own prompt time is at least that wait (the client's TTFT holds it, the server's does not).
    server = paced(slots=1)
    items = run_on(app, client, server, type, tasks=2, max_concurrency=2)
    waits = sorted(e["slot_wait"] * 1000 for e in answers_logged(server))
    queues = sorted(i.queue_ms for i in items)
    assert all(q is not None and q >= 0 for q in queues)
    assert queues[-1] >= waits[-1] - 1.0  # Ollama's durations are whole ns: a hair under
    assert all(i.queue_ms <= i.ttft_ms for i in items)


def test_no_queue_estimate_without_the_servers_timings(app, client, paced):
    (item,) = run_on(app, client, paced(timings=False))
    assert item.ttft_ms is not None and item.queue_ms is None

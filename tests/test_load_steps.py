"""Load steps (settings.load): the same tasks asked again at rising load, one step after
another, each step's answers kept apart (Item.step) and scored, with per-step speed figures.

Runs go to the paced server (tests/pacedserver.py, real HTTP); what load each step put on it
is read from the server's own log (how many requests it was serving when each one started),
never from wall-clock times."""

import pytest

from app.db.models import COMPLETED
from app.db.models import Item
from app.db.models import RunLog
from app.engine import lease
from app.errors import ValidationError
from app.runconfig import reader
from app.runs.spec import clean_load
from tests.cli_helpers import write_config
from tests.engine_helpers import FakeClock
from tests.engine_helpers import drive
from tests.engine_helpers import make_provider
from tests.pacedserver import MODEL
from tests.pacedserver import PacedServer

# Scored by a check alone: the run needs no judge.
TASK = {"category": "Speed", "question": "Count?", "checks": [{"type": "contains", "value": "a"}]}


@pytest.fixture
def paced():
    servers = []

    def start(**schedule):
        server = PacedServer(**{"ttft": 0.03, "tokens": 4, "itl": 0.005, **schedule}).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def post_run(client, server, load, tasks=4, task=None, **extra):
    """POST a run of `tasks` tasks on the paced server with this load; the response."""
    lease.acquire("test-holder", 15.0)
    provider = make_provider(None, url=server.url, max_concurrency=1)
    ids = []
    for n in range(tasks):
        made = client.post("/api/tasks", json={**(task or TASK), "taskId": f"t{n}"})
        assert made.status_code == 201, made.json
        ids.append(made.json["id"])
    body = {
        "runId": "loaded",
        "taskIds": ids,
        "targets": [{"providerId": provider.id, "model": MODEL}],
        "settings": {"load": load},
        **extra,
    }
    return client.post("/api/runs", json=body)


def finish(app):
    assert drive(dict(app.config), FakeClock())["state"] == "finished"
    return list(Item.select().order_by(Item.id))


def answers_by_step(server, items):
    """The server's log entries of the answers (streamed, finished), in the order they were
    received, cut into the steps' sizes (steps follow each other, so the order is theirs)."""
    entries = sorted(
        (e for e in server.log if e["completed"] and e["channels"] != ["whole"]),
        key=lambda e: e["received"],
    )
    sizes = [sum(1 for i in items if i.step == s) for s in sorted({i.step for i in items})]
    out, at = [], 0
    for size in sizes:
        out.append(entries[at : at + size])
        at += size
    return out


# ---- the spec --------------------------------------------------------------------------------
def errors_of(raw):
    errors = []
    clean_load(raw, errors)
    return {e["field"]: e["message"] for e in errors}


def test_a_bad_step_is_named_by_its_index():
    errors = errors_of({"mode": "concurrency", "steps": [1, 2, 0, 4]})
    assert list(errors) == ["settings.load.steps[2]"]


def test_steps_may_be_text_as_the_form_sends_them():
    errors = []
    assert clean_load({"steps": "1, 2, 4, 8"}, errors)["steps"] == [1, 2, 4, 8]
    assert errors == []


def test_a_rate_step_must_be_above_zero():
    assert list(errors_of({"mode": "rate", "steps": [0.5, -1]})) == ["settings.load.steps[1]"]


def test_an_unknown_mode_and_judge_steps_are_named():
    assert list(errors_of({"mode": "burst", "steps": [1]})) == ["settings.load.mode"]
    assert list(errors_of({"steps": [1], "judgeSteps": "some"})) == ["settings.load.judgeSteps"]


def test_the_api_refuses_a_bad_load_naming_the_field(app, client, paced):
    response = post_run(client, paced(), {"steps": [1, "x"]})
    assert response.status_code == 400
    fields = [e["field"] for e in response.json["errors"]]
    assert fields == ["settings.load.steps[1]"]
    assert Item.select().count() == 0


def test_a_run_config_takes_a_load_in_its_own_spelling(app, tmp_path, fake):
    path = write_config(tmp_path, fake, load={"steps": [1, 2], "judge_steps": "first"})
    plan = reader.load(path, environ={"FAKE_KEY": "k"})
    assert plan.settings["load"]["steps"] == [1, 2]
    assert plan.settings["load"]["judgeSteps"] == "first"


def test_a_run_config_refuses_a_bad_load_naming_its_key(app, tmp_path, fake):
    with pytest.raises(ValidationError) as info:
        reader.load(write_config(tmp_path, fake, load={"steps": [1, 2, 65]}), environ={"FAKE_KEY": "k"})
    assert [e["field"] for e in info.value.errors] == ["run.load.steps[2]"]


# ---- the items -------------------------------------------------------------------------------
def test_a_three_step_run_makes_every_tasks_items_once_per_step(app, client, paced):
    response = post_run(client, paced(), {"steps": [1, 2, 4]}, tasks=4)
    assert response.status_code == 201, response.json
    items = list(Item.select().order_by(Item.id))
    assert len(items) == 12
    assert [i.step for i in items] == [0] * 4 + [1] * 4 + [2] * 4
    assert {i.task_key for i in items if i.step == 2} == {"t0", "t1", "t2", "t3"}


def test_requests_per_step_below_the_tasks_takes_the_first(app, client, paced):
    post_run(client, paced(), {"steps": [1, 2], "requestsPerStep": 2}, tasks=4)
    items = list(Item.select().order_by(Item.id))
    assert [(i.step, i.task_key) for i in items] == [(0, "t0"), (0, "t1"), (1, "t0"), (1, "t1")]


def test_requests_per_step_past_the_tasks_asks_them_again_as_repeats(app, client, paced):
    post_run(client, paced(), {"steps": [2], "requestsPerStep": 5}, tasks=2)
    items = list(Item.select().order_by(Item.id))
    assert [(i.task_key, i.repeat) for i in items] == [
        ("t0", 0),
        ("t1", 0),
        ("t0", 1),
        ("t1", 1),
        ("t0", 2),
    ]
    assert len({i.seed for i in items if i.task_key == "t0"}) == 3  # each drawn anew

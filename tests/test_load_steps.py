"""Load steps (settings.load): the same tasks asked again at rising load, one step after
another, each step's answers kept apart (Item.step) and scored, with per-step speed figures.

Runs go to the paced server (tests/pacedserver.py, real HTTP); what load each step put on it
is read from the server's own log (how many requests it was serving when each one started),
never from wall-clock times."""

import threading
from types import SimpleNamespace

import pytest

from app.db.models import COMPLETED
from app.db.models import Item
from app.db.models import Run
from app.db.models import RunLog
from app.engine import lease
from app.engine.items import NOT_JUDGED
from app.engine.load_steps import Arrivals
from app.engine.load_steps import wait_for_arrival
from app.engine.remote import RemoteWorker
from app.errors import ValidationError
from app.exports.summary import summary_json
from app.runconfig import reader
from app.runs.lifecycle import create_run
from app.runs.spec import clean_load
from tests.cli_helpers import write_config
from tests.engine_helpers import FakeClock
from tests.engine_helpers import calls
from tests.engine_helpers import drive
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks
from tests.engine_helpers import start_run
from tests.pacedserver import MODEL
from tests.pacedserver import PacedServer

# Scored by a check alone (the paced server's answer is "t0 t1 ..."): the run needs no judge.
TASK = {"category": "Speed", "question": "Count?", "checks": [{"type": "contains", "value": "t0"}]}


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


def post_run(client, server, load, tasks=4, task=None, extra_settings=None, **extra):
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
        "settings": {"load": load, **(extra_settings or {})},
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
        reader.load(
            write_config(tmp_path, fake, load={"steps": [1, 2, 65]}), environ={"FAKE_KEY": "k"}
        )
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


def test_a_run_with_load_steps_does_not_reuse_earlier_answers(app, fake):
    p = make_provider(fake)
    lease.acquire("test-holder", 15.0)
    with pytest.raises(ValidationError) as info:
        create_run(
            {
                "targets": [{"providerId": p.id, "model": "m1"}],
                "judgeProviderId": p.id,
                "judgeModel": "judge",
                "collectionIds": [make_tasks(1).id],
                "settings": {"load": {"steps": [1, 2]}},
            },
            reuse=True,
        )
    assert info.value.errors[0]["field"] == "settings.load"
    assert Item.select().count() == 0


# ---- the engine: concurrency steps -----------------------------------------------------------
def test_a_steps_answers_are_all_in_before_the_next_step_is_asked(app, client, paced):
    server = paced()
    post_run(client, server, {"steps": [1, 2, 4]}, tasks=4)
    items = finish(app)
    steps = answers_by_step(server, items)
    for before, after in zip(steps, steps[1:], strict=False):
        assert max(e["last_sent"] for e in before) < min(e["received"] for e in after)


def test_each_step_puts_its_own_concurrency_on_the_server(app, client, paced):
    # Each request stays in service 250 ms: long enough that a step's workers, started late
    # on a starved machine, still overlap (at 50 ms a busy run saw 3 at once, not 4).
    server = paced(ttft=0.25)
    post_run(client, server, {"steps": [1, 2, 4]}, tasks=8)
    items = finish(app)
    assert all(i.status == COMPLETED for i in items)
    seen = [max(e["in_service"] for e in step) for step in answers_by_step(server, items)]
    assert seen == [1, 2, 4]


def test_each_step_start_is_a_line_in_the_run_log(app, client, paced):
    post_run(client, paced(), {"steps": [1, 2, 4]}, tasks=2)
    finish(app)
    lines = [r.message for r in RunLog.select().where(RunLog.event == "load_step")]
    assert [line.split(": ", 1)[1] for line in lines] == [
        "step 1 of 3: concurrency 1",
        "step 2 of 3: concurrency 2",
        "step 3 of 3: concurrency 4",
    ]


def test_warm_up_requests_are_sent_per_step_and_not_kept(app, client, paced):
    server = paced()
    post_run(client, server, {"steps": [1, 2], "warmup": 3}, tasks=2)
    items = finish(app)
    streamed = [e for e in server.log if e["completed"] and e["channels"] != ["whole"]]
    assert len(items) == 4
    assert len(streamed) == 4 + 2 * 3


def test_a_run_continued_after_a_stop_goes_on_in_the_step_it_was_in(app, client, paced):
    server = paced()
    post_run(client, server, {"steps": [1, 2, 4]}, tasks=2)
    # Steps 0 and 1 answered before the stop (or crash): the items alone say where it was.
    Item.update(status=COMPLETED, answer="a").where(Item.step < 2).execute()
    items = finish(app)
    streamed = [e for e in server.log if e["completed"] and e["channels"] != ["whole"]]
    assert len(streamed) == sum(1 for i in items if i.step == 2)
    (line,) = [r.message for r in RunLog.select().where(RunLog.event == "load_step")]
    assert line.endswith("step 3 of 3: concurrency 4")


# ---- judging the steps -----------------------------------------------------------------------
def test_judge_steps_first_sends_no_judge_call_for_later_steps(app, fake):
    p = make_provider(fake)
    lease.acquire("test-holder", 15.0)
    start_run(
        p,
        [(p, "m1")],
        make_tasks(2),
        settings={"load": {"steps": [1, 2, 3], "judgeSteps": "first"}},
    )
    assert drive(dict(app.config), FakeClock())["state"] == "finished"
    assert len(calls(fake, "judge")) == 2  # step 0's two answers
    later = list(Item.select().where(Item.step > 0))
    assert len(later) == 4
    assert all(i.status == COMPLETED and i.evaluation_score is None for i in later)
    assert all(i.evaluation_reason == NOT_JUDGED for i in later)


def test_judge_steps_first_still_scores_later_steps_by_their_checks(app, fake):
    p = make_provider(fake)
    lease.acquire("test-holder", 15.0)
    coll = make_tasks(2, checks=[{"type": "icontains", "value": "answer"}])
    start_run(p, [(p, "m1")], coll, settings={"load": {"steps": [1, 2], "judgeSteps": "first"}})
    assert drive(dict(app.config), FakeClock())["state"] == "finished"
    assert len(calls(fake, "judge")) == 2
    later = list(Item.select().where(Item.step == 1))
    assert [i.evaluation_score for i in later] == [100.0, 100.0]


def test_judge_steps_all_judges_every_step(app, fake):
    p = make_provider(fake)
    lease.acquire("test-holder", 15.0)
    start_run(p, [(p, "m1")], make_tasks(2), settings={"load": {"steps": [1, 2]}})
    assert drive(dict(app.config), FakeClock())["state"] == "finished"
    assert len(calls(fake, "judge")) == 4


# ---- the engine: rate steps ------------------------------------------------------------------
def test_poisson_arrivals_are_the_same_for_the_same_run_target_and_step():
    one, two = Arrivals(4.0, "poisson", "run:1:0"), Arrivals(4.0, "poisson", "run:1:0")
    gaps = [one.rng.expovariate(4.0) for _ in range(5)]
    assert gaps == [two.rng.expovariate(4.0) for _ in range(5)]
    assert len(set(gaps)) == 5  # exponential gaps, not a fixed beat


def test_constant_arrivals_are_one_over_the_rate_apart():
    arrivals = Arrivals(4.0, "constant", "run:1:0")
    due = [arrivals.take() for _ in range(3)]
    assert [round(b - a, 9) for a, b in zip(due, due[1:], strict=False)] == [0.25, 0.25]


def test_a_request_waiting_for_its_arrival_is_not_sent_once_the_pool_halts():
    ctx = SimpleNamespace(halt=threading.Event())
    arrivals = Arrivals(0.001, "constant", "run:1:0")  # the second request due in 1000 s
    assert wait_for_arrival(ctx, arrivals)  # the first is due at once
    ctx.halt.set()
    assert not wait_for_arrival(ctx, arrivals)
    assert arrivals.next is None  # the schedule starts again when the step goes on


def test_a_rate_step_sends_without_waiting_for_answers(app, client, paced):
    # Answers take far longer than the gap between arrivals: an open loop has several in
    # service at once although no concurrency was asked for.
    server = paced(ttft=0.4)
    post_run(client, server, {"mode": "rate", "steps": [40], "arrivals": "constant"}, tasks=4)
    items = finish(app)
    assert all(i.status == COMPLETED for i in items)
    (step,) = answers_by_step(server, items)
    assert max(e["in_service"] for e in step) > 1


def test_a_rate_steps_in_flight_stay_under_the_runs_concurrency_cap(app, client, paced):
    server = paced(ttft=0.3)
    load = {"mode": "rate", "steps": [100], "arrivals": "constant"}
    post_run(client, server, load, tasks=6, extra_settings={"concurrency": 2})
    items = finish(app)
    (step,) = answers_by_step(server, items)
    assert max(e["in_service"] for e in step) <= 2


# ---- per-step figures ------------------------------------------------------------------------
def test_the_speed_api_gives_each_steps_figures_and_score(app, client, paced):
    server = paced(ttft=0.05)
    post_run(client, server, {"steps": [1, 2, 4]}, tasks=8)
    finish(app)
    (target,) = client.get("/api/runs/loaded/speed").json["targets"]
    steps = target["steps"]
    assert [(s["step"], s["load"], s["answers"]) for s in steps] == [
        (0, 1, 8),
        (1, 2, 8),
        (2, 4, 8),
    ]
    assert all(s["meanScore"] == 100.0 and s["scored"] == 8 for s in steps)
    assert all(s["ttftMs"]["n"] == 8 and s["window"]["achievedConcurrency"] for s in steps)
    assert target["answers"] == 24  # the target's own figures are over every step


def test_a_run_without_load_steps_has_no_steps_in_its_speed(app, client, paced):
    server = paced()
    post_run(client, server, None, tasks=2)
    finish(app)
    (target,) = client.get("/api/runs/loaded/speed").json["targets"]
    assert "steps" not in target


def test_summary_json_and_the_results_page_show_the_steps(app, client, paced):
    post_run(client, paced(), {"steps": [1, 2]}, tasks=2)
    finish(app)
    (model,) = summary_json(Run.get(Run.run_id == "loaded"))["models"]
    assert [s["load"] for s in model["speed"]["steps"]] == [1, 2]
    page = client.get("/runs/loaded/results").get_data(as_text=True)
    assert 'id="speed-steps-1"' in page
    assert "Concurrency asked" in page


def test_an_items_load_step_is_in_the_api(app, client, paced):
    post_run(client, paced(), {"steps": [1, 2]}, tasks=1)
    items = finish(app)
    assert [client.get(f"/api/runs/loaded/items/{i.id}").json["loadStep"] for i in items] == [0, 1]


def test_the_item_page_says_its_load_step_and_why_it_was_not_judged(app, fake, client):
    p = make_provider(fake)
    lease.acquire("test-holder", 15.0)
    load = {"steps": [1, 4], "judgeSteps": "first"}
    run = start_run(p, [(p, "m1")], make_tasks(1), settings={"load": load})
    assert drive(dict(app.config), FakeClock())["state"] == "finished"
    later = Item.get(Item.step == 1)
    page = client.get(f"/runs/{run.run_id}/items/{later.id}").get_data(as_text=True)
    assert "Load step 2 of 2 (4 in flight)" in page
    assert "only the first load step" in page


def test_a_worker_process_takes_only_the_current_steps_items(app, fake):
    p = make_provider(fake, max_concurrency=8)
    lease.acquire("test-holder", 3600.0)
    start_run(p, [(p, "m1")], make_tasks(3), settings={"load": {"steps": [2, 1]}})
    worker = RemoteWorker(dict(app.config), threading.Event(), concurrency=8)
    assert worker.round()
    assert {(i.step, i.status) for i in Item.select()} == {(0, "WAITING_FOR_JUDGE"), (1, "NEW")}
    assert fake.max_active <= 2  # the step's concurrency, not the provider's 8
    assert worker.round()
    assert {i.status for i in Item.select()} == {"WAITING_FOR_JUDGE"}

"""Starting and re-starting runs: model check, judge warm-up, retry failed answers, bad input,
and the shown state of a run whose orchestrator died."""

import datetime as dt

import pytest

from app.catalog.provider_models import list_models
from app.clock import utcnow
from app.db.models import COMPLETED
from app.db.models import FAILED
from app.db.models import NEW
from app.db.models import Item
from app.db.models import Run
from app.db.models import RunLog
from app.db.models import RunTarget
from app.engine import lease
from app.engine.orchestrator import tick
from app.errors import Conflict
from app.errors import ValidationError
from app.runs.control import resume_run
from app.runs.control import stop_run
from app.runs.dto import run_summary
from app.runs.lifecycle import create_run
from app.runs.retries import retry_failed_answers
from app.runs.state import NO_ORCHESTRATOR
from app.runs.state import run_state
from tests.engine_helpers import FakeClock
from tests.engine_helpers import call_kind
from tests.engine_helpers import calls
from tests.engine_helpers import drive
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks
from tests.engine_helpers import start_run

HOLDER = "test-holder"
DEAD_URL = "http://127.0.0.1:9"  # the discard port: connection refused


@pytest.fixture
def config(app):
    return dict(app.config, BACKOFF_BASE_SECONDS=2.0, BACKOFF_MAX_SECONDS=60.0)


@pytest.fixture
def body(app, fake):
    lease.acquire(HOLDER, 15.0)
    p = make_provider(fake)
    coll = make_tasks(2)
    return {
        "judgeProviderId": p.id,
        "judgeModel": "judge",
        "collectionIds": [coll.id],
        "targets": [{"providerId": p.id, "model": "m1"}],
    }


def errors_of(exc):
    return {e["field"]: e["message"] for e in exc.value.errors}


def log_lines(run, event):
    return [
        e for e in RunLog.select().where(RunLog.run == run).order_by(RunLog.id) if e.event == event
    ]


# ---- the models must be served --------------------------------------------------------------


def test_an_unknown_target_model_is_refused_naming_the_field(body, fake):
    body["targets"].append({"providerId": body["judgeProviderId"], "model": "x"})
    fake.models = ["m1", "judge"]
    with pytest.raises(ValidationError) as exc:
        create_run(body)
    assert errors_of(exc) == {
        "targets[1].model": "model 'x' is not served by provider 'fake' (it serves: judge, m1)"
    }
    assert Run.select().count() == 0


def test_an_unknown_judge_model_is_refused_naming_the_field(body):
    with pytest.raises(ValidationError) as exc:
        create_run({**body, "judgeModel": "grader-9000"})
    assert list(errors_of(exc)) == ["judgeModel"]
    assert "'grader-9000' is not served by provider 'fake'" in errors_of(exc)["judgeModel"]


def test_the_api_answers_400_for_an_unknown_model(client, body):
    body["targets"][0]["model"] = "nope"
    response = client.post("/api/runs", json=body)
    assert response.status_code == 400
    assert response.json["errors"][0]["field"] == "targets[0].model"


def test_a_model_pulled_after_the_list_was_cached_is_accepted(body, fake):
    list_models(body["judgeProviderId"])  # cached without m9
    fake.models = [*fake.models, "m9"]
    body["targets"][0]["model"] = "m9"
    assert create_run(body).targets[0].model == "m9"


def test_an_ollama_model_without_a_tag_matches_latest(app, fake):
    lease.acquire(HOLDER, 15.0)
    p = make_provider(fake, type="OLLAMA")
    fake.models = ["llama3:latest", "judge:latest"]
    run = start_run(p, [(p, "llama3")], make_tasks(1))
    assert run.targets[0].model == "llama3"


def test_a_provider_whose_models_cannot_be_listed_is_accepted_with_a_note(app, fake):
    judge = make_provider(fake)
    down = make_provider(None, name="down", url=DEAD_URL)
    run = start_run(judge, [(down, "anything")], make_tasks(1))
    note = log_lines(run, "model_check")[0]
    assert note.level == "WARNING" and "Could not check the models of provider down" in note.message
    assert "refused" in note.message and "warm-up will tell" in note.message


# ---- the judge is warmed up before any answer ----------------------------------------------


def test_the_judge_is_warmed_up_with_its_schema_before_benchmarking(app, fake, config):
    p = make_provider(fake)
    run = start_run(p, [(p, "m1")], make_tasks(1))
    drive(config, FakeClock())
    first = fake.chat_calls()[0]
    assert call_kind(first)[:2] == ("judge_warmup", "judge")
    assert first["body"]["response_format"]["type"] == "json_schema"
    assert [e.event for e in RunLog.select().where(RunLog.run == run)][1] == "judge_warmup"


def test_a_judge_that_fails_for_good_pauses_the_run_before_any_answer(app, fake, config):
    fake.strict_models = True
    p = make_provider(fake)
    run = start_run(p, [(p, "m1")], make_tasks(2))
    fake.models = ["m1"]  # the judge model went away after the start
    clock = FakeClock()
    result = tick(config, holder=HOLDER, now=clock)
    assert result["state"] == "paused"
    reason = Run.get_by_id(run.id).control_reason
    assert reason.startswith("the judge model fake/judge fails: Server answered 404")
    assert "not found" in reason and "then continue" in reason
    assert log_lines(run, "judge_failed")[0].level == "ERROR"
    assert calls(fake, "answer") == [] and calls(fake, "warmup") == []
    fake.models = ["m1", "judge"]  # fixed: continue
    resume_run(run.run_id)
    assert drive(config, clock)["state"] == "finished"
    assert Item.select().where(Item.status == COMPLETED).count() == 2


def test_a_judge_still_loading_is_tried_again(app, fake, config):
    p = make_provider(fake)
    run = start_run(p, [(p, "m1")], make_tasks(1))
    state = {"n": 0}

    def responder(call):
        if call_kind(call)[0] == "judge_warmup":
            state["n"] += 1
            if state["n"] == 1:
                return {"status": 503, "retry_after": 5}
        return None

    fake.responder = responder
    clock = FakeClock()
    result = tick(config, holder=HOLDER, now=clock)
    assert result["idle"] and result["wakeAt"] >= clock() + dt.timedelta(seconds=5)
    waiting = log_lines(run, "provider_waiting")[0].message
    assert waiting.startswith("waiting for fake: busy (503, retry after 5 s) since ")
    assert calls(fake, "answer") == []
    assert drive(config, clock)["state"] == "finished" and state["n"] == 2


def fail_first_answer(fake):
    """The first answer (not a warm-up) is malformed JSON: the item fails for good."""
    seen = []

    def responder(call):
        if call_kind(call)[0] == "answer" and not seen:
            seen.append(call)
            return {"malformed": True}
        return None

    fake.responder = responder


# ---- retry failed answers ------------------------------------------------------------------


def test_retry_failed_answers_asks_them_again_in_a_finished_run(app, fake, config):
    fake.strict_models = True
    p = make_provider(fake)
    run = start_run(p, [(p, "m1"), (p, "m2")], make_tasks(2))
    fake.models = ["m1", "judge"]  # m2 missing: its warm-up fails
    fail_first_answer(fake)  # one m1 answer fails for good
    assert drive(config, FakeClock())["state"] == "finished"
    stages = sorted(i.error_stage for i in Item.select().where(Item.status == FAILED))
    assert stages == ["answer", "warmup", "warmup"]
    fake.models = ["m1", "m2", "judge"]
    assert retry_failed_answers(run.run_id) == 3
    run = Run.get_by_id(run.id)
    assert (run_state(run), run.phase) == ("running", "BENCHMARKING")
    assert [
        (i.status, i.attempts, i.error_msg) for i in Item.select().where(Item.status == NEW)
    ] == [(NEW, 0, None)] * 3
    assert RunTarget.get(RunTarget.model == "m2").warmup_error is None
    assert drive(config, FakeClock())["state"] == "finished"
    assert Item.select().where(Item.status == COMPLETED).count() == 4
    assert log_lines(run, "retry_answers")[0].message.startswith("3 items")


def test_retry_failed_answers_is_409_while_another_run_is_active(app, fake, config):
    p = make_provider(fake)
    old = start_run(p, [(p, "m1")], make_tasks(1))
    fail_first_answer(fake)
    drive(config, FakeClock())
    start_run(p, [(p, "m2")], make_tasks(1, collection="c2", prefix="u"))
    with pytest.raises(Conflict):
        retry_failed_answers(old.run_id)
    assert Item.get(Item.run == old).status == FAILED


def test_the_api_retries_failed_answers(client, body, app, fake):
    run_id = client.post("/api/runs", json=body).json["runId"]
    fail_first_answer(fake)
    drive(dict(app.config), FakeClock())
    response = client.post(f"/api/runs/{run_id}/retry-failed-answers")
    assert response.status_code == 200 and response.json["queued"] == 1
    assert response.json["run"]["state"] == "running"
    assert client.post("/api/runs/nope/retry-failed-answers").status_code == 404


# ---- bad input answers 400 (or 404), never 500 --------------------------------------------


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", float("nan"), float("inf")])
def test_a_temperature_that_is_not_a_finite_number_is_refused(body, value):
    body["targets"][0]["params"] = {"temperature": value}
    with pytest.raises(ValidationError) as exc:
        create_run(body)
    assert "targets[0].params.temperature" in errors_of(exc)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"judgeProviderId": 2**70}, "judgeProviderId"),
        ({"collectionIds": [2**70]}, "collectionIds"),
        ({"taskIds": [2**70]}, "taskIds"),
        ({"targets": [{"providerId": 2**70, "model": "m1"}]}, "targets[0].providerId"),
    ],
)
def test_huge_ids_are_refused_naming_the_field(client, body, change, field):
    response = client.post("/api/runs", json={**body, **change})
    assert response.status_code == 400
    assert field in [e["field"] for e in response.json["errors"]]


def test_huge_ids_in_urls_are_not_found(client, body):
    run_id = client.post("/api/runs", json=body).json["runId"]
    big = 2**70
    assert client.post(f"/api/runs/{run_id}/items/{big}/retry-judge").status_code == 404
    assert client.get(f"/api/providers/{big}").status_code == 404
    assert client.get(f"/api/providers/{big}/models").status_code == 404
    assert client.delete(f"/api/prices/{big}").status_code == 404
    assert client.get(f"/api/runs/{run_id}/items?target={big}").status_code == 400
    assert client.get(f"/api/runs/{run_id}/items?page={big}").status_code == 400
    assert client.get(f"/api/runs/{run_id}/logs?since={big}").status_code == 200


@pytest.mark.parametrize("budget", [0, -1, "nan", "inf", "lots", True])
def test_resume_with_a_budget_that_is_not_above_zero_is_400(client, body, budget):
    run_id = client.post("/api/runs", json=body).json["runId"]
    client.post(f"/api/runs/{run_id}/stop")
    response = client.post(f"/api/runs/{run_id}/resume", json={"maxBudgetUsd": budget})
    assert response.status_code == 400
    assert response.json["errors"][0]["field"] == "maxBudgetUsd"
    assert client.get(f"/api/runs/{run_id}").json["state"] == "stopped"


@pytest.mark.parametrize(
    ("path", "field"),
    [
        ("/api/runs?status=bogus", "status"),
        ("/api/runs?colour=red", "colour"),
        ("/api/runs/{run}/items?bogus=1", "bogus"),
        ("/api/runs/{run}/items?target=abc", "target"),
        ("/api/runs/{run}/items?perPage=many", "perPage"),
        ("/api/runs/{run}/logs?level=ERROR", "level"),
        ("/api/runs/{run}/logs?limit=x", "limit"),
    ],
)
def test_unknown_or_bad_query_parameters_are_400_naming_them(client, body, path, field):
    run_id = client.post("/api/runs", json=body).json["runId"]
    response = client.get(path.format(run=run_id))
    assert response.status_code == 400
    assert response.json["errors"][0]["field"] == field


# ---- a run whose orchestrator died ---------------------------------------------------------


def test_a_running_run_shows_stopped_once_the_orchestrators_lease_lapsed(app, fake):
    p = make_provider(fake)
    run = start_run(p, [(p, "m1")], make_tasks(1))
    assert run_summary(run)["state"] == "running"  # the lease is fresh
    Run.update(updated_at=utcnow()).execute()
    lease.release(HOLDER)  # what a crash looks like once the lease is past its expiry
    summary = run_summary(Run.get_by_id(run.id))
    assert summary["state"] == "stopped" and summary["controlReason"] == NO_ORCHESTRATOR
    stopped = stop_run(run.run_id)  # the person can stop it for good ...
    assert run_state(stopped) == "stopped" and stopped.control_reason == "stopped by you"


def test_a_run_shows_running_when_no_orchestrator_ever_held_the_lease(app, fake):
    p = make_provider(fake)
    run = create_run(
        {
            "judgeProviderId": p.id,
            "judgeModel": "judge",
            "targets": [{"providerId": p.id, "model": "m1"}],
            "collectionIds": [make_tasks(1).id],
        }
    )
    assert run_summary(run)["state"] == "running"


def test_an_orphaned_run_can_be_continued_and_says_it_waits_for_an_orchestrator(app, fake):
    p = make_provider(fake)
    run = start_run(p, [(p, "m1")], make_tasks(1))
    lease.release(HOLDER)
    resumed = resume_run(run.run_id)
    assert resumed.control == "running" and run_state(resumed) == "stopped"
    assert run_summary(resumed)["controlReason"] == NO_ORCHESTRATOR
    lease.acquire(HOLDER, 15.0, spare_run_id=run.run_id)  # `llmbench resume` takes it on
    assert run_summary(Run.get_by_id(run.id))["state"] == "running"

"""Templates through the JSON API: save, list, edit, delete, run, trigger, schedules."""

import datetime as dt

import pytest

from app.db.models import Run
from app.db.models import RunLog
from app.db.models import Template
from app.engine import lease
from app.runs.queries import get_run
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks

HOLDER = "test-holder"
WEBHOOK = "https://hooks.example.test/services/T000/B000/SECRETTOKEN1234"


@pytest.fixture
def spec(app, fake):
    lease.acquire(HOLDER, 15.0)
    provider = make_provider(fake)
    collection = make_tasks(3)
    return {
        "judgeProviderId": provider.id,
        "judgeModel": "judge",
        "collectionIds": [collection.id],
        "targets": [{"providerId": provider.id, "model": "m1", "params": {"temperature": 0.2}}],
        "settings": {"repeats": 2},
    }


def make(client, spec, **fields):
    body = {"name": "nightly", "spec": spec, **fields}
    reply = client.post("/api/templates", json=body)
    assert reply.status_code == 201, reply.get_json()
    return reply.get_json()


def test_a_template_is_saved_with_its_spec_and_listed(client, spec):
    made = make(client, spec)
    assert made["spec"]["targets"][0]["params"] == {"temperature": 0.2}
    assert made["spec"]["settings"] == {"repeats": 2}
    assert made["regressionThreshold"] == 5.0
    assert made["schedule"] is None
    listed = client.get("/api/templates").get_json()
    assert [t["name"] for t in listed] == ["nightly"]


def test_a_bad_template_names_every_field_and_saves_nothing(client, spec):
    body = {
        "name": "",
        "spec": {**spec, "targets": [{"providerId": spec["judgeProviderId"], "model": ""}]},
        "schedule": {"cron": "0 25 * * *", "timezone": "Mars/Olympus"},
        "regressionThreshold": -1,
        "webhookUrl": "ftp://example.test/x",
    }
    reply = client.post("/api/templates", json=body)
    assert reply.status_code == 400
    fields = {e["field"] for e in reply.get_json()["errors"]}
    assert {
        "name",
        "spec.targets[0].model",
        "schedule.timezone",
        "regressionThreshold",
        "webhookUrl",
    } <= fields
    assert Template.select().count() == 0


def test_a_bad_cron_expression_is_named(client, spec):
    reply = client.post(
        "/api/templates", json={"name": "x", "spec": spec, "schedule": {"cron": "0 25 * * *"}}
    )
    assert reply.status_code == 400
    (error,) = reply.get_json()["errors"]
    assert error["field"] == "schedule.cron" and "hour" in error["message"]


def test_a_template_name_is_unique(client, spec):
    make(client, spec)
    reply = client.post("/api/templates", json={"name": "nightly", "spec": spec})
    assert reply.status_code == 400
    assert reply.get_json()["errors"][0]["field"] == "name"


def test_the_webhook_url_is_encrypted_and_shown_masked(client, spec):
    made = make(client, spec, webhookUrl=WEBHOOK)
    assert made["webhookUrl"] == "https://hooks.example.test/****1234"
    stored = Template.get_by_id(made["id"]).webhook_url
    assert "SECRETTOKEN" not in stored and "hooks.example" not in stored
    assert "SECRETTOKEN" not in client.get(f"/api/templates/{made['id']}").get_data(as_text=True)


def test_editing_without_a_webhook_keeps_it_and_an_empty_one_removes_it(client, spec):
    made = make(client, spec, webhookUrl=WEBHOOK)
    kept = client.put(f"/api/templates/{made['id']}", json={"name": "nightly2", "spec": spec})
    assert kept.status_code == 200
    assert kept.get_json()["webhookUrl"] == "https://hooks.example.test/****1234"
    assert kept.get_json()["name"] == "nightly2"
    removed = client.put(
        f"/api/templates/{made['id']}", json={"name": "nightly2", "spec": spec, "webhookUrl": ""}
    )
    assert removed.get_json()["webhookUrl"] is None


def test_running_a_template_starts_a_run_with_its_spec(client, spec):
    made = make(client, spec)
    reply = client.post(f"/api/templates/{made['id']}/run")
    assert reply.status_code == 202
    data = reply.get_json()
    assert data["state"] == "running"
    run = get_run(data["runId"])
    assert run.template_id == made["id"] and run.triggered_by == "manual"
    assert run.run_id.startswith("nightly-")
    assert run.settings == {"repeats": 2}
    assert run.items.count() == 3 * 2  # three tasks, two repeats


def test_running_a_template_while_a_run_is_active_queues_it(client, spec):
    made = make(client, spec)
    client.post(f"/api/templates/{made['id']}/run")
    reply = client.post(f"/api/templates/{made['id']}/run")
    assert reply.status_code == 202
    assert reply.get_json()["state"] == "queued"


def test_running_a_template_with_queue_false_keeps_the_409(client, spec):
    made = make(client, spec)
    client.post(f"/api/templates/{made['id']}/run")
    reply = client.post(f"/api/templates/{made['id']}/run", json={"queue": False})
    assert reply.status_code == 409


def test_a_trigger_records_who_triggered_the_run_and_why(client, spec):
    made = make(client, spec)
    reply = client.post(
        f"/api/templates/{made['id']}/trigger",
        json={"triggeredBy": "post-finetune", "note": "adapter v7"},
    )
    assert reply.status_code == 202
    run_id = reply.get_json()["runId"]
    summary = client.get(f"/api/runs/{run_id}").get_json()
    assert summary["triggeredBy"] == "post-finetune"
    assert summary["triggerNote"] == "adapter v7"
    assert summary["templateId"] == made["id"]
    started = RunLog.get((RunLog.run == get_run(run_id)) & (RunLog.event == "run_started"))
    assert "post-finetune: adapter v7" in started.message


@pytest.mark.parametrize(
    "body, field",
    [
        ({"triggeredBy": "post finetune!"}, "triggeredBy"),
        ({"triggeredBy": "x" * 51}, "triggeredBy"),
        ({"note": 7}, "note"),
    ],
)
def test_a_bad_trigger_is_refused_and_starts_nothing(client, spec, body, field):
    made = make(client, spec)
    reply = client.post(f"/api/templates/{made['id']}/trigger", json=body)
    assert reply.status_code == 400
    assert reply.get_json()["errors"][0]["field"] == field
    assert Run.select().count() == 0


def test_a_missing_template_is_a_404(client, spec):
    assert client.post("/api/templates/999/run").status_code == 404
    assert client.get("/api/templates/999").status_code == 404


def test_deleting_a_template_keeps_its_runs(client, spec):
    made = make(client, spec)
    run_id = client.post(f"/api/templates/{made['id']}/run").get_json()["runId"]
    assert client.delete(f"/api/templates/{made['id']}").status_code == 204
    assert get_run(run_id).template_id is None


def test_a_schedule_lists_its_next_fire_times_in_its_time_zone(client, spec):
    made = make(
        client,
        spec,
        schedule={"cron": "0 3 * * *", "timezone": "Europe/Berlin", "enabled": True},
    )
    schedule = made["schedule"]
    assert schedule["timezone"] == "Europe/Berlin"
    assert schedule["nextFireAtLocal"].endswith(("03:00:00+01:00", "03:00:00+02:00"))
    assert len(schedule["upcoming"]) == 5
    listed = client.get("/api/schedules").get_json()
    assert listed[0]["templateName"] == "nightly"
    assert listed[0]["nextFireAt"] == schedule["nextFireAt"]


def test_a_disabled_schedule_has_no_next_fire_time(client, spec):
    made = make(client, spec, schedule={"cron": "0 3 * * *", "enabled": False})
    assert made["schedule"]["enabled"] is False and made["schedule"]["nextFireAt"] is None


def test_an_edit_that_keeps_the_schedule_keeps_its_next_fire_time(client, spec):
    made = make(client, spec, schedule={"cron": "0 3 * * *", "timezone": "UTC"})
    template = Template.get_by_id(made["id"])
    moved = dt.datetime(2030, 1, 1, 3, 0)
    Template.update(next_fire_at=moved).where(Template.id == template.id).execute()
    client.put(
        f"/api/templates/{made['id']}",
        json={"name": "renamed", "spec": spec, "schedule": {"cron": "0 3 * * *"}},
    )
    assert Template.get_by_id(made["id"]).next_fire_at == moved


def test_a_template_spec_cannot_fix_the_run_id(client, spec):
    reply = client.post("/api/templates", json={"name": "x", "spec": {**spec, "runId": "fixed"}})
    assert reply.status_code == 400
    assert reply.get_json()["errors"][0]["field"] == "spec.runId"

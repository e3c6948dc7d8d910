"""Templates without a judge: a spec with no judge is kept so, the template form's "No judge"
leaves the spec's judge out, and the template's runs (run now, triggered, scheduled) are
scored by the tasks' checks only."""

import datetime as dt
import json

import pytest
from bs4 import BeautifulSoup

from app.db.models import Run
from app.db.models import Template
from app.engine import lease
from app.runs.queries import get_run
from app.schedules.firing import fire_due
from app.schedules.templates import spec_from_run
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks

SAYS_ANSWER = [{"type": "icontains", "value": "answer"}]


@pytest.fixture
def spec(app, fake):
    """A spec without a judge over two tasks with checks."""
    lease.acquire("test-holder", 15.0)
    provider = make_provider(fake)
    collection = make_tasks(2, checks=SAYS_ANSWER)
    return {
        "collectionIds": [collection.id],
        "targets": [{"providerId": provider.id, "model": "m1"}],
    }


def make(client, spec, **fields):
    reply = client.post("/api/templates", json={"name": "nightly", "spec": spec, **fields})
    assert reply.status_code == 201, reply.get_json()
    return reply.get_json()


def test_a_template_without_a_judge_is_saved_without_one(client, spec):
    made = make(client, spec)
    assert "judgeModel" not in made["spec"] and "judgeProviderId" not in made["spec"]


def test_a_template_without_a_judge_starts_a_judge_free_run(client, spec):
    made = make(client, spec)
    reply = client.post(f"/api/templates/{made['id']}/trigger", json={"triggeredBy": "ci"})
    assert reply.status_code == 202, reply.get_json()
    run = get_run(reply.get_json()["runId"])
    assert run.judge_model == "" and run.judge_provider is None


def test_a_scheduled_template_without_a_judge_fires_a_judge_free_run(client, spec):
    made = make(client, spec, schedule={"cron": "0 3 * * *", "timezone": "UTC"})
    Template.update(next_fire_at=dt.datetime(2030, 1, 1, 3)).where(
        Template.id == made["id"]
    ).execute()
    fire_due(dt.datetime(2030, 1, 1, 3, 1))
    (run,) = Run.select()
    assert run.template_id == made["id"] and run.judge_model == ""


def test_the_template_forms_no_judge_leaves_the_specs_judge_out(client, spec, fake):
    judged = {**spec, "judgeProviderId": spec["targets"][0]["providerId"], "judgeModel": "judge"}
    form = {"name": "nightly", "spec": json.dumps(judged), "noJudge": "on"}
    reply = client.post("/templates/", data=form)
    assert reply.status_code in (302, 303), reply.get_data(as_text=True)[:1500]
    assert "judgeModel" not in Template.get().spec


def test_the_template_form_shows_no_judge_ticked_for_a_template_without_one(client, spec):
    made = make(client, spec)
    page = BeautifulSoup(client.get(f"/templates/{made['id']}/edit").text, "html.parser")
    assert page.find(id="noJudge").has_attr("checked")


def test_a_run_without_a_judge_saved_as_a_template_has_no_judge(client, spec):
    made = make(client, spec)
    run_id = client.post(f"/api/templates/{made['id']}/run").get_json()["runId"]
    assert "judgeModel" not in spec_from_run(get_run(run_id))

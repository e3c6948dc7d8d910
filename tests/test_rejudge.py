"""Seed 000 audit: retry-judge only for items waiting for the judge or whose judgement failed;
re-judging a completed item is its own action and keeps the old judgement; a duplicate runId is
a 409; ?model=<name> filters the results by model name."""

import pytest
from bs4 import BeautifulSoup

from app.db.models import COMPLETED
from app.db.models import FAILED
from app.db.models import PENDING
from app.db.models import WAITING_FOR_JUDGE
from app.db.models import Item
from app.db.models import Run
from app.errors import Conflict
from app.errors import ValidationError
from app.runs.retries import rejudge_item
from app.runs.retries import retry_judge
from tests.engine_helpers import FakeClock
from tests.engine_helpers import drive
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks
from tests.engine_helpers import start_run
from tests.factories import add_item
from tests.factories import make_run


@pytest.fixture
def done(app):
    """A finished run: one completed item (score 75), one judge failure, one waiting."""
    run, (t,) = make_run("done")
    ok = add_item(run, t, "t1", score=75.0, judge_raw='{"score": 75}')
    bad = add_item(
        run, t, "t2", status=FAILED, error_stage="judge", error_msg="bad json", answer="an answer"
    )
    return run, ok, bad


def test_retry_judge_refuses_a_completed_item_and_keeps_its_score(done, client):
    run, ok, _ = done
    with pytest.raises(Conflict, match="re-judge it"):
        retry_judge("done", ok.id)
    response = client.post(f"/api/runs/done/items/{ok.id}/retry-judge")
    assert response.status_code == 409
    item = Item.get_by_id(ok.id)
    assert (item.status, item.evaluation_score) == (COMPLETED, 75.0)
    assert Run.get_by_id(run.id).status == "FINISHED"  # not reopened


def test_retry_judge_queues_a_failed_judgement(done):
    _, _, bad = done
    assert retry_judge("done", bad.id).status == WAITING_FOR_JUDGE


def test_retry_judge_queues_an_item_waiting_for_the_judge(app):
    run, (t,) = make_run("w", status=PENDING)
    waiting = add_item(run, t, "t1", status=WAITING_FOR_JUDGE, answer="a", attempts=2)
    item = retry_judge("w", waiting.id)
    assert item.status == WAITING_FOR_JUDGE and item.attempts == 0


def test_rejudge_keeps_the_old_judgement_in_the_items_history(done, client):
    run, ok, _ = done
    response = client.post(f"/api/runs/done/items/{ok.id}/rejudge")
    assert response.status_code == 200
    data = response.get_json()
    assert data["status"] == WAITING_FOR_JUDGE and data["evaluationScore"] is None
    (old,) = data["judgeHistory"]
    assert old["score"] == 75.0 and old["reason"] == "fine" and old["replacedAt"]
    assert old["judgeRaw"] == '{"score": 75}'
    assert Run.get_by_id(run.id).status == PENDING  # the finished run runs again


def test_rejudge_refuses_an_item_that_is_not_completed(done):
    _, _, bad = done
    with pytest.raises(ValidationError, match="not completed"):
        rejudge_item("done", bad.id)


def test_a_rejudged_item_gets_a_new_judgement_and_shows_the_old_one(app, client, fake):
    p = make_provider(fake)
    run = start_run(p, [(p, "m1")], make_tasks(1))
    config = dict(app.config)
    drive(config, FakeClock())
    item = Item.get()
    assert item.evaluation_score == 80.0
    fake.responder = lambda call: (
        {"text": '{"score": 40, "reason": "second look"}'}
        if "response_format" in (call["body"] or {})
        else None
    )
    client.post(f"/runs/{run.run_id}/items/{item.id}/rejudge")
    drive(config, FakeClock())
    item = Item.get()
    assert (item.status, item.evaluation_score, item.evaluation_reason) == (
        COMPLETED,
        40.0,
        "second look",
    )
    assert [h["score"] for h in item.judge_history] == [80.0]
    page = BeautifulSoup(client.get(f"/runs/{run.run_id}/items/{item.id}").text, "html.parser")
    history = page.find(id=f"judge-history-{item.id}").get_text(" ")
    assert "Earlier judgements (1)" in history and "fake judge" in history


def test_the_item_page_offers_re_judge_for_a_completed_item_only(done, client):
    _, ok, bad = done
    completed = BeautifulSoup(client.get(f"/runs/done/items/{ok.id}").text, "html.parser")
    assert completed.find(id=f"rejudge-{ok.id}") is not None
    failed = BeautifulSoup(client.get(f"/runs/done/items/{bad.id}").text, "html.parser")
    assert failed.find(id=f"rejudge-{bad.id}") is None
    assert "Retry judge" in failed.get_text()


def test_a_duplicate_run_id_is_a_409(app, client, fake):
    p = make_provider(fake)
    coll = make_tasks(1)
    body = {
        "runId": "same",
        "judgeProviderId": p.id,
        "judgeModel": "judge",
        "targets": [{"providerId": p.id, "model": "m1"}],
        "collectionIds": [coll.id],
    }
    assert client.post("/api/runs", json=body).status_code == 201
    client.post("/api/runs/same/stop")
    response = client.post("/api/runs", json=body)
    assert response.status_code == 409
    assert "a run named 'same' exists" in response.get_json()["error"]


def test_results_filter_by_model_name(app, client):
    run, (t1, t2) = make_run("two", targets=(("local", "m1"), ("remote", "m2")))
    for n in range(3):
        add_item(run, t1, f"a{n}", score=50.0)
    add_item(run, t2, "b0", score=60.0)
    for value, rows in (("m1", 3), ("m2", 1), ("remote/m2", 1), (str(t1.id), 3), ("nope", 0)):
        page = BeautifulSoup(client.get(f"/runs/two/results?model={value}").text, "html.parser")
        assert len(page.select("#results-table tbody tr[id^=item-]")) == rows, value

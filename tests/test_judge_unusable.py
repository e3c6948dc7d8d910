"""A judge that cannot fit the schema: missing rubric scores count 0; a judge whose output is
unusable time after time pauses the run early instead of burning every item."""

import json

import pytest

from app.db.models import COMPLETED
from app.db.models import FAILED
from app.db.models import WAITING_FOR_JUDGE
from app.db.models import Item
from app.db.models import Run
from app.runs.state import run_state
from tests.engine_helpers import FakeClock
from tests.engine_helpers import call_kind
from tests.engine_helpers import calls
from tests.engine_helpers import drive
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks
from tests.engine_helpers import start_run

RUBRIC = [
    {"id": "facts", "text": "facts right", "weight": 2, "max_score": 4},
    {"id": "tone", "text": "polite", "weight": 1, "max_score": 1},
]


@pytest.fixture
def config(app):
    return dict(app.config)


def judge_says(fake, text):
    def responder(call):
        return {"text": text} if call_kind(call)[0] == "judge" else None

    fake.responder = responder


def test_a_judge_leaving_out_rubric_scores_scores_each_item_once(app, fake, config):
    p = make_provider(fake)
    start_run(p, [(p, "m1")], make_tasks(6, rubric=RUBRIC))
    judge_says(fake, json.dumps({"score": 90, "reason": "solid"}))
    assert drive(config, FakeClock())["state"] == "finished"
    items = list(Item.select())
    assert {(i.status, i.evaluation_score) for i in items} == {(COMPLETED, 0.0)}
    assert items[0].evaluation_reason == "solid [no rubric score for facts, tone: counted as 0]"
    assert len(calls(fake, "judge")) == 6  # no repair, no retry


def test_unusable_judgements_in_a_row_pause_the_run_with_an_example(app, fake, config):
    p = make_provider(fake)
    run = start_run(p, [(p, "m1")], make_tasks(40))
    judge_says(fake, "I think this answer is quite good.")
    result = drive(config, FakeClock())
    assert result["state"] == "paused"
    reason = Run.get_by_id(run.id).control_reason
    assert reason.startswith("the judge's output does not fit the schema: the reply is not valid")
    assert "5 judgements in a row" in reason and "'I think this answer is quite good.'" in reason
    # Five judgements, each with its one repair: not 40 items retried and repaired.
    assert len(calls(fake, "judge")) == 10
    assert Item.select().where(Item.status == FAILED).count() == 0
    assert Item.select().where(Item.status == WAITING_FOR_JUDGE).count() == 40


def test_a_usable_judgement_in_between_starts_the_count_again(app, fake, config):
    p = make_provider(fake)
    start_run(p, [(p, "m1")], make_tasks(8), settings={"maxAttempts": 1})
    seen = []

    def responder(call):
        if call_kind(call)[0] != "judge":
            return None
        seen.append(call)
        # A bad judgement takes two calls (the repair): calls 7, 14 are the 4th and 8th
        # judgements, which are fine, so there are never five bad ones in a row.
        good = len(seen) % 7 == 0
        return {"text": json.dumps({"score": 50, "reason": "ok"}) if good else "nope"}

    fake.responder = responder
    result = drive(config, FakeClock())
    assert result["state"] == "finished" and run_state(Run.get()) == "finished"
    assert Item.select().where(Item.status == COMPLETED).count() == 2
    assert Item.select().where(Item.status == FAILED).count() == 6

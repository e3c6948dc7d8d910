"""Re-judging an item whose task has checks: its new score combines the checks and the new
judgement by the run's scoreWeights exactly as the engine's first judgement did, a failed gate
keeps it auto-failed, and a run without a judge has nothing to re-judge."""

import pytest

from app.db.models import COMPLETED
from app.db.models import Item
from app.errors import Conflict
from app.runs.retries import rejudge_item
from app.scoring.score import Score
from app.scoring.score import combine
from app.scoring.task_checks import checks_weight
from app.scoring.task_checks import weights_of
from tests.engine_helpers import FakeClock
from tests.engine_helpers import drive
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks
from tests.engine_helpers import start_run

SAYS_BANANA = [{"type": "icontains", "value": "banana"}]  # the fake answers "fake answer"


def _judge_says(fake, score):
    fake.responder = lambda call: (
        {"text": f'{{"score": {score}, "reason": "second look"}}'}
        if "response_format" in (call["body"] or {})
        else None
    )


def _run(app, fake, checks, **spec):
    p = make_provider(fake)
    run = start_run(p, [(p, "m1")], make_tasks(1, checks=checks), **spec)
    Item.update(checks=checks).execute()
    assert drive(dict(app.config), FakeClock())["state"] == "finished"
    return run


def _rejudge(app, run, fake, score):
    _judge_says(fake, score)
    rejudge_item(run.run_id, Item.get().id)
    assert drive(dict(app.config), FakeClock())["state"] == "finished"
    return Item.get()


@pytest.mark.parametrize("weights", [None, {"checks": 0.25}])
def test_a_rejudged_score_combines_the_checks_and_the_judge_as_the_engine_does(app, fake, weights):
    spec = {"scoreWeights": weights} if weights else {}
    run = _run(app, fake, SAYS_BANANA, **spec)
    item = _rejudge(app, run, fake, 90)
    checks = Score.of(0, "no banana", by="checks")
    judged = Score.of(90, "second look", by="rubric")
    share = checks_weight(item, weights, judge=True)
    expected = combine([checks, judged], weights_of([checks, judged], share))
    assert item.status == COMPLETED and item.evaluation_score == expected.score
    assert item.evaluation_score != 90.0 and item.check_score == 0.0


def test_a_gate_failed_item_stays_auto_failed_after_a_rejudge(app, fake):
    run = _run(app, fake, [{"type": "icontains", "value": "banana", "gate": True}])
    item = _rejudge(app, run, fake, 90)
    assert item.status == COMPLETED and item.auto_fail and item.evaluation_score == 0.0
    assert "banana" in item.auto_fail_reason


def test_an_item_of_a_run_without_a_judge_cannot_be_rejudged(app, fake):
    run = _run(
        app,
        fake,
        [{"type": "icontains", "value": "answer"}],
        judgeProviderId=None,
        judge_model=None,
    )
    with pytest.raises(Conflict, match="no judge"):
        rejudge_item(run.run_id, Item.get().id)
    assert Item.get().status == COMPLETED

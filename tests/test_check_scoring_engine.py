"""A task's checks in a real run: the checks scorer scores each answer, the item keeps each
check's result, a failed gate auto-fails it without a judge call, and checks weigh beside the
judge as the run's scoreWeights say."""

import json

import pytest

from app.db.models import COMPLETED
from app.db.models import Item
from app.db.models import Run
from app.errors import ValidationError
from tests.engine_helpers import FakeClock
from tests.engine_helpers import calls
from tests.engine_helpers import drive
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks
from tests.engine_helpers import start_run

SAYS_ANSWER = [{"type": "icontains", "value": "answer"}]  # the fake answers "fake answer"
SAYS_BANANA = [{"type": "icontains", "value": "banana"}]


@pytest.fixture
def config(app):
    return dict(app.config)


def run_with_checks(fake, config, checks, n=1, judge=True, **spec):
    """One run over n tasks with these checks (on the tasks and, as run creation will
    snapshot them, on the items), driven to its end; its items."""
    p = make_provider(fake)
    coll = make_tasks(n, checks=checks, **spec.pop("task_fields", {}))
    if not judge:
        spec.update(judgeProviderId=None, judge_model=None)
    start_run(p, [(p, "m1")], coll, **spec)
    Item.update(checks=checks).execute()
    assert drive(config, FakeClock())["state"] == "finished"
    return list(Item.select().order_by(Item.id))


def test_the_item_keeps_each_checks_result_and_their_score(app, fake, config):
    (item,) = run_with_checks(fake, config, [*SAYS_ANSWER, *SAYS_BANANA])
    assert item.check_score == 50.0
    assert [(r["type"], r["passed"]) for r in item.check_results] == [
        ("icontains", True),
        ("icontains", False),
    ]
    assert all(set(r) == {"type", "score", "passed", "reason", "gate"} for r in item.check_results)


def test_checks_and_judge_weigh_half_each_by_default(app, fake, config):
    (item,) = run_with_checks(fake, config, SAYS_ANSWER)  # checks 100, the fake judge 80
    assert item.status == COMPLETED and item.evaluation_score == 90.0
    assert item.check_score == 100.0 and item.judge_scores == [80.0]
    assert len(calls(fake, "judge")) == 1


def test_score_weights_set_the_checks_share(app, fake, config):
    (item,) = run_with_checks(fake, config, SAYS_ANSWER, scoreWeights={"checks": 0.25})
    assert item.evaluation_score == 85.0  # 100 x 0.25 + 80 x 0.75


def test_a_task_without_rubric_or_references_is_scored_by_its_checks_alone(app, fake, config):
    (item,) = run_with_checks(
        fake, config, SAYS_ANSWER, task_fields={"excellent": "", "rubric": None}
    )
    assert item.status == COMPLETED and item.evaluation_score == 100.0
    assert calls(fake, "judge") == []


def test_a_failed_gate_auto_fails_the_item_with_its_reason_and_no_judge(app, fake, config):
    gate = [{"type": "icontains", "value": "banana", "gate": True}]
    (item,) = run_with_checks(fake, config, [*SAYS_ANSWER, *gate])
    assert item.status == COMPLETED and item.auto_fail and item.evaluation_score == 0.0
    assert item.auto_fail_reason.startswith("icontains: ") and "banana" in item.auto_fail_reason
    assert calls(fake, "judge") == []


def test_checks_that_no_longer_parse_score_the_item_with_a_reason(app, fake, config):
    p = make_provider(fake)
    start_run(p, [(p, "m1")], make_tasks(1, checks=SAYS_ANSWER))
    Item.update(checks=[{"type": "no-such-check"}]).execute()
    assert drive(config, FakeClock())["state"] == "finished"
    item = Item.get()
    assert item.status == COMPLETED and item.check_score == 0.0
    assert "the task's checks cannot be read" in item.evaluation_reason


def test_a_run_without_a_judge_completes_every_item_at_its_answer(app, fake, config):
    items = run_with_checks(fake, config, SAYS_ANSWER, n=2, judge=False)
    assert [(i.status, i.evaluation_score) for i in items] == [(COMPLETED, 100.0)] * 2
    assert all(i.judged_at and i.judge_request_json is None for i in items)
    assert calls(fake, "judge") == [] and calls(fake, "judge_warmup") == []
    run = Run.get()
    assert run.judge_model == "" and run.judge_provider is None


def test_a_run_without_a_judge_whose_tasks_lack_checks_is_refused(app, fake):
    p = make_provider(fake)
    make_tasks(1, prefix="with", checks=SAYS_ANSWER)
    coll = make_tasks(1, prefix="without")
    with pytest.raises(ValidationError) as caught:
        start_run(p, [(p, "m1")], coll, judgeProviderId=None, judge_model=None)
    (error,) = caught.value.errors
    assert error["field"] == "judgeModel"
    assert "a run needs a judge unless every task has checks" in error["message"]
    assert "without0" in error["message"]


@pytest.mark.parametrize("weights", [{"checks": 1.5}, {"checks": "half"}, {"judge": 0.5}, [0.5]])
def test_score_weights_out_of_range_are_refused_naming_the_field(app, fake, weights):
    p = make_provider(fake)
    with pytest.raises(ValidationError) as caught:
        start_run(p, [(p, "m1")], make_tasks(1, checks=SAYS_ANSWER), scoreWeights=weights)
    assert caught.value.errors[0]["field"].startswith("scoreWeights")


def test_an_apocbench_judges_auto_fail_reason_is_kept_on_the_item(app, fake, config):
    apocbench = {"overall_score": 75, "notes": "wrong unit", "auto_fail_reason": "no unit"}
    fake.responder = lambda call: (
        {"text": json.dumps(apocbench)} if call["body"].get("model") == "judge" else None
    )
    (item,) = run_with_checks(fake, config, SAYS_ANSWER)
    assert item.status == COMPLETED and item.auto_fail and item.evaluation_score == 0.0
    assert item.auto_fail_reason == "no unit" and item.check_score == 100.0

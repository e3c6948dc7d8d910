"""Reuse and what an answer was made with: the tools a task offers are part of its context
(another tool set never reuses an answer), and a reused answer is scored by the task's
current checks, not the ones it was first scored by."""

import pytest

from app.db.models import COMPLETED
from app.db.models import Item
from app.db.models import Run
from app.db.models import Task
from app.engine import lease
from app.runs.lifecycle import create_run
from tests.engine_helpers import FakeClock
from tests.engine_helpers import calls
from tests.engine_helpers import drive
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks

SAYS_ANSWER = [{"type": "icontains", "value": "answer"}]  # the fake answers "fake answer"
SAYS_BANANA = [{"type": "icontains", "value": "banana"}]


def _tool(name):
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}


@pytest.fixture
def bench(app, fake):
    """run(judge=True): one run over the collection's one task, driven to its end; its item."""
    p = make_provider(fake)
    coll = make_tasks(1)
    config = dict(app.config)

    def run(judge=True, reuse=False):
        lease.acquire("test-holder", 15.0)
        body = {
            "judgeProviderId": p.id if judge else None,
            "judgeModel": "judge" if judge else None,
            "targets": [{"providerId": p.id, "model": "m1"}],
            "collectionIds": [coll.id],
        }
        made = create_run(body, reuse=reuse)
        drive(config, FakeClock())
        return Item.get(Item.run == Run.get(Run.run_id == made.run_id))

    return run


def test_the_same_tools_reuse_the_answer(bench, fake):
    Task.update(tools=[_tool("lookup")]).execute()
    first = bench()
    assert bench(reuse=True).answer_reused_from == first.id


def test_a_changed_tool_set_reuses_no_answer(bench, fake):
    Task.update(tools=[_tool("lookup")]).execute()
    bench()
    Task.update(tools=[_tool("lookup"), _tool("search")]).execute()
    item = bench(reuse=True)
    assert item.answer_reused_from is None and len(calls(fake, "answer")) == 2


def test_a_reused_answer_is_scored_by_the_current_checks(bench, fake):
    Task.update(checks=SAYS_ANSWER).execute()
    first = bench()
    assert first.check_score == 100.0 and first.evaluation_score == 90.0  # judge 80
    Task.update(checks=SAYS_BANANA).execute()
    item = bench(reuse=True)
    assert item.answer_reused_from == first.id and item.judgement_reused_from is None
    assert item.check_score == 0.0 and not item.check_results[0]["passed"]
    assert item.status == COMPLETED and item.evaluation_score == 40.0  # judged anew beside it


def test_a_reused_answer_in_a_run_without_a_judge_is_scored_by_the_current_checks(bench, fake):
    Task.update(checks=SAYS_ANSWER).execute()
    first = bench(judge=False)
    assert first.evaluation_score == 100.0
    Task.update(checks=SAYS_BANANA).execute()
    item = bench(judge=False, reuse=True)
    assert item.answer_reused_from == first.id and item.status == COMPLETED
    assert (item.check_score, item.evaluation_score) == (0.0, 0.0)
    assert len(calls(fake, "answer")) == 1 and calls(fake, "judge") == []


def test_a_reused_answer_that_fails_a_new_gate_is_auto_failed_without_the_judge(bench, fake):
    Task.update(checks=SAYS_ANSWER).execute()
    bench()
    Task.update(checks=[{"type": "icontains", "value": "banana", "gate": True}]).execute()
    item = bench(reuse=True)
    assert item.status == COMPLETED and item.auto_fail and item.evaluation_score == 0.0
    assert "banana" in item.auto_fail_reason and len(calls(fake, "judge")) == 1


def test_unchanged_checks_reuse_the_judgement_too(bench, fake):
    Task.update(checks=SAYS_ANSWER).execute()
    first = bench()
    item = bench(reuse=True)
    assert item.judgement_reused_from == first.id
    assert (item.evaluation_score, item.check_score) == (90.0, 100.0)

"""A run's items keep their task's checks and tools as they were when the run was made."""

import pytest

from app.catalog.tasks import update_task
from app.db.models import Item
from app.db.models import Task
from app.runs.control import stop_run
from app.runs.lifecycle import create_run
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks

CHECKS = [{"type": "number", "value": 42}]
TOOLS = [{"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}}]


@pytest.fixture
def setup(app):
    provider = make_provider(None, url="http://127.0.0.1:1")
    collection = make_tasks(2, checks=CHECKS, tools=TOOLS)
    return provider, collection


def spec(provider, collection):
    return {
        "judgeProviderId": provider.id,
        "judgeModel": "judge",
        "targets": [{"providerId": provider.id, "model": "m1"}],
        "collectionIds": [collection.id],
    }


def test_each_item_keeps_its_tasks_checks_and_tools(setup):
    run = create_run(spec(*setup))
    items = list(Item.select().where(Item.run == run.id))
    assert len(items) == 2
    assert all(i.checks == CHECKS and i.tools == TOOLS for i in items)


def test_changing_a_tasks_checks_later_leaves_the_runs_items_as_they_were(setup):
    run = create_run(spec(*setup))
    task = Task.get(Task.task_id == "t0")
    update_task(task.id, {"checks": [{"type": "contains", "value": "x"}], "tools": None})
    item = Item.get((Item.run == run.id) & (Item.task_key == "t0"))
    assert item.checks == CHECKS and item.tools == TOOLS


def test_items_of_a_task_without_checks_have_none(app):
    provider = make_provider(None, url="http://127.0.0.1:1")
    run = create_run(spec(provider, make_tasks(1)))
    item = Item.get(Item.run == run.id)
    assert item.checks is None and item.tools is None


def test_the_dataset_hash_changes_when_a_tasks_checks_change(setup):
    first = create_run(spec(*setup))
    stop_run(first.run_id)
    task = Task.get(Task.task_id == "t0")
    update_task(task.id, {"checks": [{"type": "number", "value": 43}]})
    second = create_run(spec(*setup))
    assert first.dataset_hash != second.dataset_hash

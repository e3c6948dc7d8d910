"""The engine reads each task's snapshot once per run (engine/rules.RunTasks): every answer of a
task is scored with the same snapshot and its checks parsed once, not read and parsed again per
answer."""

from types import SimpleNamespace

from app.db.models import Item
from app.engine.rules import RunTasks
from app.scoring.checks.spec import Check
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks
from tests.engine_helpers import start_run

CHECKS = [{"type": "icontains", "value": "answer"}]


def items_of(fake, n_tasks, repeats=2, **task_fields):
    p = make_provider(fake)
    coll = make_tasks(n_tasks, checks=CHECKS, **task_fields)
    start_run(p, [(p, "m1")], coll, settings={"repeats": repeats})
    return list(Item.select().order_by(Item.id))


def test_every_item_of_a_task_gets_the_one_snapshot_read_first(app, fake):
    first, second = items_of(fake, 1)
    tasks = RunTasks()
    task = tasks.of(first)
    Item.update(excellent="changed after the first read").execute()
    assert tasks.of(second) is task and task.excellent == "best"


def test_the_snapshot_carries_the_tasks_checks_parsed_and_its_tools(app, fake):
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    first, _ = items_of(fake, 1, tools=tools)
    task = RunTasks().of(first)
    assert [type(c) for c in task.parsed_checks] == [Check]
    assert task.tools == tools and task.checks == CHECKS


def test_checks_that_cannot_be_read_are_kept_as_the_error(app, fake):
    first, _ = items_of(fake, 1)
    Item.update(checks=[{"type": "no-such-check"}]).execute()
    # As an answer's claim gives it: the id and task key, the task read from the row. (The
    # Item loaded before the update holds every field, old checks included, and would be
    # taken as a judgement's claim that carries its task.)
    claimed = SimpleNamespace(id=first.id, task_key=first.task_key)
    assert isinstance(RunTasks().of(claimed).parsed_checks, Exception)


def test_tasks_of_different_keys_are_kept_apart(app, fake):
    items = items_of(fake, 2, repeats=1)
    tasks = RunTasks()
    assert [tasks.of(i).task_key for i in items] == ["t0", "t1"]


def test_past_its_limit_the_first_task_read_is_dropped_and_read_again(app, fake):
    a, b = items_of(fake, 2, repeats=1)
    tasks = RunTasks(limit=1)
    kept = tasks.of(a)
    tasks.of(b)
    assert tasks.of(a) is not kept and tasks.of(a).task_key == "t0"

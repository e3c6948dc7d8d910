"""A big run makes its first tasks' items when it is created and the rest as the engine claims
them (runs/creation.py): the same items in the same order, counted in full from the start, and
every item exactly once after a crash, a pause or a stop while they are still being made."""

import pytest

from app.db.models import CANT_BE_FINISHED
from app.db.models import COMPLETED
from app.db.models import NEW
from app.db.models import Item
from app.db.models import PendingItems
from app.db.models import Provider
from app.db.models import Run
from app.db.models import RunLog
from app.db.models import Task
from app.engine import lease
from app.engine.orchestrator import tick
from app.errors import ValidationError
from app.runs import creation
from app.runs import lifecycle
from app.runs.control import delete_run
from app.runs.control import pause_run
from app.runs.control import resume_run
from app.runs.control import stop_run
from app.runs.counts import tally
from app.runs.dto import run_summary
from tests.engine_helpers import FakeClock
from tests.engine_helpers import calls
from tests.engine_helpers import drive
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks
from tests.engine_helpers import start_run

HOLDER = "test-holder"
TASKS = 7
REPEATS = 2
PLANNED = TASKS * 2 * REPEATS  # two targets


@pytest.fixture
def config(app):
    # The lease is renewed at the fake clock's time but read at the real one (runs/state.py):
    # a busy machine (PostgreSQL, load 30 on 2 cores) drove a run for over 15 s, and it read
    # "stopped" (orchestrator gone) mid-test. A lease longer than any test keeps it running.
    return dict(
        app.config, BACKOFF_BASE_SECONDS=2.0, BACKOFF_MAX_SECONDS=60.0, LEASE_SECONDS=3600.0
    )


@pytest.fixture
def small_batches(monkeypatch):
    """A 'big' run of a few tasks: 3 made at the start, 2 more per batch after."""
    monkeypatch.setattr(lifecycle, "FIRST_TASKS", 3)
    monkeypatch.setattr(creation, "BATCH_TASKS", 2)


def start(fake, collection=None, **spec):
    p = Provider.get_or_none(Provider.name == "fake") or make_provider(fake)
    collection = collection or make_tasks(TASKS)
    settings = {"repeats": REPEATS, **spec.pop("settings", {})}
    return start_run(p, [(p, "m1"), (p, "m2", {"temperature": 0.5})], collection, settings=settings)


def items_of(run):
    """What identifies each item and what it asks, in id order (the order claims take)."""
    query = Item.select().where(Item.run == run).order_by(Item.id)
    return [
        (i.target.position, i.task_key, i.repeat, i.seed, i.context_hash, i.question, i.status)
        for i in query
    ]


def keys_of(run):
    query = Item.select().where(Item.run == run)
    return sorted((i.target.position, i.task_key, i.repeat) for i in query)


def tick_until(config, act):
    """One tick in which `act` (a pause, a stop) happens as the engine's first event comes."""
    acted = []

    def on_event(event):
        if not acted:
            acted.append(act())

    return tick(config, holder=HOLDER, now=FakeClock(), on_event=on_event)


def every_item_once():
    return sorted((t, f"t{n}", r) for t in (0, 1) for n in range(TASKS) for r in range(REPEATS))


def test_a_big_run_starts_with_its_first_tasks_items(app, fake, small_batches):
    run = start(fake)
    assert Item.select().where(Item.run == run).count() == 3 * REPEATS
    assert creation.pending(run)


def test_a_big_run_ends_with_the_items_a_run_made_at_once_in_the_same_order(
    app, fake, config, small_batches, monkeypatch
):
    collection = make_tasks(TASKS)
    big = start(fake, collection)
    drive(config, FakeClock())
    monkeypatch.setattr(lifecycle, "FIRST_TASKS", 1000)
    lease.release(HOLDER)
    at_once = start(fake, collection)
    assert not creation.pending(at_once)
    made = [row[:-1] for row in items_of(big)]
    assert made == [row[:-1] for row in items_of(at_once)]
    assert Run.get_by_id(big.id).dataset_hash == Run.get_by_id(at_once.id).dataset_hash
    assert not creation.pending(big)


def test_a_big_run_answers_and_judges_every_item_once(app, fake, config, small_batches):
    run = start(fake)
    result = drive(config, FakeClock())
    assert result["state"] == "finished"
    assert keys_of(run) == every_item_once()
    assert {row[-1] for row in items_of(run)} == {COMPLETED}
    assert len(calls(fake, "answer")) == PLANNED
    assert len(calls(fake, "judge")) == PLANNED


def test_a_big_run_is_counted_in_full_before_its_items_are_made(app, fake, small_batches):
    run = start(fake)
    kept = tally(run)
    assert kept.total == PLANNED and kept.by_status[NEW] == PLANNED
    first, second = (t.id for t in run.targets)
    assert kept.new_by_target == {first: TASKS * REPEATS, second: TASKS * REPEATS}
    assert sum(run_summary(run)["counts"].values()) == PLANNED
    started = RunLog.get((RunLog.run == run) & (RunLog.event == "run_started"))
    assert f"= {PLANNED} items" in started.message


def test_a_crash_while_items_are_made_leaves_a_run_that_ends_with_every_item_once(
    app, fake, config, small_batches, monkeypatch
):
    run = start(fake)
    assert creation.make_more(run)  # a batch written before the crash

    def crash(pks):
        yield from list(lifecycle._snapshots(pks))[:1]
        raise RuntimeError("the process died mid-batch")

    monkeypatch.setattr(creation, "_snapshots", crash)
    monkeypatch.setattr(lifecycle, "INSERT_BATCH", 1)  # a row is written before the crash
    with pytest.raises(RuntimeError):
        creation.make_more(run)
    monkeypatch.undo()
    monkeypatch.setattr(creation, "BATCH_TASKS", 2)
    assert Item.select().where(Item.run == run).count() == 5 * REPEATS  # the batch rolled back
    assert drive(config, FakeClock())["state"] == "finished"
    assert keys_of(run) == every_item_once()
    assert len(calls(fake, "answer")) == PLANNED


def test_a_run_paused_while_items_are_made_makes_the_rest_when_resumed(
    app, fake, config, small_batches
):
    run = start(fake)
    assert tick_until(config, lambda: pause_run(run.run_id))["state"] == "paused"
    assert creation.pending(run)
    resume_run(run.run_id)
    assert drive(config, FakeClock())["state"] == "finished"
    assert keys_of(run) == every_item_once()


def test_a_run_stopped_while_items_are_made_makes_the_rest_when_continued(
    app, fake, config, small_batches
):
    run = start(fake)
    assert tick_until(config, lambda: stop_run(run.run_id))["state"] == "stopped"
    assert creation.pending(run)
    resume_run(run.run_id)
    assert drive(config, FakeClock())["state"] == "finished"
    assert keys_of(run) == every_item_once()


def test_a_deleted_run_takes_its_items_still_to_make_with_it(app, fake, small_batches):
    run = start(fake)
    stop_run(run.run_id)
    delete_run(run.run_id)
    assert PendingItems.select().count() == 0


def test_a_big_runs_tasks_that_cannot_be_rendered_are_logged_with_its_last_items(
    app, fake, config, small_batches
):
    collection = make_tasks(TASKS)
    Task.update(question="Hello {name}", vars={}).where(Task.task_id == "t5").execute()
    run = start(fake, collection)
    drive(config, FakeClock())
    cant = Item.select().where((Item.run == run) & (Item.status == CANT_BE_FINISHED))
    assert sorted({i.task_key for i in cant}) == ["t5"] and cant.count() == 2 * REPEATS
    lines = RunLog.select().where((RunLog.run == run) & (RunLog.event == "cant_be_finished"))
    assert [line.data["taskId"] for line in lines] == ["t5"]


def test_a_big_run_none_of_whose_tasks_can_be_rendered_is_refused(app, fake, small_batches):
    collection = make_tasks(TASKS, question="Hello {name}", vars={})
    with pytest.raises(ValidationError) as exc:
        start(fake, collection)
    assert [e["field"] for e in exc.value.errors] == [f"task t{n}" for n in range(TASKS)]
    assert Run.select().count() == 0

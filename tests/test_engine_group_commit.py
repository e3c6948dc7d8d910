"""The engine's group commit (claims.record): records of workers that finish together are
written in one transaction, each committed before its worker goes on, none lost to another's
error nor to a stop."""

import threading
import time

import pytest

from app.db.connection import database
from app.db.models import NEW
from app.db.models import Item
from app.db.models import RunLog
from app.engine import claims
from app.engine.orchestrator import tick
from app.runs.control import resume_run
from app.runs.control import stop_run
from tests.engine_helpers import FakeClock
from tests.engine_helpers import calls
from tests.engine_helpers import drive
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks
from tests.engine_helpers import start_run
from tests.factories import add_item
from tests.factories import make_run

WAIT_SECONDS = 20.0


@pytest.fixture(autouse=True)
def _sqlite_only(app):
    # After `app`, which binds the test's database: before it, `database` was still the one
    # an earlier test module left bound (SQLite), and a PostgreSQL test went on.
    if database.is_postgres:
        pytest.skip("PostgreSQL records each outcome in a transaction of its own")


def _until(condition, what):
    """Until `condition()` holds (other threads make it so), or fail naming `what`."""
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened: {what}")
        threading.Event().wait(0.002)


def _record_in_threads(writes):
    """record(write) of each of `writes` in a thread of its own, all queued behind the write
    lock before any is written; (results by index, errors by index)."""
    results, errors = {}, {}

    def worker(index, write):
        with database.connection_context():
            try:
                results[index] = claims.record(write)
            except Exception as exc:  # noqa: BLE001 - the test reads it
                errors[index] = exc

    threads = [threading.Thread(target=worker, args=(i, w)) for i, w in enumerate(writes)]
    with claims.writer():  # another write in progress: every record waits for it
        for t in threads:
            t.start()
        _until(lambda: claims.records_waiting() == len(writes), "every record waiting")
    for t in threads:
        t.join(WAIT_SECONDS)
    return results, errors


def _answer(item, writers):
    def write():
        writers.add(threading.get_ident())
        return claims.update_claimed(item.id, NEW, 0, {"answer": f"answer {item.task_key}"})

    return write


def test_records_that_wait_together_are_written_by_one_thread_in_one_transaction(app):
    run, (target,) = make_run("group", status="PENDING", control="running")
    items = [add_item(run, target, f"t{i}", status=NEW) for i in range(4)]
    writers = set()
    results, errors = _record_in_threads([_answer(item, writers) for item in items])
    assert errors == {}
    assert results == {0: 1, 1: 1, 2: 1, 3: 1}
    assert len(writers) == 1
    assert [i.answer for i in Item.select().order_by(Item.id)] == [f"answer t{i}" for i in range(4)]


def test_a_record_that_fails_leaves_the_others_of_its_transaction_written(app):
    run, (target,) = make_run("group-fail", status="PENDING", control="running")
    items = [add_item(run, target, f"t{i}", status=NEW) for i in range(3)]
    writers = set()

    def failing():
        claims.update_claimed(items[1].id, NEW, 0, {"answer": "never kept"})
        raise ValueError("a bug in one record")

    writes = [_answer(items[0], writers), failing, _answer(items[2], writers)]
    results, errors = _record_in_threads(writes)
    assert list(errors) == [1] and isinstance(errors[1], ValueError)
    assert results == {0: 1, 2: 1}
    answers = {i.task_key: i.answer for i in Item.select()}
    assert answers == {"t0": "answer t0", "t1": None, "t2": "answer t2"}


def test_a_stop_while_answers_wait_to_be_written_keeps_them_and_asks_none_again(
    app, fake, monkeypatch
):
    p = make_provider(fake, max_concurrency=4)
    run = start_run(p, [(p, "m1")], make_tasks(8))
    releasing = threading.Event()
    release = claims.release

    def release_seen(item_id, attempts):
        releasing.set()
        return release(item_id, attempts)

    monkeypatch.setattr(claims, "release", release_seen)
    held = threading.Event()
    waited = []

    def hold_writes():
        # Another write in progress while the answers in flight come back: their records wait
        # together; the run is stopped then, and the stop gives back the claims in flight
        # while the records still wait.
        with database.connection_context(), claims.writer():
            held.set()
            _until(lambda: claims.records_waiting() >= 2, "answers waiting together")
            waited.append(claims.records_waiting())
            stop_run(run.run_id)
            releasing.wait(WAIT_SECONDS)

    blocker = threading.Thread(target=hold_writes, daemon=True)
    starting = threading.Lock()

    def responder(call):
        # The fake answers each request in a thread of its own: the first questions arrive
        # together, and only one of them may start the blocker (a second start() raised in the
        # fake, which closed that connection unanswered, and the adapter sent the question
        # again: the "second ask" the test saw, its own doing, not the engine's).
        body = call["body"] or {}
        if body.get("model") == "m1" and "Question" in str(body):
            with starting:
                if blocker.ident is None:  # not started yet
                    blocker.start()
            held.wait(WAIT_SECONDS)
        return None

    fake.responder = responder
    clock = FakeClock()
    assert (
        tick(app.config, holder="test-holder", now=clock, slice_seconds=60)["outcome"] == "halted"
    )
    blocker.join(WAIT_SECONDS)
    assert releasing.is_set()
    kept = {i.question: i.id for i in Item.select().where(Item.answer.is_null(False))}
    assert len(kept) >= waited[0] >= 2  # every answer that waited was written
    abandoned = [line.data["itemId"] for line in RunLog.select().where(RunLog.event == "abandoned")]
    assert not Item.select().where(Item.id.in_(abandoned) & Item.answer.is_null(False)).exists()

    fake.responder = None
    resume_run(run.run_id)
    assert drive(app.config, clock)["state"] == "finished"
    asked = [text for _kind, _model, text in calls(fake, "answer")]
    assert {q: asked.count(q) for q in kept} == {q: 1 for q in kept}  # none asked again
    assert set(asked) == {f"Question t{i}?" for i in range(8)}

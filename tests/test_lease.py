"""The single-orchestrator lease: one holder works, a stale lease is taken over, crashes recover."""

import datetime as dt
import threading

import pytest

from app.clock import utcnow
from app.db.connection import database
from app.db.models import COMPLETED
from app.db.models import NEW
from app.db.models import Item
from app.db.models import Lease
from app.db.models import Run
from app.db.models import RunLog
from app.engine import lease
from app.engine.claims import claim
from app.engine.foreground import run_foreground
from app.engine.orchestrator import tick
from app.errors import Conflict
from app.runs.control import pause_run
from app.runs.control import resume_run
from app.runs.control import stop_run
from app.runs.lifecycle import create_run
from app.runs.state import run_state
from tests.engine_helpers import FakeClock
from tests.engine_helpers import calls
from tests.engine_helpers import drive
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks
from tests.engine_helpers import start_run

T0 = dt.datetime(2030, 1, 1, 12, 0, 0)


def test_first_holder_takes_the_lease(app):
    assert lease.acquire("a", 10, T0)
    row = Lease.get()
    assert row.holder == "a" and row.expires_at == T0 + dt.timedelta(seconds=10)


def test_another_holder_is_refused_while_the_lease_is_fresh(app):
    lease.acquire("a", 10, T0)
    assert not lease.acquire("b", 10, T0 + dt.timedelta(seconds=9))
    assert Lease.get().holder == "a"


def test_the_holder_renews_its_lease(app):
    lease.acquire("a", 10, T0)
    assert lease.acquire("a", 10, T0 + dt.timedelta(seconds=8))
    row = Lease.get()
    assert row.expires_at == T0 + dt.timedelta(seconds=18) and row.acquired_at == T0


def test_a_stale_lease_is_taken_over(app):
    lease.acquire("a", 10, T0)
    assert lease.acquire("b", 10, T0 + dt.timedelta(seconds=11))
    assert Lease.get().holder == "b"
    assert not lease.acquire("a", 10, T0 + dt.timedelta(seconds=12))


def test_release_lets_the_next_holder_in_at_once(app):
    lease.acquire("a", 10, T0)
    lease.release("a")
    assert lease.acquire("b", 10, T0 + dt.timedelta(seconds=1))


def test_process_holder_names_host_and_pid(app):
    import os

    assert f":{os.getpid()}:" in lease.process_holder()


def test_takeover_stops_the_dead_holders_run_and_releases_its_claim(app, fake):
    p = make_provider(fake)
    run = start_run(p, [(p, "m1")], make_tasks(2), holder="a")
    clock = FakeClock()
    # Holder "a" claims an item, then dies with the request in flight.
    claimed = claim(run.id, NEW, clock(), clock() + dt.timedelta(seconds=60), run.targets[0].id)
    assert claimed is not None
    clock.advance(20)  # past a's lease
    result = tick(app.config, holder="b", now=clock)
    assert result["runId"] is None  # nothing restarts on its own
    run = Run.get_by_id(run.id)
    assert run_state(run) == "stopped" and run.control_reason == lease.INTERRUPTED_REASON
    first = Item.get_by_id(claimed.id)
    assert first.status == NEW and first.attempts == 0 and first.claimed_until is None
    assert first.next_retry_at is None
    assert [e.event for e in run.logs][-1] == "interrupted"
    resume_run(run.run_id)
    assert drive(app.config, clock, holder="b")["state"] == "finished"
    assert Item.select().where(Item.status == COMPLETED).count() == 2
    assert len(calls(fake, "answer")) == 2


def test_a_run_created_before_the_first_lease_ever_is_worked_not_stopped(app, fake):
    p = make_provider(fake)
    # A new server's first second: the run is in, no orchestrator has ticked yet.
    run = create_run(
        {
            "judgeProviderId": p.id,
            "judgeModel": "judge",
            "targets": [{"providerId": p.id, "model": "m1"}],
            "collectionIds": [make_tasks(2).id],
        }
    )
    assert Lease.select().count() == 0
    assert drive(app.config, FakeClock(), holder="first")["state"] == "finished"
    assert not RunLog.select().where((RunLog.run == run) & (RunLog.event == "interrupted")).exists()


def test_takeover_keeps_pause_and_stop(app, fake):
    p = make_provider(fake)
    run = start_run(p, [(p, "m1")], make_tasks(1), holder="a")
    pause_run(run.run_id)
    lease.acquire("b", 10, utcnow() + dt.timedelta(seconds=60))
    run = Run.get_by_id(run.id)
    assert run_state(run) == "paused" and run.control_reason == "paused by you"


def test_takeover_keeps_a_run_continued_after_the_crash(app, fake):
    p = make_provider(fake)
    run = start_run(p, [(p, "m1")], make_tasks(1), holder="a")
    clock = FakeClock()
    lease.acquire("a", 10, clock())
    clock.advance(20)  # "a" died; the person sees the run interrupted and continues it
    stop_run(run.run_id, now=clock())
    resume_run(run.run_id, now=clock())
    clock.advance(1)
    assert lease.acquire("b", 10, clock())
    assert run_state(Run.get_by_id(run.id)) == "running"


def test_takeover_spares_the_run_the_new_holder_works_on(app, fake):
    p = make_provider(fake)
    run = start_run(p, [(p, "m1")], make_tasks(1), holder="a")
    lease.acquire("b", 10, utcnow() + dt.timedelta(seconds=60), spare_run_id=run.run_id)
    assert run_state(Run.get_by_id(run.id)) == "running"


def test_a_second_orchestrator_does_no_work(app, fake):
    p = make_provider(fake)
    start_run(p, [(p, "m1")], make_tasks(2), holder="a")
    clock = FakeClock()
    result = tick(app.config, holder="b", now=clock)
    assert result == {"held": False, "runId": None, "state": None, "idle": True}
    assert fake.chat_calls() == []
    assert tick(app.config, holder="a", now=clock)["done"] > 0


def test_two_orchestrators_ticking_at_once_only_one_works(app, fake):
    p = make_provider(fake)
    coll = make_tasks(6)
    fake.default_latency = 0.01
    worked = {"a": 0, "b": 0}
    finished = threading.Event()
    config = dict(app.config, TICK_SLICE_SECONDS=0.2)

    def orchestrate(holder):
        with database.connection_context():
            for _ in range(500):
                result = tick(config, holder=holder)
                if result["held"]:
                    worked[holder] += result.get("done", 0)
                    if result["state"] == "finished":
                        finished.set()
                if finished.wait(0.01):
                    return

    threads = [threading.Thread(target=orchestrate, args=(h,)) for h in ("a", "b")]
    for t in threads:
        t.start()
    while Lease.get_or_none() is None:  # one of them holds the lease: now start a run
        finished.wait(0.01)
    create_run(
        {
            "judgeProviderId": p.id,
            "judgeModel": "judge",
            "collectionIds": [coll.id],
            "targets": [{"providerId": p.id, "model": "m1"}],
        }
    )
    for t in threads:
        t.join(timeout=30)
    assert finished.is_set()
    assert sorted(worked.values()) == [0, 12]  # 6 answers + 6 judgements, all by one holder
    assert len(calls(fake, "answer")) == 6


def test_run_foreground_refuses_while_another_holder_is_alive(app, fake):
    p = make_provider(fake)
    run = start_run(p, [(p, "m1")], make_tasks(1), holder="serve-host:1:abc")
    with pytest.raises(Conflict, match="held by a process on host serve-host .pid 1"):
        run_foreground(run.run_id, app.config, holder="cli")


def test_run_foreground_works_the_run_to_the_end_and_releases_the_lease(app, fake):
    p = make_provider(fake)
    run = start_run(p, [(p, "m1")], make_tasks(2), holder="cli")
    seen = []
    state = run_foreground(run.run_id, app.config, on_event=seen.append, holder="cli")
    assert state == "finished" and seen[-1]["event"] == "run_finished"
    assert lease.acquire("other", 10)  # released: no need to wait for expiry


def test_run_foreground_is_not_cut_into_the_web_apps_slices(app, fake):
    # The web app's ticks end after TICK_SLICE_SECONDS (its scheduler runs hooks between
    # them); the CLI's run has no such hooks and works in slices of its own, so even a web
    # slice of zero does not keep it from working.
    p = make_provider(fake)
    run = start_run(p, [(p, "m1")], make_tasks(3), holder="cli")
    config = dict(app.config, TICK_SLICE_SECONDS=0.0)
    assert run_foreground(run.run_id, config, holder="cli") == "finished"


def test_run_foreground_stop_event_stops_the_run_resumably(app, fake):
    p = make_provider(fake)
    run = start_run(p, [(p, "m1")], make_tasks(3), holder="cli")
    stop = threading.Event()

    def on_event(event):
        if event["event"] == "item_done":
            stop.set()

    state = run_foreground(run.run_id, app.config, on_event=on_event, stop_event=stop, holder="cli")
    assert state == "stopped"
    assert "interrupted" in Run.get_by_id(run.id).control_reason
    kept = [i.question for i in Item.select().where(Item.run == run, Item.answer.is_null(False))]
    assert kept  # the answer that set the stop
    resume_run(run.run_id)
    assert run_foreground(run.run_id, app.config, holder="cli") == "finished"
    asked = [message for _, _, message in calls(fake, "answer")]
    # Every task answered; an answer kept at the stop is never asked again (a call in flight
    # when the stop came is cancelled and asked again after the resume, uncounted).
    assert set(asked) == {i.question for i in Item.select().where(Item.run == run)}
    assert all(asked.count(question) == 1 for question in kept)

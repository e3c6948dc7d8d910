"""Schedules with an injected clock: once per fire time, across a restart, missed fires
coalesced, a fire during an active run queued, and the scheduler thread's hook."""

import datetime as dt

import pytest

from app.db.connection import database
from app.db.models import Run
from app.db.models import RunLog
from app.db.models import Template
from app.engine import lease
from app.engine import scheduler
from app.engine.orchestrator import tick
from app.runs.state import run_state
from app.schedules import cron
from app.schedules.firing import claim_fire
from app.schedules.firing import fire_due
from app.schedules.templates import create_template
from tests.conftest import make_app
from tests.engine_helpers import FakeClock
from tests.engine_helpers import drive
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks

HOLDER = "test-holder"
T0 = dt.datetime(2025, 3, 1, 0, 0)  # a Saturday, 00:00 UTC


@pytest.fixture
def spec(app, fake):
    lease.acquire(HOLDER, 15.0, T0)
    provider = make_provider(fake)
    collection = make_tasks(2)
    return {
        "judgeProviderId": provider.id,
        "judgeModel": "judge",
        "collectionIds": [collection.id],
        "targets": [{"providerId": provider.id, "model": "m1"}],
    }


def daily(spec, cron_expr="0 3 * * *", timezone="UTC", now=T0):
    return create_template(
        {"name": "daily", "spec": spec, "schedule": {"cron": cron_expr, "timezone": timezone}},
        now=now,
    )


def scheduled_runs():
    return list(Run.select().where(Run.triggered_by == "scheduled").order_by(Run.id))


def step_through(clock, until, minutes=10):
    """Check the schedules every `minutes` (as the scheduler thread would) until `until`."""
    while clock() < until:
        clock.advance(minutes * 60)
        fire_due(clock())


def test_the_next_fire_time_follows_the_time_zone():
    # 03:00 in Berlin is 02:00 UTC in winter and 01:00 UTC in summer.
    assert cron.next_fire("0 3 * * *", "Europe/Berlin", T0) == dt.datetime(2025, 3, 1, 2, 0)
    summer = dt.datetime(2025, 6, 1, 0, 0)
    assert cron.next_fire("0 3 * * *", "Europe/Berlin", summer) == dt.datetime(2025, 6, 1, 1, 0)


def test_nothing_fires_before_the_time(spec):
    daily(spec)
    assert fire_due(T0 + dt.timedelta(hours=2, minutes=59)) == []
    assert Run.select().count() == 0


def test_a_daily_schedule_fires_once_per_day(spec):
    daily(spec)
    clock = FakeClock(T0)
    step_through(clock, T0 + dt.timedelta(days=3))
    runs = scheduled_runs()
    assert len(runs) == 3
    assert [r.created_at.date() for r in runs] == [dt.date(2025, 3, d) for d in (1, 2, 3)]
    assert all(r.created_at.hour == 3 for r in runs)


def test_a_daily_schedule_fires_once_per_day_across_a_restart(spec, tmp_path):
    daily(spec)
    clock = FakeClock(T0)
    step_through(clock, T0 + dt.timedelta(days=1, hours=3, minutes=5))  # fired day 1 and 2
    assert len(scheduled_runs()) == 2
    # A restart: a new app (and everything in memory) on the same database.
    database.close()
    make_app(tmp_path)
    fire_due(clock())  # the same moment again after the restart: nothing new
    assert len(scheduled_runs()) == 2
    step_through(clock, T0 + dt.timedelta(days=3))
    assert [r.created_at.date() for r in scheduled_runs()] == [
        dt.date(2025, 3, d) for d in (1, 2, 3)
    ]


def test_fire_times_missed_while_down_run_once_and_the_log_says_so(spec):
    daily(spec)
    fire_due(T0 + dt.timedelta(hours=3, minutes=1))  # day 1 fires on time
    # The app is down from day 1 04:00 until day 4 05:00: days 2, 3 and 4 were missed.
    back = T0 + dt.timedelta(days=3, hours=5)
    runs = fire_due(back)
    assert len(runs) == 1
    assert len(scheduled_runs()) == 2
    note = runs[0].trigger_note
    assert "2 earlier fire time(s)" in note and "coalesced" in note
    logged = RunLog.get((RunLog.run == runs[0]) & (RunLog.event == "schedule_fired"))
    assert "coalesced" in logged.message
    template = Template.get()
    assert template.next_fire_at == dt.datetime(2025, 3, 5, 3, 0)
    assert fire_due(back + dt.timedelta(minutes=1)) == []


def test_a_late_single_fire_says_it_was_late(spec):
    daily(spec)
    (run,) = fire_due(T0 + dt.timedelta(hours=5))
    assert "late" in run.trigger_note


def test_a_fire_during_an_active_run_queues_and_starts_after_it(app, spec, client):
    daily(spec)
    client.post("/api/runs", json=spec)  # a run by hand, active at 03:00
    # Its orchestrator is alive now, too: a run whose orchestrator's lease lapsed was
    # interrupted, and an interrupted run keeps no new one waiting.
    lease.acquire(HOLDER, 15.0)
    clock = FakeClock(T0 + dt.timedelta(hours=3, seconds=5))
    (fired,) = fire_due(clock())
    assert run_state(fired) == "queued"
    config = dict(app.config)
    drive(config, clock, holder=HOLDER)  # the run by hand finishes
    assert tick(config, holder=HOLDER, now=clock)["runId"] == fired.run_id
    drive(config, clock, holder=HOLDER)
    assert run_state(Run.get_by_id(fired.id)) == "finished"


def test_a_fire_time_is_claimed_once_by_two_checkers(spec):
    template = daily(spec)
    now = T0 + dt.timedelta(hours=3, seconds=1)
    # Two processes read the due template at the same moment; only one claim can win.
    first, second = Template.get_by_id(template.id), Template.get_by_id(template.id)
    assert claim_fire(first, now) == [dt.datetime(2025, 3, 1, 3, 0)]
    assert claim_fire(second, now) is None


def test_a_fire_that_cannot_start_a_run_is_recorded_on_the_template(spec):
    template = daily(spec)
    bad = {**spec, "collectionIds": [999]}
    Template.update(spec=bad).where(Template.id == template.id).execute()
    assert fire_due(T0 + dt.timedelta(hours=3, seconds=1)) == []
    stored = Template.get_by_id(template.id)
    assert "no collection with id 999" in stored.last_error
    assert stored.next_fire_at == dt.datetime(2025, 3, 2, 3, 0)  # the fire time is used up


def test_a_disabled_schedule_never_fires(spec):
    create_template(
        {"name": "off", "spec": spec, "schedule": {"cron": "* * * * *", "enabled": False}},
        now=T0,
    )
    assert fire_due(T0 + dt.timedelta(days=2)) == []


def test_the_scheduler_thread_runs_hooks_after_a_tick_that_holds_the_lease(app):
    seen = []
    lease.release(HOLDER)
    scheduler.work(dict(app.config), hooks=(lambda config: seen.append("hook"),))
    assert seen == ["hook"]


def test_the_scheduler_thread_skips_hooks_without_the_lease(app):
    seen = []
    lease.acquire("another-process", 600.0)
    scheduler.work(dict(app.config), hooks=(lambda config: seen.append("hook"),))
    assert seen == []


def test_a_failing_hook_does_not_stop_the_others(app):
    seen = []

    def broken(config):
        raise RuntimeError("boom")

    scheduler.work(dict(app.config), hooks=(broken, lambda config: seen.append("ok")))
    assert seen == ["ok"]

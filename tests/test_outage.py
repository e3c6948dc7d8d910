"""A model server that goes away: its targets wait (the breaker), nothing fails, work goes on.

A fake server of the test's own is stopped and started again over real HTTP (connection
refused while it is down). The orchestrator is stepped with a fake clock whose time drives the
outage: the server comes back when the clock passes the outage's end, so a "20 s outage" takes
no real 20 s. One test runs the foreground loop on the real clock with a short outage.
"""

import datetime as dt
import json
import threading

import pytest
import requests

from app.db.connection import database
from app.db.models import COMPLETED
from app.db.models import FAILED
from app.db.models import NEW
from app.db.models import WAITING_FOR_JUDGE
from app.db.models import Item
from app.db.models import JudgeCall
from app.db.models import Outage
from app.db.models import Run
from app.db.models import RunLog
from app.db.models import RunTarget
from app.engine.foreground import run_foreground
from app.engine.memory import memory_for
from app.engine.orchestrator import tick
from app.providers.interface import ProviderConfig
from app.providers.openai import OpenAIAdapter
from app.runs.control import resume_run
from app.runs.dto import run_summary
from app.runs.judge_jobs import queue_pairwise
from app.runs.progress import progress
from app.runs.state import run_state
from tests.engine_helpers import FakeClock
from tests.engine_helpers import drive
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks
from tests.engine_helpers import start_run
from tests.fakeserver import FakeServer

HOLDER = "test-holder"


@pytest.fixture
def server():
    """A fake model server this test may stop and start again (not the shared one)."""
    fake = FakeServer().start()
    yield fake
    fake.stop()


@pytest.fixture
def config(app):
    return dict(app.config, OUTAGE_PROBE_SECONDS=5.0, OUTAGE_PROBE_MAX_SECONDS=60.0)


class OutageClock(FakeClock):
    """A fake clock that ends the server's outage when its time passes `back_at`."""

    def __init__(self, server):
        self.server = server
        self.back_at = None
        super().__init__()

    @property
    def t(self):
        return self._t

    @t.setter
    def t(self, value):
        self._t = value
        if self.back_at is not None and value >= self.back_at and not self.server.running:
            self.server.restart()


def stop_after(server, clock, answers, outage_seconds=None):
    """An on_event listener that stops the server once `answers` items were answered (the
    outage then lasts `outage_seconds` of the clock's time, or for good)."""
    done = []

    def listener(event):
        if event["event"] != "item_done":
            return
        done.append(event)
        if len(done) == answers:
            server.stop()
            if outage_seconds is not None:
                clock.back_at = clock() + dt.timedelta(seconds=outage_seconds)

    return listener


def events(run, name):
    return list(RunLog.select().where((RunLog.run == run) & (RunLog.event == name)))


def statuses():
    kinds = (NEW, WAITING_FOR_JUDGE, COMPLETED, FAILED)
    return {s: Item.select().where(Item.status == s).count() for s in kinds}


def test_a_20_second_outage_fails_nothing_and_every_item_completes(app, server, config):
    p = make_provider(server)
    run = start_run(p, [(p, "m1")], make_tasks(20))
    clock = OutageClock(server)
    started = clock()
    listener = stop_after(server, clock, answers=5, outage_seconds=20)
    result = drive(config, clock, on_event=listener)
    assert result["state"] == "finished"
    assert statuses() == {NEW: 0, WAITING_FOR_JUDGE: 0, COMPLETED: 20, FAILED: 0}
    # Nobody's attempt was spent on the outage: every item was asked exactly once.
    assert {i.answer_attempts for i in Item.select()} == {1}
    waits = events(run, "provider_waiting")
    assert waits and waits[0].message.startswith("waiting for fake: connection refused since ")
    back = events(run, "provider_back")
    assert len(back) == 1 and "answers again after" in back[0].message
    assert Outage.select().count() == 0
    assert (clock() - started).total_seconds() >= 20


def test_a_server_down_for_good_pauses_the_run_with_the_reason(app, server, config):
    p = make_provider(server)
    run = start_run(p, [(p, "m1")], make_tasks(6))
    clock = OutageClock(server)
    result = drive(config, clock, on_event=stop_after(server, clock, answers=2))
    assert result["state"] == "paused"
    reason = Run.get_by_id(run.id).control_reason
    assert reason.startswith("fake is unreachable (connection refused since ")
    assert "past the 10 min limit" in reason and "no item was failed" in reason
    assert statuses() == {NEW: 4, WAITING_FOR_JUDGE: 2, COMPLETED: 0, FAILED: 0}
    assert {(i.attempts, i.error_msg) for i in Item.select().where(Item.status == NEW)} == {
        (0, None)
    }
    assert events(run, "provider_unreachable")[0].level == "ERROR"


def test_probes_back_off_up_to_the_cap(app, server, config):
    p = make_provider(server)
    run = start_run(p, [(p, "m1")], make_tasks(3))
    clock = OutageClock(server)
    drive(config, clock, on_event=stop_after(server, clock, answers=1))
    gaps = [
        (dt.datetime.fromisoformat(e.data["nextTryAt"][:-1]) - e.created_at).total_seconds()
        for e in events(run, "provider_waiting")
    ]
    assert gaps[:5] == [5, 10, 20, 40, 60] and set(gaps[4:]) == {60}


def test_the_run_continued_after_the_pause_goes_on_when_the_server_is_back(app, server, config):
    p = make_provider(server)
    run = start_run(p, [(p, "m1")], make_tasks(4))
    clock = OutageClock(server)
    drive(config, clock, on_event=stop_after(server, clock, answers=1))
    assert run_state(Run.get_by_id(run.id)) == "paused"
    server.restart()
    resume_run(run.run_id, now=clock())
    assert Outage.select().count() == 0  # the next call is a probe at once
    assert drive(config, clock)["state"] == "finished"
    assert statuses() == {NEW: 0, WAITING_FOR_JUDGE: 0, COMPLETED: 4, FAILED: 0}


def test_the_live_view_and_the_api_say_what_the_run_waits_for(app, client, server, config):
    p = make_provider(server)
    run = start_run(p, [(p, "m1")], make_tasks(3))
    clock = FakeClock()
    tick(config, holder=HOLDER, now=clock, on_event=stop_after(server, clock, answers=1))
    waiting = progress(run)["waiting"]
    since = clock().strftime("%H:%M:%S")
    next_try = (clock() + dt.timedelta(seconds=5)).strftime("%H:%M:%S")
    expected = f"waiting for fake: connection refused since {since} UTC, next try {next_try} UTC"
    assert [w["message"] for w in waiting] == [expected]
    assert run_summary(Run.get_by_id(run.id))["waiting"][0]["error"] == "connection refused"
    page = client.get(f"/runs/{run.run_id}/progress", headers={"HX-Request": "true"}).text
    assert "Waiting for fake: connection refused since " + since in page
    assert Item.select().where(Item.status == FAILED).count() == 0


def test_the_outage_is_counted_from_its_start_across_a_restart(app, server, config):
    p = make_provider(server)
    run = start_run(p, [(p, "m1")], make_tasks(3))
    clock = OutageClock(server)
    tick(config, holder=HOLDER, now=clock, on_event=stop_after(server, clock, answers=1))
    began = Outage.get().since
    memory_for(HOLDER, None)  # what the process kept is gone, as after a restart
    clock.advance(9 * 60)
    assert tick(config, holder=HOLDER, now=clock)["state"] == "running"  # 9 min: waits on
    clock.advance(70)
    tick(config, holder=HOLDER, now=clock)
    assert run_state(Run.get_by_id(run.id)) == "paused"
    assert f"since {began:%H:%M:%S} UTC" in Run.get_by_id(run.id).control_reason


def test_a_server_that_is_down_from_the_start_makes_only_its_target_wait(app, fake, config):
    good = make_provider(fake)
    dead = make_provider(None, name="dead", url="http://127.0.0.1:9")  # discard port: refused
    run = start_run(good, [(dead, "m1"), (good, "m2")], make_tasks(2))
    result = drive(config, FakeClock())
    assert result["state"] == "paused"
    assert "dead is unreachable (connection refused since" in Run.get_by_id(run.id).control_reason
    by_model = {}
    for i in Item.select():
        by_model.setdefault(i.target.model, set()).add((i.status, i.error_msg))
    assert by_model == {"m1": {(NEW, None)}, "m2": {(WAITING_FOR_JUDGE, None)}}
    assert events(run, "warmup_failed") == []


def test_an_unreachable_judge_makes_the_answers_wait_not_fail(app, fake, server, config):
    target = make_provider(fake)
    judge = make_provider(server, name="judge")
    run = start_run(judge, [(target, "m1")], make_tasks(3))
    clock = OutageClock(server)

    def judge_down(result):
        if result["phase"] == "JUDGING" and clock.back_at is None:
            server.stop()
            clock.back_at = clock() + dt.timedelta(seconds=30)

    def listener(event):  # the judge goes away once every answer is in
        if event["event"] == "phase_changed" and event.get("phase") == "JUDGING":
            judge_down({"phase": "JUDGING"})

    assert drive(config, clock, on_event=listener)["state"] == "finished"
    assert statuses() == {NEW: 0, WAITING_FOR_JUDGE: 0, COMPLETED: 3, FAILED: 0}
    assert {i.attempts for i in Item.select()} == {1}
    assert events(run, "provider_waiting")[0].message.startswith("waiting for judge: ")


def test_connection_refused_names_the_server_unreachable(fake):
    adapter = OpenAIAdapter(
        ProviderConfig(
            name="t",
            type="OPENAI",
            base_url="http://127.0.0.1:9",
            models_endpoint="/v1/models",
            inference_endpoint="/v1/chat/completions",
        )
    )
    with pytest.raises(Exception) as info:
        adapter.chat("m", [{"role": "user", "content": "hi"}])
    assert info.value.unreachable == "connection refused" and info.value.transient
    adapter.close()


@pytest.mark.parametrize(
    ("exc", "unreachable"),
    [
        (requests.ConnectTimeout("timed out"), "connect timeout"),
        (
            requests.ConnectionError(
                "HTTPConnectionPool(host='nohost.invalid', port=80): Max retries exceeded "
                "(Caused by NameResolutionError(\"Failed to resolve 'nohost.invalid'\"))"
            ),
            "host name not found",
        ),
        (requests.ReadTimeout("Read timed out."), None),
        (requests.ConnectionError("Connection reset by peer"), None),
    ],
)
def test_only_errors_of_reaching_the_server_count_against_it(exc, unreachable):
    adapter = OpenAIAdapter(
        ProviderConfig(
            name="t",
            type="OPENAI",
            base_url="http://x",
            models_endpoint="/v1/models",
            inference_endpoint="/v1/chat/completions",
        )
    )
    assert adapter.network_error(exc, "http://x/v1", (10.0, 5.0)).unreachable == unreachable
    adapter.close()


@pytest.mark.slow
def test_a_short_real_outage_of_the_foreground_run_fails_nothing(app, server):
    # The real clock: the server is away for about 1.5 s while `llmbench run` goes on.
    config = dict(app.config, OUTAGE_PROBE_SECONDS=0.2, OUTAGE_PROBE_MAX_SECONDS=0.5)
    p = make_provider(server)
    run = start_run(p, [(p, "m1")], make_tasks(8))
    timers = []

    def listener(event):
        if event["event"] == "item_done" and not timers:
            server.stop()
            timers.append(threading.Timer(1.5, server.restart))
            timers[0].start()

    with database.connection_context():
        state = run_foreground(run.run_id, config, on_event=listener, holder=HOLDER)
    timers[0].join()
    assert state == "finished"
    assert statuses() == {NEW: 0, WAITING_FOR_JUDGE: 0, COMPLETED: 8, FAILED: 0}
    assert events(run, "provider_back")


def test_an_unreachable_pairwise_judge_makes_its_calls_wait_not_fail(app, fake, server, config):
    target = make_provider(fake)
    run = start_run(target, [(target, "m1"), (target, "m2")], make_tasks(2))
    assert drive(config, FakeClock())["state"] == "finished"
    judge = make_provider(server, name="judge")
    first, second = RunTarget.select().where(RunTarget.run == run).order_by(RunTarget.position)
    job = queue_pairwise(first, second, judge, "judge")
    server.responder = lambda call: {"text": json.dumps({"winner": "A", "reason": "because"})}
    clock = OutageClock(server)
    server.stop()  # down before the first call; back 30 s of the clock's time later
    clock.back_at = clock() + dt.timedelta(seconds=30)
    assert drive(config, clock)["state"] == "finished"
    calls = list(JudgeCall.select().where(JudgeCall.job == job))
    assert len(calls) == 4 and {c.status for c in calls} == {COMPLETED}
    assert {c.attempts for c in calls} == {1}  # the refused tries were given back uncounted
    assert events(run, "provider_waiting")[0].message.startswith("waiting for judge: ")

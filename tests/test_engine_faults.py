"""The engine under faults: warm-up backoff, unexpected errors, long streams, stop mid-stream.

Real HTTP to the fake server; the orchestrator stepped with tick() and a fake clock (except the
one test about a claim outliving its deadline, which needs the real clock).
"""

import datetime as dt
import threading
import time

import pytest

from app import crypto
from app.catalog.providers import create_provider
from app.db.connection import database
from app.db.models import COMPLETED
from app.db.models import FAILED
from app.db.models import NEW
from app.db.models import WAITING_FOR_JUDGE
from app.db.models import Item
from app.db.models import ProviderHeader
from app.db.models import Run
from app.db.models import RunLog
from app.db.models import RunTarget
from app.engine import claims
from app.engine import groups
from app.engine import metrics
from app.engine.claims import claim
from app.engine.orchestrator import tick
from app.errors import Conflict
from app.runs.control import pause_run
from app.runs.control import resume_run
from app.runs.control import stop_run
from app.runs.retries import retry_failed_judgements
from app.runs.retries import retry_judge
from tests.engine_helpers import FakeClock
from tests.engine_helpers import call_kind
from tests.engine_helpers import calls
from tests.engine_helpers import drive
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks
from tests.engine_helpers import start_run

HOLDER = "test-holder"


@pytest.fixture
def config(app):
    return dict(app.config, BACKOFF_BASE_SECONDS=2.0, BACKOFF_MAX_SECONDS=60.0)


def events(run, name=None):
    query = RunLog.select().where(RunLog.run == run).order_by(RunLog.id)
    return [e for e in query if name is None or e.event == name]


def script(fake, replies):
    """Reply per call kind: replies[kind] is a list of specs used in order (then the default)."""
    used = {}

    def responder(call):
        kind = call_kind(call)[0]
        queue = replies.get(kind) or []
        n = used[kind] = used.get(kind, 0) + 1
        return queue[n - 1] if n <= len(queue) else None

    fake.responder = responder


# ---- the retry-time cap counts per stage ---------------------------------------------------


def test_a_long_benchmark_does_not_use_up_the_judges_retry_time(app, fake, config):
    p = make_provider(fake)
    run = start_run(p, [(p, "m1")], make_tasks(1))
    clock = FakeClock()
    judge_calls = []

    def responder(call):
        kind = call_kind(call)[0]
        if kind == "answer":
            clock.advance(1200)  # the benchmark took 20 minutes, past the 15-minute cap
        if kind == "judge":
            judge_calls.append(clock())
            if len(judge_calls) <= 2:
                return {"status": 500}
        return None

    fake.responder = responder
    drive(config, clock)
    done = Item.get()
    assert done.status == COMPLETED and len(judge_calls) == 3
    retries = events(run, "retry_scheduled")
    assert len(retries) == 2 and all(r.data["stage"] == "judge" for r in retries)


def test_retrying_failed_judgements_restarts_their_retry_clock(app, fake, config):
    p = make_provider(fake)
    run = start_run(p, [(p, "m1")], make_tasks(2))
    script(fake, {"judge": [{"text": "nope"}] * 20})
    drive(dict(config, JUDGE_UNUSABLE_TO_PAUSE=100), FakeClock())  # every judgement fails
    assert {i.first_attempt_at is not None for i in Item.select()} == {True}
    assert retry_failed_judgements(run.run_id) == 2
    assert [(i.status, i.attempts, i.first_attempt_at) for i in Item.select()] == [
        (WAITING_FOR_JUDGE, 0, None)
    ] * 2


def test_continuing_a_stopped_run_restarts_the_retry_clock(app, fake, config):
    p = make_provider(fake)
    run = start_run(p, [(p, "m1")], make_tasks(1))
    script(fake, {"answer": [{"status": 500}]})
    tick(config, holder=HOLDER, now=FakeClock())
    waiting = Item.get()
    assert waiting.status == NEW and waiting.first_attempt_at is not None
    stop_run(run.run_id)
    resume_run(run.run_id)
    assert Item.get().first_attempt_at is None and Item.get().error_msg  # the error is kept


# ---- transient warm-up failures back off, and never fail the group ---------------------------


def test_a_warmup_answered_500_is_tried_again_after_a_backoff(app, fake, config):
    p = make_provider(fake)
    run = start_run(p, [(p, "m1")], make_tasks(2))
    script(fake, {"warmup": [{"status": 500, "text": "hiccup"}]})
    clock = FakeClock()
    result = tick(config, holder=HOLDER, now=clock)
    assert result["idle"] and result["state"] == "running" and result["wakeAt"] > clock()
    line = events(run, "warmup_retry")[0]
    assert line.message.startswith("Warm-up of fake/m1: try 2 at ")
    assert "hiccup" in line.message and line.level == "WARNING"
    assert line.data["nextRetryAt"]
    assert tick(config, holder=HOLDER, now=clock)["idle"]  # not before its time
    assert len(calls(fake, "warmup")) == 1
    assert drive(config, clock)["state"] == "finished"
    assert len(calls(fake, "warmup")) == 2
    assert Item.select().where(Item.status == COMPLETED).count() == 2
    assert RunTarget.get().warmup_error is None and RunTarget.get().warmup_ms is not None


def test_a_warmup_answered_429_waits_for_its_retry_after(app, fake, config):
    p = make_provider(fake)
    start_run(p, [(p, "m1")], make_tasks(1))
    script(fake, {"warmup": [{"status": 429, "retry_after": 40}]})
    clock = FakeClock()
    result = tick(config, holder=HOLDER, now=clock)
    assert result["wakeAt"] >= clock() + dt.timedelta(seconds=40)
    clock.advance(39)
    tick(config, holder=HOLDER, now=clock)
    assert len(calls(fake, "warmup")) == 1
    assert drive(config, clock)["state"] == "finished"
    assert Item.get().status == COMPLETED


def test_a_warmup_timeout_is_tried_again(app, fake, config):
    # 1 s: the slow warm-up times out, while every other call (the fake answers at once) has
    # room to spare on a busy machine.
    p = make_provider(fake, timeout=1.0)
    start_run(p, [(p, "m1")], make_tasks(1))
    script(fake, {"warmup": [{"latency": 3.0}]})
    assert drive(config, FakeClock())["state"] == "finished"
    assert len(calls(fake, "warmup")) == 2 and Item.get().status == COMPLETED


def test_a_warmup_failing_every_time_pauses_the_run_past_the_limit_and_fails_nothing(
    app, fake, config
):
    p = make_provider(fake)
    run = start_run(p, [(p, "m1"), (p, "m2")], make_tasks(2))

    def responder(call):
        kind, model, _ = call_kind(call)
        return {"status": 500} if (kind, model) == ("warmup", "m1") else None

    fake.responder = responder
    assert drive(config, FakeClock())["state"] == "paused"
    reason = Run.get_by_id(run.id).control_reason
    assert reason.startswith("the warm-up of fake/m1 keeps failing: Server answered 500")
    assert "past the 10 min limit" in reason and "no item was failed" in reason
    assert len(events(run, "warmup_retry")) > 3  # tried past the run's max attempts
    waiting = list(Item.select().join(RunTarget).where(RunTarget.model == "m1"))
    assert {(i.status, i.attempts, i.error_msg) for i in waiting} == {(NEW, 0, None)}
    assert Item.select().where(Item.status == WAITING_FOR_JUDGE).count() == 2  # m2's answers


# ---- nothing unexpected loops silently ---------------------------------------------------


def test_a_header_http_cannot_carry_fails_the_group_once(app, fake, config):
    judge = make_provider(fake, name="judge")
    snowy = make_provider(fake, name="snowy")
    # Stored before headers were checked: every request to this server raises
    # UnicodeEncodeError inside requests.
    ProviderHeader.create(provider=snowy, key="X-Weather", value="\u2603", is_secret=False)
    run = start_run(judge, [(snowy, "m1"), (judge, "m2")], make_tasks(1))
    assert drive(config, FakeClock())["state"] == "finished"
    failed = Item.get(Item.status == FAILED)
    assert failed.error_stage == "warmup" and "UnicodeEncodeError" in failed.error_msg
    assert "not retried" in failed.error_msg and len(events(run, "warmup_failed")) == 1
    assert Item.select().where(Item.status == COMPLETED).count() == 1


def test_a_secret_the_master_key_cannot_read_pauses_the_run_with_the_reason(app, fake, config):
    judge = make_provider(fake, name="judge")
    locked = create_provider(
        {
            "name": "locked",
            "type": "OPENAI",
            "baseUrl": fake.url,
            "headers": [{"key": "Authorization", "value": "Bearer sk-secret", "isSecret": True}],
        }
    )
    run = start_run(judge, [(locked, "m1")], make_tasks(1))
    crypto.set_key(b"o" * 32)  # the master key changed since the secret was saved
    clock = FakeClock()
    result = tick(config, holder=HOLDER, now=clock)
    assert result["state"] == "paused"
    run = Run.get_by_id(run.id)
    assert run.control_reason.startswith("provider locked cannot be used: a stored secret")
    line = events(run, "provider_error")[0]
    assert line.level == "ERROR" and "sk-secret" not in line.message
    assert tick(config, holder=HOLDER, now=clock)["runId"] is None  # no loop
    assert calls(fake, "warmup") == [] and Item.get().status == NEW


def test_an_unexpected_error_recording_an_answer_fails_that_item_once(
    app, fake, config, monkeypatch
):
    p = make_provider(fake)
    run = start_run(p, [(p, "m1")], make_tasks(2))

    def broken(completion):
        raise ZeroDivisionError("a bug in the speed maths")

    monkeypatch.setattr(metrics, "speed", broken)
    assert drive(config, FakeClock())["state"] == "finished"
    failed = list(Item.select().where(Item.status == FAILED))
    assert len(failed) == 2 and all("ZeroDivisionError" in i.error_msg for i in failed)
    assert len(calls(fake, "answer")) == 2  # each asked once, not again and again
    assert {e.level for e in events(run, "item_failed")} == {"ERROR"}


def test_a_worker_crashing_again_and_again_pauses_the_run(app, fake, config, monkeypatch):
    p = make_provider(fake)
    run = start_run(p, [(p, "m1")], make_tasks(1))

    def broken(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(claims, "claim_batch", broken)
    clock = FakeClock()
    assert tick(config, holder=HOLDER, now=clock)["state"] == "paused"
    assert "disk on fire" in Run.get_by_id(run.id).control_reason
    assert [e.level for e in events(run, "internal_error")] == ["ERROR"] * 3


def test_an_error_in_the_orchestrator_itself_pauses_the_run(app, fake, config, monkeypatch):
    p = make_provider(fake)
    run = start_run(p, [(p, "m1")], make_tasks(1))

    def broken(ctx):
        raise KeyError("target")

    monkeypatch.setattr(groups, "pick_group", broken)
    result = tick(config, holder=HOLDER, now=FakeClock())
    assert result["state"] == "paused"
    assert "KeyError" in Run.get_by_id(run.id).control_reason
    assert events(run, "internal_error")[0].level == "ERROR"


# ---- claims in flight ----------------------------------------------------------------------


def test_a_slow_stream_keeps_its_claim_and_is_sent_once(app, fake):
    # Provider timeout 2 s + margin 1 s = a 3 s claim, extended every second; the streams take
    # ~4.2 and ~4.8 s (each read well within the timeout, the whole call within the target's
    # max_seconds). The sibling worker is free at ~4.2 s: without the claim being extended it
    # would claim t0 again and send it a second time. Twice the old scale: a claim extended
    # late on a starved machine (load 30 on 2 cores) still has 2 s of room.
    config = dict(app.config, CLAIM_MARGIN_SECONDS=1.0)
    p = make_provider(fake, max_concurrency=2, timeout=2.0)
    run = start_run(p, [(p, "m1", {"max_seconds": 30})], make_tasks(2))
    script(
        fake,
        {
            "answer": [
                {"chunks": ["slow "] * 6, "chunk_delay": 0.8},
                {"chunks": ["quick "] * 5, "chunk_delay": 0.84},
            ]
        },
    )
    deadline = time.monotonic() + 40
    while tick(config, holder=HOLDER)["state"] == "running":
        assert time.monotonic() < deadline
    questions = [t for _k, _m, t in calls(fake, "answer")]
    assert sorted(questions) == ["Question t0?", "Question t1?"]
    assert {i.status for i in Item.select()} == {COMPLETED}
    assert {i.answer_attempts for i in Item.select()} == {1}
    assert Run.get_by_id(run.id).status == "FINISHED"


def test_a_stop_mid_stream_logs_what_was_abandoned(app, fake, config):
    p = make_provider(fake)
    run = start_run(p, [(p, "m1")], make_tasks(1))
    stopper = []

    def stop():
        with database.connection_context():
            stop_run(run.run_id)

    def responder(call):
        if call_kind(call)[0] == "answer":
            stopper.append(threading.Timer(0.3, stop))
            stopper[0].start()
            return {"chunks": ["word "] * 30, "chunk_delay": 0.1}
        return None

    fake.responder = responder
    result = tick(config, holder=HOLDER, now=FakeClock())
    stopper[0].join()
    assert result["state"] == "stopped"
    lines = [e.message for e in events(run, "abandoned")]
    assert lines == ["abandoned: t0 on fake/m1 (run stopped); it will be asked again on continue"]
    item = Item.get()
    assert item.status == NEW and item.attempts == 0 and item.answer is None


def test_retry_judge_refuses_an_item_being_judged_right_now(app, fake, config):
    p = make_provider(fake)
    run = start_run(p, [(p, "m1")], make_tasks(1))
    clock = FakeClock()
    Item.update(status=WAITING_FOR_JUDGE, answer="an answer").execute()
    claimed = claim(run.id, WAITING_FOR_JUDGE, clock(), clock() + dt.timedelta(seconds=60))
    with pytest.raises(Conflict, match="being judged right now"):
        retry_judge(run.run_id, claimed.id, now=clock())
    assert Item.get().attempts == 1  # the claim is untouched
    # Once its claim lapsed (a crash), it can be queued again.
    retry_judge(run.run_id, claimed.id, now=clock.advance(61))
    assert Item.get().attempts == 0


# ---- items that can never be done ----------------------------------------------------------


def test_a_deleted_judge_provider_leaves_the_answers_cant_be_finished(app, fake, config):
    from app.db.models import CANT_BE_FINISHED
    from app.db.models import Provider

    target = make_provider(fake, name="target")
    judge = make_provider(fake, name="judge")
    run = start_run(judge, [(target, "m1")], make_tasks(2))
    clock = FakeClock()

    def responder(call):
        if call_kind(call)[0] == "answer" and len(calls(fake, "answer")) == 2:
            with database.connection_context():
                pause_run(run.run_id)
        return None

    fake.responder = responder
    assert tick(config, holder=HOLDER, now=clock)["state"] == "paused"
    Provider.delete().where(Provider.id == judge.id).execute()
    resume_run(run.run_id)
    assert drive(config, clock)["state"] == "finished"
    items = list(Item.select())
    assert {i.status for i in items} == {CANT_BE_FINISHED}
    assert all("judge's provider was deleted" in i.error_msg for i in items)
    assert all(i.answer for i in items)  # the answers are kept


# ---- logging -------------------------------------------------------------------------------


def test_the_scheduler_keeps_apscheduler_quiet(app):
    import logging

    from app.engine import scheduler

    first = scheduler.start(dict(app.config, TICK_SECONDS=30))
    try:
        for name in ("apscheduler.executors.default", "apscheduler.scheduler"):
            assert logging.getLogger(name).getEffectiveLevel() == logging.WARNING
    finally:
        scheduler.shutdown(wait=True)  # no tick left running on the next test's database
    assert not first.running

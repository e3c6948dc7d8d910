"""The orchestrator against the fake model server over real HTTP, stepped with a fake clock."""

import datetime as dt
import json
import threading
import time

import pytest

from app.db.connection import database
from app.db.models import CANT_BE_FINISHED
from app.db.models import COMPLETED
from app.db.models import FAILED
from app.db.models import NEW
from app.db.models import WAITING_FOR_JUDGE
from app.db.models import Item
from app.db.models import Price
from app.db.models import Run
from app.db.models import RunLog
from app.db.models import RunTarget
from app.engine.orchestrator import tick
from app.runs.control import pause_run
from app.runs.control import resume_run
from app.runs.control import stop_run
from app.runs.dto import item_to_dict
from app.runs.dto import run_summary
from app.runs.retries import rejudge_item
from app.runs.retries import retry_failed_judgements
from app.runs.state import run_state
from tests.engine_helpers import FakeClock
from tests.engine_helpers import call_kind
from tests.engine_helpers import calls
from tests.engine_helpers import drive
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks
from tests.engine_helpers import serve_models
from tests.engine_helpers import start_run

HOLDER = "test-holder"


@pytest.fixture
def config(app):
    return dict(app.config, BACKOFF_BASE_SECONDS=2.0, BACKOFF_MAX_SECONDS=60.0)


def one_item_run(fake, **provider):
    p = make_provider(fake, **provider)
    run = start_run(p, [(p, "m1")], make_tasks(1))
    return run, p


def events(run, name=None):
    query = RunLog.select().where(RunLog.run == run).order_by(RunLog.id)
    return [e for e in query if name is None or e.event == name]


def item():
    return Item.select().order_by(Item.id).first()


def test_full_run_answers_then_judges_every_item(app, fake, config):
    p = make_provider(fake)
    fake.llamacpp_timings = True  # the server's own decode rate (two words are too few to time)
    run = start_run(p, [(p, "m1"), (p, "m2")], make_tasks(3))
    result = drive(config, FakeClock())
    assert result["state"] == "finished"
    items = list(Item.select())
    assert len(items) == 6 and {i.status for i in items} == {COMPLETED}
    for i in items:
        assert i.answer == "fake answer" and i.evaluation_score == 80.0
        assert i.evaluation_reason == "fake judge"
        assert i.time_taken_ms > 0 and i.ttft_ms is not None and i.tokens_generated
        assert i.tokens_per_second == 50.0 and i.tps_source == "llamacpp.timings"
        assert i.request_json["messages"][-1]["content"] == i.question
        assert i.response_raw and i.answered_at and i.judged_at and i.judge_ms is not None
        assert "response_format" in i.judge_request_json and "fake judge" in i.judge_raw
        assert len(i.context_hash) == 64 and i.answer_attempts == 1
    run = Run.get_by_id(run.id)
    assert run.status == "FINISHED" and run.phase == "JUDGING" and run.finished_at
    names = [e.event for e in events(run)]
    assert names.count("item_done") == 6 and names.count("item_judged") == 6
    assert names.index("phase_changed") > max(i for i, n in enumerate(names) if n == "item_done")
    assert names[-1] == "run_finished"


def test_groups_run_in_target_order_each_after_a_warmup(app, fake, config):
    p = make_provider(fake)
    start_run(p, [(p, "m2"), (p, "m1")], make_tasks(2))
    drive(config, FakeClock())
    assert [(k, m) for k, m, _ in calls(fake)] == [
        ("judge_warmup", "judge"),
        ("warmup", "m2"),
        ("answer", "m2"),
        ("answer", "m2"),
        ("warmup", "m1"),
        ("answer", "m1"),
        ("answer", "m1"),
        ("judge", "judge"),
        ("judge", "judge"),
        ("judge", "judge"),
        ("judge", "judge"),
    ]
    targets = list(RunTarget.select().order_by(RunTarget.position))
    assert all(t.warmup_ms is not None and t.warmup_error is None for t in targets)


def test_target_params_are_sent_with_every_answer(app, fake, config):
    p = make_provider(fake)
    params = {"temperature": 0.2, "top_p": 0.9, "max_tokens": 50, "seed": 7, "stop": ["END"]}
    start_run(p, [(p, "m1", params)], make_tasks(1))
    drive(config, FakeClock())
    body = [c for c in fake.chat_calls() if "response_format" not in (c["body"] or {})][-1]["body"]
    assert {k: body[k] for k in params} == params and body["stream"] is True


@pytest.mark.parametrize("status", [500, 502])
def test_server_error_is_retried_after_a_backoff(app, fake, config, status):
    run, _ = one_item_run(fake)
    fake.enqueue("OK", model="m1")  # warm-up
    fake.enqueue(status=status, model="m1")
    clock = FakeClock()
    result = tick(config, holder=HOLDER, now=clock)
    assert result["idle"] and result["state"] == "running"
    waiting = item()
    assert waiting.status == NEW and waiting.attempts == 1 and str(status) in waiting.error_msg
    assert (
        clock() + dt.timedelta(seconds=1)
        <= waiting.next_retry_at
        <= clock() + dt.timedelta(seconds=3)
    )
    assert item_to_dict(waiting)["nextRetryAt"].startswith(waiting.next_retry_at.isoformat()[:19])
    retry_log = events(run, "retry_scheduled")[0]
    assert retry_log.message.startswith("t0 on fake/m1: retry 2/3 at ")
    assert f"Server answered {status}" in retry_log.message
    # Nothing happens before the retry time, then it is answered.
    assert tick(config, holder=HOLDER, now=clock)["idle"]
    assert len(calls(fake, "answer")) == 1
    drive(config, clock)
    done = item()
    assert done.status == COMPLETED and done.answer_attempts == 2 and done.error_msg is None


def test_429_waits_at_least_its_retry_after_uncounted(app, fake, config):
    run, _ = one_item_run(fake)
    fake.enqueue("OK", model="m1")
    fake.enqueue(status=429, retry_after=40, model="m1")
    clock = FakeClock()
    result = tick(config, holder=HOLDER, now=clock)
    waiting = item()
    assert (waiting.status, waiting.attempts, waiting.error_msg) == (NEW, 0, None)
    assert result["wakeAt"] >= clock() + dt.timedelta(seconds=40)
    assert events(run, "provider_waiting")[0].data["error"] == "busy (429, retry after 40 s)"
    clock.advance(39)
    tick(config, holder=HOLDER, now=clock)
    assert len(calls(fake, "answer")) == 1
    drive(config, clock)
    assert item().status == COMPLETED


def test_read_timeout_is_retried(app, fake, config):
    # 1 s: the late answer times out, while the quick calls have room on a busy machine.
    one_item_run(fake, timeout=1.0)
    fake.enqueue("OK", model="m1")
    fake.enqueue("too late", latency=3.0, model="m1")
    clock = FakeClock()
    tick(config, holder=HOLDER, now=clock)
    waiting = item()
    assert waiting.status == NEW and "read timeout" in waiting.error_msg
    drive(config, clock)
    assert item().status == COMPLETED and item().answer == "fake answer"


def test_connection_dropped_every_time_fails_after_max_attempts(app, fake, config):
    run, _ = one_item_run(fake)
    fake.enqueue("OK", model="m1")
    for _ in range(6):  # each attempt reconnects once at once (stale keep-alive), then gives up
        fake.enqueue(drop=True, model="m1")
    drive(config, FakeClock())
    failed = item()
    assert failed.status == FAILED and failed.error_stage == "answer"
    assert "gave up after 3 attempts" in failed.error_msg
    assert len(calls(fake, "answer")) == 6 and calls(fake, "judge") == []
    assert len(events(run, "retry_scheduled")) == 2 and len(events(run, "item_failed")) == 1


def test_max_attempts_from_the_run_settings(app, fake, config):
    p = make_provider(fake)
    start_run(p, [(p, "m1")], make_tasks(1), settings={"maxAttempts": 1})
    fake.enqueue("OK", model="m1")
    fake.enqueue(status=500, model="m1")
    drive(config, FakeClock())
    assert item().status == FAILED and len(calls(fake, "answer")) == 1


def test_model_missing_at_warmup_fails_its_group(app, fake, config):
    fake.strict_models = True
    p = make_provider(fake)
    serve_models(fake, "nope")
    start_run(p, [(p, "nope"), (p, "m1")], make_tasks(1))
    fake.models = ["m1", "judge"]  # removed from the server after the run started
    drive(config, FakeClock())
    missing = Item.select().join(RunTarget).where(RunTarget.model == "nope").get()
    assert missing.status == FAILED and missing.error_stage == "warmup"
    assert "not found" in missing.error_msg
    # A permanent error is not tried twice.
    assert [m for k, m, _ in calls(fake, "warmup")] == ["nope", "m1"]
    assert Item.select().where(Item.status == COMPLETED).count() == 1


def test_malformed_json_fails_the_item_without_retry(app, fake, config):
    one_item_run(fake)
    fake.enqueue("OK", model="m1")
    fake.enqueue(malformed=True, model="m1")
    drive(config, FakeClock())
    failed = item()
    assert failed.status == FAILED and failed.error_stage == "answer"
    assert "not valid JSON" in failed.error_msg and "permanent" in failed.error_msg
    assert len(calls(fake, "answer")) == 1


def test_empty_answer_is_retried_once(app, fake, config):
    one_item_run(fake)
    fake.enqueue("OK", model="m1")
    fake.enqueue("", model="m1")
    drive(config, FakeClock())
    done = item()
    assert done.status == COMPLETED and done.answer == "fake answer" and done.answer_attempts == 2


def test_two_empty_answers_fail_the_item_as_empty(app, fake, config):
    one_item_run(fake)
    fake.enqueue("OK", model="m1")
    fake.enqueue("", model="m1")
    fake.enqueue("   ", model="m1")
    drive(config, FakeClock())
    failed = item()
    assert failed.status == FAILED and failed.error_stage == "answer"
    assert failed.error_msg.startswith("empty answer") and failed.evaluation_score is None
    assert calls(fake, "judge") == []


def judge_script(fake, replies):
    """The judge answers `replies` in order (None = the fake's valid default)."""
    state = {"n": 0}

    def responder(call):
        if call_kind(call)[0] != "judge":  # answers, warm-ups (the judge's too) as usual
            return None
        state["n"] += 1
        reply = replies[min(state["n"], len(replies)) - 1]
        return None if reply is None else {"text": reply}

    fake.responder = responder
    return state


def test_judge_output_invalid_once_is_repaired(app, fake, config):
    one_item_run(fake)
    judge_script(fake, ["definitely not json", None])
    drive(config, FakeClock())
    done = item()
    assert done.status == COMPLETED and done.evaluation_score == 80.0
    assert "definitely not json" in done.judge_raw and "fake judge" in done.judge_raw
    judge_bodies = [c["body"] for c in fake.chat_calls() if call_kind(c)[0] == "judge"]
    assert len(judge_bodies) == 2
    repair = judge_bodies[1]["messages"]
    assert repair[-2] == {"role": "assistant", "content": "definitely not json"}
    assert "not valid JSON" in repair[-1]["content"]


def test_judge_output_always_invalid_fails_the_item_not_scored_zero(app, fake, config):
    run, _ = one_item_run(fake)
    judge_script(fake, ['{"score": 150, "reason": "x"}'])
    drive(config, FakeClock())
    failed = item()
    assert failed.status == FAILED and failed.error_stage == "judge"
    assert failed.evaluation_score is None and failed.answer == "fake answer"
    assert "score" in failed.error_msg and "gave up after 3 attempts" in failed.error_msg
    assert len(calls(fake, "judge")) == 6  # 3 attempts, each with its one repair
    assert "150" in failed.judge_raw
    summary = run_summary(Run.get_by_id(run.id))
    assert summary["failedItems"] == 1 and summary["completedItems"] == 0


def test_rubric_score_is_our_weighted_sum(app, fake, config):
    p = make_provider(fake)
    rubric = [
        {"id": "a", "text": "A", "weight": 3, "max_score": 2},
        {"id": "b", "text": "B", "weight": 1, "max_score": 1},
    ]
    start_run(p, [(p, "m1")], make_tasks(1, rubric=rubric, auto_fail=["says hello"]))
    judge_script(
        fake,
        [
            json.dumps(
                {"score": 99, "reason": "r", "auto_fail": False, "rubric_scores": {"a": 1, "b": 1}}
            )
        ],
    )
    drive(config, FakeClock())
    done = item()
    assert done.evaluation_score == pytest.approx(100 * (3 * 0.5 + 1 * 1) / 4)
    assert done.rubric_scores == {"a": 1, "b": 1} and done.auto_fail is False
    prompt = [c for c in fake.chat_calls() if call_kind(c)[0] == "judge"][0]["body"]
    assert "says hello" in prompt["messages"][-1]["content"]


def tick_until(config, clock, predicate, limit=50):
    for _ in range(limit):
        result = tick(config, holder=HOLDER, now=clock)
        if predicate(result):
            return result
    raise AssertionError("condition never reached")


def test_pause_lets_the_item_in_flight_finish_then_halts(app, fake, config):
    p = make_provider(fake)
    run = start_run(p, [(p, "m1")], make_tasks(3))

    def responder(call):
        if calls(fake, "answer") and len(calls(fake, "answer")) == 2:
            with database.connection_context():
                pause_run(run.run_id)
        return None

    fake.responder = responder
    clock = FakeClock()
    result = tick(config, holder=HOLDER, now=clock)
    assert result["state"] == "paused"
    counts = run_summary(Run.get_by_id(run.id))["counts"]
    assert counts[WAITING_FOR_JUDGE] == 2 and counts[NEW] == 1
    assert tick(config, holder=HOLDER, now=clock)["runId"] is None  # stays paused
    assert len(calls(fake, "answer")) == 2
    fake.responder = None
    resume_run(run.run_id)
    assert drive(config, clock)["state"] == "finished"
    assert len(calls(fake, "answer")) == 3  # nothing answered twice
    assert [e.event for e in events(run) if e.event in ("paused", "resumed")] == [
        "paused",
        "resumed",
    ]


def test_stop_abandons_the_slow_request_and_keeps_its_item_claimable(app, fake, config):
    p = make_provider(fake)
    run = start_run(p, [(p, "m1")], make_tasks(2))
    answer_may_come = threading.Event()
    answered = threading.Event()

    def responder(call):
        if len(calls(fake, "answer")) == 2:
            with database.connection_context():
                stop_run(run.run_id)
            answer_may_come.wait(30)  # held until the test has seen the tick return
            answered.set()
            return {"text": "late answer"}
        return None

    fake.responder = responder
    clock = FakeClock()
    result = tick(config, holder=HOLDER, now=clock)
    # The tick returned while the second answer is still held back: it did not wait for it.
    assert not answered.is_set()
    assert result["state"] == "stopped"
    second = Item.select().order_by(Item.id)[1]
    assert second.status == NEW and second.attempts == 0 and second.claimed_until is None
    assert second.next_retry_at is None
    assert second.answer is None and second.response_raw is None
    fake.responder = None
    answer_may_come.set()
    _wait_until_idle(fake)  # the abandoned request's answer arrives: it must not be recorded
    assert Item.get_by_id(second.id).answer is None
    resume_run(run.run_id)
    assert drive(config, clock)["state"] == "finished"
    assert Item.get_by_id(second.id).answer == "fake answer"
    assert "abandoned" in [e.event for e in events(run)]


def _wait_until_idle(fake, timeout=5.0):
    """Until the abandoned worker thread got its late reply and ended (discarding it)."""
    import threading

    for thread in threading.enumerate():
        if thread.name.startswith("llmbench-worker-"):
            thread.join(timeout)


def test_max_concurrency_runs_that_many_requests_at_once(app, fake, config):
    p = make_provider(fake, max_concurrency=4)
    start_run(p, [(p, "m1")], make_tasks(8))
    # The first four answers are held until all four are in flight together: with fewer
    # requests at once the barrier breaks (after its timeout) and the test fails.
    together = threading.Barrier(4, timeout=30)
    broken = []

    def responder(call):
        if _kind(call) == "answer" and len(calls(fake, "answer")) <= 4:
            try:
                together.wait()
            except threading.BrokenBarrierError:
                broken.append(call)
        return None

    fake.responder = responder
    drive(config, FakeClock())
    assert not broken and fake.max_active <= 4  # four at once, never more
    assert Item.select().where(Item.status == COMPLETED).count() == 8


def test_ollama_group_keeps_its_model_loaded_then_unloads_it(app, fake, config):
    p = make_provider(fake, name="ollama", type="OLLAMA")
    run = start_run(p, [(p, "m1"), (p, "m2")], make_tasks(2))
    drive(config, FakeClock())
    sequence = [
        (k, c["body"].get("model"), c["body"].get("keep_alive"))
        for c in fake.chat_calls()
        for k in [_kind(c)]
    ]
    # The judge answers first (and unloads at once), then each group loads, runs, unloads.
    assert sequence[:9] == [
        ("judge_warmup", "judge", 0),
        ("warmup", "m1", "10m"),
        ("answer", "m1", "10m"),
        ("answer", "m1", "10m"),
        ("unload", "m1", 0),
        ("warmup", "m2", "10m"),
        ("answer", "m2", "10m"),
        ("answer", "m2", "10m"),
        ("unload", "m2", 0),
    ]
    assert {s[0] for s in sequence[9:-1]} == {"judge"}
    assert sequence[-1] == ("unload", "judge", 0)
    target = RunTarget.get(RunTarget.model == "m1")
    assert target.load_ms == pytest.approx(1.0)  # the fake's load_duration, kept on the group
    done = item()
    assert done.tps_source == "ollama.eval" and done.tokens_estimated is False
    assert "Unloaded ollama/m1" in [e.message for e in events(run, "unloaded")]


def _kind(call):
    from tests.engine_helpers import call_kind

    return call_kind(call)[0]


def test_budget_reached_pauses_the_run_with_the_reason(app, fake, config):
    p = make_provider(fake)
    Price.create(provider_name="fake", model="m1", input_per_1m=0.0, output_per_1m=5000.0)
    run = start_run(p, [(p, "m1")], make_tasks(5), settings={"maxBudgetUsd": 0.025})
    result = drive(config, FakeClock())
    assert result["state"] == "paused"
    run = Run.get_by_id(run.id)
    assert run.control_reason.startswith("budget reached")
    counts = run_summary(run)["counts"]
    assert counts[WAITING_FOR_JUDGE] == 3 and counts[NEW] == 2  # 2 tokens x $0.005 each
    assert {i.cost_source for i in Item.select().where(Item.cost_usd.is_null(False))} == {
        "price_table"
    }
    assert events(run, "budget_reached")
    resume_run(run.run_id, max_budget_usd=1.0)
    assert drive(config, FakeClock())["state"] == "finished"


def test_rejudge_judges_one_item_of_a_finished_run_again(app, fake, config):
    run, _ = one_item_run(fake)
    drive(config, FakeClock())
    done = item()
    judge_script(fake, [json.dumps({"score": 40, "reason": "second look", "auto_fail": False})])
    rejudge_item(run.run_id, done.id)
    assert run_state(Run.get_by_id(run.id)) == "running"
    drive(config, FakeClock())
    again = item()
    assert again.status == COMPLETED and again.evaluation_score == 40.0
    assert len(calls(fake, "answer")) == 1  # the answer is kept, only the judge is asked again
    assert Run.get_by_id(run.id).status == "FINISHED"
    assert [h["score"] for h in again.judge_history] == [80.0]


def test_retry_failed_judgements_after_the_judge_recovers(app, fake, config):
    p = make_provider(fake)
    run = start_run(p, [(p, "m1")], make_tasks(2))
    judge_script(fake, ["nope"])
    drive(dict(config, JUDGE_UNUSABLE_TO_PAUSE=100), FakeClock())  # every judgement fails
    assert Item.select().where(Item.status == FAILED).count() == 2
    fake.responder = None
    assert retry_failed_judgements(run.run_id) == 2
    drive(config, FakeClock())
    assert Item.select().where(Item.status == COMPLETED).count() == 2


def test_on_event_receives_progress_events(app, fake, config):
    one_item_run(fake)
    seen = []
    drive(config, FakeClock(), on_event=seen.append)
    names = [e["event"] for e in seen]
    assert names == [
        "judge_warmup",
        "warmup",
        "item_done",
        "phase_changed",
        "item_judged",
        "run_finished",
    ]
    assert seen[2]["taskId"] == "t0" and seen[2]["runId"]


def test_scheduler_starts_one_ticking_job_once_and_releases_the_lease(app, fake):
    from app.db.models import Lease
    from app.engine import lease
    from app.engine import scheduler

    config = dict(app.config, TICK_SECONDS=30)
    first = scheduler.start(config)
    try:
        assert scheduler.start(config) is first  # a second start in one process is a no-op
        job = first.get_job("orchestrator")
        assert job.max_instances == 1 and job.coalesce is True
        deadline = time.monotonic() + 30  # a bound for a busy machine, not a speed check
        while Lease.get_or_none() is None and time.monotonic() < deadline:
            time.sleep(0.02)  # the first tick runs at once, in the scheduler's thread
        assert Lease.get().holder == lease.process_holder()
    finally:
        scheduler.shutdown(wait=True)  # no tick left running on the next test's database
    assert not first.running
    assert lease.acquire("next", 10)  # released at shutdown: no wait for expiry


def test_a_provider_deleted_mid_group_leaves_its_items_cant_be_finished(app, fake, config):
    from app.db.models import Provider

    doomed = make_provider(fake, name="doomed")
    keeper = make_provider(fake, name="keeper")
    run = start_run(keeper, [(doomed, "m1"), (keeper, "m2")], make_tasks(3))

    def responder(call):
        if len(calls(fake, "answer")) == 1:
            with database.connection_context():
                pause_run(run.run_id)
        return None

    fake.responder = responder
    clock = FakeClock()
    assert tick(config, holder=HOLDER, now=clock)["state"] == "paused"
    fake.responder = None
    Provider.delete().where(Provider.id == doomed.id).execute()
    resume_run(run.run_id)
    assert drive(config, clock)["state"] == "finished"
    orphans = list(Item.select().where(Item.status == CANT_BE_FINISHED))
    assert len(orphans) == 2 and all("provider was deleted" in i.error_msg for i in orphans)
    assert Item.select().where(Item.status == COMPLETED).count() == 4
    assert "2 items can't be finished" in events(run, "cant_be_finished")[0].message
    assert "1 can't be finished" not in events(run, "run_finished")[0].message
    assert "2 can't be finished" in events(run, "run_finished")[0].message

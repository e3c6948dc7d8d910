"""`llmbench worker` processes on PostgreSQL: real subprocesses claim items with SKIP LOCKED.

Each test gets a fresh database on the session's throwaway PostgreSQL (tests/pg_server.py), the
session's fake model server, and worker processes started as `python -m app.cli worker`. Every
wait is a bounded poll on the database, the fake server or a process.
"""

import collections
import contextlib
import datetime as dt
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from peewee import fn

from app.clock import utcnow
from app.db.connection import database
from app.db.models import COMPLETED
from app.db.models import JUDGING
from app.db.models import NEW
from app.db.models import WAITING_FOR_JUDGE
from app.db.models import Item
from app.db.models import Run
from app.db.models import RunLog
from app.db.models import RunTarget
from app.engine import claims
from app.engine import lease
from app.engine.claims import claim_sql
from app.engine.orchestrator import tick
from app.runs.control import pause_run
from app.runs.control import resume_run
from app.runs.control import stop_run
from tests import pg_databases
from tests.conftest import PG_TEMPLATE
from tests.conftest import TEST_KEY_B64
from tests.conftest import make_app
from tests.engine_helpers import call_kind
from tests.engine_helpers import calls
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks
from tests.engine_helpers import start_run
from tests.factories import bulk_items
from tests.factories import make_run

pytestmark = pytest.mark.postgres

REPO_ROOT = Path(__file__).resolve().parent.parent
WAIT = 60.0  # the longest any bounded wait here may take on a busy machine


@pytest.fixture
def pg_app(tmp_path, pg_server_url):
    """The app on a fresh PostgreSQL database; yields (app, url)."""
    with pg_databases.fresh_database(pg_server_url, template=PG_TEMPLATE) as url:
        app = make_app(tmp_path, DB=url)
        yield app, url
        if not database.is_closed():
            database.close()


class Workers:
    """`llmbench worker` subprocesses on `url`, each writing to its own log file; all killed at
    the end."""

    def __init__(self, url, tmp_path, **env):
        self.url, self.tmp_path = url, tmp_path
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("LLMBENCH_")}
        self.env.update(
            LLMBENCH_MASTER_KEY_BASE64=TEST_KEY_B64,
            LLMBENCH_SYSMETRICS_SECONDS="0",
            **{f"LLMBENCH_{k}": str(v) for k, v in env.items()},
        )
        self.procs = []

    def start(self, *args):
        log = tempfile.NamedTemporaryFile(
            "w+", dir=self.tmp_path, prefix="worker-", suffix=".log", delete=False
        )
        proc = subprocess.Popen(
            [sys.executable, "-m", "app.cli", "worker", "--db", self.url, *args],
            cwd=REPO_ROOT,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
        )
        proc.log_path = log.name
        log.close()
        self.procs.append(proc)
        return proc

    def close(self):
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=10)


@pytest.fixture
def workers(pg_app, tmp_path):
    made = []

    def start(**env):
        w = Workers(pg_app[1], tmp_path, **env)
        made.append(w)
        return w

    yield start
    for w in made:
        w.close()


def output(proc):
    return Path(proc.log_path).read_text()


def wait_until(check, what, procs=(), timeout=WAIT):
    """Poll `check()` until it is truthy; fail naming `what` (with the workers' output) when
    `timeout` passes or a worker exited."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        for proc in procs:
            if proc.poll() is not None:
                raise AssertionError(f"a worker exited while waiting for {what}: {output(proc)}")
        if time.monotonic() > deadline:
            logs = "\n".join(output(p)[-2000:] for p in procs)
            sessions = database.execute_sql(
                "SELECT pid, state, wait_event_type, wait_event, left(query, 120) "
                "FROM pg_stat_activity WHERE datname = current_database()"
            ).fetchall()
            raise AssertionError(f"timed out waiting for {what}\n{logs}\n{sessions}")
        time.sleep(0.02)


def count(status, run):
    return Item.select().where((Item.run == run) & (Item.status == status)).count()


def claims_in_flight(run):
    return (
        Item.select()
        .where((Item.run == run) & Item.claimed_until.is_null(False) & (Item.status == NEW))
        .count()
    )


def asked(fake, kind="answer"):
    """How many times each (model, question) was asked, or each answer judged (answers name
    their model and question: names_its_model)."""
    if kind == "answer":
        return collections.Counter((m, t) for k, m, t in calls(fake) if k == kind)
    return collections.Counter(
        t.split("<answer>\n", 1)[1].split("\n</answer>", 1)[0]
        for k, _m, t in calls(fake)
        if k == kind
    )


@pytest.fixture(autouse=True)
def names_its_model(fake):
    """Answers say which model gave them to which question, so each judgement names its item."""

    def answer(call):
        kind, model, text = call_kind(call)
        if kind == "answer":
            return {"text": f"{model} says: {text}", "latency": fake.default_latency}
        return None

    fake.responder = answer


def make_run_on(fake, items=20, max_concurrency=64, timeout=60.0, targets=("m1",)):
    provider = make_provider(fake, max_concurrency=max_concurrency, timeout=timeout)
    run = start_run(provider, [(provider, m) for m in targets], make_tasks(items))
    hold_the_lease()
    return provider, run


def hold_the_lease():
    """The test holds the orchestrator's lease as a live web app would (a run whose lease
    holder is gone reads as interrupted); it ticks only when a test says so."""
    lease.acquire("test-holder", 3600.0)


def test_workers_answer_every_item_once_and_never_take_the_same_item(pg_app, workers, fake):
    fake.default_latency = 0.05
    _provider, run = make_run_on(fake, items=60)
    pool = workers()
    procs = [pool.start("--concurrency", "4") for _ in range(3)]
    wait_until(lambda: count(WAITING_FOR_JUDGE, run) == 60, "every answer", procs)
    sent = asked(fake)
    assert len(sent) == 60 and set(sent.values()) == {1}, sent.most_common(3)
    assert {i.answer_attempts for i in Item.select()} == {1}
    assert not asked(fake, "judge")  # BENCHMARKING: no judgement before the phase changes


def test_a_providers_max_concurrency_holds_across_every_worker(pg_app, workers, fake):
    fake.default_latency = 0.15
    _provider, run = make_run_on(fake, items=30, max_concurrency=3)
    pool = workers()
    procs = [pool.start("--concurrency", "8") for _ in range(3)]
    wait_until(lambda: count(WAITING_FOR_JUDGE, run) == 30, "every answer", procs)
    assert 2 <= fake.max_active <= 3
    assert set(asked(fake).values()) == {1}


def test_workers_judge_the_answers_once_the_run_is_judging(pg_app, workers, fake):
    _provider, run = make_run_on(fake, items=12)
    pool = workers()
    procs = [pool.start("--concurrency", "3") for _ in range(2)]
    wait_until(lambda: count(WAITING_FOR_JUDGE, run) == 12, "every answer", procs)
    Run.update(phase=JUDGING).where(Run.id == run.id).execute()  # as the orchestrator does
    wait_until(lambda: count(COMPLETED, run) == 12, "every judgement", procs)
    assert len(asked(fake, "judge")) == 12 and set(asked(fake, "judge").values()) == {1}


def test_a_killed_workers_claims_expire_and_another_finishes_the_run(pg_app, workers, fake):
    fake.default_latency = 0.4
    # A claim holds the provider's timeout (2 s) plus the margin (1 s) unless extended.
    _provider, run = make_run_on(fake, items=24, timeout=2.0)
    pool = workers(CLAIM_MARGIN_SECONDS=1)
    first = pool.start("--concurrency", "4")
    wait_until(lambda: count(WAITING_FOR_JUDGE, run) >= 4, "some answers", [first])
    wait_until(lambda: claims_in_flight(run) >= 2, "claims in flight", [first])
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=10)
    # What the dead worker held: asked (maybe) but never recorded.
    held = {
        ("m1", i.question)
        for i in Item.select().where(
            (Item.run == run) & Item.claimed_until.is_null(False) & (Item.status == NEW)
        )
    }
    done_before = {
        ("m1", i.question) for i in Item.select().where(Item.status == WAITING_FOR_JUDGE)
    }
    assert held
    second = pool.start("--concurrency", "4")
    wait_until(lambda: count(WAITING_FOR_JUDGE, run) == 24, "every answer", [second])
    sent = asked(fake)
    assert len(sent) == 24  # nothing lost
    assert all(sent[q] == 1 for q in done_before)  # an answered item is never asked again
    twice = {q for q, n in sent.items() if n > 1}
    assert twice <= held and all(n <= 2 for n in sent.values())
    for item in Item.select().where(Item.question.in_([q for _m, q in held])):
        assert item.answer_attempts == 2  # the expired claim counted, the new one recorded


def test_a_pause_stops_new_claims_and_lets_the_requests_in_flight_finish(pg_app, workers, fake):
    fake.default_latency = 0.3
    _provider, run = make_run_on(fake, items=40)
    pool = workers()
    procs = [pool.start("--concurrency", "4") for _ in range(2)]
    wait_until(lambda: count(WAITING_FOR_JUDGE, run) >= 8, "some answers", procs)
    pause_run(run.run_id)
    paused_at = utcnow()
    wait_until(lambda: claims_in_flight(run) == 0, "the requests in flight to finish", procs)
    assert count(NEW, run) > 0
    latest = Item.select(fn.MAX(Item.last_attempt_at)).scalar()
    assert latest < paused_at  # nothing claimed after the pause
    assert set(Item.select(Item.attempts).where(Item.status == NEW).tuples()) == {(0,)}
    resume_run(run.run_id)
    wait_until(lambda: count(WAITING_FOR_JUDGE, run) == 40, "every answer", procs)
    assert set(asked(fake).values()) == {1}


def test_a_stop_abandons_the_requests_in_flight_of_every_worker(pg_app, workers, fake):
    # Nothing answers before the stop must have released it, on a busy machine too (the fake's
    # sleeping replies end with the test).
    fake.default_latency = 90.0
    _provider, run = make_run_on(fake, items=10)
    pool = workers()
    procs = [pool.start("--concurrency", "2") for _ in range(2)]
    wait_until(lambda: fake.active == 4 and claims_in_flight(run) == 4, "4 requests", procs)
    stop_run(run.run_id)
    abandoned = RunLog.select().where((RunLog.run == run) & (RunLog.event == "abandoned"))
    # Each worker releases a claim, then logs it: wait for both, or the count races the log line.
    wait_until(
        lambda: claims_in_flight(run) == 0 and abandoned.count() >= 4,
        "the claims given back and logged",
        procs,
        timeout=60,
    )
    assert set(Item.select(Item.status, Item.attempts).tuples()) == {(NEW, 0)}
    assert abandoned.count() == 4
    assert all(p.poll() is None for p in procs)  # the workers wait for the next run


def test_sigterm_gives_the_workers_claims_back_and_exits(pg_app, workers, fake):
    fake.default_latency = 30.0
    _provider, run = make_run_on(fake, items=6)
    proc = workers().start("--concurrency", "3")
    wait_until(lambda: claims_in_flight(run) == 3, "3 requests", [proc])
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=15) == 0, output(proc)
    assert "stopped (claims in flight given back)" in output(proc)
    assert set(Item.select(Item.status, Item.attempts).tuples()) == {(NEW, 0)}
    assert Run.get_by_id(run.id).control == "running"  # the run goes on elsewhere


def test_a_worker_takes_only_the_providers_it_is_given(pg_app, workers, fake):
    near = make_provider(fake, name="near", max_concurrency=8)
    far = make_provider(fake, name="far", max_concurrency=8)
    run = start_run(near, [(near, "m1"), (far, "m2")], make_tasks(8))
    hold_the_lease()
    proc = workers().start("--concurrency", "4", "--providers", "near")
    near_target = RunTarget.get((RunTarget.run == run) & (RunTarget.provider == near))

    def states(near_side):
        on_target = Item.target == near_target
        return set(
            Item.select(Item.status, Item.attempts)
            .where((Item.run == run) & (on_target if near_side else ~on_target))
            .tuples()
        )

    wait_until(lambda: states(True) == {(WAITING_FOR_JUDGE, 0)}, "the near answers", [proc])
    assert states(False) == {(NEW, 0)}
    assert {model for kind, model, _t in calls(fake) if kind == "answer"} == {"m1"}


def test_an_unknown_provider_name_is_refused(pg_app, workers, fake):
    make_run_on(fake, items=1)
    proc = workers().start("--providers", "nowhere")
    assert proc.wait(timeout=30) == 2
    assert "no provider named nowhere (there are: fake)" in output(proc)


def test_the_web_apps_orchestrator_and_two_workers_finish_a_run_together(pg_app, workers, fake):
    app, _url = pg_app
    fake.default_latency = 0.05
    _provider, run = make_run_on(fake, items=30, max_concurrency=4, targets=("m1", "m2"))
    pool = workers()
    procs = [pool.start("--concurrency", "4") for _ in range(2)]
    config = dict(app.config)
    deadline = time.monotonic() + WAIT * 2
    with contextlib.ExitStack():
        while Run.get_by_id(run.id).status != "FINISHED":
            assert time.monotonic() < deadline, "the run never finished"
            result = tick(config, holder="test-holder", slice_seconds=1.0)
            if result["idle"]:
                time.sleep(0.05)
            for proc in procs:
                assert proc.poll() is None, output(proc)
    assert count(COMPLETED, run) == 60
    assert set(asked(fake).values()) == {1} and len(asked(fake)) == 60
    assert len(asked(fake, "judge")) == 60 and set(asked(fake, "judge").values()) == {1}
    assert fake.max_active <= 4 + 1  # + the orchestrator's warm-up (not a claim)


def _inline(sql, params):
    """The claim SQL with its `?` as literals (EXPLAIN takes no bound parameters)."""
    out = sql
    for value in params:
        literal = f"'{value}'" if isinstance(value, str) else str(value)
        out = out.replace("?", literal, 1)
    return out


@pytest.mark.parametrize(
    ("status", "by_target", "index"),
    [(NEW, True, "item_claim_new_by_id"), (WAITING_FOR_JUDGE, False, "item_claim_judge_by_id")],
)
def test_a_postgres_claim_reads_its_partial_index_in_id_order(pg_app, status, by_target, index):
    run, (target,) = make_run("plans", status="PENDING", control="running")
    bulk_items(run, target, 5000)  # settled: not in the partial indexes
    bulk_items(run, target, 200, start=5000, status=status)
    database.execute_sql("ANALYZE item")
    now = "2025-01-02 03:04:05"
    params = [now, now, now, "w", run.id] + ([target.id] if by_target else [])
    params += [now, now, 4, now, run.id]
    plan = "\n".join(
        row[0]
        for row in database.execute_sql(
            "EXPLAIN " + _inline(claim_sql(status, by_target), params)
        ).fetchall()
    )
    assert index in plan, plan
    assert "Sort" not in plan and "Seq Scan on item" not in plan, plan
    assert "LockRows" in plan and "InitPlan" in plan, plan  # locked once, not per row


def test_a_providers_free_slots_cap_every_claim_across_holders(pg_app, fake):
    provider, run = make_run_on(fake, items=10, max_concurrency=3)
    target = RunTarget.get(RunTarget.run == run)
    now = utcnow()
    until = now + dt.timedelta(seconds=60)

    def take(k, holder):
        return claims.claim_batch(run.id, NEW, now, until, target.id, k, holder, provider.id, 3)

    assert len(take(2, "a")) == 2
    second = take(5, "b")
    assert len(second) == 1 and not second.full
    third = take(5, "c")
    assert not third and third.full
    claims.release(second[0].id, second[0].attempts)
    assert len(take(5, "c")) == 1

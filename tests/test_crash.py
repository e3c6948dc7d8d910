"""Crash test: SIGKILL the orchestrator at random moments; continuing loses and redoes nothing."""

import collections
import os
import random
import signal
import subprocess
import sys
import time

import pytest

from app.config import REPO_ROOT
from app.db.models import COMPLETED
from app.db.models import Item
from app.db.models import Run
from app.db.models import RunLog
from app.engine import lease
from app.runs.state import run_state
from tests.engine_helpers import call_kind
from tests.engine_helpers import calls
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks
from tests.engine_helpers import start_run

KILLS = 12
LEASE_SECONDS = 0.5
AHEAD = 3  # workers started ahead of their turn (a start takes seconds on a busy machine)


def _spawn(db, run_id, standby=False):
    """A worker process; a standby one starts and then waits for _let_go before it works."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LLMBENCH_")}
    args = [sys.executable, "-m", "tests.crash_worker", db, run_id, str(LEASE_SECONDS)]
    return subprocess.Popen(
        [*args, "--standby"] if standby else args,
        cwd=REPO_ROOT,
        env=env,
        stdin=subprocess.PIPE if standby else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _let_go(proc):
    proc.stdin.write("go\n")
    proc.stdin.flush()


def _work_calls(fake):
    return sum(1 for kind, _m, _t in calls(fake) if kind in ("answer", "judge"))


def _wait_for_work(fake, at_least, proc, timeout=60.0):
    """Until the fake has seen `at_least` answer/judge calls in all, or the worker exited."""
    deadline = time.monotonic() + timeout
    while _work_calls(fake) < at_least and proc.poll() is None:
        if time.monotonic() > deadline:
            raise AssertionError("the worker never got that far")
        time.sleep(0.005)


@pytest.mark.slow
def test_killed_orchestrator_continues_without_losing_or_redoing_work(app, fake):
    rng = random.Random(int(os.environ.get("CRASH_SEED", "7")))
    p = make_provider(fake)
    run = start_run(p, [(p, "m1"), (p, "m2")], make_tasks(30))
    lease.release("test-holder")  # the test itself never orchestrates
    fake.default_latency = 0.03
    fake.responder = _answer_names_its_model
    db = app.config["DB"]
    in_flight_at_kill = collections.Counter()
    # Kill points spread over the whole run (120 answer+judge calls): both phases get hit.
    kill_at = sorted(rng.sample(range(2, 118), KILLS))
    kills = 0
    # The next workers start while the current one works, then each waits until its turn: the
    # one before it killed and its in-flight call noted. A start (Python, imports: seconds on
    # a busy machine) then costs the test nothing, and one worker at a time works, as before.
    standbys = collections.deque()
    spawned = 0
    proc = _spawn(db, run.run_id)
    try:
        for target in kill_at:
            while len(standbys) < AHEAD and spawned < KILLS:
                standbys.append(_spawn(db, run.run_id, standby=True))
                spawned += 1
            _wait_for_work(fake, max(target, _work_calls(fake) + 1), proc)
            time.sleep(rng.uniform(0.0, 0.03))  # mostly mid-request, sometimes between writes
            if proc.poll() is not None:
                break
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=10)
            for pipe in (proc.stdin, proc.stdout, proc.stderr):
                if pipe is not None:
                    pipe.close()
            kills += 1
            # At most one request was in flight (concurrency 1): the last one sent.
            kind, model, text = calls(fake)[-1]
            if kind in ("answer", "judge"):
                key = (kind, model if kind == "answer" else None, _key(kind, text))
                in_flight_at_kill[key] += 1
            proc = standbys.popleft()
            _let_go(proc)
        assert kills >= 10, f"the run finished after {kills} kills; give it more work"
        out, err = proc.communicate(timeout=60)
    finally:
        for left in (proc, *standbys):
            if left.poll() is None:
                left.kill()
                left.communicate(timeout=10)
    assert proc.returncode == 0, err
    assert out.strip().endswith("finished"), out + err

    run = Run.get_by_id(run.id)
    assert run_state(run) == "finished"
    items = list(Item.select())
    assert len(items) == 60
    assert {i.status for i in items} == {COMPLETED}, [
        (i.task_key, i.status, i.error_msg) for i in items if i.status != COMPLETED
    ]
    assert (
        RunLog.select().where((RunLog.run == run) & (RunLog.event == "interrupted")).count()
        == kills + 1
    )  # each worker took over from a dead one (the first from the test)
    sent = collections.Counter()
    for kind, model, text in calls(fake):
        if kind in ("answer", "judge"):
            sent[(kind, model if kind == "answer" else None, _key(kind, text))] += 1
    assert len([k for k in sent if k[0] == "answer"]) == 60
    assert len([k for k in sent if k[0] == "judge"]) == 60
    for key, count in sent.items():
        assert count <= 1 + in_flight_at_kill[key], f"{key} sent {count} times"


def _answer_names_its_model(call):
    """Answers say which model gave them, so a judge request tells which item it is about."""
    kind, model, text = call_kind(call)
    if kind == "answer":
        return {"text": f"{model} says: {text}", "latency": 0.03}
    return None


def _key(kind, text):
    """The item a call is about: its question (answers) or the answer inside the judge prompt."""
    if kind == "answer":
        return text
    return text.split("<answer>\n", 1)[1].split("\n</answer>", 1)[0]

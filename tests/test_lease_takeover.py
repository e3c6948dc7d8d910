"""Lock takeover: a lease whose holder is a process on this host that is gone is taken at once;
a live holder is named as it is (llmbench serve or run, its pid), not guessed."""

import datetime as dt
import socket
import subprocess
import sys
import time

import psutil
import pytest
from click.testing import CliRunner

from app.cli import main
from app.clock import utcnow
from app.db.connection import database
from app.db.models import COMPLETED
from app.db.models import Item
from app.db.models import Lease
from app.engine import lease
from tests.conftest import TEST_KEY_B64
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks
from tests.engine_helpers import start_run

HOST = socket.gethostname()


@pytest.fixture
def sleeper():
    """A live process on this host that looks like `llmbench serve` in its command line."""
    proc = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)", "/venv/bin/llmbench", "serve"]
    )
    # Popen returns once forked: until the child has exec'd, its command line is not this one.
    deadline = time.monotonic() + 30
    while "serve" not in psutil.Process(proc.pid).cmdline():
        assert time.monotonic() < deadline, "the sleeper never started"
        time.sleep(0.01)
    yield proc
    if proc.poll() is None:
        proc.kill()
    proc.wait(timeout=10)


def _dead_pid():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait(timeout=30)  # reaped: the pid names no process now
    return proc.pid


def _hold(holder, seconds=60):
    Lease.delete().execute()
    Lease.create(
        name="orchestrator", holder=holder, expires_at=utcnow() + dt.timedelta(seconds=seconds)
    )


def test_a_fresh_lease_of_a_dead_process_on_this_host_is_taken_at_once(app):
    _hold(f"{HOST}:{_dead_pid()}:abcd")
    assert lease.acquire("me", 15)
    assert Lease.get().holder == "me"


def test_a_killed_but_unreaped_holder_counts_as_gone(app, sleeper):
    _hold(f"{HOST}:{sleeper.pid}:abcd")
    sleeper.kill()
    # Wait (bounded) until the kill has landed; not reaped, it stays a zombie.
    deadline = time.monotonic() + 10
    while psutil.Process(sleeper.pid).status() != psutil.STATUS_ZOMBIE:
        assert time.monotonic() < deadline, "the killed process never became a zombie"
        time.sleep(0.01)
    assert lease.acquire("me", 15)


def test_a_live_holder_on_this_host_keeps_its_lease(app, sleeper):
    _hold(f"{HOST}:{sleeper.pid}:abcd")
    assert not lease.acquire("me", 15)
    assert lease.live_holder() is not None


def test_a_holder_on_another_host_waits_for_its_expiry(app):
    _hold(f"elsewhere-{HOST}:1:abcd")
    assert not lease.acquire("me", 15)


def test_a_live_holder_is_named_by_its_command_and_pid(app, sleeper):
    assert lease.describe_holder(f"{HOST}:{sleeper.pid}:abcd") == (
        f"llmbench serve (pid {sleeper.pid} on this host)"
    )


def test_a_holder_on_another_host_is_named_with_its_host(app):
    assert lease.describe_holder("vm2:17196:abcd") == (
        "a process on host vm2 (pid 17196; holder vm2:17196:abcd)"
    )


def test_the_dead_holders_running_run_is_stopped_on_takeover_then_resumable(app, fake):
    p = make_provider(fake)
    # The dead process started the run and holds a fresh lease.
    run = start_run(p, [(p, "m1")], make_tasks(1), holder=f"{HOST}:{_dead_pid()}:abcd")
    assert lease.acquire("me", 15)
    assert run.__class__.get_by_id(run.id).control == "stopped"


def test_resume_right_after_a_killed_cli_takes_over_and_finishes(app, fake, tmp_path):
    p = make_provider(fake)
    run = start_run(p, [(p, "m1")], make_tasks(2), holder="x")
    _hold(f"{HOST}:{_dead_pid()}:abcd")  # kill -9 of `llmbench run` a moment ago
    database.close()
    env = {"LLMBENCH_DB": app.config["DB"], "LLMBENCH_MASTER_KEY_BASE64": TEST_KEY_B64}
    result = CliRunner().invoke(main, ["resume", run.run_id], env=env)
    assert result.exit_code == 0, result.output
    with database.connection_context():
        assert {i.status for i in Item.select()} == {COMPLETED}


def test_show_says_a_run_whose_process_died_can_be_resumed_now(app, fake):
    p = make_provider(fake)
    run = start_run(p, [(p, "m1")], make_tasks(1), holder=f"{HOST}:{_dead_pid()}:abcd")
    database.close()
    env = {"LLMBENCH_DB": app.config["DB"], "LLMBENCH_MASTER_KEY_BASE64": TEST_KEY_B64}
    result = CliRunner().invoke(main, ["show", run.run_id], env=env)
    assert "running (but no orchestrator works on it: it was interrupted)" in result.stdout
    assert f"Continue it with: llmbench resume {run.run_id}" in result.stdout


def test_the_cli_names_a_live_server_holder_and_exits_1(app, fake, sleeper):
    p = make_provider(fake)
    run = start_run(p, [(p, "m1")], make_tasks(1), holder="x")
    _hold(f"{HOST}:{sleeper.pid}:abcd")
    database.close()
    env = {"LLMBENCH_DB": app.config["DB"], "LLMBENCH_MASTER_KEY_BASE64": TEST_KEY_B64}
    result = CliRunner().invoke(main, ["resume", run.run_id], env=env)
    assert result.exit_code == 1
    assert f"held by llmbench serve (pid {sleeper.pid} on this host)" in result.stderr

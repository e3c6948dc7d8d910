"""One orchestrator per database across real processes: the second waits until the first dies."""

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from app.config import REPO_ROOT
from app.db.models import COMPLETED
from app.db.models import Item
from app.db.models import Lease
from app.engine import lease
from app.runs.queries import get_run
from app.runs.state import run_state
from tests.engine_helpers import calls
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks
from tests.engine_helpers import start_run

LEASE_SECONDS = 1.0


def _wait_until(condition, timeout):
    """Wait for `condition()` to hold (bounded); fail naming the timeout when it never does."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        time.sleep(0.01)


class Worker:
    """A tests/crash_worker.py process (waits for the lease, then works the run to its end)
    whose stdout lines are collected with the time each arrived."""

    def __init__(self, db, run_id):
        env = {k: v for k, v in os.environ.items() if not k.startswith("LLMBENCH_")}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.crash_worker", db, run_id, str(LEASE_SECONDS)],
            cwd=REPO_ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self.lines = []  # (monotonic time, line)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append((time.monotonic(), line.strip()))

    def wait_for(self, text, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for at, line in list(self.lines):
                if line == text:
                    return at
            time.sleep(0.01)
        raise AssertionError(f"worker {self.proc.pid} never printed {text!r}: {self.lines}")

    def printed(self, text):
        """True when the worker has printed `text` (a whole line) so far."""
        return any(line == text for _at, line in list(self.lines))

    def holds_lease(self):
        row = Lease.get_or_none()
        return row is not None and f":{self.proc.pid}:" in row.holder

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)
        self._reader.join(timeout=5)
        self.proc.stdout.close()


@pytest.mark.slow
def test_a_second_process_waits_for_the_lease_and_takes_over_when_the_first_dies(app, fake):
    p = make_provider(fake)
    run = start_run(p, [(p, "m1")], make_tasks(50))
    lease.release("test-holder")  # the test itself never orchestrates
    fake.default_latency = 0.05
    db = app.config["DB"]
    first = Worker(db, run.run_id)
    second = None
    try:
        first.wait_for("working", 15)
        second = Worker(db, run.run_id)
        # The second process has started and been refused the lease at least once ...
        second.wait_for("waiting for the lease", 30)
        assert second.proc.poll() is None and not second.printed("working")
        assert first.holds_lease()
        sent = len(calls(fake))
        _wait_until(lambda: len(calls(fake)) > sent, 15)  # ... while the first one works
        assert not second.printed("working")
        assert first.proc.poll() is None, "the run ended before the kill: give it more work"
        first.proc.send_signal(signal.SIGKILL)
        killed_at = time.monotonic()
        first.close()
        took_over = second.wait_for("working", 10)
        assert took_over > killed_at and second.holds_lease()
        second.wait_for("finished", 30)
    finally:
        first.close()
        if second is not None:
            second.close()
    assert run_state(get_run(run.run_id)) == "finished"
    assert {i.status for i in Item.select()} == {COMPLETED}

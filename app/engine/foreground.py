"""The foreground run loop: one process works one run until it is finished, paused or stopped.

`llmbench run` and `resume` use it (the CLI shows its events); the web app never does, its
scheduler thread ticks instead (scheduler.py).
"""

import time

from ..clock import utcnow
from ..db.models import CONTROL_STOPPED
from ..errors import Conflict
from ..runs.control import resume_run
from ..runs.control import set_control
from ..runs.dto import run_summary
from ..runs.queries import get_run
from ..runs.state import run_state
from . import lease
from .memory import memory_for
from .orchestrator import tick
from .workers import INTERRUPTED

# A foreground tick works this long at most. The web app's ticks stay short (the scheduler runs
# its hooks between them); here nothing waits for a tick to end: Ctrl-C, pause and stop are
# seen by the worker pool's supervisor every 0.1 s and the lease is renewed inside the slice.
# Every end of a slice drained the worker pool (the requests in flight finish, no new claims)
# and started it again: at 200 ms per call and 16 workers, 5 s slices lost ~4 % throughput.
SLICE_SECONDS = 60.0


def run_foreground(
    run_id,
    config,
    *,
    resume=False,
    max_budget_usd=None,
    on_event=None,
    stop_event=None,
    holder=None,
):
    """Work on one run in this process until it is finished, paused or stopped.

    Takes the lease first (Conflict naming the holder when another live orchestrator has it),
    then continues the run when `resume` is set and it is not running (with a new budget, if
    given), ticks, and releases the lease. `stop_event` (Ctrl-C) stops the run, resumable.
    Returns the final state.
    """
    holder = holder or lease.process_holder()
    seconds = float(config.get("LEASE_SECONDS", 15.0))
    if not lease.acquire(holder, seconds, spare_run_id=run_id):
        current = lease.current()
        raise Conflict(
            f"the orchestrator is held by {lease.describe_holder(current.holder)}; stop it "
            f"or wait until its lease expires ({current.expires_at:%H:%M:%S} UTC)"
        )
    try:
        run = get_run(run_id)
        if resume and run_state(run) != "running":
            run = resume_run(run_id, max_budget_usd=max_budget_usd)
        if on_event is not None:
            # What a listener needs to show the run before any item moves (then: item events).
            on_event({"event": "run_resumed" if resume else "run_started", "run": run_summary(run)})
        while True:
            result = tick(
                config,
                holder=holder,
                on_event=on_event,
                interrupt=stop_event,
                slice_seconds=SLICE_SECONDS,
            )
            run = get_run(run_id)
            if not result["held"] or run_state(run) != "running":
                break
            if result["runId"] not in (None, run_id):
                break
            if stop_event is not None and stop_event.is_set():
                break
            if result["idle"]:
                _pause_until(result.get("wakeAt"), stop_event)
        if stop_event is not None and stop_event.is_set() and run_state(run) == "running":
            run = set_control(
                run, CONTROL_STOPPED, INTERRUPTED, "stopped", "Stopped: the command was interrupted"
            )
        state = run_state(run)
        if on_event is not None and state in ("paused", "stopped"):
            on_event(
                {
                    "event": f"run_{state}",
                    "runId": run_id,
                    "message": run.control_reason,
                    "level": "WARNING",
                }
            )
        return state
    finally:
        memory_for(holder, None)  # stops the run's sampler: this process works on it no more
        lease.release(holder)


def _pause_until(wake, stop_event):
    """Sleep until the next item is due (at most 1 s), or until Ctrl-C."""
    pause = 1.0 if wake is None else (wake - utcnow()).total_seconds()
    pause = min(max(pause, 0.02), 1.0)
    if stop_event is not None:
        stop_event.wait(pause)
    else:
        time.sleep(pause)

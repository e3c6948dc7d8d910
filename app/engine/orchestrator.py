"""The orchestrator: one tick renews the lease, then works on the active run for a bounded slice.

BENCHMARKING goes through the run's targets in order, one (provider, model) group at a time with
a warm-up per group; then JUDGING sends every answer to the run's judge (see slice.py).
No Flask here: `llmbench serve` ticks it from APScheduler, the CLI from run_foreground.
"""

import time

from ..clock import utcnow
from ..errors import Conflict
from ..models import CONTROL_RUNNING
from ..models import CONTROL_STOPPED
from ..models import PENDING
from ..models import Run
from ..runs.lifecycle import set_control
from ..runs.queries import get_run
from ..runs.state import run_state
from . import lease
from .memory import memory_for
from .slice import SLICE_SECONDS
from .slice import Slice
from .workers import INTERRUPTED


def _clock(now):
    if now is None:
        return utcnow
    if callable(now):
        return now
    return lambda: now


def tick(config, *, holder=None, now=None, on_event=None, interrupt=None, slice_seconds=None):
    """Renew the lease; if ours, work on the active run for one bounded slice. Returns a summary."""
    clock = _clock(now)
    holder = holder or lease.process_holder()
    if not lease.acquire(holder, float(config.get("LEASE_SECONDS", 15.0)), clock()):
        return {"held": False, "runId": None, "state": None, "idle": True}
    run = (
        Run.select()
        .where((Run.status == PENDING) & (Run.control == CONTROL_RUNNING))
        .order_by(Run.created_at, Run.id)
        .first()
    )
    if run is None:
        memory_for(holder, None)
        return {"held": True, "runId": None, "state": None, "idle": True}
    slice_ = Slice(
        run,
        config,
        holder,
        clock,
        on_event,
        interrupt,
        float(slice_seconds or config.get("TICK_SLICE_SECONDS", SLICE_SECONDS)),
    )
    return slice_.work()


def run_foreground(run_id, config, on_event=None, stop_event=None, holder=None):
    """Work on one run in this process until it is finished, paused or stopped (the CLI's loop).

    Takes the lease (Conflict if another live orchestrator holds it), ticks, releases the lease.
    `stop_event` (e.g. Ctrl-C) stops the run, resumable. Returns the final state.
    """
    holder = holder or lease.process_holder()
    get_run(run_id)
    seconds = float(config.get("LEASE_SECONDS", 15.0))
    if not lease.acquire(holder, seconds, spare_run_id=run_id):
        current = lease.current()
        raise Conflict(
            f"the orchestrator is held by {current.holder} (llmbench serve?); stop it "
            f"or wait until its lease expires ({current.expires_at:%H:%M:%S} UTC)"
        )
    try:
        while True:
            result = tick(config, holder=holder, on_event=on_event, interrupt=stop_event)
            run = get_run(run_id)
            state = run_state(run)
            if not result["held"] or state != "running" or result["runId"] not in (None, run_id):
                break
            if stop_event is not None and stop_event.is_set():
                break
            if result["idle"]:
                wake = result.get("wakeAt")
                pause = 1.0 if wake is None else (wake - utcnow()).total_seconds()
                pause = min(max(pause, 0.02), 1.0)
                if stop_event is not None:
                    stop_event.wait(pause)
                else:
                    time.sleep(pause)
        run = get_run(run_id)
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
        lease.release(holder)

"""Runs: create, pause, stop, resume/continue; run_id naming; the derived run state.

(Filled in by the engine work; active_run() is what the top bar shows.)"""

from .models import CONTROL_PAUSED
from .models import CONTROL_RUNNING
from .models import CONTROL_STOPPED
from .models import FINISHED
from .models import PENDING
from .models import Run


def run_state(run):
    """What people see: running, paused, stopped or finished."""
    if run.status == FINISHED:
        return "finished"
    return {CONTROL_RUNNING: "running", CONTROL_PAUSED: "paused",
            CONTROL_STOPPED: "stopped"}.get(run.control, "stopped")


def active_run():
    """The run that is running or paused (at most one), or None."""
    run = (Run.select()
           .where((Run.status == PENDING) & (Run.control.in_([CONTROL_RUNNING, CONTROL_PAUSED])))
           .order_by(Run.created_at.desc()).first())
    if run is not None:
        run.state = run_state(run)
    return run

"""The queue: runs waiting for the engine to be free (state `queued`), started oldest first.

A queued run is a PENDING run whose control is "queued": the orchestrator never claims its
items. When no run is running (a paused one waits apart, blocking nothing), the engine starts
the oldest one (start_next, called by each tick). A queued run can be cancelled: it becomes
stopped, resumable like any other.
"""

from ..clock import utcnow
from ..db.connection import database
from ..db.models import CONTROL_QUEUED
from ..db.models import CONTROL_RUNNING
from ..db.models import CONTROL_STOPPED
from ..db.models import FINISHED
from ..db.models import Run
from ..errors import ValidationError
from ..runlog import log_event
from .queries import get_run
from .queries import running_run

CANCELLED_REASON = "cancelled while queued; continue it to run it after all"


def _waiting():
    return Run.select().where((Run.status != FINISHED) & (Run.control == CONTROL_QUEUED))


def queued_runs():
    """The runs waiting for the engine, first in line first, each with `.position` (1-based)."""
    runs = list(_waiting().order_by(Run.queued_at, Run.id))
    for position, run in enumerate(runs, start=1):
        run.position = position
    return runs


def start_next(now=None):
    """Start the oldest queued run when no run is running; returns it, or None."""
    now = now or utcnow()
    with database.atomic("IMMEDIATE"):
        if running_run() is not None:
            return None
        run = _waiting().order_by(Run.queued_at, Run.id).first()
        if run is None:
            return None
        Run.update(
            control=CONTROL_RUNNING, control_reason=None, started_at=now, updated_at=now
        ).where((Run.id == run.id) & (Run.control == CONTROL_QUEUED)).execute()
        waited = (now - (run.queued_at or now)).total_seconds()
        log_event(
            run,
            "run_started",
            f"Started from the queue after {waited:.0f} s: the engine is free",
            data={"queuedSeconds": round(waited, 1)},
            now=now,
        )
    return Run.get_by_id(run.id)


def cancel_queued(run_id, now=None):
    """Take a queued run out of the queue: it becomes stopped (nothing was asked yet)."""
    now = now or utcnow()
    run = get_run(run_id)
    with database.atomic("IMMEDIATE"):
        updated = (
            Run.update(control=CONTROL_STOPPED, control_reason=CANCELLED_REASON, updated_at=now)
            .where((Run.id == run.id) & (Run.control == CONTROL_QUEUED) & (Run.status != FINISHED))
            .execute()
        )
        if not updated:
            raise ValidationError.field(
                "runId", f"run {run_id} is not queued; only a queued run can be cancelled"
            )
        log_event(run, "stopped", f"Cancelled while queued ({CANCELLED_REASON})", now=now)
    return Run.get_by_id(run.id)

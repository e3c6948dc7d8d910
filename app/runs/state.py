"""A run's state as people see it: queued, running, paused, stopped or finished (derived, never
stored)."""

from ..clock import utcnow
from ..db.connection import database
from ..db.models import CONTROL_PAUSED
from ..db.models import CONTROL_QUEUED
from ..db.models import CONTROL_RUNNING
from ..db.models import CONTROL_STOPPED
from ..db.models import FINISHED
from ..db.models import ORCHESTRATOR_LEASE
from ..db.models import Lease

NO_ORCHESTRATOR = "interrupted (no orchestrator is running); continue it when ready"


def orchestrator_gone(now=None):
    """True when an orchestrator held the lease and let it lapse (crashed, or shut down).

    No lease row at all means no orchestrator ever ran here (e.g. the web app alone): unknown,
    so False. The engine writes the lease (engine/lease.py); runs only read it.
    """
    row = database.execute_sql(
        "SELECT expires_at FROM lease WHERE name = ?", (ORCHESTRATOR_LEASE,)
    ).fetchone()
    if row is None:
        return False
    return Lease.expires_at.python_value(row[0]) < (now or utcnow())


def _orphaned(run):
    """Running by its control, but the orchestrator's lease lapsed: nobody works on it."""
    return run.status != FINISHED and run.control == CONTROL_RUNNING and orchestrator_gone()


def run_state(run):
    """What people see: queued, running, paused, stopped or finished.

    A run left running by an orchestrator that died shows "stopped" at once (the next
    orchestrator marks it so when it takes over), not "running" for a lease's length.
    """
    if run.status == FINISHED:
        return "finished"
    if _orphaned(run):
        return "stopped"
    return {
        CONTROL_RUNNING: "running",
        CONTROL_PAUSED: "paused",
        CONTROL_STOPPED: "stopped",
        CONTROL_QUEUED: "queued",
    }.get(run.control, "stopped")


def control_reason(run):
    """Why the run is paused or stopped (also when that is only known from the lease)."""
    return NO_ORCHESTRATOR if _orphaned(run) else run.control_reason


PHASE_WORDS = {"BENCHMARKING": "answering tasks", "JUDGING": "judging answers"}


def state_words(state, phase, completed, failed):
    """The run's state as a person says it: "finished", "finished with 2 failed",
    "running, judging answers", "paused, answering tasks"; the phase only while it matters."""
    label = state_label(state, completed, failed)[0]
    if state == "finished" or phase not in PHASE_WORDS:
        return label
    return f"{label}, {PHASE_WORDS[phase]}"


def state_label(state, completed, failed):
    """(label, tone) people read for a run: a finished run says how it ended.

    "finished with 3 failed" has the warning tone, "finished, nothing completed" the error
    tone; other states are their own label and tone (running, paused, stopped).
    """
    if state != "finished":
        return state, state
    if not completed:
        return "finished, nothing completed", "error"
    if failed:
        return f"finished with {failed} failed", "warn"
    return "finished", "finished"

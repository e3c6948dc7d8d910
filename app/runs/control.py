"""What a person (or the engine) asks of a run after its start: pause, stop, resume, delete.

Each sets the run's `control` column (the engine reads it between steps), with a run log line.
Apart from the run's creation (lifecycle.py), which checks a spec against the providers'
servers: `llmbench pause`, `stop` and `delete` load no HTTP client nor the engine.
"""

from ..clock import utcnow
from ..db.connection import database
from ..db.models import CONTROL_PAUSED
from ..db.models import CONTROL_RUNNING
from ..db.models import CONTROL_STOPPED
from ..db.models import FINISHED
from ..db.models import NEW
from ..db.models import WAITING_FOR_JUDGE
from ..db.models import Item
from ..db.models import Outage
from ..db.models import Run
from ..db.models import RunFigures
from ..errors import Conflict
from ..errors import ValidationError
from ..runlog import log_event
from .queries import check_no_active_run
from .queries import get_run
from .spec import setting
from .state import run_state


def set_control(run, control, reason, event, message, now=None, **extra):
    """Set what the person (or the engine) asked the run to do, with a run log line."""
    now = now or utcnow()
    Run.update(control=control, control_reason=reason, updated_at=now, **extra).where(
        Run.id == run.id
    ).execute()
    log_event(run, event, message, now=now)
    return Run.get_by_id(run.id)


def pause_run(run_id, reason="paused by you", now=None):
    """Pause a running run: the item in flight finishes, then it halts."""
    run = get_run(run_id)
    if run_state(run) != "running":
        raise ValidationError.field(
            "runId",
            f"run {run_id} is {run_state(run)}, not running; only a running run can be paused",
        )
    return set_control(
        run,
        CONTROL_PAUSED,
        reason,
        "paused",
        f"Paused ({reason}); the item in flight finishes first",
        now,
    )


def stop_run(run_id, reason="stopped by you", now=None):
    """Stop a running or paused run now: the in-flight request is abandoned, its item stays NEW."""
    run = get_run(run_id)
    # control, not the shown state: an interrupted run (no orchestrator) can be stopped too.
    if run.status == FINISHED or run.control == CONTROL_STOPPED:
        raise ValidationError.field(
            "runId",
            f"run {run_id} is {run_state(run)}; only a running or paused run can be stopped",
        )
    # The engine reads the control column between steps and while requests are in flight
    # (engine/workers.py POLL_SECONDS): the request in flight is abandoned within that time.
    return set_control(
        run, CONTROL_STOPPED, reason, "stopped", f"Stopped ({reason}); continue it when ready", now
    )


def resume_run(run_id, now=None, max_budget_usd=None):
    """Continue a paused, stopped or interrupted run (409 while another run is active)."""
    now = now or utcnow()
    run = get_run(run_id)
    state = run_state(run)
    if state not in ("paused", "stopped"):
        raise ValidationError.field(
            "runId", f"run {run_id} is {state}; only a paused or stopped run can be resumed"
        )
    extra = {}
    if max_budget_usd is not None:
        try:
            budget = setting("maxBudgetUsd", max_budget_usd)
        except ValueError as exc:
            raise ValidationError.field("maxBudgetUsd", str(exc)) from None
        extra["settings"] = {**(run.settings or {}), "maxBudgetUsd": budget}
    with database.atomic("IMMEDIATE"):
        check_no_active_run(exclude=run)
        # The retry-time cap counts from each item's next attempt, not from before the pause.
        Item.update(first_attempt_at=None).where(
            (Item.run == run) & Item.status.in_([NEW, WAITING_FOR_JUDGE])
        ).execute()
        # A server that was unreachable is tried at once: the person may have fixed it.
        Outage.delete().where(Outage.run == run).execute()
        return set_control(
            run,
            CONTROL_RUNNING,
            None,
            "resumed",
            f"Resumed (was {state}: {run.control_reason or 'no reason given'})",
            now,
            **extra,
        )


def delete_run(run_id):
    """Delete a run with its items and log (409 while it is running or paused)."""
    run = get_run(run_id)
    if run_state(run) in ("running", "paused"):
        raise Conflict(f"Run {run_id} is {run_state(run)}; stop it before deleting it.")
    with database.atomic():
        # Figures kept across runs live with their first run, named `…|<id>|` after the others
        # (results/kept.kept_across): the cascade takes the first's, this the others'.
        RunFigures.delete().where(RunFigures.name.contains(f"|{run.id}|")).execute()
        Run.delete().where(Run.id == run.id).execute()

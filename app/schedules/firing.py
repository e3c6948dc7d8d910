"""Firing schedules: a due template starts (or queues) one run per fire time, exactly once.

A template's next fire time lives in its row. Firing claims it with one compare-and-set UPDATE
(`... SET next_fire_at = <next> WHERE id = ? AND next_fire_at = <due>`): whichever process or
thread gets the row count 1 owns that fire time; everyone else sees it moved on. The claim is
committed before the run is created, so a fire time is never run twice, across restarts and
processes (at most once: a crash between the two loses that one fire). Fire times missed while
the app was down run once (coalesced) at the next check, and the run log says how many.
"""

import datetime as dt
import logging

from ..clock import utcnow
from ..db.connection import database
from ..db.models import Template
from ..errors import LlmbenchError
from ..runlog import log_event
from . import cron
from .template_start import start_template

log = logging.getLogger(__name__)

# A fire checked later than this after its time was missed (the app was down or busy), not
# merely picked up by the next check a few seconds on.
LATE = dt.timedelta(seconds=60)


def due_templates(now):
    """Templates whose enabled schedule is due at `now`."""
    return list(
        Template.select().where(
            Template.schedule_enabled
            & Template.next_fire_at.is_null(False)
            & (Template.next_fire_at <= now)
        )
    )


def claim_fire(template, now):
    """Claim the template's due fire time(s): the fire times up to `now` (the due one first),
    or None when another process or thread claimed it first (the row had moved on)."""
    due = template.next_fire_at
    times = cron.fire_times_between(template.cron, template.timezone, due, now)
    following = cron.next_fire(template.cron, template.timezone, now)
    with database.atomic("IMMEDIATE"):
        claimed = (
            Template.update(next_fire_at=following, last_fired_at=times[-1], updated_at=now)
            .where(
                (Template.id == template.id)
                & (Template.next_fire_at == due)
                & Template.schedule_enabled
            )
            .execute()
        )
    return times if claimed else None


def _note(template, times, now):
    """What the run records about its fire: the time, and any fire times it coalesced."""
    fired = cron.local(times[-1], template.timezone)
    note = f"cron {template.cron} ({template.timezone}) at {fired:%Y-%m-%d %H:%M %Z}"
    if len(times) > 1:
        first = cron.local(times[0], template.timezone)
        note += (
            f"; {len(times) - 1} earlier fire time(s) since {first:%Y-%m-%d %H:%M} were "
            "missed while the app was down: run once (coalesced)"
        )
    elif now - times[-1] > LATE:
        note += f"; fired {int((now - times[-1]).total_seconds())} s late (the app was down)"
    return note


def fire_template(template, now):
    """Claim and fire one due template: the run started or queued, or None."""
    times = claim_fire(template, now)
    if times is None:
        return None
    note = _note(template, times, now)
    if len(times) > 1 or now - times[-1] > LATE:
        log.warning("template %s: %s", template.name, note)
    try:
        run = start_template(template.id, queue=True, triggered_by="scheduled", note=note, now=now)
    except LlmbenchError as exc:
        # The fire time is used up either way; the template's page says why it started nothing.
        message = f"the schedule fired at {times[-1]:%Y-%m-%d %H:%M} UTC but no run started: "
        message += exc.message
        Template.update(last_error=message).where(Template.id == template.id).execute()
        log.warning("template %s: %s", template.name, message)
        return None
    Template.update(last_error=None).where(Template.id == template.id).execute()
    log_event(run, "schedule_fired", f"Scheduled by template {template.name}: {note}", now=now)
    log.info("template %s fired: run %s (%s)", template.name, run.run_id, note)
    return run


def fire_due(now=None):
    """Fire every due template once; returns the runs started or queued."""
    now = now or utcnow()
    runs = []
    for template in due_templates(now):
        run = fire_template(template, now)
        if run is not None:
            runs.append(run)
    return runs

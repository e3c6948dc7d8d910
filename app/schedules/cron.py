"""Cron expressions in a time zone, through APScheduler's CronTrigger (standard 5 fields).

Our database keeps naive UTC datetimes; every function here takes and returns those and does
the time-zone arithmetic (daylight saving included) in the template's zone.
"""

import datetime as dt
import zoneinfo

from apscheduler.triggers.cron import CronTrigger

from ..errors import ValidationError

_TICK = dt.timedelta(microseconds=1)
MISSED_LIMIT = 1000  # fire times counted at most when telling how many were missed


def timezone_of(name, field="schedule.timezone"):
    """The ZoneInfo called `name` (IANA, e.g. Europe/Berlin), or ValidationError naming field."""
    try:
        return zoneinfo.ZoneInfo(str(name))
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ValidationError.field(
            field, f"unknown time zone {name!r}; use an IANA name such as UTC or Europe/Berlin"
        ) from None


def trigger(cron, timezone="UTC", field="schedule.cron"):
    """The CronTrigger of a 5-field cron expression in `timezone`, or ValidationError."""
    zone = timezone_of(timezone)
    if not isinstance(cron, str) or not cron.strip():
        raise ValidationError.field(field, "give a cron expression such as '0 3 * * *'")
    try:
        return CronTrigger.from_crontab(cron.strip(), timezone=zone)
    except ValueError as exc:
        raise ValidationError.field(
            field, f"{exc}; use five fields: minute hour day-of-month month day-of-week"
        ) from None


def _aware(naive_utc):
    return naive_utc.replace(tzinfo=dt.UTC)


def _naive(aware):
    return None if aware is None else aware.astimezone(dt.UTC).replace(tzinfo=None)


def next_fire(cron, timezone, after):
    """The first fire time strictly after `after` (naive UTC), as naive UTC."""
    return _naive(trigger(cron, timezone).get_next_fire_time(None, _aware(after) + _TICK))


def upcoming(cron, timezone, after, count=5):
    """The next `count` fire times after `after` (naive UTC)."""
    times, t = [], after
    cron_trigger = trigger(cron, timezone)
    for _ in range(count):
        t = _naive(cron_trigger.get_next_fire_time(None, _aware(t) + _TICK))
        if t is None:
            break
        times.append(t)
    return times


def fire_times_between(cron, timezone, first, until, limit=MISSED_LIMIT):
    """The fire times from `first` (itself one) up to `until`, at most `limit` of them."""
    cron_trigger = trigger(cron, timezone)
    times, t = [], first
    while t is not None and t <= until and len(times) < limit:
        times.append(t)
        t = _naive(cron_trigger.get_next_fire_time(None, _aware(t) + _TICK))
    return times


def local(naive_utc, timezone):
    """A naive UTC time in the template's zone (aware), for showing it."""
    if naive_utc is None:
        return None
    return _aware(naive_utc).astimezone(timezone_of(timezone))

"""The servers a run waits for (engine/breaker.py keeps them in `outage`), as people read them."""

from ..clock import isoformat
from ..db.models import Outage


def hms(when):
    """'14:02:11 UTC'."""
    return f"{when:%H:%M:%S} UTC"


def waiting_message(provider_name, error, since, next_try):
    """'waiting for <provider>: <error> since 14:02:11 UTC, next try 14:02:41 UTC'."""
    return f"waiting for {provider_name}: {error} since {hms(since)}, next try {hms(next_try)}"


def waiting_for(run):
    """The run's open outages, oldest first: provider, error, since, next try and the line the
    live view shows."""
    rows = Outage.select().where(Outage.run == run).order_by(Outage.since, Outage.id)
    return [
        {
            "providerId": o.provider_id,
            "providerName": o.provider_name,
            "error": o.error,
            "since": isoformat(o.since),
            "nextTryAt": isoformat(o.next_try_at),
            "tries": o.probes,
            "message": waiting_message(o.provider_name, o.error, o.since, o.next_try_at),
        }
        for o in rows
    ]

"""The schedules' share of the one scheduler thread (`llmbench run`'s, when its run ends, is
after_run.py's: it fires no schedule, so it does not import the cron).

The app factory hands on_tick to the engine's scheduler (engine/scheduler.py runs it after
each tick that holds the orchestrator lease, so only one process fires schedules; the
compare-and-set in firing.py makes sure of it). Webhook POSTs go out on a short-lived sender
thread so a slow receiver never holds up the engine.
"""

import logging
import threading
import time

from ..clock import utcnow
from ..db.connection import database
from ..results.composite import settings_from
from .digest import digest_finished
from .firing import fire_due
from .webhooks import deliver_due
from .webhooks import due_alerts

log = logging.getLogger(__name__)

DIGEST_SECONDS = 2.0  # finished runs are digested (and alerts raised) at most this often

_lock = threading.Lock()
_state = {"digested": None, "sender": None}


def on_tick(config, now=None):
    """Fire due schedules; every DIGEST_SECONDS digest finished runs and send due webhooks."""
    fire_due(now)
    last = _state["digested"]
    if last is not None and time.monotonic() - last < DIGEST_SECONDS:
        return
    _state["digested"] = time.monotonic()
    digest_finished(now, composite_settings=settings_from(config))
    send_webhooks_in_background()


def send_webhooks_in_background():
    """Start the webhook sender thread when alerts are due and it is not already sending."""
    with _lock:
        sender = _state["sender"]
        if sender is not None and sender.is_alive():
            return sender
        if not due_alerts(utcnow()):
            return None
        sender = threading.Thread(target=_send, name="alert-webhooks", daemon=True)
        _state["sender"] = sender
        sender.start()
        return sender


def _send():
    try:
        with database.connection_context():
            deliver_due()
    except Exception:  # a sender must never take anything down; the next pass tries again
        log.exception("alert webhooks failed")

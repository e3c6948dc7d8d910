"""The alert webhook: one JSON POST per alert to the template's URL, retried with backoff.

Delivery state lives on the alert row (pending -> sent | failed). A sender claims an alert with
one compare-and-set UPDATE before posting, so two senders never post the same alert; a sender
that dies mid-POST leaves a claim that expires (the alert is then posted again: at least once).
Errors are stored without the URL, which is a secret (it often carries a token).
"""

import datetime as dt
import logging

import requests

from ..clock import isoformat
from ..clock import utcnow
from ..db.connection import database
from ..db.models import Alert
from ..db.models import Run
from ..db.models import Template
from .known_secrets import known_redactor
from .webhook_secret import webhook_url

log = logging.getLogger(__name__)

TIMEOUT = (3.05, 10.0)  # connect, read (seconds)
RETRY_SECONDS = (10, 30, 90, 270, 810)  # after each failed attempt; then the alert is failed
CLAIM = dt.timedelta(seconds=60)
EVENT = "llmbench.regression"


def payload(alert):
    """The JSON body: which run and model regressed, by how much, and how sure we are."""
    run = Run.get_by_id(alert.run_id)
    against = Run.get_or_none(Run.id == alert.against_run_id)
    template = Template.get_or_none(Template.id == alert.template_id)
    return {
        "event": EVENT,
        "alertId": alert.id,
        "runId": run.run_id,
        "template": template.name if template else None,
        "triggeredBy": run.triggered_by,
        "model": alert.model,
        "providerName": alert.provider_name,
        "series": alert.series,
        "metric": alert.metric,
        "against": alert.against,
        "againstRunId": against.run_id if against else None,
        "drop": round(alert.drop, 3),
        "meanDiff": round(alert.mean_diff, 3),
        "ci": None if alert.ci_low is None else [round(alert.ci_low, 3), round(alert.ci_high, 3)],
        "p": alert.wilcoxon_p,
        "signTestP": alert.sign_p,
        "n": alert.n,
        "threshold": alert.threshold,
        "message": alert.message,
        "createdAt": isoformat(alert.created_at),
    }


def due_alerts(now):
    """Alerts whose webhook POST is due and not claimed by a live sender."""
    return list(
        Alert.select().where(
            (Alert.webhook_state == "pending")
            & (Alert.webhook_next_at <= now)
            & (Alert.webhook_claimed_until.is_null() | (Alert.webhook_claimed_until < now))
        )
    )


def _claim(alert, now):
    with database.atomic("IMMEDIATE"):
        return (
            Alert.update(webhook_claimed_until=now + CLAIM)
            .where(
                (Alert.id == alert.id)
                & (Alert.webhook_state == "pending")
                & (Alert.webhook_claimed_until.is_null() | (Alert.webhook_claimed_until < now))
            )
            .execute()
        )


def _post(url, body, post):
    """None when the receiver took it (2xx), else why not (never naming the URL)."""
    try:
        response = post(url, json=body, timeout=TIMEOUT, allow_redirects=False)
    except requests.RequestException as exc:
        return f"{type(exc).__name__}: the receiver could not be reached"
    try:
        if 200 <= response.status_code < 300:
            return None
        return f"HTTP {response.status_code} from the receiver"
    finally:
        response.close()


def deliver(alert, now, post=requests.post):
    """Claim and POST one alert; returns True when it was sent."""
    if not _claim(alert, now):
        return False
    template = Template.get_or_none(Template.id == alert.template_id)
    url = None
    try:
        url = webhook_url(template) if template is not None else None
    except Exception:  # a key that cannot decrypt it: say so, never the value
        error = "the webhook URL cannot be decrypted with this master key; enter it again"
    else:
        error = None if url else "the template or its webhook URL was removed"
    if url:
        # Masked on the way out like every page: the body names models and messages that a
        # hostile server could have filled with a key.
        error = _post(url, known_redactor().data(payload(alert)), post)
    attempts = alert.webhook_attempts + 1
    fields = {"webhook_attempts": attempts, "webhook_claimed_until": None}
    if error is None:
        fields.update(webhook_state="sent", webhook_sent_at=now, webhook_error=None)
    elif url and attempts <= len(RETRY_SECONDS):
        delay = dt.timedelta(seconds=RETRY_SECONDS[attempts - 1])
        fields.update(webhook_error=error, webhook_next_at=now + delay)
    else:
        fields.update(webhook_state="failed", webhook_error=error)
    Alert.update(**fields).where(Alert.id == alert.id).execute()
    if error:
        log.warning("alert %s webhook attempt %d: %s", alert.id, attempts, error)
    return error is None


def deliver_due(now=None, post=requests.post):
    """POST every due alert once; returns how many the receivers took."""
    now = now or utcnow()
    return sum(1 for alert in due_alerts(now) if deliver(alert, now, post))

"""Regression alerts in the pages: the banner's data (a template global) and dismissing one."""

from flask import Blueprint
from flask import redirect
from flask import request
from flask import url_for

from ..db.models import ALERT_OPEN
from ..schedules.alerts import any_open_alerts
from ..schedules.alerts import dismiss_alert
from ..schedules.alerts import list_alerts
from .back import local_path

bp = Blueprint("alerts", __name__)
SHOWN = 5  # alerts in a banner at most; the rest are counted


@bp.app_context_processor
def _banner_data():
    def open_alerts(run=None):
        """The open alerts to show: the run's, or all of them (newest first); read only when
        there is one (most pages have none)."""
        if not any_open_alerts(run):
            return []
        return list_alerts(state=ALERT_OPEN, run=run)

    return {"open_alerts": open_alerts, "alerts_shown": SHOWN}


@bp.post("/alerts/<int:alert_id>/dismiss")
def dismiss(alert_id):
    """Dismiss an alert, then go back to the page it was shown on."""
    dismiss_alert(alert_id)
    return redirect(local_path(request.form.get("next")) or url_for("dashboard.index"), code=303)

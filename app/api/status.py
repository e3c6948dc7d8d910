"""JSON API: service status."""

from flask import Blueprint
from flask import g
from flask import jsonify

from .. import __version__
from ..clock import isoformat
from ..db.connection import database
from ..db.migrations import schema_version
from ..db.models import Lease
from ..runs.queries import active_run

bp = Blueprint("status", __name__)


@bp.get("/status")
def status():
    """Health, the active run, who holds the orchestrator lease, the schema version."""
    if g.get("login_needed") and g.get("account") is None:
        # A health check (the container's) needs no login and learns only that it is up.
        return jsonify({"status": "ok"})
    run = active_run()
    lease = Lease.get_or_none(Lease.name == "orchestrator")
    return jsonify(
        {
            "status": "ok",
            "activeRun": run.run_id if run else None,
            "state": run.state if run else "idle",
            "orchestrator": {
                "holder": lease.holder,
                "heartbeatAt": isoformat(lease.heartbeat_at),
                "expiresAt": isoformat(lease.expires_at),
            }
            if lease
            else None,
            "schemaVersion": schema_version(database),
            "version": __version__,
        }
    )

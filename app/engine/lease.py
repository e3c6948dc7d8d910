"""The single-orchestrator lease: one row, a heartbeat, taken over only when stale.

Every write happens inside `database.atomic("IMMEDIATE")` so two processes cannot both see a
stale lease and both take it: the second one waits for the write lock, then sees the first's row.
"""

import datetime as dt
import os
import socket
import uuid

from ..clock import db_text
from ..clock import utcnow
from ..db import database
from ..models import CONTROL_RUNNING
from ..models import CONTROL_STOPPED
from ..models import FINISHED
from ..models import ORCHESTRATOR_LEASE
from ..models import Lease
from ..models import Run
from ..models import RunLog
from ..runlog import log_event
from . import call_claims
from .claims import release_all

NAME = ORCHESTRATOR_LEASE
INTERRUPTED_REASON = "interrupted (server or process ended mid-run); continue it when ready"
_EPOCH = dt.datetime(1970, 1, 1)

_holder = {"pid": None, "id": None}


def process_holder():
    """This process's holder id: host:pid:random (new after a fork)."""
    if _holder["pid"] != os.getpid():
        _holder["pid"] = os.getpid()
        _holder["id"] = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
    return _holder["id"]


def acquire(holder, seconds, now=None, spare_run_id=None):
    """Take or renew the lease for `seconds`; True when `holder` holds it afterwards.

    Taking over a stale lease (or the first lease ever) means the previous orchestrator died:
    its running runs are stopped as interrupted (nothing restarts on its own) and its
    in-flight claims are released. `spare_run_id` is a run the new holder is about to work on.
    """
    now = now or utcnow()
    expires = now + dt.timedelta(seconds=seconds)
    with database.atomic("IMMEDIATE"):
        row = database.execute_sql(
            "SELECT holder, heartbeat_at FROM lease WHERE name = ?", (NAME,)
        ).fetchone()
        if row is None:
            Lease.insert(
                name=NAME, holder=holder, acquired_at=now, heartbeat_at=now, expires_at=expires
            ).execute()
            took_over = True
        else:
            cursor = database.execute_sql(
                "UPDATE lease SET holder = ?, heartbeat_at = ?, expires_at = ?, "
                "acquired_at = CASE WHEN holder = ? THEN acquired_at ELSE ? END "
                "WHERE name = ? AND (holder = ? OR expires_at < ?)",
                (
                    holder,
                    db_text(now),
                    db_text(expires),
                    holder,
                    db_text(now),
                    NAME,
                    holder,
                    db_text(now),
                ),
            )
            if cursor.rowcount != 1:
                return False
            took_over = row[0] != holder
        if took_over:
            last_beat = Lease.heartbeat_at.python_value(row[1]) if row else None
            recover_interrupted(now, spare_run_id, resumed_after=last_beat)
    return True


def release(holder):
    """Give the lease up (clean shutdown): the next orchestrator need not wait for expiry."""
    with database.atomic("IMMEDIATE"):
        database.execute_sql(
            "UPDATE lease SET expires_at = ? WHERE name = ? AND holder = ?",
            (db_text(_EPOCH), NAME, holder),
        )


def current():
    """The lease row, or None."""
    return Lease.get_or_none(Lease.name == NAME)


def recover_interrupted(now, spare_run_id=None, resumed_after=None):
    """Stop runs a dead orchestrator left running and release its in-flight claims.

    A run a person continued after the dead holder's last heartbeat is theirs, not the dead
    holder's: it stays running (otherwise Continue, clicked while the restarted server had not
    yet taken over, would be undone a moment later).
    """
    pending = Run.select().where(Run.status != FINISHED)
    released = release_all(pending) + call_claims.release_all(pending)
    runs = list(Run.select().where((Run.status != FINISHED) & (Run.control == CONTROL_RUNNING)))
    for run in runs:
        if spare_run_id is not None and run.run_id == spare_run_id:
            continue
        if resumed_after is not None and (
            RunLog.select()
            .where(
                (RunLog.run == run)
                & (RunLog.event == "resumed")
                & (RunLog.created_at > resumed_after)
            )
            .exists()
        ):
            continue
        Run.update(
            control=CONTROL_STOPPED, control_reason=INTERRUPTED_REASON, updated_at=now
        ).where(Run.id == run.id).execute()
        log_event(
            run,
            "interrupted",
            f"Run {INTERRUPTED_REASON}",
            level="WARNING",
            data={"releasedClaims": released},
            now=now,
        )
    return released

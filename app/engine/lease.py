"""The single-orchestrator lease: one row, a heartbeat, taken over only when stale.

Every write happens inside `database.atomic("IMMEDIATE")` so two processes cannot both see a
stale lease and both take it: the second one waits for the write lock, then sees the first's row.
A holder is `host:pid:random`; one on this host whose process is gone (kill -9, a double
Ctrl-C) is taken over at once instead of after the lease's seconds.
"""

import datetime as dt
import os
import socket
import uuid

import psutil

from ..clock import db_text
from ..clock import utcnow
from ..db.connection import database
from ..db.models import CONTROL_RUNNING
from ..db.models import CONTROL_STOPPED
from ..db.models import FINISHED
from ..db.models import ORCHESTRATOR_LEASE
from ..db.models import Lease
from ..db.models import Run
from ..db.models import RunLog
from ..runlog import log_event
from . import call_claims
from .claims import release_all

NAME = ORCHESTRATOR_LEASE
INTERRUPTED_REASON = "interrupted (server or process ended mid-run); continue it when ready"
_EPOCH = dt.datetime(1970, 1, 1)

_holder = {"pid": None, "id": None, "role": ""}

# The random part of a server's holder starts with this: a `llmbench run` beside a server
# (on any host) hands its run to the server's orchestrator instead of refusing to start.
SERVER_ROLE = "serve-"


def process_holder():
    """This process's holder id: host:pid:random (new after a fork); a server's random part
    starts with SERVER_ROLE."""
    if _holder["pid"] != os.getpid():
        _holder["pid"] = os.getpid()
        _holder["id"] = (
            f"{socket.gethostname()}:{os.getpid()}:{_holder['role']}{uuid.uuid4().hex[:8]}"
        )
    return _holder["id"]


def serve_here():
    """This process's orchestrator is a server's (its scheduler thread): its holder id says
    so from now on (an id this process already holds the lease under is kept)."""
    _holder["role"] = SERVER_ROLE
    if _holder["pid"] != os.getpid():
        process_holder()


def is_server(holder):
    """True when `holder` is a server's orchestrator (llmbench serve), which works every
    running or queued run of the database."""
    return str(holder or "").rsplit(":", 1)[-1].startswith(SERVER_ROLE)


def _host_and_pid(holder):
    """(host, pid) of a `host:pid:random` holder, or (None, None) for any other name."""
    parts = str(holder or "").rsplit(":", 2)
    if len(parts) != 3 or not parts[1].isdigit():
        return None, None
    return parts[0], int(parts[1])


def holder_gone(holder):
    """True when `holder` is a process on this host that no longer runs (its lease is dead)."""
    host, pid = _host_and_pid(holder)
    if host != socket.gethostname() or pid is None:
        return False  # another machine, or not a process holder: only its expiry tells
    if pid == os.getpid():
        return holder != process_holder()  # an earlier process that had our pid
    try:
        # A killed child not yet reaped by its parent is a zombie: it holds nothing.
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True
    except psutil.Error:
        return False  # it exists, we may not look at it


def describe_holder(holder):
    """Who holds the lease, for people: `llmbench serve (pid 12 on this host)`, or the host."""
    host, pid = _host_and_pid(holder)
    if pid is None:
        return str(holder)
    if host != socket.gethostname():
        return f"a process on host {host} (pid {pid}; holder {holder})"
    try:
        args = psutil.Process(pid).cmdline()
    except psutil.Error:
        args = []
    # `.../bin/llmbench serve` or `python -m app.cli run ...`: name the command it runs.
    command = next(
        (
            f"llmbench {args[n + 1]}"
            for n, a in enumerate(args[:-1])
            if a.endswith("llmbench") or a == "app.cli"
        ),
        " ".join(os.path.basename(a) for a in args[:3]) or "a process",
    )
    return f"{command} (pid {pid} on this host)"


def live_holder(now=None):
    """The lease row when another orchestrator holds it and is alive, else None."""
    row = current()
    if row is None or row.holder == process_holder():
        return None
    if row.expires_at <= (now or utcnow()) or holder_gone(row.holder):
        return None
    return row


def acquire(holder, seconds, now=None, spare_run_id=None):
    """Take or renew the lease for `seconds`; True when `holder` holds it afterwards.

    Taking over a stale lease, or one whose holder's process is gone (this host only), means
    the previous orchestrator died: its running runs are stopped as interrupted (nothing
    restarts on its own) and its in-flight claims are released. `spare_run_id` is a run the
    new holder is about to work on. The first lease ever takes over from nobody: a run created
    before it (a new server's first second) was never worked on, so it stays running.
    """
    now = now or utcnow()
    expires = now + dt.timedelta(seconds=seconds)
    with database.atomic("IMMEDIATE"):
        row = database.execute_sql(
            "SELECT holder, heartbeat_at FROM lease WHERE name = ?", (NAME,)
        ).fetchone()
        # A dead holder's row may be taken even before it expires (matched by its name).
        dead = row[0] if row is not None and row[0] != holder and holder_gone(row[0]) else None
        if row is None:
            Lease.insert(
                name=NAME, holder=holder, acquired_at=now, heartbeat_at=now, expires_at=expires
            ).execute()
            return True
        cursor = database.execute_sql(
            "UPDATE lease SET holder = ?, heartbeat_at = ?, expires_at = ?, "
            "acquired_at = CASE WHEN holder = ? THEN acquired_at ELSE ? END "
            "WHERE name = ? AND (holder = ? OR expires_at < ? OR holder = ?)",
            (
                holder,
                db_text(now),
                db_text(expires),
                holder,
                db_text(now),
                NAME,
                holder,
                db_text(now),
                dead,
            ),
        )
        if cursor.rowcount != 1:
            return False
        took_over = row[0] != holder
        if took_over:
            recover_interrupted(
                now,
                spare_run_id,
                resumed_after=Lease.heartbeat_at.python_value(row[1]),
                dead_holder=row[0],
            )
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


def recover_interrupted(now, spare_run_id=None, resumed_after=None, dead_holder=None):
    """Stop runs a dead orchestrator left running and release its in-flight claims.

    Only the claims `dead_holder` made (and claims that name no holder) are released: those of
    live `llmbench worker` processes stay theirs; a dead worker's expire by themselves.

    A run a person continued after the dead holder's last heartbeat is theirs, not the dead
    holder's: it stays running (otherwise Continue, clicked while the restarted server had not
    yet taken over, would be undone a moment later).
    """
    pending = Run.select().where(Run.status != FINISHED)
    released = release_all(pending, dead_holder) + call_claims.release_all(pending, dead_holder)
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

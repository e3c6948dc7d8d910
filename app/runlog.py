"""The append-only run log: one line per event, written by every layer below the edges."""

from .clock import utcnow
from .db.connection import database
from .db.models import RunLog


def log_event(run, event, message, level="INFO", data=None, now=None):
    """Append one line to the run log; returns its id."""
    # Plain SQL: the engine writes a line per item, and building a model costs more than that.
    cursor = database.execute_sql(
        'INSERT INTO "runlog" ("run_id", "created_at", "level", "event", "message", "data") '
        'VALUES (?, ?, ?, ?, ?, ?) RETURNING "id"',
        (
            getattr(run, "id", run),
            RunLog.created_at.db_value(now or utcnow()),
            level,
            event,
            message,
            RunLog.data.db_value(data),
        ),
    )
    return cursor.fetchone()[0]  # RETURNING: PostgreSQL's cursors have no lastrowid

"""SQLite's WAL checkpoints during a run: made by the supervisor, not inside a worker's commit.

SQLite checkpoints (copies the WAL's pages into the database file) inside the commit that
takes the WAL past 1000 pages: a worker thread did it while holding the engine's write lock
(claims._WRITER), so every other worker waited on it. The workers' connections turn that off
while they work (worker_connection) and the supervisor thread checkpoints between its polls
(checkpoint): a PASSIVE checkpoint does not block writers, so the workers go on writing
meanwhile. Nothing changes what is durable: a commit is in the WAL either way. PostgreSQL has
no WAL of ours to manage: both are no-ops there.
"""

import contextlib
import logging

from peewee import OperationalError

from ..db.connection import database

log = logging.getLogger(__name__)

CHECKPOINT_SECONDS = 0.5  # how often the supervisor checkpoints while workers write


@contextlib.contextmanager
def worker_connection():
    """This thread's connection commits without checkpointing until the block ends (its own
    setting restored then, before the pool hands it to anyone else)."""
    if database.is_postgres:
        yield
        return
    pages = database.execute_sql("PRAGMA wal_autocheckpoint").fetchone()[0]
    database.execute_sql("PRAGMA wal_autocheckpoint = 0")
    try:
        yield
    finally:
        database.execute_sql(f"PRAGMA wal_autocheckpoint = {int(pages)}")


def checkpoint():
    """Copy what the WAL holds into the database file without blocking writers (PASSIVE).

    A checkpoint that cannot run now (another process holds the database) is logged and left
    to the next one: nothing written waits on it."""
    if database.is_postgres:
        return
    try:
        database.execute_sql("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
    except OperationalError as exc:
        log.warning("WAL checkpoint skipped: %s", exc)

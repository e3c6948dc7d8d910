"""The deferred Peewee database: initialised by the factory or the CLI with the same pragmas."""

import logging
from pathlib import Path

from peewee import SqliteDatabase

from .private_files import make_private
from .private_files import narrow

log = logging.getLogger(__name__)


class Database(SqliteDatabase):
    """SQLite whose transactions take the write lock at BEGIN (IMMEDIATE) unless told otherwise.

    A deferred transaction that reads and then writes fails at once with "database is locked"
    when another connection (the orchestrator's heartbeat) wrote in between: SQLite cannot
    upgrade a stale WAL snapshot, and the busy timeout does not help. IMMEDIATE waits instead.
    """

    def atomic(self, *args, **kwargs):
        if not args and "lock_type" not in kwargs:
            kwargs["lock_type"] = "IMMEDIATE"
        return super().atomic(*args, **kwargs)


# Deferred: bound to a file by init_db(); importing this module opens nothing.
database = Database(None)

PRAGMAS = {
    "journal_mode": "wal",
    "foreign_keys": 1,
    # 8 MB of page cache per connection. Every engine worker thread holds its own connection,
    # and a 64 MB cache each filled with the run's pages as the database grew: the CLI's memory
    # grew with the run (67 MiB at 1.2k calls, 175 MiB at 12k). The indexes the hot queries
    # seek stay cached; the OS page cache keeps the rest close.
    "cache_size": -8000,
    "synchronous": "normal",
    "busy_timeout": 10000,
}


def init_db(path):
    """Bind the database to `path` (created with its folder); migrations.open_db also migrates.

    The file holds prompts, answers and encrypted secrets: it is created (or narrowed to)
    owner-only, 0600, and SQLite gives its -wal and -shm files the same mode.
    """
    if path != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        make_private(path)
        for companion in (f"{path}-wal", f"{path}-shm"):
            narrow(companion)
    if not database.is_closed():
        database.close()
    database.init(path, pragmas=PRAGMAS, timeout=10, check_same_thread=False)
    return database


def init_app(app):
    """Open and close a connection per request (the factory binds and migrates first)."""

    @app.before_request
    def _connect():
        database.connect(reuse_if_open=True)

    @app.teardown_request
    def _close(exc):
        if not database.is_closed():
            database.close()

"""The deferred Peewee database: SQLite (the embedded default) or PostgreSQL, from LLMBENCH_DB.

`database` is a proxy bound by init_db() to a SQLite file (same pragmas everywhere) or to a
PostgreSQL server (psycopg 3, imported only then: postgres.py). On both, `database.atomic()`
(and `atomic("IMMEDIATE")`) is a
*write transaction*: on SQLite it takes the write lock at BEGIN; on PostgreSQL it takes one
transaction-scoped advisory lock, so the read-then-write transactions written for SQLite's one
writer (the lease, a run's start, the queue) stay serialised there too. `atomic("DEFERRED")`
takes no such lock (row locks only: claims with FOR UPDATE SKIP LOCKED).
"""

import logging
import sqlite3
from itertools import chain
from pathlib import Path

from peewee import SQL
from peewee import DatabaseProxy
from peewee import PostgresqlDatabase
from peewee import SqliteDatabase
from peewee import __exception_wrapper__
from playhouse import pool
from playhouse.pool import PooledSqliteDatabase

from ..files.private import make_private
from ..files.private import narrow
from .urls import parse

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

    def rollback(self):
        # A full disk (SQLITE_FULL) or an interrupt may roll the transaction back by itself;
        # a second ROLLBACK would fail ("no transaction is active") and hide the real error.
        if not self.is_closed() and not self.connection().in_transaction:
            return
        super().rollback()


class PooledDatabase(PooledSqliteDatabase, Database):
    """A SQLite file whose connections are kept open between uses (close() hands one back).

    A new connection costs about 2 ms of pragmas and schema parsing and starts with a cold page
    cache: opened per request, that was most of a live-view poll (13.5 ms -> 5.0 ms at 100 000
    items, bench/bench_deep_pages.py). A connection handed back inside a transaction (a bug
    somewhere) is closed, never passed on to another request.
    """

    def _can_reuse(self, conn):
        return not conn.in_transaction


class DeferredDatabase(DatabaseProxy):
    """The proxy the models use; transactions go to the bound database's own atomic()."""

    def atomic(self, *args, **kwargs):
        return self.obj.atomic(*args, **kwargs)

    def transaction(self, *args, **kwargs):
        return self.obj.transaction(*args, **kwargs)

    @property
    def is_postgres(self):
        return isinstance(self.obj, PostgresqlDatabase)


# Deferred: bound by init_db(); importing this module opens nothing.
database = DeferredDatabase()
database.initialize(Database(None))

PRAGMAS = {
    "journal_mode": "wal",
    "foreign_keys": 1,
    # 8 MB of page cache per connection (the web app's; see init_db's cache_mib). Every engine
    # worker thread holds its own connection, and a 64 MB cache each filled with the run's pages
    # as the database grew: the CLI's memory grew with the run (67 MiB at 1.2k calls, 175 MiB
    # at 12k). The indexes the hot queries seek stay cached; the OS page cache keeps the rest.
    "cache_size": -8000,
    "synchronous": "normal",
    "busy_timeout": 10000,
}


_BUILT = {}  # (key, on PostgreSQL?) -> (SQL text, each selected column's python_value or None)


def built_once(key, build):
    """The SQL text of the peewee query `build()` makes, built once per key (and kind of
    database); the caller binds the values, in the order the query takes them.

    Peewee writes a query's SQL anew each time it runs, ~10 us a column: for the few queries
    the live view's poll repeats every second (the run by name, its kept counts, its recent
    items) that cost more than running them. Only for a query whose text never depends on
    its values: a key per shape (e.g. how many values an IN takes)."""
    return _built(key, build)[0]


def tuples_once(key, build, values):
    """The rows of the SELECT `build()` makes (its SQL built_once), `values` bound in order,
    as tuples converted by the selected fields as peewee's .tuples() converts them."""
    sql, convert = _built(key, build)
    return [
        tuple(v if c is None else c(v) for c, v in zip(convert, row, strict=True))
        for row in database.execute_sql(sql, values)
    ]


def _built(key, build):
    full = (key, database.is_postgres)
    got = _BUILT.get(full)
    if got is None:
        query = build()
        columns = getattr(query, "selected_columns", None) or ()  # none for an INSERT
        convert = [getattr(column, "python_value", None) for column in columns]
        got = _BUILT[full] = (query.sql()[0], convert)
    return got


def insert_rows(model, rows, *, ignore_conflicts=False):
    """Insert dicts keyed by field name (every row the same keys) with prepared multi-row
    INSERTs (up to ROWS_PER_INSERT rows each); returns how many rows were given.

    Peewee's insert_many writes SQL text for every value (~10 us each in Python): creating a run
    of 6 000 items spent seconds there. One row per statement (executemany) was no better on
    SQLite: each execution of a statement set up item's AFTER INSERT trigger anew (~80 us a
    row); many rows in one statement set it up once. Values go through each field's db_value
    and left-out fields get their defaults, as insert_many does. `ignore_conflicts` is its
    on_conflict_ignore(). No ids come back (no RETURNING on PostgreSQL)."""
    rows = list(rows)
    if not rows:
        return 0
    meta = model._meta
    keys = {meta.fields.get(key) or meta.columns[key]: key for key in rows[0]}
    # Columns in the order each row's parameters are made: the row's own values, then the
    # defaults that are constants (converted once), then those made per row.
    given = [f for f in meta.sorted_fields if f in keys]
    absent = [f for f in meta.sorted_fields if f not in keys and f in meta.defaults]
    constant = [f for f in absent if not callable(meta.defaults[f])]
    made = [f for f in absent if callable(meta.defaults[f])]
    fields = given + constant + made
    query = model.insert_many([[None] * len(fields)], fields=fields).returning()
    if ignore_conflicts:
        query = query.on_conflict_ignore()
    sql, _ = query.sql()
    head, one, tail = _values_parts(sql, len(fields))
    own = [(keys[f], f.db_value) for f in given]
    constants = [f.db_value(meta.defaults[f]) for f in constant]
    makers = [(f.db_value, meta.defaults[f]) for f in made]
    per = max(1, min(ROWS_PER_INSERT, MAX_VARIABLES // len(fields)))
    cursor = database.cursor()
    with __exception_wrapper__:  # the driver's errors as peewee's, as execute_sql raises them
        for start in range(0, len(rows), per):
            chunk = rows[start : start + per]
            params = []
            for row in chunk:
                params += [db_value(row[key]) for key, db_value in own]
                params += constants
                if makers:
                    params += [db_value(default()) for db_value, default in makers]
            cursor.execute(head + ", ".join([one] * len(chunk)) + tail, params)
    return len(rows)


def insert_values(model, fields, rows):
    """Insert rows already in the database's form (a sequence per row, one value per field of
    `fields`, each what the field's db_value gives), in multi-row INSERTs as insert_rows does;
    returns how many rows were given.

    For a caller that makes many rows of one shape and knows its values' forms (an import's
    task rows): insert_rows' db_value per value and dict per row cost more than SQLite's own
    insert there. Left-out fields get their column's SQL default, not the model's."""
    if not rows:
        return 0
    key = ("insert_values", model, tuple(fields), database.is_postgres)
    parts = _BUILT.get(key)
    if parts is None:
        sql, _ = model.insert_many([[None] * len(fields)], fields=fields).returning().sql()
        parts = _BUILT[key] = _values_parts(sql, len(fields))
    head, one, tail = parts
    per = max(1, min(ROWS_PER_INSERT, MAX_VARIABLES // len(fields)))
    cursor = database.cursor()
    with __exception_wrapper__:
        for start in range(0, len(rows), per):
            chunk = rows[start : start + per]
            params = list(chain.from_iterable(chunk))
            cursor.execute(head + ", ".join([one] * len(chunk)) + tail, params)
    return len(rows)


# Rows a stream reads at a time: one FETCH on PostgreSQL, one fetchmany on SQLite. A few
# hundred items with their answers are a few MB at most, and 200 round trips for 100 000 rows.
STREAM_ROWS = 500


def stream_rows(query, size=STREAM_ROWS):
    """The raw rows (tuples, as database.execute gives them) of the SELECT `query`, read `size`
    at a time, so memory stays flat whatever the result's size: through a server-side cursor on
    PostgreSQL (postgres.PostgresDatabase.stream), from one cursor on SQLite, which steps
    through the result as it is read. Lazy: nothing runs before the first row is asked for."""
    sql, params = query.sql()
    if database.is_postgres:
        yield from database.obj.stream(sql, params, size)
        return
    cursor = database.execute_sql(sql, params)
    try:
        while rows := cursor.fetchmany(size):
            yield from rows
    finally:
        cursor.close()


def in_values(field, values):
    """`field IN (values)` with the values bound as they are (already what the column holds):
    peewee's in_() builds and converts a node per value, which cost more than the query when a
    run's creation looked up its tasks 500 at a time."""
    values = list(values)
    if not values:
        return field.in_([])
    return field.in_(SQL("(" + ", ".join([database.param] * len(values)) + ")", values))


# Rows per INSERT statement, and the bound values one statement may hold: SQLite's default
# limit since 3.32 is 32 766 (999 before), PostgreSQL's protocol allows 65 535 (item has ~60
# columns).
ROWS_PER_INSERT = 200
MAX_VARIABLES = 32766 if sqlite3.sqlite_version_info >= (3, 32) else 999


def _values_parts(sql, width):
    """(head up to VALUES, one row's placeholders, the rest) of a one-row INSERT's SQL."""
    mark = " VALUES "
    at = sql.index(mark) + len(mark)
    end = sql.index(")", at) + 1
    one = sql[at:end]
    if one.count(",") != width - 1:  # a placeholder with a comma would misplace the columns
        raise ValueError(f"unexpected INSERT shape: {sql[:200]}")
    return sql[:at], one, sql[end:]


def init_db(value, cache_mib=None):
    """Bind the database to LLMBENCH_DB's `value`; migrations.open_db also migrates.

    `cache_mib` is each SQLite connection's page cache (default PRAGMAS', 8 MB): the CLI asks
    for less, as it serves no results pages and every thread of its run keeps a connection.

    A SQLite path (or sqlite:///path) is created with its folder; the file holds prompts,
    answers and encrypted secrets, so it is created (or narrowed to) owner-only, 0600, and
    SQLite gives its -wal and -shm files the same mode. A postgresql:// URL binds a
    PooledPostgresDatabase (nothing is created on disk). Any other value raises
    dburl.DatabaseUrlError naming LLMBENCH_DB before anything is made.
    """
    target = parse(value)
    pragmas = PRAGMAS if cache_mib is None else {**PRAGMAS, "cache_size": -1000 * cache_mib}
    if not database.is_closed():
        database.close()
    if isinstance(database.obj, pool.PooledDatabase):
        database.obj.close_all()  # the previous database's kept connections
    if target.is_postgres:
        # Lazy: the PostgreSQL classes and adapter only for a PostgreSQL URL (db/postgres.py).
        from . import postgres

        params = {"connect_timeout": 10, **target.params}
        # Unbounded, as SQLite's: each thread (a request, an engine worker) holds one at a time.
        database.initialize(
            postgres.PooledPostgresDatabase(params.pop("dbname"), max_connections=None, **params)
        )
        return database
    path = target.path
    if path != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        make_private(path)
        for companion in (f"{path}-wal", f"{path}-shm"):
            narrow(companion)
    if path == ":memory:":  # each connection its own database: nothing to keep between uses
        database.initialize(Database(path, pragmas=pragmas, timeout=10, check_same_thread=False))
        return database
    # One pool per file, unbounded (the engine's threads and the web app's each take one at a
    # time); SQLite's busy_timeout pragma waits for the write lock.
    database.initialize(
        PooledDatabase(path, pragmas=pragmas, max_connections=None, check_same_thread=False)
    )
    return database


def storage_full(exc):
    """True when `exc` says the database has no room left: SQLite's SQLITE_FULL (a full disk,
    or max_page_count reached) or PostgreSQL's disk_full (53100)."""
    # peewee wraps the driver's error: it is the first argument (and the context).
    first = exc.args[0] if getattr(exc, "args", None) else None
    for error in (exc, first, getattr(exc, "__cause__", None), getattr(exc, "__context__", None)):
        if getattr(error, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL:
            return True
        if getattr(error, "sqlstate", None) == "53100":
            return True
    return "database or disk is full" in str(exc)


def close_idle():
    """Close the connections kept open between uses (none is in use by then): a command's end,
    so the last SQLite one closed checkpoints the WAL into the database file then, not whenever
    the interpreter's exit happens to free the pool, and PostgreSQL's sessions end."""
    if isinstance(database.obj, pool.PooledDatabase):
        database.obj.close_idle()


def init_app(app):
    """Open and close a connection per request (the factory binds and migrates first)."""

    @app.before_request
    def _connect():
        database.connect(reuse_if_open=True)

    @app.teardown_request
    def _close(exc):
        if not database.is_closed():
            database.close()

"""PostgreSQL through psycopg 3: the database classes init_db binds for a postgresql:// URL.

Imported only then (connection.init_db, admin's copy): psycopg takes ~100 ms to import, which
every command paid while Peewee looked for it at its own import. llmbench keeps Peewee from
loading it then (app/__init__.py); importing this module hands the driver to Peewee
(hand_peewee_the_driver), so its own PostgreSQL classes work as if it had found it.
"""

import sys
import uuid

import peewee
import psycopg
from peewee import PostgresqlDatabase
from peewee import Psycopg3Adapter
from playhouse.pool import PooledPostgresqlDatabase
from psycopg.adapt import Loader
from psycopg.pq import TransactionStatus
from psycopg.types import TypeInfo
from psycopg.types.hstore import register_hstore
from psycopg.types.json import Json
from psycopg.types.json import Jsonb

from .pg_sql import WRITE_LOCK_KEY
from .pg_sql import pg_placeholders


def hand_peewee_the_driver():
    """Set what Peewee (and playhouse.postgres_ext) take from psycopg at their import, as
    that import would have: the driver, its transaction states and JSON wrappers, and hstore.

    Without it a PostgresqlDatabase of Peewee's own (not ours) has no driver: its adapter
    falls back to psycopg2 (not installed), and binding models fails on the BLOB fields'
    Binary. Idempotent; harmless when Peewee did import the driver itself."""
    peewee.psycopg = psycopg
    peewee.TransactionStatus = TransactionStatus
    peewee.Json_pg3 = Json
    peewee.Jsonb_pg3 = Jsonb
    Psycopg3Adapter.txn_idle = TransactionStatus.IDLE
    Psycopg3Adapter.txn_inerror = TransactionStatus.INERROR
    Psycopg3Adapter.txn_unknown = TransactionStatus.UNKNOWN
    ext = sys.modules.get("playhouse.postgres_ext")
    if ext is not None and getattr(ext, "TypeInfo", None) is None:
        ext.TypeInfo = TypeInfo
        ext.register_hstore_pg3 = register_hstore


hand_peewee_the_driver()


class NumericLoader(Loader):
    """NUMERIC as SQLite gives it: SUM of integers an int, AVG (or any fraction) a float.

    PostgreSQL returns NUMERIC for SUM(bigint) and AVG; psycopg would make it a Decimal,
    which JSON, the statistics and every float sum downstream do not take.
    """

    def load(self, data):
        text = bytes(data).decode("ascii")
        if text.lstrip("-").isdigit():
            return int(text)
        return float(text)  # "12.50", "NaN", "Infinity"


class Psycopg3(Psycopg3Adapter):
    """Peewee's psycopg 3 adapter with the driver imported here, not looked up in Peewee's
    module (where it is None when Peewee was imported without it)."""

    txn_idle = TransactionStatus.IDLE
    txn_inerror = TransactionStatus.INERROR
    txn_unknown = TransactionStatus.UNKNOWN

    def __init__(self):
        super().__init__()
        self.json_type = Json
        self.jsonb_type = Jsonb

    def check_driver(self):
        """The driver is this module's import."""

    def get_binary_type(self):
        return psycopg.Binary

    def connect(self, db, **params):
        if db._encoding:
            params.setdefault("client_encoding", db._encoding)
        if db.database.startswith("postgresql://"):
            params.setdefault("conninfo", db.database)
        else:
            params.setdefault("dbname", db.database)
        return psycopg.connect(**params)

    def server_side_cursor(self, conn):
        # As Peewee's: in a transaction a named cursor streams; outside one it needs withhold.
        in_txn = self.txn_status(conn) == TransactionStatus.INTRANS
        return conn.cursor(name=str(uuid.uuid1()), withhold=not in_txn)


class PostgresDatabase(PostgresqlDatabase):
    """PostgreSQL through psycopg 3, speaking the SQL the SQLite code writes.

    psycopg 3 rather than psycopg2: it is the maintained driver (psycopg2 only gets fixes), it
    ships binary wheels as `psycopg[binary]`, Peewee supports it, and it sends Python strings
    as untyped literals, so the raw SQL that passes datetimes as text (clock.db_text) compares
    them with TIMESTAMP columns as on SQLite.

    - Integers and floats are 64-bit, as SQLite's are (BIGINT, BIGSERIAL ids, DOUBLE PRECISION;
      peewee's default REAL would store a cost of 0.03 as 0.0299999993).
    - Raw SQL may use `?` placeholders (translated to `%s` outside quotes).
    - NUMERIC results come back as SQLite gives them: SUM of integers an int, AVG a float.
    """

    field_types = {
        **PostgresqlDatabase.field_types,
        "AUTO": "BIGSERIAL",
        "INT": "BIGINT",
        "FLOAT": "DOUBLE PRECISION",
    }
    # Whichever driver Peewee found at its import (none, as llmbench imports it), this one.
    psycopg2_adapter = psycopg3_adapter = Psycopg3

    def __init__(self, database, **kwargs):
        kwargs.setdefault("prefer_psycopg3", True)
        super().__init__(database, **kwargs)

    def atomic(self, *args, **kwargs):
        if not args and "lock_type" not in kwargs:
            kwargs["lock_type"] = "IMMEDIATE"
        return super().atomic(*args, **kwargs)

    def begin(self, lock_type=None, isolation_level=None):
        super().begin(isolation_level)
        if lock_type == "IMMEDIATE":
            try:
                self.execute_sql("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK_KEY,))
            except Exception:
                self.rollback()  # no transaction is left open (and aborted) on the connection
                raise

    def _connect(self):
        conn = super()._connect()
        conn.adapters.register_loader("numeric", NumericLoader)
        return conn

    def execute_sql(self, sql, params=None):
        if params and "?" in sql:
            sql = pg_placeholders(sql)
        return super().execute_sql(sql, params)


class PooledPostgresDatabase(PooledPostgresqlDatabase, PostgresDatabase):
    """A PostgreSQL server whose connections are kept open between uses, as PooledDatabase
    keeps SQLite's.

    A new connection costs 4-6 ms, and its new server session then loads each table's catalog
    entries on first use (about 1 ms a table): opened per request, that was two thirds of a
    live-view poll (bench_deep_pages.py --postgres). Peewee's pool asks a kept connection
    `SELECT 1` (one round trip, ~0.2 ms) before handing it out, so one the server ended
    meanwhile (a restart, an idle timeout, pg_terminate_backend) is replaced instead of failing
    a request, and rolls back one handed back inside a transaction.
    """

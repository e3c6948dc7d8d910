"""What `llmbench db` does: say which database is in use, and copy one database into another.

    info = describe(cfg["DB"])          # after migrations.open_db(cfg["DB"])
    counts = copy_database("instance/llmbench.db", "postgresql://bench@db/llmbench")

The copy moves every table's rows with their ids (then moves PostgreSQL's id sequences past
them), in one transaction on the target. Secrets are copied as stored: still encrypted, with
the same master key, and bound to the same row ids (crypto.py's AAD), so they decrypt there.
The kept counts (item_count) are not copied: the target's triggers count the items as they
arrive (runs/counts.py).
"""

import sqlite3

from peewee import SqliteDatabase
from peewee import sort_models

from ..errors import Conflict
from .connection import database
from .connection import insert_rows
from .migrations import MIGRATIONS
from .migrations import applied
from .migrations import open_db
from .models import ALL_MODELS
from .models import ItemCount
from .urls import parse

BATCH = 500


def describe(value):
    """The bound database, as `llmbench db check` prints it (password masked)."""
    target = parse(value)
    with database.connection_context():
        done = applied(database)
        if database.is_postgres:
            number = database.server_version
            version = f"PostgreSQL {number // 10000}.{number % 10000}"
        else:
            version = f"SQLite {sqlite3.sqlite_version}"
    return {
        "database": target.masked,
        "engine": "postgresql" if target.is_postgres else "sqlite",
        "server_version": version,
        "schema_version": len(done),
        "schema_latest": len(MIGRATIONS),
        "last_migration": done[-1] if done else None,
    }


def _reader(value):
    """A plain connection to the source (not the app's proxy), for reading rows."""
    target = parse(value)
    if target.is_postgres:
        # Lazy: the PostgreSQL classes and adapter only for a PostgreSQL URL (db/postgres.py).
        from .postgres import PostgresDatabase

        params = dict(target.params)
        return PostgresDatabase(params.pop("dbname"), **params)
    return SqliteDatabase(target.path)


def _row_counts(models):
    return {m._meta.table_name: m.select().count() for m in models}


def copy_database(source, target, progress=None):
    """Copy every row of `source` into the empty database `target`; {table: rows copied}.

    Both are brought to the latest schema first (as a start would). A target that holds any row
    is refused (Conflict): copying into it would mix two histories and clash on ids.
    """
    # Parents before children: foreign keys hold throughout. item_count is derived (see above):
    # copied too, a SQLite target would count every item twice.
    models = [m for m in sort_models(ALL_MODELS) if m is not ItemCount]
    open_db(source)
    database.close()
    open_db(target)
    counts = {}
    reader = _reader(source)
    try:
        with database.connection_context():
            held = {table: n for table, n in _row_counts(models).items() if n}
            if held:
                listed = ", ".join(f"{t} ({n})" for t, n in sorted(held.items()))
                raise Conflict(
                    f"{parse(target).masked} is not empty: it holds rows in {listed}; copy "
                    "into a new, empty database"
                )
            with database.atomic():
                for model in models:
                    counts[model._meta.table_name] = _copy_table(reader, model)
                    if progress:
                        progress(model._meta.table_name, counts[model._meta.table_name])
                if database.is_postgres:
                    _reset_sequences(models)
    finally:
        reader.close()
    return counts


def _copy_table(reader, model):
    fields = model._meta.sorted_fields
    columns = ", ".join(f'"{f.column_name}"' for f in fields)
    order = f' ORDER BY "{model._meta.primary_key.column_name}"' if model._meta.primary_key else ""
    cursor = reader.execute_sql(f'SELECT {columns} FROM "{model._meta.table_name}"{order}')
    copied = 0
    while True:
        rows = cursor.fetchmany(BATCH)
        if not rows:
            return copied
        # python_value then the insert's db_value: text datetimes become timestamps, 0/1 booleans.
        insert_rows(
            model,
            [{f.name: f.python_value(v) for f, v in zip(fields, row, strict=True)} for row in rows],
        )
        copied += len(rows)


def _reset_sequences(models):
    """Move each id sequence past the copied ids, so the next insert gets a new one."""
    for model in models:
        pk = model._meta.primary_key
        if pk is None or pk.field_type not in ("AUTO", "BIGAUTO"):
            continue
        table, column = model._meta.table_name, pk.column_name
        database.execute_sql(
            f"SELECT setval(pg_get_serial_sequence('\"{table}\"', '{column}'), "
            f'COALESCE(MAX("{column}"), 1), MAX("{column}") IS NOT NULL) FROM "{table}"'
        )

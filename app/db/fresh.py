"""A new SQLite database made in one step: fresh_sqlite.sql holds the schema a database has after
every migration, and the names of those migrations (migrations.apply records them as applied).

Made by the migrations one by one (42 of them, m001-m048), a new file cost ~0.1 s of CPU and
~0.8 s of wall time on a busy disk (a transaction, its pragmas and its commit per migration, the
migrator's table rebuilds), paid by every first command; in one step, 15 ms. The file is generated,
never edited (`python -m tests.fresh_sqlite`): tests/test_fresh_sqlite.py fails while it is not
what the migrations build. PostgreSQL keeps the migration path.
"""

import sqlite3
from pathlib import Path

SNAPSHOT = Path(__file__).with_name("fresh_sqlite.sql")
# A header line naming one migration the snapshot holds, in order.
MIGRATION = "-- migration: "


def is_empty(db):
    """Whether the SQLite database has no migration recorded and no table but the ledger."""
    return not db.execute_sql(
        "SELECT 1 FROM _migrations UNION ALL SELECT 1 FROM sqlite_master "
        "WHERE type = 'table' AND name <> '_migrations' AND name NOT LIKE 'sqlite_%' LIMIT 1"
    ).fetchone()


def parse(text):
    """(the migrations' names, the statements) of a snapshot's text."""
    names, statements, pending = [], [], ""
    for line in text.splitlines(keepends=True):
        if not pending and line.startswith(MIGRATION):
            names.append(line[len(MIGRATION) :].strip())
        elif pending or (line.strip() and not line.startswith("--")):
            pending += line
            # A trigger's body holds semicolons: a statement ends where SQLite says it does.
            if sqlite3.complete_statement(pending):
                statements.append(pending.strip())
                pending = ""
    return names, statements


def read():
    """(names, statements) of the packaged snapshot."""
    return parse(SNAPSHOT.read_text(encoding="utf-8"))


def create(db, statements):
    """Run the snapshot's statements, in the caller's transaction."""
    for sql in statements:
        db.execute_sql(sql)

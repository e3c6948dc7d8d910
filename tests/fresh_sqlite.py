"""app/db/fresh_sqlite.sql, made by migrating a new SQLite file the long way, one migration after
another, and writing down what it then holds. Run from the repository:

    python -m tests.fresh_sqlite

tests/test_fresh_sqlite.py fails, naming this command, when the file is not what it writes.
"""

import tempfile
from pathlib import Path

from app.db import fresh
from app.db import migrations
from app.db.connection import database
from app.db.connection import init_db

COMMAND = "python -m tests.fresh_sqlite"
HEADER = (
    "-- A new SQLite database's schema after the migrations below, made in one step\n"
    "-- (app/db/fresh.py, migrations.apply). Generated, not edited: python -m tests.fresh_sqlite\n"
)
# Tables first (a trigger or an index needs its table), then what SQLite builds on them.
KINDS = ("table", "index", "trigger", "view")


def stepwise(path):
    """Bind the database to a new SQLite file at `path`, every migration applied one by one."""
    init_db(str(path))
    with database.connection_context():
        migrations.apply(database, snapshot=False)
    return database


def snapshot_text(db):
    """What fresh_sqlite.sql holds for the migrated SQLite database `db`: the migrations it has
    applied and every CREATE of its schema (the ledger's apart: apply makes it first)."""
    tables = [
        name
        for (name,) in db.execute_sql(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name <> '_migrations'"
        )
    ]
    # Nothing to carry over today; a migration that writes rows (or runs ANALYZE) on a new
    # database needs them written here too.
    filled = [
        name
        for name in tables
        if name.startswith("sqlite_stat") or db.execute_sql(f'SELECT 1 FROM "{name}"').fetchone()
    ]
    assert not filled, f"the migrations left rows in {filled}: fresh_sqlite.sql has none"
    objects = db.execute_sql(
        "SELECT type, name, sql FROM sqlite_master "
        "WHERE sql IS NOT NULL AND tbl_name <> '_migrations'"
    ).fetchall()
    statements = [sql for _, _, sql in sorted(objects, key=lambda o: (KINDS.index(o[0]), o[1]))]
    names = "".join(f"{fresh.MIGRATION}{name}\n" for name in migrations.applied(db))
    return HEADER + names + "".join(f"\n{sql};\n" for sql in statements)


def generated():
    """fresh_sqlite.sql's text as the migrations make it now."""
    with tempfile.TemporaryDirectory() as folder:
        db = stepwise(Path(folder) / "stepwise.db")
        try:
            with db.connection_context():
                return snapshot_text(db)
        finally:
            db.close()


def main():
    fresh.SNAPSHOT.write_text(generated(), encoding="utf-8")


if __name__ == "__main__":
    main()

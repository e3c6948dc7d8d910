"""docs/schema.sql, made from two fresh databases: a SQLite file and a throwaway PostgreSQL
(tests/pg_server.py). Run from the repository:

    python -m tests.schema_doc > docs/schema.sql

tests/test_schema.py fails, naming this command, when docs/schema.sql is not what it prints.
"""

import sys
import tempfile
from pathlib import Path

from app.db.connection import close_idle
from app.db.connection import database
from app.db.migrations import open_db
from app.db.schema import describe
from app.db.schema import document
from app.db.schema import render
from tests import pg_databases
from tests import pg_server

COMMAND = "python -m tests.schema_doc > docs/schema.sql"
DOC = Path(__file__).resolve().parent.parent / "docs" / "schema.sql"


def migrated(url):
    """describe() of the database at `url` (a SQLite path or an empty PostgreSQL database)
    after open_db has migrated it."""
    open_db(url)
    try:
        with database.connection_context():
            return describe(database)
    finally:
        database.close()
        close_idle()


def sqlite_section():
    with tempfile.TemporaryDirectory() as folder:
        return render(migrated(str(Path(folder) / "fresh.db")))


def postgres_section(server_url):
    with pg_databases.fresh_database(server_url) as url:
        return render(migrated(url))


def sections(text):
    """docs/schema.sql's (SQLite, PostgreSQL) sections as document() wrote them."""
    head, postgres = text.split("\n-- PostgreSQL\n\n", 1)
    return head.split("\n-- SQLite\n\n", 1)[1], postgres


def main():
    with pg_server.running_postgres() as url:
        postgres = postgres_section(url)
    sys.stdout.write(document(sqlite_section(), postgres))


if __name__ == "__main__":
    main()

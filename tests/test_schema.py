"""The schema: a fresh database is the first schema plus every migration; a database of the
first schema, upgraded, ends the same (tables, columns with their types, nullability and
defaults, foreign keys, indexes, triggers, views, statistics) with its rows kept; models.py
declares what the migrations build; docs/schema.sql shows it. On SQLite and PostgreSQL."""

import sqlite3
from pathlib import Path

import pytest

from app.db import ddl
from app.db import migrations
from app.db.connection import close_idle
from app.db.connection import database
from app.db.connection import init_db
from app.db.models import ALL_MODELS
from app.db.models import Item
from app.db.models import Run
from app.db.models import RunTarget
from app.db.schema import describe
from app.runs import counts
from tests import pg_databases
from tests import schema_doc

DATA = Path(__file__).parent / "data"
# The first schema (commit 1c66739's m001) and the first PostgreSQL one (commit 2b0b7cc), each
# with one run of two targets and three items written by that release's own models.
FIRST_SQLITE = DATA / "schema_1c66739.sqlite.sql"
FIRST_POSTGRES = DATA / "schema_2b0b7cc.postgres.sql"


def comparable(schema):
    """describe()'s schema with each table's columns by name: an upgraded table has the columns
    added since its first release at its end, a fresh one the same columns in another order."""
    tables = {
        name: {
            "columns": {c["name"]: c for c in shape["columns"]},
            "references": shape["references"],
        }
        for name, shape in schema["tables"].items()
    }
    return {**schema, "tables": tables}


def assert_same_schema(upgraded, fresh):
    upgraded, fresh = comparable(upgraded), comparable(fresh)
    for part in fresh:  # one part at a time: a failure names it
        assert upgraded[part] == fresh[part], part


def _load_sqlite(path, dump):
    connection = sqlite3.connect(path)
    try:
        connection.executescript(dump.read_text())
    finally:
        connection.close()


def _load_postgres(url, dump):
    import psycopg

    with psycopg.connect(url, autocommit=True, options=pg_databases.bounded_options()) as conn:
        conn.execute(dump.read_text())


def _the_first_run_reads_back():
    """The dump's rows, read through today's models after the upgrade."""
    with database.connection_context():
        run = Run.get(Run.run_id == "old-run")
        labels = [t.label for t in RunTarget.select().where(RunTarget.run == run).order_by("id")]
        # One model on two providers with the same params: the second has its provider in front.
        assert labels == ["m1 · temperature 0.2", "remote/m1 · temperature 0.2"]
        items = list(Item.select().where(Item.run == run).order_by(Item.id))
        assert [(i.task_key, i.status, i.evaluation_score) for i in items] == [
            ("t1", "COMPLETED", 80.0),
            ("t2", "FAILED", None),
            ("t1", "COMPLETED", 60.0),
        ]
        assert {(i.repeat, i.answer_cut, i.claimed_until, i.judge_cost_usd) for i in items} == {
            (0, False, None, None)
        }
        # The kept counts, built by the migrations from the items they found.
        kept = {key: sums["n"] for key, sums in counts.kept(run).items()}
        assert kept == {key: sums["n"] for key, sums in counts.recount(run).items()}
        assert sum(kept.values()) == 3
        assert migrations.applied(database) == [fn.__name__ for fn in migrations.MIGRATIONS]


# --- SQLite --------------------------------------------------------------------------------


def test_a_sqlite_database_of_the_first_schema_upgrades_to_a_fresh_ones_schema(tmp_path):
    old = tmp_path / "first.db"
    _load_sqlite(old, FIRST_SQLITE)
    upgraded = schema_doc.migrated(str(old))
    fresh = schema_doc.migrated(str(tmp_path / "fresh.db"))
    assert_same_schema(upgraded, fresh)


def test_a_sqlite_database_of_the_first_schema_keeps_its_rows_through_the_upgrade(tmp_path):
    old = tmp_path / "first.db"
    _load_sqlite(old, FIRST_SQLITE)
    migrations.open_db(str(old))
    try:
        _the_first_run_reads_back()
    finally:
        database.close()


def _declared_sqlite(path):
    """describe() of a SQLite file made from models.py and ddl.py alone, no migration."""
    init_db(str(path))
    try:
        with database.connection_context():
            database.create_tables(ALL_MODELS)
            for sql in (*ddl.ITEM_COUNT_TRIGGERS[:2], *ddl.ITEM_COUNT_WRITES):
                database.execute_sql(sql)
            return describe(database)
    finally:
        database.close()


def test_models_py_declares_the_tables_and_indexes_the_sqlite_migrations_build(tmp_path):
    declared = comparable(_declared_sqlite(tmp_path / "declared.db"))
    migrated = comparable(schema_doc.migrated(str(tmp_path / "fresh.db")))
    migrated["tables"].pop("_migrations")
    indexes = migrated["indexes"].items()
    migrated["indexes"] = {n: i for n, i in indexes if i["table"] != "_migrations"}
    for part in ("tables", "indexes", "triggers"):
        assert declared[part] == migrated[part], part


def _stale(which):
    return (
        f"docs/schema.sql's {which} section is not the schema a fresh database has now. "
        f"Regenerate it: {schema_doc.COMMAND}"
    )


def test_docs_schema_sql_shows_the_sqlite_schema_a_fresh_database_has():
    documented, _ = schema_doc.sections(schema_doc.DOC.read_text())
    assert documented == schema_doc.sqlite_section(), _stale("SQLite")


# --- PostgreSQL ----------------------------------------------------------------------------


@pytest.fixture
def pg_database(pg_server_url):
    """A new, empty PostgreSQL database's URL; the pool's sessions end before it is dropped."""
    with pg_databases.fresh_database(pg_server_url) as url:
        try:
            yield url
        finally:
            if not database.is_closed():
                database.close()
            close_idle()


@pytest.fixture
def pg_database_b(pg_server_url):
    with pg_databases.fresh_database(pg_server_url) as url:
        yield url


@pytest.mark.postgres
def test_a_postgres_database_of_the_first_schema_upgrades_to_a_fresh_ones_schema(
    pg_database, pg_database_b
):
    _load_postgres(pg_database, FIRST_POSTGRES)
    upgraded = schema_doc.migrated(pg_database)
    fresh = schema_doc.migrated(pg_database_b)
    assert_same_schema(upgraded, fresh)


@pytest.mark.postgres
def test_a_postgres_database_of_the_first_schema_keeps_its_rows_through_the_upgrade(pg_database):
    _load_postgres(pg_database, FIRST_POSTGRES)
    migrations.open_db(pg_database)
    _the_first_run_reads_back()


@pytest.mark.postgres
def test_models_py_declares_the_tables_the_postgres_migrations_build(pg_database, pg_database_b):
    # Tables only: PostgreSQL's item indexes are ddl.py's (in id order), not models.py's.
    init_db(pg_database)
    try:
        with database.connection_context():
            database.create_tables(ALL_MODELS)
            declared = comparable(describe(database))
    finally:
        database.close()
        close_idle()
    migrated = comparable(schema_doc.migrated(pg_database_b))
    migrated["tables"].pop("_migrations")
    migrated["tables"].pop("item_count_delta")
    assert declared["tables"] == migrated["tables"]


@pytest.mark.postgres
def test_docs_schema_sql_shows_the_postgres_schema_a_fresh_database_has(pg_server_url):
    _, documented = schema_doc.sections(schema_doc.DOC.read_text())
    assert documented == schema_doc.postgres_section(pg_server_url), _stale("PostgreSQL")

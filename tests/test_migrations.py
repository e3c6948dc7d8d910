"""Schema migrations: recorded with a version, applied once, add-only."""

from app import migrations
from app.db import database
from app.migrations import open_db
from app.models import ALL_MODELS
from app.models import Provider
from tests.conftest import make_app


def test_a_fresh_database_records_every_migration(app):
    assert migrations.applied(database) == [fn.__name__ for fn in migrations.MIGRATIONS]
    assert migrations.schema_version(database) == len(migrations.MIGRATIONS) >= 1


def test_every_model_has_its_table(app):
    tables = set(database.get_tables())
    assert {m._meta.table_name for m in ALL_MODELS} <= tables


def test_reapplying_migrations_is_a_no_op(app):
    Provider.create(
        name="kept",
        type="OLLAMA",
        base_url="http://x",
        models_endpoint="/api/tags",
        inference_endpoint="/api/chat",
    )
    before = database.execute_sql("SELECT id, name, applied_at FROM _migrations").fetchall()
    migrations.apply(database)
    after = database.execute_sql("SELECT id, name, applied_at FROM _migrations").fetchall()
    assert after == before
    assert Provider.select().count() == 1


def test_reopening_the_same_file_keeps_data_and_version(tmp_path):
    make_app(tmp_path)
    with database.connection_context():
        Provider.create(
            name="kept",
            type="OLLAMA",
            base_url="http://x",
            models_endpoint="/api/tags",
            inference_endpoint="/api/chat",
        )
        version = migrations.schema_version(database)
    open_db(str(tmp_path / "test.db"))
    with database.connection_context():
        assert migrations.schema_version(database) == version
        assert Provider.get().name == "kept"


def test_a_new_migration_is_applied_once(app, monkeypatch):
    calls = []

    def m999_test_column(db):
        calls.append(1)
        db.execute_sql("CREATE TABLE test_extra (id INTEGER PRIMARY KEY)")

    monkeypatch.setattr(migrations, "MIGRATIONS", [*migrations.MIGRATIONS, m999_test_column])
    migrations.apply(database)
    migrations.apply(database)
    assert calls == [1]
    assert migrations.applied(database)[-1] == "m999_test_column"


def test_sqlite_runs_in_wal_mode_with_foreign_keys(app):
    assert database.execute_sql("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert database.execute_sql("PRAGMA foreign_keys").fetchone()[0] == 1


def _item_indexes():
    return {
        row[0]
        for row in database.execute_sql(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'item'"
        )
    }


def test_a_version_1_database_gets_the_progress_indexes(app):
    # Bring the fresh database back to what m001 shipped with, then migrate.
    database.execute_sql("DROP INDEX item_run_id_answered_at")
    database.execute_sql("DROP INDEX item_run_id_judged_at")
    database.execute_sql("DELETE FROM _migrations WHERE name = 'm002_item_progress_indexes'")
    migrations.apply(database)
    assert {"item_run_id_answered_at", "item_run_id_judged_at"} <= _item_indexes()
    assert migrations.applied(database)[-1] == "m002_item_progress_indexes"


def _item_columns():
    return {c.name for c in database.get_columns("item")}


def test_a_version_2_database_gets_the_judge_cost_column(app, monkeypatch):
    import sqlite3

    assert sqlite3.sqlite_version_info >= (3, 35, 0)  # DROP COLUMN
    database.execute_sql("ALTER TABLE item DROP COLUMN judge_cost_usd")
    database.execute_sql("DELETE FROM _migrations WHERE name = 'm003_item_judge_cost'")
    # A version-2 database upgraded by the code that added m003 (later migrations left out).
    database.execute_sql("DELETE FROM _migrations WHERE name = 'm004_item_updated_at_index'")
    upto_m003 = migrations.MIGRATIONS[
        : migrations.MIGRATIONS.index(migrations.m003_item_judge_cost) + 1
    ]
    monkeypatch.setattr(migrations, "MIGRATIONS", upto_m003)
    assert "judge_cost_usd" not in _item_columns()
    assert migrations.schema_version(database) == 2
    migrations.apply(database)
    assert "judge_cost_usd" in _item_columns()
    assert migrations.applied(database)[-1] == "m003_item_judge_cost"


def test_the_judge_cost_migration_is_a_no_op_when_the_column_exists(app):
    # A fresh database has the column from m001: running m003 again changes nothing.
    before = _item_columns()
    migrations.m003_item_judge_cost(database)
    assert _item_columns() == before
    assert "judge_cost_usd" in before


def test_a_version_3_database_gets_the_updated_at_index(app):
    database.execute_sql("DROP INDEX item_run_id_updated_at")
    database.execute_sql("DELETE FROM _migrations WHERE name = 'm004_item_updated_at_index'")
    assert "item_run_id_updated_at" not in _item_indexes()
    assert migrations.schema_version(database) == 3
    migrations.apply(database)
    assert "item_run_id_updated_at" in _item_indexes()
    assert migrations.applied(database)[-1] == "m004_item_updated_at_index"


def test_the_latest_items_query_uses_the_updated_at_index(app):
    plan = " ".join(
        str(row[-1])
        for row in database.execute_sql(
            "EXPLAIN QUERY PLAN SELECT id FROM item WHERE run_id = 1 "
            "ORDER BY updated_at DESC, id DESC LIMIT 20"
        )
    )
    assert "item_run_id_updated_at" in plan

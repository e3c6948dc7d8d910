"""Schema migrations: recorded with a version, applied once, add-only."""

import datetime as dt

import pytest

from app.cli.open_database import CACHE_MIB
from app.cli.open_database import open_database
from app.db import migrations
from app.db.connection import database
from app.db.migrations import open_db
from app.db.models import ALL_MODELS
from app.db.models import NEW
from app.db.models import PENDING
from app.db.models import Item
from app.db.models import Provider
from tests.conftest import make_app
from tests.factories import T0
from tests.factories import add_item
from tests.factories import make_run


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


@pytest.mark.sqlite_only  # SQLite's PRAGMAs
def test_sqlite_runs_in_wal_mode_with_foreign_keys(app):
    assert database.execute_sql("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert database.execute_sql("PRAGMA foreign_keys").fetchone()[0] == 1


@pytest.mark.sqlite_only  # SQLite's page cache
def test_the_web_app_keeps_8_mb_of_page_cache_per_connection(app):
    assert database.execute_sql("PRAGMA cache_size").fetchone()[0] == -8000


@pytest.mark.sqlite_only  # SQLite's page cache
def test_a_command_line_database_keeps_2_mb_of_page_cache_per_connection(tmp_path):
    open_database(str(tmp_path / "cli.db"))
    try:
        assert database.execute_sql("PRAGMA cache_size").fetchone()[0] == -1000 * CACHE_MIB
        assert CACHE_MIB == 2
    finally:
        database.close()


def _item_indexes():
    return {index.name for index in database.get_indexes("item")}


def test_a_version_1_database_gets_the_progress_indexes(app):
    # Bring the fresh database back to what m001 shipped with, then migrate (m030 has dropped
    # them already: it made them partial, under other names).
    database.execute_sql("DROP INDEX IF EXISTS item_run_id_answered_at")
    database.execute_sql("DROP INDEX IF EXISTS item_run_id_judged_at")
    database.execute_sql("DELETE FROM _migrations WHERE name = 'm002_item_progress_indexes'")
    migrations.apply(database)
    assert {"item_run_id_answered_at", "item_run_id_judged_at"} <= _item_indexes()
    assert migrations.applied(database)[-1] == "m002_item_progress_indexes"


def _item_columns():
    return {c.name for c in database.get_columns("item")}


def _upto(monkeypatch, last):
    """Pretend the code that shipped `last` is running: later migrations are left out."""
    names = [fn.__name__ for fn in migrations.MIGRATIONS]
    later = names[names.index(last.__name__) + 1 :]
    for name in later:
        database.execute_sql("DELETE FROM _migrations WHERE name = ?", (name,))
    if (
        "m032_item_counts_on_postgres" in later and database.is_postgres
    ):  # its view, table, triggers
        database.execute_sql("DROP VIEW item_count_now")
        database.execute_sql("DROP TABLE item_count_delta")
        database.execute_sql("DROP TRIGGER item_count_run_deleted ON run")
        for trigger in ("inserted", "deleted", "updated"):
            database.execute_sql(f"DROP TRIGGER item_count_{trigger} ON item")
    if "m025_item_counts" in later:  # that code had no kept counts (their triggers name columns)
        if not database.is_postgres:  # PostgreSQL's are m032's, dropped above
            for trigger in ("insert", "delete", "move", "change", "run_delete"):
                database.execute_sql(f"DROP TRIGGER item_count_{trigger}")
        database.execute_sql("DROP TABLE item_count")
    monkeypatch.setattr(
        migrations, "MIGRATIONS", migrations.MIGRATIONS[: names.index(last.__name__) + 1]
    )


def test_a_version_2_database_gets_the_judge_cost_column(app, monkeypatch):
    import sqlite3

    assert sqlite3.sqlite_version_info >= (3, 35, 0)  # DROP COLUMN
    # A version-2 database upgraded by the code that added m003.
    _upto(monkeypatch, migrations.m003_item_judge_cost)
    database.execute_sql("ALTER TABLE item DROP COLUMN judge_cost_usd")
    database.execute_sql("DELETE FROM _migrations WHERE name = 'm003_item_judge_cost'")
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


def test_a_version_3_database_gets_the_updated_at_index(app, monkeypatch):
    _upto(monkeypatch, migrations.m004_item_updated_at_index)
    # (m030 dropped it again: the live view reads m026's partial index of it instead.)
    database.execute_sql("DROP INDEX IF EXISTS item_run_id_updated_at")
    database.execute_sql("DELETE FROM _migrations WHERE name = 'm004_item_updated_at_index'")
    assert "item_run_id_updated_at" not in _item_indexes()
    assert migrations.schema_version(database) == 3
    migrations.apply(database)
    assert "item_run_id_updated_at" in _item_indexes()
    assert migrations.applied(database)[-1] == "m004_item_updated_at_index"


@pytest.mark.sqlite_only  # SQLite's EXPLAIN QUERY PLAN
def test_the_latest_items_query_uses_the_updated_at_index(app):
    plan = " ".join(
        str(row[-1])
        for row in database.execute_sql(
            "EXPLAIN QUERY PLAN SELECT id FROM item WHERE run_id = 1 "
            "AND last_attempt_at IS NOT NULL ORDER BY updated_at DESC, id DESC LIMIT 20"
        )
    )
    assert "item_run_id_updated_at_tried" in plan
    assert "TEMP B-TREE" not in plan


def test_a_version_4_database_moves_live_claims_to_claimed_until(app):
    run, (target,) = make_run("r4", status=PENDING)
    deadline = T0 + dt.timedelta(seconds=90)
    in_flight = add_item(run, target, "t1", status=NEW, attempts=1, next_retry_at=deadline)
    backoff = add_item(
        run, target, "t2", status=NEW, attempts=1, next_retry_at=deadline, error_msg="503"
    )
    fresh = add_item(run, target, "t3", status=NEW)
    # Back to version 4: no claimed_until column, the claim deadline kept in next_retry_at
    # (and so no m024 index on it either; m024 makes it again).
    database.execute_sql("DROP INDEX item_claimed_until")
    database.execute_sql("DELETE FROM _migrations WHERE name = 'm024_item_claim_indexes'")
    database.execute_sql("ALTER TABLE item DROP COLUMN claimed_until")
    database.execute_sql("DELETE FROM _migrations WHERE name = 'm005_item_claimed_until'")
    migrations.apply(database)
    assert "claimed_until" in _item_columns()
    claimed = Item.get_by_id(in_flight.id)
    assert claimed.claimed_until == deadline and claimed.next_retry_at is None
    waiting = Item.get_by_id(backoff.id)
    assert waiting.next_retry_at == deadline and waiting.claimed_until is None
    untouched = Item.get_by_id(fresh.id)
    assert untouched.next_retry_at is None and untouched.claimed_until is None
    assert "item_claimed_until" in _item_indexes()


def _back_to_version_5():
    """A database as the code before m014 left it: no labels, one target per provider+model, no
    rating, vote or judge-job tables."""
    for table in ("vote", "judgecall", "judgejob", "ratingtag", "rating"):
        database.execute_sql(f"DROP TABLE {table}")
    database.execute_sql("DROP INDEX runtarget_run_id_label")
    database.execute_sql("ALTER TABLE runtarget DROP COLUMN label")
    database.execute_sql(
        "CREATE UNIQUE INDEX runtarget_run_id_provider_id_model "
        "ON runtarget (run_id, provider_id, model)"
    )
    for name in ("m014_run_target_label", "m015_ratings", "m016_judge_jobs", "m017_votes"):
        database.execute_sql("DELETE FROM _migrations WHERE name = ?", (name,))


def test_a_version_5_database_gets_target_labels_ratings_votes_and_judge_jobs(app):
    _back_to_version_5()
    run, _ = make_run("old", targets=())
    for provider, model, params in (
        ("local", "m1", '{"temperature": 0.2}'),
        ("remote", "m1", '{"temperature": 0.2}'),
        ("local", "m2", None),
    ):
        database.execute_sql(
            "INSERT INTO runtarget (run_id, provider_name, model, params, position) "
            "VALUES (?, ?, ?, ?, 0)",
            (run.id, provider, model, params),
        )
    migrations.apply(database)
    labels = [row[0] for row in database.execute_sql("SELECT label FROM runtarget ORDER BY id")]
    # One model on two providers with the same params: the second gets its provider in front.
    assert labels == ["m1 · temperature 0.2", "remote/m1 · temperature 0.2", "m2"]
    indexes = {index.name for index in database.get_indexes("runtarget")}
    assert "runtarget_run_id_label" in indexes
    assert "runtarget_run_id_provider_id_model" not in indexes
    assert {"rating", "ratingtag", "vote", "judgecall", "judgejob"} <= set(database.get_tables())
    assert migrations.applied(database)[-1] == "m017_votes"


def test_after_m014_the_same_model_may_be_a_target_twice_with_other_labels(app):
    _back_to_version_5()
    migrations.apply(database)
    run, targets = make_run(
        "twice", targets=(("local", "m1", {"temperature": 0}), ("local", "m1", {"temperature": 1}))
    )
    assert [t.label for t in targets] == ["m1 · temperature 0", "m1 · temperature 1"]

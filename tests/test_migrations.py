"""Schema migrations: recorded with a version, applied once, add-only."""

import datetime as dt

import pytest
from peewee import IntegrityError

from app.cli.open_database import CACHE_MIB
from app.cli.open_database import open_database
from app.db import migrations
from app.db.connection import database
from app.db.migrations import open_db
from app.db.models import ALL_MODELS
from app.db.models import NEW
from app.db.models import Item
from app.db.models import Provider
from tests import schema_path
from tests.conftest import make_app
from tests.factories import T0
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


def _item_columns():
    return {c.name for c in database.get_columns("item")}


@pytest.fixture
def older(tmp_path, monkeypatch):
    """older(name): the database as the code before migration `name` left it."""
    yield lambda name: schema_path.before(tmp_path, name, monkeypatch)
    database.close()


def test_a_version_1_database_gets_the_progress_indexes(older, monkeypatch):
    db = older("m002_item_progress_indexes")
    assert migrations.schema_version(db) == 1
    assert not {"item_run_id_answered_at", "item_run_id_judged_at"} & _item_indexes()
    schema_path.through(db, "m002_item_progress_indexes", monkeypatch)
    assert {"item_run_id_answered_at", "item_run_id_judged_at"} <= _item_indexes()
    assert migrations.applied(db)[-1] == "m002_item_progress_indexes"


def test_a_version_2_database_gets_the_judge_cost_column(older, monkeypatch):
    db = older("m003_item_judge_cost")
    assert "judge_cost_usd" not in _item_columns()
    assert migrations.schema_version(db) == 2
    schema_path.through(db, "m003_item_judge_cost", monkeypatch)
    assert "judge_cost_usd" in _item_columns()
    assert migrations.applied(db)[-1] == "m003_item_judge_cost"


def test_the_judge_cost_migration_is_a_no_op_when_the_column_exists(app):
    # A fresh database has the column: running m003 again changes nothing.
    before = _item_columns()
    migrations.m003_item_judge_cost(database)
    assert _item_columns() == before
    assert "judge_cost_usd" in before


def test_a_version_3_database_gets_the_updated_at_index(older, monkeypatch):
    db = older("m004_item_updated_at_index")
    assert "item_run_id_updated_at" not in _item_indexes()
    assert migrations.schema_version(db) == 3
    schema_path.through(db, "m004_item_updated_at_index", monkeypatch)
    assert "item_run_id_updated_at" in _item_indexes()
    assert migrations.applied(db)[-1] == "m004_item_updated_at_index"


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


def test_a_version_4_database_moves_live_claims_to_claimed_until(older):
    # Version 4: no claimed_until column, the claim deadline kept in next_retry_at.
    db = older("m005_item_claimed_until")
    run, target = schema_path.old_run(db, "r4", status="NEW", evaluation_score=None)
    deadline = T0 + dt.timedelta(seconds=90)
    claim = {"status": NEW, "attempts": 1, "next_retry_at": deadline}
    in_flight = schema_path.old_item(db, run, target, "t2", **claim)
    backoff = schema_path.old_item(db, run, target, "t3", **claim, error_msg="503")
    fresh = schema_path.old_item(db, run, target, "t4", status=NEW)
    assert "claimed_until" not in _item_columns()
    migrations.apply(db)
    claimed = Item.get_by_id(in_flight)
    assert claimed.claimed_until == deadline and claimed.next_retry_at is None
    waiting = Item.get_by_id(backoff)
    assert waiting.next_retry_at == deadline and waiting.claimed_until is None
    untouched = Item.get_by_id(fresh)
    assert untouched.next_retry_at is None and untouched.claimed_until is None
    assert "item_claimed_until" in _item_indexes()


def test_a_version_5_database_gets_target_labels_ratings_votes_and_judge_jobs(older):
    # Before m014: no labels, one target per provider+model, no rating, vote or judge-job tables.
    db = older("m014_run_target_label")
    run = schema_path.insert(
        db,
        "run",
        run_id="old",
        name="old",
        judge_provider_name="judgeprov",
        judge_model="judge-1",
        status="FINISHED",
        phase="JUDGING",
        control="running",
        source="web",
        created_at=schema_path.NOW,
        updated_at=schema_path.NOW,
    )
    for provider, model, params in (
        ("local", "m1", '{"temperature": 0.2}'),
        ("remote", "m1", '{"temperature": 0.2}'),
        ("local", "m2", None),
    ):
        database.execute_sql(
            "INSERT INTO runtarget (run_id, provider_name, model, params, position) "
            "VALUES (?, ?, ?, ?, 0)",
            (run, provider, model, params),
        )
    assert "runtarget_run_id_provider_id_model" in {i.name for i in db.get_indexes("runtarget")}
    migrations.apply(db)
    labels = [row[0] for row in database.execute_sql("SELECT label FROM runtarget ORDER BY id")]
    # One model on two providers with the same params: the second gets its provider in front.
    assert labels == ["m1 · temperature 0.2", "remote/m1 · temperature 0.2", "m2"]
    indexes = {index.name for index in database.get_indexes("runtarget")}
    assert "runtarget_run_id_label" in indexes
    assert "runtarget_run_id_provider_id_model" not in indexes
    assert {"rating", "ratingtag", "vote", "judgecall", "judgejob"} <= set(database.get_tables())
    assert "m017_votes" in migrations.applied(database)


def test_after_m014_the_same_model_may_be_a_target_twice_with_other_labels(older):
    migrations.apply(older("m014_run_target_label"))
    run, targets = make_run(
        "twice", targets=(("local", "m1", {"temperature": 0}), ("local", "m1", {"temperature": 1}))
    )
    assert [t.label for t in targets] == ["m1 · temperature 0", "m1 · temperature 1"]


def test_a_table_rebuilt_by_a_migration_keeps_the_rows_that_refer_to_it(older):
    # m019 adds item.repeat (NOT NULL): SQLite's migrator rebuilds the item table, and a DROP
    # TABLE with foreign keys on would delete the ratings of every item (ON DELETE CASCADE).
    db = older("m019_item_repeats")
    run, _ = schema_path.old_run(db)
    (item,) = db.execute_sql("SELECT id FROM item").fetchone()
    when = schema_path.NOW
    schema_path.insert(
        db, "rating", item_id=item, run_id=run, rating=4, notes="", created_at=when, updated_at=when
    )
    migrations.apply(db)
    assert db.execute_sql("SELECT item_id, rating FROM rating").fetchall() == [(item, 4)]
    assert db.execute_sql("PRAGMA foreign_keys").fetchone()[0] == 1


def test_m042_keeps_ratings_and_their_tags_as_human_and_allows_one_per_rater(older):
    db = older("m042_labels_by_person")
    run, _ = schema_path.old_run(db)
    (item,) = db.execute_sql("SELECT id FROM item").fetchone()
    when = schema_path.NOW
    schema_path.insert(
        db, "rating", item_id=item, run_id=run, rating=4, notes="", created_at=when, updated_at=when
    )
    (rating,) = db.execute_sql("SELECT id FROM rating").fetchone()
    schema_path.insert(db, "ratingtag", rating_id=rating, item_id=item, tag="terse")
    migrations.apply(db)
    assert db.execute_sql("SELECT id, rater, rating FROM rating").fetchall() == [
        (rating, "human", 4)
    ]
    assert db.execute_sql("SELECT rating_id, tag FROM ratingtag").fetchall() == [(rating, "terse")]
    # A second person may rate the same item; the same person twice may not.
    schema_path.insert(
        db, "rating", item_id=item, run_id=run, rating=2, notes="", created_at=when,
        updated_at=when, rater="human:ann",
    )  # fmt: skip
    with pytest.raises(IntegrityError):
        schema_path.insert(
            db, "rating", item_id=item, run_id=run, rating=1, notes="", created_at=when,
            updated_at=when, rater="human:ann",
        )  # fmt: skip

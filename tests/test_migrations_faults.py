"""The fault-and-honesty migrations (m010-m012): each brings an older database up to date."""

import sqlite3

from app.db import migrations
from app.db.connection import database
from app.db.models import NEW
from app.db.models import PENDING
from app.db.models import Item
from app.db.models import Outage
from tests.factories import add_item
from tests.factories import make_run


def _item_columns():
    return {c.name for c in database.get_columns("item")}


def _forget(name):
    database.execute_sql("DELETE FROM _migrations WHERE name = ?", (name,))


def test_a_database_without_the_outage_table_gets_it(app):
    database.execute_sql("DROP TABLE outage")
    _forget("m010_outage")
    migrations.apply(database)
    assert "outage" in database.get_tables()
    assert "m010_outage" in migrations.applied(database)
    assert Outage.select().count() == 0


def test_an_older_item_table_gets_answer_cut_and_judge_history_with_its_rows_kept(app):
    assert sqlite3.sqlite_version_info >= (3, 35, 0)  # DROP COLUMN
    run, (target,) = make_run("old", status=PENDING)
    kept = add_item(run, target, "t1", status=NEW)
    database.execute_sql("ALTER TABLE item DROP COLUMN answer_cut")
    database.execute_sql("ALTER TABLE item DROP COLUMN judge_history")
    _forget("m011_item_answer_cut")
    _forget("m012_item_judge_history")
    assert {"answer_cut", "judge_history"}.isdisjoint(_item_columns())
    migrations.apply(database)
    assert {"answer_cut", "judge_history"} <= _item_columns()
    item = Item.get_by_id(kept.id)
    assert item.answer_cut is False and item.judge_history is None and item.task_key == "t1"


def test_the_fault_migrations_are_no_ops_on_a_fresh_database(app):
    before = (_item_columns(), set(database.get_tables()))
    for fn in (migrations.m010_outage, migrations.m011_item_answer_cut):
        fn(database)
    migrations.m012_item_judge_history(database)
    assert (_item_columns(), set(database.get_tables())) == before

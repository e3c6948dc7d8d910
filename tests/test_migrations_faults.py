"""The fault-and-honesty migrations (m010-m012): each brings an older database up to date."""

import pytest

from app.db import migrations
from app.db.connection import database
from app.db.models import NEW
from app.db.models import Item
from app.db.models import Outage
from tests import schema_path


def _item_columns():
    return {c.name for c in database.get_columns("item")}


@pytest.fixture
def older(tmp_path, monkeypatch):
    """older(name): the database as the code before migration `name` left it."""
    yield lambda name: schema_path.before(tmp_path, name, monkeypatch)
    database.close()


def test_a_database_without_the_outage_table_gets_it(older):
    db = older("m010_outage")
    assert "outage" not in db.get_tables()
    migrations.apply(db)
    assert "outage" in db.get_tables()
    assert "m010_outage" in migrations.applied(db)
    assert Outage.select().count() == 0


def test_an_older_item_table_gets_answer_cut_and_judge_history_with_its_rows_kept(older):
    db = older("m011_item_answer_cut")
    run, target = schema_path.old_run(db)
    kept = schema_path.old_item(db, run, target, "t2", status=NEW)
    assert {"answer_cut", "judge_history"}.isdisjoint(_item_columns())
    migrations.apply(db)
    assert {"answer_cut", "judge_history"} <= _item_columns()
    item = Item.get_by_id(kept)
    assert item.answer_cut is False and item.judge_history is None and item.task_key == "t2"


def test_the_fault_migrations_are_no_ops_on_a_fresh_database(app):
    before = (_item_columns(), set(database.get_tables()))
    for fn in (migrations.m010_outage, migrations.m011_item_answer_cut):
        fn(database)
    migrations.m012_item_judge_history(database)
    assert (_item_columns(), set(database.get_tables())) == before

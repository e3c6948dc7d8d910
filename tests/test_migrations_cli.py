"""m022 (item.answer_reused_from / judgement_reused_from) and m023 (run.outputs): a database
from before them gets the columns, keeps its rows, and reruns are no-ops."""

from app.db import migrations
from app.db.connection import database
from app.db.models import Item
from app.db.models import Run
from tests.factories import add_item
from tests.factories import make_run

NEW_COLUMNS = {
    "item": ("answer_reused_from", "judgement_reused_from"),
    "run": ("outputs",),
}


def _columns(table):
    return {c.name for c in database.get_columns(table)}


def _back_to_before_m022():
    """The database as the code before m022 left it: without the columns, not recorded."""
    for table, names in NEW_COLUMNS.items():
        for name in names:
            database.execute_sql(f"ALTER TABLE {table} DROP COLUMN {name}")
    database.execute_sql(
        "DELETE FROM _migrations WHERE name IN ('m022_item_reused_from', 'm023_run_outputs')"
    )


def test_an_older_database_gets_the_reuse_and_outputs_columns_and_keeps_its_rows(app):
    run, (target,) = make_run("old")
    add_item(run, target, "t1", score=70)
    _back_to_before_m022()
    assert not {"answer_reused_from", "judgement_reused_from"} & _columns("item")
    migrations.apply(database)
    assert {"answer_reused_from", "judgement_reused_from"} <= _columns("item")
    assert "outputs" in _columns("run")
    assert migrations.applied(database)[-2:] == ["m022_item_reused_from", "m023_run_outputs"]
    item = Item.get()
    assert (item.task_key, item.evaluation_score, item.answer_reused_from) == ("t1", 70, None)
    assert Run.get().outputs is None


def test_the_new_migrations_are_no_ops_on_a_fresh_database(app):
    before = (_columns("item"), _columns("run"))
    migrations.m022_item_reused_from(database)
    migrations.m023_run_outputs(database)
    assert (_columns("item"), _columns("run")) == before

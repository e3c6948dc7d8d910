"""m022 (item.answer_reused_from / judgement_reused_from) and m023 (run.outputs): a database
from before them gets the columns, keeps its rows, and reruns are no-ops."""

from app.db import migrations
from app.db.connection import database
from app.db.models import Item
from app.db.models import Run
from tests import schema_path

NEW_COLUMNS = {
    "item": ("answer_reused_from", "judgement_reused_from"),
    "run": ("outputs",),
}


def _columns(table):
    return {c.name for c in database.get_columns(table)}


def test_an_older_database_gets_the_reuse_and_outputs_columns_and_keeps_its_rows(
    tmp_path, monkeypatch
):
    db = schema_path.before(tmp_path, "m022_item_reused_from", monkeypatch)
    try:
        schema_path.old_run(db, "old", score=70.0)
        assert not {"answer_reused_from", "judgement_reused_from"} & _columns("item")
        assert "outputs" not in _columns("run")
        migrations.apply(db)
        assert {"answer_reused_from", "judgement_reused_from"} <= _columns("item")
        assert "outputs" in _columns("run")
        assert {"m022_item_reused_from", "m023_run_outputs"} <= set(migrations.applied(db))
        item = Item.get()
        assert (item.task_key, item.evaluation_score, item.answer_reused_from) == ("t1", 70, None)
        assert Run.get().outputs is None
    finally:
        db.close()


def test_the_new_migrations_are_no_ops_on_a_fresh_database(app):
    before = (_columns("item"), _columns("run"))
    migrations.m022_item_reused_from(database)
    migrations.m023_run_outputs(database)
    assert (_columns("item"), _columns("run")) == before

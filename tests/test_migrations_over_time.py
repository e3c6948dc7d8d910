"""m018-m021: a database from before them gets templates, the queue's columns, repeats,
trends, alerts and system samples; its runs keep working and are digested afterwards."""

import pytest

from app.db import migrations
from app.db.connection import database
from app.db.models import Item
from app.db.models import Run
from app.db.models import RunAggregate
from app.schedules.digest import digest_finished
from tests import schema_path

NEW_TABLES = ("template", "baseline", "rundigest", "runaggregate", "alert", "samplechunk")
MINE = (
    "m018_templates_and_queue",
    "m019_item_repeats",
    "m020_trends_and_alerts",
    "m021_system_samples",
)


def _columns(table):
    return {c.name for c in database.get_columns(table)}


@pytest.fixture
def before_m018(tmp_path, monkeypatch):
    """A database as the code before m018 left it, holding a finished run scored 70."""
    db = schema_path.before(tmp_path, MINE[0], monkeypatch)
    schema_path.old_run(db, "old", score=70.0)
    yield db
    db.close()


def test_a_database_from_before_m018_gets_every_table_and_column(before_m018):
    assert "template_id" not in _columns("run") and "repeat" not in _columns("item")
    migrations.apply(database)
    assert set(NEW_TABLES) <= set(database.get_tables())
    assert {"template_id", "triggered_by", "trigger_note", "queued_at"} <= _columns("run")
    assert {"repeat", "seed", "judge_scores"} <= _columns("item")
    assert ("template_id", "template") in {
        (fk.column, fk.dest_table) for fk in database.get_foreign_keys("run")
    }
    assert migrations.applied(database) == [fn.__name__ for fn in migrations.MIGRATIONS]
    old = Run.get(Run.run_id == "old")
    assert old.template_id is None and old.triggered_by is None
    assert Item.get().repeat == 0 and Item.get().seed is None


def test_runs_that_finished_before_the_upgrade_are_digested_afterwards(before_m018):
    migrations.apply(database)
    digest_finished()
    (overall,) = RunAggregate.select().where(RunAggregate.category == "")
    assert overall.score == 70.0


def test_my_migrations_are_no_ops_on_a_fresh_database(app):
    before = {t: _columns(t) for t in database.get_tables()}
    for name in MINE:
        getattr(migrations, name)(database)
    assert {t: _columns(t) for t in database.get_tables()} == before

"""m018-m021: a database from before them gets templates, the queue's columns, repeats,
trends, alerts and system samples; its runs keep working and are digested afterwards."""

import re
import sqlite3

import pytest

from app.db import migrations
from app.db.connection import database
from app.db.models import Item
from app.db.models import Run
from app.db.models import RunAggregate
from app.schedules.digest import digest_finished
from tests.factories import add_item
from tests.factories import make_run

NEW_TABLES = ("template", "baseline", "rundigest", "runaggregate", "alert", "samplechunk")
MINE = (
    "m018_templates_and_queue",
    "m019_item_repeats",
    "m020_trends_and_alerts",
    "m021_system_samples",
)


def _columns(table):
    return {c.name for c in database.get_columns(table)}


def _drop_foreign_key_column(table, column):
    """SQLite cannot drop a column with a foreign key: rebuild the table without it (the
    12-step recipe of sqlite.org/lang_altertable.html), keeping its rows and indexes."""
    (sql,) = database.execute_sql(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
    ).fetchone()
    indexes = [
        row[0]
        for row in database.execute_sql(
            "SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? "
            "AND sql IS NOT NULL",
            (table,),
        )
        if f'"{column}"' not in row[0]
    ]
    sql = re.sub(rf', FOREIGN KEY \("{column}"\)[^,)]*\([^)]*\)[^,)]*', "", sql)
    sql = re.sub(rf', "{column}" [A-Z]+ REFERENCES [^,)]*\([^)]*\)[^,)]*', "", sql)
    sql = re.sub(rf'"{column}" [A-Z]+( NOT NULL)?, ', "", sql)
    kept = ", ".join(f'"{c}"' for c in _columns(table) if c != column)
    database.execute_sql(sql.replace(f'CREATE TABLE "{table}"', 'CREATE TABLE "_rebuilt"', 1))
    database.execute_sql(f'INSERT INTO "_rebuilt" ({kept}) SELECT {kept} FROM "{table}"')
    database.execute_sql(f'DROP TABLE "{table}"')
    database.execute_sql(f'ALTER TABLE "_rebuilt" RENAME TO "{table}"')
    for index in indexes:
        database.execute_sql(index)


def _back_to_before_m018():
    """Make the fresh database look like one the code before m018 created."""
    assert sqlite3.sqlite_version_info >= (3, 35, 0)  # DROP COLUMN
    database.execute_sql("PRAGMA foreign_keys = OFF")
    for table in NEW_TABLES:
        database.execute_sql(f'DROP TABLE "{table}"')
    _drop_foreign_key_column("run", "template_id")
    for column in ("triggered_by", "trigger_note", "queued_at"):
        database.execute_sql(f'ALTER TABLE "run" DROP COLUMN "{column}"')
    for column in ("repeat", "seed", "judge_scores"):
        database.execute_sql(f'ALTER TABLE "item" DROP COLUMN "{column}"')
    database.execute_sql("PRAGMA foreign_keys = ON")
    for name in MINE:
        database.execute_sql("DELETE FROM _migrations WHERE name = ?", (name,))


@pytest.mark.sqlite_only  # rebuilds SQLite tables (PRAGMA, DDL text)
def test_a_database_from_before_m018_gets_every_table_and_column(app):
    run, (target,) = make_run("old")
    add_item(run, target, "t1", score=70.0)
    _back_to_before_m018()
    assert "template_id" not in _columns("run") and "repeat" not in _columns("item")
    migrations.apply(database)
    assert set(NEW_TABLES) <= set(database.get_tables())
    assert {"template_id", "triggered_by", "trigger_note", "queued_at"} <= _columns("run")
    assert {"repeat", "seed", "judge_scores"} <= _columns("item")
    assert ("template_id", "template") in {
        (fk.column, fk.dest_table) for fk in database.get_foreign_keys("run")
    }
    assert migrations.applied(database)[-4:] == list(MINE)
    old = Run.get(Run.run_id == "old")
    assert old.template_id is None and old.triggered_by is None
    assert Item.get().repeat == 0 and Item.get().seed is None


@pytest.mark.sqlite_only  # rebuilds SQLite tables (PRAGMA, DDL text)
def test_runs_that_finished_before_the_upgrade_are_digested_afterwards(app):
    run, (target,) = make_run("old")
    add_item(run, target, "t1", score=70.0)
    _back_to_before_m018()
    migrations.apply(database)
    digest_finished()
    (overall,) = RunAggregate.select().where(RunAggregate.category == "")
    assert overall.score == 70.0


def test_my_migrations_are_no_ops_on_a_fresh_database(app):
    before = {t: _columns(t) for t in database.get_tables()}
    for name in MINE:
        getattr(migrations, name)(database)
    assert {t: _columns(t) for t in database.get_tables()} == before

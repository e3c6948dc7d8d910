"""A new SQLite database is made in one step from app/db/fresh_sqlite.sql: the schema and ledger
the migrations would have built one by one, which the file must stay (tests/fresh_sqlite.py
writes it); a database made that way works and is migrated no further, and every other database
still takes the migrations."""

import logging
import threading

import pytest

from app.db import fresh
from app.db import migrations
from app.db.connection import database
from app.db.connection import init_db
from app.db.models import NEW
from app.db.schema import describe
from app.runs import counts
from tests import fresh_sqlite
from tests.factories import add_item
from tests.factories import make_run


@pytest.fixture
def bound():
    yield
    database.close()


def _stale(what):
    return f"app/db/fresh_sqlite.sql is not {what}. Regenerate it: {fresh_sqlite.COMMAND}"


def _rows(db):
    """Every row of every table but the ledger, by table."""
    tables = db.execute_sql(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name <> '_migrations' "
        "ORDER BY name"
    ).fetchall()
    return {name: db.execute_sql(f'SELECT * FROM "{name}"').fetchall() for (name,) in tables}


def _made(path, *, stepwise=False):
    """describe(), the rows and the ledger's names of a new SQLite file at `path`, migrated."""
    fresh_sqlite.stepwise(path) if stepwise else migrations.open_db(str(path))
    with database.connection_context():
        made = describe(database), _rows(database), migrations.applied(database)
    database.close()
    return made


def test_a_database_made_from_the_snapshot_is_the_one_the_migrations_build(tmp_path):
    from_snapshot = _made(tmp_path / "snapshot.db")
    stepwise = _made(tmp_path / "stepwise.db", stepwise=True)
    parts = zip(("schema", "rows", "ledger"), from_snapshot, stepwise, strict=True)
    for name, mine, theirs in parts:  # one part at a time: a failure names it
        assert mine == theirs, _stale(f"what the migrations build (its {name})")


def test_the_snapshot_is_what_its_generator_writes():
    assert fresh.SNAPSHOT.read_text(encoding="utf-8") == fresh_sqlite.generated(), _stale(
        "what tests/fresh_sqlite.py writes"
    )


def test_a_new_database_records_every_migration_at_one_time(tmp_path, bound):
    migrations.open_db(str(tmp_path / "new.db"))
    with database.connection_context():
        ledger = database.execute_sql("SELECT name, applied_at FROM _migrations ORDER BY id")
        names, times = zip(*ledger.fetchall(), strict=True)
    assert list(names) == [fn.__name__ for fn in migrations.MIGRATIONS]
    assert len(set(times)) == 1


def test_a_database_made_from_the_snapshot_applies_nothing_when_opened_again(
    tmp_path, bound, caplog
):
    path = str(tmp_path / "again.db")
    migrations.open_db(path)
    with database.connection_context():
        before = database.execute_sql("SELECT * FROM _migrations").fetchall()
    database.close()
    with caplog.at_level(logging.INFO, logger=migrations.__name__):
        migrations.open_db(path)
    with database.connection_context():
        assert database.execute_sql("SELECT * FROM _migrations").fetchall() == before
    assert caplog.records == []


def test_a_database_made_from_the_snapshot_keeps_its_item_counts(tmp_path, bound):
    migrations.open_db(str(tmp_path / "counts.db"))
    with database.connection_context():
        run, (first, second) = make_run("kept", targets=(("local", "m1"), ("local", "m2")))
        for n in range(5):
            add_item(run, (first, second)[n % 2], f"t{n}", score=10.0 * n)
        add_item(run, first, "waiting", status=NEW)
        kept = counts.kept(run)
        assert kept == counts.recount(run)
        assert sum(sums["n"] for sums in kept.values()) == 6


def test_two_threads_opening_one_new_file_at_once_make_one_schema(tmp_path, bound):
    init_db(str(tmp_path / "race.db"))
    start, failures = threading.Barrier(2), []

    def migrate():
        try:
            with database.connection_context():
                start.wait()
                migrations.apply(database)
        except Exception as exc:  # noqa: BLE001 - shown by the assert below
            failures.append(exc)

    threads = [threading.Thread(target=migrate) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    with database.connection_context():
        assert migrations.applied(database) == [fn.__name__ for fn in migrations.MIGRATIONS]


def test_migrations_after_the_snapshots_are_applied_one_by_one(tmp_path, bound, monkeypatch):
    def m999_after_the_snapshot(db):
        db.execute_sql("CREATE TABLE after_snapshot (id INTEGER PRIMARY KEY)")

    monkeypatch.setattr(migrations, "MIGRATIONS", [*migrations.MIGRATIONS, m999_after_the_snapshot])
    migrations.open_db(str(tmp_path / "behind.db"))
    with database.connection_context():
        assert migrations.applied(database)[-1] == "m999_after_the_snapshot"
        assert "after_snapshot" in database.get_tables()


def test_fewer_migrations_than_the_snapshot_holds_take_the_long_way(tmp_path, bound, monkeypatch):
    # An older release's path (tests/schema_path.py): the snapshot would hold later tables.
    monkeypatch.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS[:5])
    migrations.open_db(str(tmp_path / "older.db"))
    with database.connection_context():
        assert migrations.applied(database) == [fn.__name__ for fn in migrations.MIGRATIONS]
        assert "outage" not in database.get_tables()  # m010's

"""Named, ordered, add-only schema migrations, recorded in `_migrations`."""

import logging

from peewee import BooleanField
from peewee import DateTimeField
from peewee import FloatField
from peewee import IntegerField
from peewee import TextField
from playhouse.migrate import SqliteMigrator
from playhouse.migrate import migrate

from .clock import utcnow
from .db import database
from .db import init_db
from .models import ALL_MODELS
from .models import JSONField
from .models import Outage

log = logging.getLogger(__name__)

MIGRATIONS = []


def migration(fn):
    MIGRATIONS.append(fn)
    return fn


@migration
def m001_initial(db):
    # Creates the schema as models.py declares it now, so a fresh database already holds what
    # later migrations add: every later migration must be idempotent (IF NOT EXISTS, column
    # checks) and is then a no-op there.
    db.create_tables(ALL_MODELS)


@migration
def m002_item_progress_indexes(db):
    # The live view polls "latest answered/judged items" every second; on 100k-item runs
    # these sorts scanned the run's items. Same names as models.py (a fresh database already
    # has them from m001); add-only, no data change.
    for column in ("answered_at", "judged_at"):
        db.execute_sql(
            f"CREATE INDEX IF NOT EXISTS item_run_id_{column} ON item (run_id, {column})"
        )


@migration
def m003_item_judge_cost(db):
    # The run budget counts the judge's calls too (seed 004 maxBudgetUsd). Add-only, nullable:
    # items judged before it have no judge cost. A fresh database has it from m001.
    if "judge_cost_usd" in {c.name for c in db.get_columns("item")}:
        return
    migrator = SqliteMigrator(db)
    migrate(migrator.add_column("item", "judge_cost_usd", FloatField(null=True)))


@migration
def m004_item_updated_at_index(db):
    # The live view's latest items (polled every second) sort the run's items by updated_at.
    # Same name as models.py (a fresh database has it from m001); add-only, no data change.
    db.execute_sql("CREATE INDEX IF NOT EXISTS item_run_id_updated_at ON item (run_id, updated_at)")


@migration
def m005_item_claimed_until(db):
    # "In flight" gets its own column instead of being inferred from attempts, next_retry_at
    # and a NULL error_msg; next_retry_at goes back to meaning only "retry after". A claim that
    # was live when this runs moves its deadline over. A fresh database has it from m001.
    if "claimed_until" in {c.name for c in db.get_columns("item")}:
        return
    migrate(SqliteMigrator(db).add_column("item", "claimed_until", DateTimeField(null=True)))
    db.execute_sql(
        "UPDATE item SET claimed_until = next_retry_at, next_retry_at = NULL "
        "WHERE status IN ('NEW', 'WAITING_FOR_JUDGE') AND attempts > 0 "
        "AND next_retry_at IS NOT NULL AND error_msg IS NULL"
    )


@migration
def m010_outage(db):
    # The per-provider circuit breaker (engine/breaker.py) keeps an open outage in its own
    # table, so the live view shows "waiting for ..." and a restart keeps counting from when it
    # began. Add-only; a fresh database has it from m001.
    db.create_tables([Outage], safe=True)


@migration
def m011_item_answer_cut(db):
    # Answers are capped (MAX_ANSWER_CHARS): an answer cut at the cap says so. Add-only with a
    # default; a fresh database has it from m001.
    if "answer_cut" in {c.name for c in db.get_columns("item")}:
        return
    migrate(SqliteMigrator(db).add_column("item", "answer_cut", BooleanField(default=False)))


@migration
def m012_item_judge_history(db):
    # Re-judging a completed item keeps the judgement it replaces. Add-only, nullable; a fresh
    # database has it from m001.
    if "judge_history" in {c.name for c in db.get_columns("item")}:
        return
    migrate(SqliteMigrator(db).add_column("item", "judge_history", JSONField(null=True)))


@migration
def m022_item_reused_from(db):
    # `llmbench run --reuse` copies an earlier answer / judgement into a new item and says from
    # which item. Add-only, nullable (nothing reused before). A fresh database has them from m001.
    columns = {c.name for c in db.get_columns("item")}
    migrator = SqliteMigrator(db)
    for name in ("answer_reused_from", "judgement_reused_from"):
        if name not in columns:
            migrate(migrator.add_column("item", name, IntegerField(null=True)))


@migration
def m023_run_outputs(db):
    # Where the CLI writes a run's reports, so `llmbench resume` writes them too. Add-only,
    # nullable (runs from the web app have none). A fresh database has it from m001.
    if "outputs" not in {c.name for c in db.get_columns("run")}:
        migrate(SqliteMigrator(db).add_column("run", "outputs", TextField(null=True)))


def applied(db):
    """Names of the migrations already applied, in order."""
    return [row[0] for row in db.execute_sql("SELECT name FROM _migrations ORDER BY id")]


def schema_version(db):
    return len(applied(db))


def apply(db):
    """Apply every migration not yet recorded; each in its own transaction."""
    db.execute_sql(
        "CREATE TABLE IF NOT EXISTS _migrations ("
        "id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL, applied_at TEXT NOT NULL)"
    )
    done = set(applied(db))
    for fn in MIGRATIONS:
        if fn.__name__ in done:
            continue
        with db.atomic("IMMEDIATE"):
            # Another process may have applied it while we waited for the lock.
            if fn.__name__ in set(applied(db)):
                continue
            fn(db)
            db.execute_sql(
                "INSERT INTO _migrations (name, applied_at) VALUES (?, ?)",
                (fn.__name__, utcnow().isoformat()),
            )
        log.info("applied migration %s", fn.__name__)


def open_db(path):
    """Bind the database to `path` and bring its schema up to date; returns the database."""
    init_db(path)
    with database.connection_context():
        apply(database)
    return database

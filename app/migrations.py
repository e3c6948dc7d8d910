"""Named, ordered, add-only schema migrations, recorded in `_migrations`."""

import logging

from peewee import CharField
from peewee import DateTimeField
from peewee import FloatField
from playhouse.migrate import SqliteMigrator
from playhouse.migrate import migrate

from .clock import utcnow
from .db import database
from .db import init_db
from .models import ALL_MODELS
from .models import JudgeCall
from .models import JudgeJob
from .models import Rating
from .models import RatingTag
from .models import RunTarget
from .models import Vote

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
def m014_run_target_label(db):
    # A run may hold the same model twice with different params (seed 003's parameter
    # profiles): each target gets a label, unique in its run, instead of (provider, model) being
    # unique. Existing targets get their default label; a clash (one model on two providers)
    # gets the provider in front. A fresh database has the column and index from m001.
    if "label" in {c.name for c in db.get_columns("runtarget")}:
        return
    migrate(
        SqliteMigrator(db).add_column("runtarget", "label", CharField(max_length=300, default=""))
    )
    rows = db.execute_sql(
        "SELECT id, run_id, provider_name, model, params FROM runtarget "
        "ORDER BY run_id, position, id"
    ).fetchall()
    taken = set()
    for pk, run_id, provider_name, model, params in rows:
        label = RunTarget.default_label(model, RunTarget.params.python_value(params))
        if (run_id, label) in taken:
            label = f"{provider_name}/{label}"
        taken.add((run_id, label))
        db.execute_sql("UPDATE runtarget SET label = ? WHERE id = ?", (label, pk))
    db.execute_sql("DROP INDEX IF EXISTS runtarget_run_id_provider_id_model")
    db.execute_sql(
        "CREATE UNIQUE INDEX IF NOT EXISTS runtarget_run_id_label ON runtarget (run_id, label)"
    )


@migration
def m015_ratings(db):
    # People's Likert ratings with tags and notes (seed 003 evaluations). New tables only.
    db.create_tables([Rating, RatingTag], safe=True)


@migration
def m016_judge_jobs(db):
    # Judge calls beside a run's items (pairwise comparisons, the reference check), claimable
    # like items. New tables only.
    db.create_tables([JudgeJob, JudgeCall], safe=True)


@migration
def m017_votes(db):
    # Pairwise votes (seed 003 pairwise), by people and judges (a judge's come from m016's
    # jobs). New table only.
    db.create_tables([Vote], safe=True)


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

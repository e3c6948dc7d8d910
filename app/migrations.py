"""Named, ordered, add-only schema migrations, recorded in `_migrations`."""

import logging

from peewee import BooleanField
from peewee import CharField
from peewee import DateTimeField
from peewee import FloatField
from peewee import ForeignKeyField
from peewee import IntegerField
from peewee import TextField
from playhouse.migrate import SqliteMigrator
from playhouse.migrate import migrate

from .clock import utcnow
from .db import database
from .db import init_db
from .models import ALL_MODELS
from .models import Alert
from .models import Baseline
from .models import ItemCount
from .models import JSONField
from .models import JudgeCall
from .models import JudgeJob
from .models import Outage
from .models import Rating
from .models import RatingTag
from .models import RunAggregate
from .models import RunDigest
from .models import RunTarget
from .models import SampleChunk
from .models import Template
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


def _add_missing_columns(db, table, columns):
    """Add the (name, field) columns `table` lacks; a fresh database has them all already."""
    have = {c.name for c in db.get_columns(table)}
    operations = [
        SqliteMigrator(db).add_column(table, name, field)
        for name, field in columns
        if name not in have
    ]
    if operations:
        migrate(*operations)


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


@migration
def m018_templates_and_queue(db):
    # Templates (saved run specs, schedules, alert settings) and where a run came from; the
    # queued state lives in run.control ("queued"), so no column is needed for it.
    db.create_tables([Template], safe=True)
    _add_missing_columns(
        db,
        "run",
        [
            (
                "template_id",
                ForeignKeyField(Template, null=True, on_delete="SET NULL", field=Template.id),
            ),
            ("triggered_by", CharField(max_length=50, null=True)),
            ("trigger_note", TextField(null=True)),
            ("queued_at", DateTimeField(null=True)),
        ],
    )
    db.execute_sql('CREATE INDEX IF NOT EXISTS "run_template_id" ON "run" ("template_id")')


@migration
def m019_item_repeats(db):
    # Repeats: the K-th answer to a task (own seed) and every score of repeated judgements.
    # Existing items are repeat 0 with no seed of their own: what they were.
    _add_missing_columns(
        db,
        "item",
        [
            ("repeat", IntegerField(default=0)),
            ("seed", IntegerField(null=True)),
            ("judge_scores", JSONField(null=True)),
        ],
    )


@migration
def m020_trends_and_alerts(db):
    # Per-run aggregates (Trends reads these, never the items), baselines and alerts. Runs that
    # finished before it get their aggregates from the next digest pass (schedules/digest.py).
    db.create_tables([Baseline, RunDigest, RunAggregate, Alert], safe=True)


@migration
def m021_system_samples(db):
    # System metrics sampled during runs (sysmetrics/store.py).
    db.create_tables([SampleChunk], safe=True)


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


@migration
def m024_item_claim_indexes(db):
    # Claims in O(log N): partial indexes on the items still to be taken, in id order (claims.py
    # names them with INDEXED BY). Same names and WHERE as models.py (a fresh database has them
    # from m001); add-only, no data change.
    db.execute_sql(
        "CREATE INDEX IF NOT EXISTS item_claim_new ON item (run_id, target_id) WHERE status = 'NEW'"
    )
    db.execute_sql(
        "CREATE INDEX IF NOT EXISTS item_claim_judge ON item (run_id) "
        "WHERE status = 'WAITING_FOR_JUDGE'"
    )
    db.execute_sql(
        "CREATE INDEX IF NOT EXISTS item_claimed_until ON item (run_id, claimed_until) "
        "WHERE claimed_until IS NOT NULL"
    )


# item_count's sums: (column, the item's expression). Each item adds its values to the row of
# its (run, target, status, stage) and takes them back when it leaves it (migrations m025).
ITEM_COUNT_SUMS = (
    ("n", "1"),
    ("answer_ms", "COALESCE({r}.time_taken_ms, 0)"),
    ("answer_ms_n", "({r}.time_taken_ms IS NOT NULL)"),
    ("judge_ms", "COALESCE({r}.judge_ms, 0)"),
    ("judge_ms_n", "({r}.judge_ms IS NOT NULL)"),
    ("prompt_tokens", "COALESCE({r}.prompt_tokens, 0)"),
    ("tokens_generated", "COALESCE({r}.tokens_generated, 0)"),
    ("cost_usd", "COALESCE({r}.cost_usd, 0)"),
    ("judge_cost_usd", "COALESCE({r}.judge_cost_usd, 0)"),
    ("score", "COALESCE({r}.evaluation_score, 0)"),
    ("score_n", "({r}.evaluation_score IS NOT NULL)"),
)
# The item columns the counts read: an UPDATE that sets none of them fires nothing (a claim, a
# claim extended), one that sets them to what they were fires nothing either (WHEN).
_COUNTED = (
    "run_id",
    "target_id",
    "status",
    "error_stage",
    "time_taken_ms",
    "judge_ms",
    "prompt_tokens",
    "tokens_generated",
    "cost_usd",
    "judge_cost_usd",
    "evaluation_score",
)
_KEY = "run_id, target_id, status, stage"


def _count_add(r):
    """INSERT-or-add the item row `r` (NEW) to its counts row."""
    columns = ", ".join(c for c, _ in ITEM_COUNT_SUMS)
    values = ", ".join(e.format(r=r) for _, e in ITEM_COUNT_SUMS)
    added = ", ".join(f"{c} = {c} + excluded.{c}" for c, _ in ITEM_COUNT_SUMS)
    return (
        f"INSERT INTO item_count ({_KEY}, {columns}) VALUES ({r}.run_id, {r}.target_id, "
        f"{r}.status, COALESCE({r}.error_stage, ''), {values}) "
        f"ON CONFLICT ({_KEY}) DO UPDATE SET {added};"
    )


def _count_take(r):
    """Take the item row `r` (OLD) back from its counts row (gone with its run: no-op)."""
    taken = ", ".join(f"{c} = {c} - {e.format(r=r)}" for c, e in ITEM_COUNT_SUMS)
    return (
        f"UPDATE item_count SET {taken} WHERE run_id = {r}.run_id AND target_id = {r}.target_id "
        f"AND status = {r}.status AND stage = COALESCE({r}.error_stage, '');"
    )


ITEM_COUNT_TRIGGERS = (
    f"CREATE TRIGGER IF NOT EXISTS item_count_insert AFTER INSERT ON item "
    f"BEGIN {_count_add('NEW')} END",
    f"CREATE TRIGGER IF NOT EXISTS item_count_delete AFTER DELETE ON item "
    f"BEGIN {_count_take('OLD')} END",
    f"CREATE TRIGGER IF NOT EXISTS item_count_update AFTER UPDATE OF {', '.join(_COUNTED)} "
    f"ON item WHEN "
    + " OR ".join(f"OLD.{c} IS NOT NEW.{c}" for c in _COUNTED)
    + f" BEGIN {_count_take('OLD')} {_count_add('NEW')} END",
)
# A full recount of every run's items into item_count (m025 on a database with items).
ITEM_COUNT_RECOUNT = (
    f"INSERT INTO item_count ({_KEY}, {', '.join(c for c, _ in ITEM_COUNT_SUMS)}) "
    f"SELECT run_id, target_id, status, COALESCE(error_stage, ''), "
    + ", ".join(f"SUM({e.format(r='item')})" for _, e in ITEM_COUNT_SUMS)
    + " FROM item GROUP BY run_id, target_id, status, COALESCE(error_stage, '')"
)


@migration
def m025_item_counts(db):
    # Counts that are kept, not counted: item_count (models.py) and the triggers that keep it
    # in the transaction that changes an item. The counts are rebuilt from the items here, so
    # the migration is idempotent (a fresh database has the table from m001, and no items).
    db.create_tables([ItemCount], safe=True)
    for sql in ITEM_COUNT_TRIGGERS:
        db.execute_sql(sql)
    db.execute_sql("DELETE FROM item_count")
    db.execute_sql(ITEM_COUNT_RECOUNT)


# m026: the results table's sorts; same names as models.py (Peewee's run_id_<columns>).
RESULTS_SORT_INDEXES = (
    ("task_key",),
    ("category", "task_key"),
    ("status",),
    ("ttft_ms",),
    ("tokens_generated",),
    ("cost_usd",),
    ("target_id", "answered_at"),
)


@migration
def m026_item_sort_indexes(db):
    # Results pages by index: every sort the table offers on an item column reads an index of
    # the run's items in that order, so a page is a seek and a short walk, not a sort of the
    # whole run. Add-only, no data change; a fresh database has them from m001.
    for columns in RESULTS_SORT_INDEXES:
        name = "item_run_id_" + "_".join(columns)
        db.execute_sql(f"CREATE INDEX IF NOT EXISTS {name} ON item (run_id, {', '.join(columns)})")
    # The live view's latest items: only the items tried at least once (models.py).
    db.execute_sql(
        "CREATE INDEX IF NOT EXISTS item_run_id_updated_at_tried ON item (run_id, updated_at) "
        "WHERE last_attempt_at IS NOT NULL"
    )


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
